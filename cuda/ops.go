package cuda

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/adamnode/adamnode/tensor"
)

// Buffer is n elements of T in device memory: a whole allocation of
// Alloc, or a part of one (Slice). It is a value: copies share the memory.
// The zero Buffer has no elements.
type Buffer[T tensor.Float] struct {
	ptr uintptr
	n   int
}

// Len returns the number of elements.
func (b Buffer[T]) Len() int { return b.n }

// Slice returns elements [lo, hi) of b, sharing its memory. It panics if
// the range is not within b, as slicing does.
func (b Buffer[T]) Slice(lo, hi int) Buffer[T] {
	if lo < 0 || hi < lo || hi > b.n {
		panic(fmt.Sprintf("cuda: Buffer.Slice(%d, %d) of %d elements", lo, hi, b.n))
	}
	return Buffer[T]{ptr: b.ptr + uintptr(lo)*elemSize[T](), n: hi - lo}
}

func elemSize[T tensor.Float]() uintptr { return unsafe.Sizeof(T(0)) }

// is64 reports whether T is 8 bytes (the _f64 kernels).
func is64[T tensor.Float]() bool { return elemSize[T]() == 8 }

// kernelIndex returns the index of kind's kernel for T.
func kernelIndex[T tensor.Float](kind int) int {
	if is64[T]() {
		return 2*kind + 1
	}
	return 2 * kind
}

// scalar returns v as a kernel argument of type T (float or double).
func scalar[T tensor.Float](v T) uint64 {
	if is64[T]() {
		return math.Float64bits(float64(v))
	}
	return uint64(math.Float32bits(float32(v)))
}

// Alloc returns a new Buffer of n elements (not set), to be freed with
// Free.
func Alloc[T tensor.Float](k *Kernels, n int) (Buffer[T], error) {
	if n < 0 {
		return Buffer[T]{}, fmt.Errorf("cuda: Alloc of %d elements", n)
	}
	if n == 0 {
		return Buffer[T]{}, nil
	}
	if err := k.enter(); err != nil {
		return Buffer[T]{}, err
	}
	defer k.leave()
	var p uintptr
	if err := k.libs.check("cuMemAlloc_v2", k.libs.drv.cuMemAlloc(&p, uintptr(n)*elemSize[T]())); err != nil {
		return Buffer[T]{}, err
	}
	return Buffer[T]{ptr: p, n: n}, nil
}

// Free frees a Buffer that Alloc returned (not a Slice of one).
func Free[T tensor.Float](k *Kernels, b Buffer[T]) error {
	if b.ptr == 0 {
		return nil
	}
	if err := k.enter(); err != nil {
		return err
	}
	defer k.leave()
	return k.libs.check("cuMemFree_v2", k.libs.drv.cuMemFree(b.ptr))
}

// sameLen returns an error naming op unless every length in ns is n.
func sameLen(op string, n int, ns ...int) error {
	for _, m := range ns {
		if m != n {
			return fmt.Errorf("cuda: %s: lengths %d and %d differ", op, n, m)
		}
	}
	return nil
}

// Upload copies src into dst (of the same length).
func Upload[T tensor.Float](k *Kernels, dst Buffer[T], src []T) error {
	if err := sameLen("Upload", dst.n, len(src)); err != nil || dst.n == 0 {
		return err
	}
	if err := k.enter(); err != nil {
		return err
	}
	defer k.leave()
	return k.libs.check("cuMemcpyHtoD_v2", k.libs.drv.cuMemcpyHtoD(dst.ptr, unsafe.Pointer(&src[0]), uintptr(dst.n)*elemSize[T]()))
}

// Download copies src into dst (of the same length), after the kernels
// launched before it have run.
func Download[T tensor.Float](k *Kernels, dst []T, src Buffer[T]) error {
	if err := sameLen("Download", src.n, len(dst)); err != nil || src.n == 0 {
		return err
	}
	if err := k.enter(); err != nil {
		return err
	}
	defer k.leave()
	return k.libs.check("cuMemcpyDtoH_v2", k.libs.drv.cuMemcpyDtoH(unsafe.Pointer(&dst[0]), src.ptr, uintptr(src.n)*elemSize[T]()))
}

// Fill sets every element of dst to v.
func Fill[T tensor.Float](k *Kernels, dst Buffer[T], v T) error {
	if dst.n == 0 {
		return nil
	}
	if err := k.enter(); err != nil {
		return err
	}
	defer k.leave()
	return k.launch(kernelIndex[T](kFill), k.gridFor(dst.n), uint64(dst.ptr), scalar(v), uint64(dst.n))
}

// Copy copies src into dst (of the same length; they must not overlap).
func Copy[T tensor.Float](k *Kernels, dst, src Buffer[T]) error {
	if err := sameLen("Copy", dst.n, src.n); err != nil || dst.n == 0 {
		return err
	}
	if err := k.enter(); err != nil {
		return err
	}
	defer k.leave()
	return k.launch(kernelIndex[T](kCopy), k.gridFor(dst.n), uint64(dst.ptr), uint64(src.ptr), uint64(dst.n))
}

// CopyBlocks sets, for b in [0, s.Count) and i in [0, s.Len),
//
//	dst[s.ZOff + b·s.ZStride + i] = a·src[s.XOff + b·s.XStride + i]
//
// or, with accumulate, adds a·src[…] (the product rounded, then added) to
// that element of dst: tensor.CopyBlocks's arithmetic bit for bit (a = 1
// copies exactly). dst's other elements are left as they are. Every
// block must lie within its buffer, dst's blocks must not overlap one
// another (s.ZStride ≥ s.Len when s.Count > 1), and dst and src must not
// overlap; no count, length, offset or stride may be negative.
func CopyBlocks[T tensor.Float](k *Kernels, dst, src Buffer[T], a T, s tensor.Blocks, accumulate bool) error {
	if s.Count < 0 || s.Len < 0 || s.ZOff < 0 || s.ZStride < 0 || s.XOff < 0 || s.XStride < 0 {
		return fmt.Errorf("cuda: CopyBlocks: blocks %+v: a negative count, length, offset or stride", s)
	}
	if s.Count == 0 || s.Len == 0 {
		return nil
	}
	if s.Count > 1 && s.ZStride < s.Len {
		return fmt.Errorf("cuda: CopyBlocks: blocks %+v: the destination's blocks overlap", s)
	}
	end := func(off, stride int) int { return off + (s.Count-1)*stride + s.Len }
	if end(s.ZOff, s.ZStride) > dst.n || end(s.XOff, s.XStride) > src.n || end(s.ZOff, s.ZStride) < 0 || end(s.XOff, s.XStride) < 0 {
		return fmt.Errorf("cuda: CopyBlocks: blocks %+v out of range for %d and %d elements", s, dst.n, src.n)
	}
	acc := uint64(0)
	if accumulate {
		acc = 1
	}
	n := s.Count * s.Len
	if err := k.enter(); err != nil {
		return err
	}
	defer k.leave()
	return k.launch(kernelIndex[T](kBlocks), k.gridFor(n), uint64(dst.ptr), uint64(src.ptr), scalar(a), acc,
		uint64(s.Len), uint64(s.ZOff), uint64(s.ZStride), uint64(s.XOff), uint64(s.XStride), uint64(n))
}

// MaxTerms is the most terms LinComb takes.
const MaxTerms = 7

// LinComb sets
//
//	dst[i] = base[i] + coef[0]·src[0][i] + … + coef[m−1]·src[m−1][i]
//
// (base of no elements: 0 + …), each product rounded before it is added
// and the terms added in order: bit for bit tensor.LinearCombination, the
// Runge–Kutta stage sums. dst may be base but must not overlap a source.
// At most MaxTerms terms; every buffer has dst's length. More terms (the
// 12 of dopri8's stages): call again with dst as base and the rest, the
// same sum rounding for rounding.
func LinComb[T tensor.Float](k *Kernels, dst, base Buffer[T], coef []T, src []Buffer[T]) error {
	if len(coef) != len(src) || len(src) > MaxTerms {
		return fmt.Errorf("cuda: LinComb: %d coefficients for %d sources (at most %d)", len(coef), len(src), MaxTerms)
	}
	for _, s := range src {
		if err := sameLen("LinComb", dst.n, s.n); err != nil {
			return err
		}
	}
	if base.n != 0 {
		if err := sameLen("LinComb", dst.n, base.n); err != nil {
			return err
		}
	}
	if dst.n == 0 {
		return nil
	}
	var args [4 + 2*MaxTerms]uint64
	args[0], args[1], args[2] = uint64(dst.ptr), uint64(base.ptr), uint64(len(src))
	for j := range MaxTerms {
		if j < len(src) {
			args[3+j], args[3+MaxTerms+j] = uint64(src[j].ptr), scalar(coef[j])
		}
	}
	args[3+2*MaxTerms] = uint64(dst.n)
	if err := k.enter(); err != nil {
		return err
	}
	defer k.leave()
	return k.launch(kernelIndex[T](kLinComb), k.gridFor(dst.n), args[:]...)
}

// MapOp names an elementwise function for Map and MapBackward.
type MapOp int32

const (
	Tanh     MapOp = iota // tanh x
	Sigmoid               // 1/(1+e^−x), without overflow
	Exp                   // eˣ
	ReLU                  // max(x, 0): NaN kept, −0 made +0
	Softplus              // ln(1+eˣ), without overflow
	Log                   // ln x: −Inf at ±0, NaN below 0
	Sqrt                  // √x, correctly rounded
	Square                // x·x
	Neg                   // −x
	Abs                   // |x|: the sign bit cleared
	Sin                   // sin x, in float64 and rounded (as autograd.Sin)
	Cos                   // cos x, in float64 and rounded
	numMapOps
)

// The maps with parameters a and b, through their own functions.
const (
	leakyReLU = numMapOps + iota // x > 0 ? x : a·x
	hardtanh                     // min(max(x, a), b)
	scaleOp                      // a·x
	addScalar                    // x + a
	clampOp                      // min(max(x, a), b), the gradient's mask with the bounds
	eluOp                        // x > 0 ? x : a·expm1(x)
	powOp                        // x^a
)

var mapNames = [...]string{"Tanh", "Sigmoid", "Exp", "ReLU", "Softplus", "Log", "Sqrt", "Square", "Neg", "Abs", "Sin", "Cos",
	"LeakyReLU", "Hardtanh", "Scale", "AddScalar", "Clamp", "ELU", "Pow"}

func (op MapOp) String() string {
	if op >= 0 && int(op) < len(mapNames) && mapNames[op] != "" {
		return mapNames[op]
	}
	return fmt.Sprintf("MapOp(%d)", int32(op))
}

// Map sets dst = op(x) elementwise (dst may be x). float32 computes in
// float32 with CUDA's single-precision functions (tanhf, expf, log1pf
// within 2 ulps, logf within 1, sqrtf correctly rounded), float64 in
// float64 (tanh, exp, log1p within 2 ulps, log within 1); Sin and Cos in
// float64 for both (CUDA's sin and cos within 2 ulps of float64), rounded
// to T, as autograd's maps do with the math package's. Square, Neg, Abs
// and ReLU are exact, and so the CPU's to the bit.
func Map[T tensor.Float](k *Kernels, op MapOp, dst, x Buffer[T]) error {
	if op < 0 || op >= numMapOps {
		return fmt.Errorf("cuda: Map: unknown %v", op)
	}
	return mapLaunch(k, op, dst, x, 0, 0)
}

// LeakyReLU sets dst = x where x > 0 and slope·x elsewhere (NaN·slope for
// NaN), as tensor.LeakyReLU, to the bit. dst may be x.
func LeakyReLU[T tensor.Float](k *Kernels, dst, x Buffer[T], slope T) error {
	return mapLaunch(k, leakyReLU, dst, x, slope, 0)
}

// Hardtanh sets dst = min(max(x, lo), hi) with Go's min and max (NaN kept,
// +0 the larger zero), as tensor.Hardtanh, to the bit. dst may be x. lo
// above hi is an error.
func Hardtanh[T tensor.Float](k *Kernels, dst, x Buffer[T], lo, hi T) error {
	if lo > hi {
		return fmt.Errorf("cuda: Hardtanh: lower bound %v above upper bound %v", lo, hi)
	}
	return mapLaunch(k, hardtanh, dst, x, lo, hi)
}

// Scale sets dst = a·x (dst may be x), as tensor.Scale.
func Scale[T tensor.Float](k *Kernels, dst, x Buffer[T], a T) error {
	return mapLaunch(k, scaleOp, dst, x, a, 0)
}

// AddScalar sets dst = x + a (dst may be x), as tensor.AddScalar.
func AddScalar[T tensor.Float](k *Kernels, dst, x Buffer[T], a T) error {
	return mapLaunch(k, addScalar, dst, x, a, 0)
}

// opName names op in errors: "Map Tanh", "LeakyReLU"; with a suffix
// "Backward".
func opName(op MapOp, suffix string) string {
	if op < numMapOps {
		return "Map" + suffix + " " + op.String()
	}
	return op.String() + suffix
}

// Clamp sets dst = min(max(x, lo), hi) as Hardtanh (autograd.Clamp's
// forward); only its gradient differs. dst may be x.
func Clamp[T tensor.Float](k *Kernels, dst, x Buffer[T], lo, hi T) error {
	if lo > hi {
		return fmt.Errorf("cuda: Clamp: lower bound %v above upper bound %v", lo, hi)
	}
	return mapLaunch(k, clampOp, dst, x, lo, hi)
}

// ELU sets dst = x where x > 0 and α·expm1(x) elsewhere, expm1 in float64
// rounded to T before the product, as autograd.ELU (within CUDA's expm1's
// ulp of the math package's). dst may be x.
func ELU[T tensor.Float](k *Kernels, dst, x Buffer[T], alpha T) error {
	return mapLaunch(k, eluOp, dst, x, alpha, 0)
}

// Pow sets dst = x^p, computed in float64 (CUDA's pow, within 2 ulps; C's
// special cases, as Go's math.Pow: a negative x to a non-integer p is NaN)
// and rounded to T, as autograd.Pow. dst may be x.
func Pow[T tensor.Float](k *Kernels, dst, x Buffer[T], p T) error {
	return mapLaunch(k, powOp, dst, x, p, 0)
}

func mapLaunch[T tensor.Float](k *Kernels, op MapOp, dst, x Buffer[T], a, b T) error {
	if err := sameLen(opName(op, ""), dst.n, x.n); err != nil || dst.n == 0 {
		return err
	}
	if err := k.enter(); err != nil {
		return err
	}
	defer k.leave()
	return k.launch(kernelIndex[T](kMap), k.gridFor(dst.n), uint64(dst.ptr), uint64(x.ptr), uint64(op), scalar(a), scalar(b), uint64(dst.n))
}

// MapBackward sets dst = g ⊙ op′, or adds it to dst with accumulate: the
// gradient of Map given its output gradient g and u, the map's output y
// or its input x as the op's derivative needs it:
//
//	Tanh      y   g·(1 − y²), the factor rounded once (an fma)
//	Sigmoid   y   g·(y − y²), the factor rounded once
//	Exp       y   g·y
//	ReLU      y   g where y > 0, +0 elsewhere (NaN y included, whatever g)
//	Softplus  y   g·(−expm1(−y)) = g·σ(x)
//	Log       x   g·(1/x)
//	Sqrt      y   g·(1/(2y))
//	Square    x   g·(2x)
//	Neg       –   −g (u is not read, and may be empty)
//	Abs       x   g·sign x, sign 0 at ±0 and NaN (a product: NaN for g = ±Inf there)
//	Sin       x   g·cos x, cos in float64 rounded to T
//	Cos       x   g·(−sin x), likewise
//
// as the tensor package's backward maps and autograd's rules compute them:
// each factor rounded, then the product, then (with accumulate) the sum,
// never fused. So all but Tanh, Sigmoid and Softplus in float32 are the
// CPU's to the bit. dst may be g.
func MapBackward[T tensor.Float](k *Kernels, op MapOp, dst, g, u Buffer[T], accumulate bool) error {
	if op < 0 || op >= numMapOps {
		return fmt.Errorf("cuda: MapBackward: unknown %v", op)
	}
	return mapBwdLaunch(k, op, dst, g, u, 0, 0, accumulate)
}

// LeakyReLUBackward sets dst = g where u > 0 and slope·g elsewhere (NaN u
// included), or adds it to dst with accumulate: LeakyReLU's gradient given
// its input u, or its output where slope > 0 (which keeps the sign); as
// tensor.LeakyReLUBackward, to the bit. dst may be g.
func LeakyReLUBackward[T tensor.Float](k *Kernels, dst, g, u Buffer[T], slope T, accumulate bool) error {
	return mapBwdLaunch(k, leakyReLU, dst, g, u, slope, 0, accumulate)
}

// HardtanhBackward sets dst = g·[lo < x < hi] (a product, as autograd's
// rule: g·0 outside, so NaN for g = ±Inf there), or adds it to dst with
// accumulate, given Hardtanh's input x. dst may be g.
func HardtanhBackward[T tensor.Float](k *Kernels, dst, g, x Buffer[T], lo, hi T, accumulate bool) error {
	if lo > hi {
		return fmt.Errorf("cuda: HardtanhBackward: lower bound %v above upper bound %v", lo, hi)
	}
	return mapBwdLaunch(k, hardtanh, dst, g, x, lo, hi, accumulate)
}

// ClampBackward sets dst = g·[lo ≤ x ≤ hi] (bounds included, unlike
// Hardtanh's; a product, as autograd.Clamp's rule), or adds it to dst with
// accumulate, given Clamp's input x. dst may be g.
func ClampBackward[T tensor.Float](k *Kernels, dst, g, x Buffer[T], lo, hi T, accumulate bool) error {
	if lo > hi {
		return fmt.Errorf("cuda: ClampBackward: lower bound %v above upper bound %v", lo, hi)
	}
	return mapBwdLaunch(k, clampOp, dst, g, x, lo, hi, accumulate)
}

// ELUBackward sets dst = g·(1 where y > 0, y + α elsewhere), or adds it to
// dst with accumulate, from ELU's output y: autograd.ELU's rule (which
// asks x > 0, the same as y > 0 for α ≥ 0), to the bit. A negative α is an
// error (the output does not tell the sign of x). dst may be g.
func ELUBackward[T tensor.Float](k *Kernels, dst, g, y Buffer[T], alpha T, accumulate bool) error {
	if !(alpha >= 0) {
		return fmt.Errorf("cuda: ELUBackward: α = %v: the gradient from the output needs α ≥ 0", alpha)
	}
	return mapBwdLaunch(k, eluOp, dst, g, y, alpha, 0, accumulate)
}

// PowBackward sets dst = g·(p·x^(p−1)) (0 for p = 0), the factor formed in
// float64 and rounded to T, as autograd.Pow's rule, or adds it to dst with
// accumulate, given Pow's input x. dst may be g.
func PowBackward[T tensor.Float](k *Kernels, dst, g, x Buffer[T], p T, accumulate bool) error {
	return mapBwdLaunch(k, powOp, dst, g, x, p, 0, accumulate)
}

func mapBwdLaunch[T tensor.Float](k *Kernels, op MapOp, dst, g, u Buffer[T], a, b T, accumulate bool) error {
	if op == Neg && u.n == 0 {
		u = g // not read
	}
	if err := sameLen(opName(op, "Backward"), dst.n, g.n, u.n); err != nil || dst.n == 0 {
		return err
	}
	acc := uint64(0)
	if accumulate {
		acc = 1
	}
	if err := k.enter(); err != nil {
		return err
	}
	defer k.leave()
	return k.launch(kernelIndex[T](kMapBwd), k.gridFor(dst.n), uint64(dst.ptr), uint64(g.ptr), uint64(u.ptr), uint64(op), scalar(a), scalar(b), acc, uint64(dst.n))
}

// Norm is the result of ErrorNorm.
type Norm struct {
	RMS      float64 // √(Σ r²/n); NaN if an r is NaN, else +Inf if one is ±Inf; 0 for n = 0
	Max      float64 // the largest finite |r|
	NaN, Inf int     // how many r are NaN, how many ±Inf
}

// NonFinite reports whether an r is NaN or ±Inf: the step that made the
// error must be rejected.
func (n Norm) NonFinite() bool { return n.NaN > 0 || n.Inf > 0 }

// ErrorNorm returns the RMS norm of the scaled error
//
//	r[i] = e[i] / (atol + rtol·max(|y0[i]|, |y1[i]|))
//
// (max NaN when either is), the adaptive solvers' error norm. Each r[i]
// is formed in T with the operations of the CPU solvers', rounded alike
// (no contraction), so the ratios are theirs bit for bit; a float32 ratio
// that overflows from finite e and w is formed in float64 instead (the
// CPU solvers then fall back to float64 too) and is not counted in Inf.
// The squares are summed in float64 (the CPU sums float32 squares in
// float32 blocks of 256: float32 norms differ from its by that rounding).
// Squares that would overflow or underflow float64 are summed again
// scaled by a power of two near 1/Max. Two kernels (one record per block,
// then one block reducing the records) and one copy of four float64 to
// the host.
func ErrorNorm[T tensor.Float](k *Kernels, e, y0, y1 Buffer[T], atol, rtol T) (Norm, error) {
	if err := sameLen("ErrorNorm", e.n, y0.n, y1.n); err != nil || e.n == 0 {
		return Norm{}, err
	}
	if err := k.enter(); err != nil {
		return Norm{}, err
	}
	defer k.leave()
	fn := kernelIndex[T](kErrNorm)
	rec, err := k.errNorm(fn, e.ptr, y0.ptr, y1.ptr, scalar(atol), scalar(rtol), 1, e.n)
	if err != nil {
		return Norm{}, err
	}
	return k.normOf(rec, fn, e.ptr, y0.ptr, y1.ptr, scalar(atol), scalar(rtol), e.n)
}

// errNorm runs the error norm's two kernels with the squares scaled by
// scale and returns the record: Σ (scale·r)², max |r|, #NaN, #Inf. Call
// between enter and leave.
func (k *Kernels) errNorm(fn int, e, y0, y1 uintptr, atol, rtol uint64, scale float64, n int) ([4]float64, error) {
	var rec [4]float64
	if err := k.errNormInto(0, fn, e, y0, y1, atol, rtol, scale, n); err != nil {
		return rec, err
	}
	err := k.libs.check("cuMemcpyDtoH_v2", k.libs.drv.cuMemcpyDtoH(unsafe.Pointer(&rec[0]), k.normSlot(0), uintptr(len(rec)*8)))
	return rec, err
}

// normSlot returns the device address of result slot i (of MaxNormParts)
// of the error norms.
func (k *Kernels) normSlot(i int) uintptr { return k.norm + uintptr(4*maxParts+4*i)*8 }

// errNormInto runs the error norm's two kernels, the record into result
// slot i. The number of blocks is a function of n alone, so the sum's
// order is too. Call between enter and leave.
func (k *Kernels) errNormInto(i, fn int, e, y0, y1 uintptr, atol, rtol uint64, scale float64, n int) error {
	parts := sumParts(n)
	if err := k.launch(fn, parts, uint64(k.norm), uint64(e), uint64(y0), uint64(y1), atol, rtol, math.Float64bits(scale), uint64(n)); err != nil {
		return err
	}
	return k.launch(kErrNormFinal, 1, uint64(k.normSlot(i)), uint64(k.norm), uint64(parts))
}

// normOf finishes the norm of n ratios from their record rec: rescaled
// (the kernels run again, the squares scaled by a power of two near
// 1/Max) where the squares' sum overflowed or may have lost range. Call
// between enter and leave.
func (k *Kernels) normOf(rec [4]float64, fn int, e, y0, y1 uintptr, atol, rtol uint64, n int) (Norm, error) {
	res := Norm{Max: rec[1], NaN: int(rec[2]), Inf: int(rec[3])}
	sum, scale := rec[0], 1.0
	if res.Max > 0 && (math.IsInf(sum, 1) || res.Max > 0x1p+500 || res.Max < 0x1p-500) {
		_, exp := math.Frexp(res.Max)
		scale = math.Ldexp(1, min(-exp, 1000))
		r, err := k.errNorm(fn, e, y0, y1, atol, rtol, scale, n)
		if err != nil {
			return Norm{}, err
		}
		sum = r[0]
	}
	switch {
	case res.NaN > 0:
		res.RMS = math.NaN()
	case res.Inf > 0:
		res.RMS = math.Inf(1)
	default:
		res.RMS = math.Sqrt(sum/float64(n)) / scale
	}
	return res, nil
}

// MaxNormParts is the most parts MixedErrorNorm takes.
const MaxNormParts = 64

// MixedErrorNorm returns torchdiffeq's mixed norm of the scaled error
// (its adjoint's default): the state is the parts of the given lengths,
// one after another (the state, its adjoint, the parameters' gradients,
// each as one part), and
//
//	RMS = max over the parts p of √(Σ_{i∈p} r[i]² / |p|)
//
// with r as ErrorNorm forms it (the CPU solvers' ratios, to the bit), a
// part of no elements counting 0. Max is the largest finite |r| of all,
// NaN and Inf count all the ratios; RMS is NaN if a ratio is NaN, else
// +Inf if one is infinite. A seminorm leaves the parameters' part out: pass
// the lengths of the others, and e, y0, y1 only as long as they are. Two
// kernels a part and one copy of 4 float64 a part to the host (again for a
// part whose squares leave float64's range). The lengths must be ≥ 0, at
// most MaxNormParts of them, and add up to the buffers' length.
func MixedErrorNorm[T tensor.Float](k *Kernels, e, y0, y1 Buffer[T], atol, rtol T, parts []int) (Norm, error) {
	if err := sameLen("MixedErrorNorm", e.n, y0.n, y1.n); err != nil {
		return Norm{}, err
	}
	if len(parts) > MaxNormParts {
		return Norm{}, fmt.Errorf("cuda: MixedErrorNorm: %d parts, at most %d", len(parts), MaxNormParts)
	}
	total := 0
	for _, p := range parts {
		if p < 0 {
			return Norm{}, fmt.Errorf("cuda: MixedErrorNorm: parts %v: a negative length", parts)
		}
		total += p
	}
	if total != e.n {
		return Norm{}, fmt.Errorf("cuda: MixedErrorNorm: parts %v of %d elements for buffers of %d", parts, total, e.n)
	}
	if e.n == 0 {
		return Norm{}, nil
	}
	if err := k.enter(); err != nil {
		return Norm{}, err
	}
	defer k.leave()
	fn, sz := kernelIndex[T](kErrNorm), elemSize[T]()
	at, rt := scalar(atol), scalar(rtol)
	off := uintptr(0)
	for i, p := range parts {
		if p > 0 {
			if err := k.errNormInto(i, fn, e.ptr+off*sz, y0.ptr+off*sz, y1.ptr+off*sz, at, rt, 1, p); err != nil {
				return Norm{}, err
			}
		}
		off += uintptr(p)
	}
	var recs [MaxNormParts][4]float64
	if err := k.libs.check("cuMemcpyDtoH_v2", k.libs.drv.cuMemcpyDtoH(unsafe.Pointer(&recs[0]), k.normSlot(0), uintptr(len(parts)*4*8))); err != nil {
		return Norm{}, err
	}
	var res Norm
	off = 0
	for i, p := range parts {
		if p > 0 {
			n, err := k.normOf(recs[i], fn, e.ptr+off*sz, y0.ptr+off*sz, y1.ptr+off*sz, at, rt, p)
			if err != nil {
				return Norm{}, err
			}
			res.Max = max(res.Max, n.Max)
			res.NaN += n.NaN
			res.Inf += n.Inf
			if !(n.RMS <= res.RMS) { // NaN wins
				res.RMS = n.RMS
			}
		}
		off += uintptr(p)
	}
	switch {
	case res.NaN > 0:
		res.RMS = math.NaN()
	case res.Inf > 0:
		res.RMS = math.Inf(1)
	}
	return res, nil
}
