package tensor

import (
	"fmt"
	"math"
	"runtime"
)

// binaryCheck panics unless x, y and z share a shape.
func (z *Tensor[T]) binaryCheck(op string, x, y *Tensor[T]) {
	mustSameShape(op, x.shape, y.shape)
	mustSameShape(op, z.shape, x.shape)
}

// Add sets z = x + y elementwise and returns z.
func (z *Tensor[T]) Add(x, y *Tensor[T]) *Tensor[T] {
	z.wrote()
	z.binaryCheck("Add", x, y)
	zd, xd, yd := z.data, x.host()[:len(z.data)], y.host()[:len(z.data)]
	for i := range zd {
		zd[i] = xd[i] + yd[i]
	}
	return z
}

// Sub sets z = x − y elementwise and returns z.
func (z *Tensor[T]) Sub(x, y *Tensor[T]) *Tensor[T] {
	z.wrote()
	z.binaryCheck("Sub", x, y)
	zd, xd, yd := z.data, x.host()[:len(z.data)], y.host()[:len(z.data)]
	for i := range zd {
		zd[i] = xd[i] - yd[i]
	}
	return z
}

// Mul sets z = x ⊙ y (elementwise product) and returns z.
func (z *Tensor[T]) Mul(x, y *Tensor[T]) *Tensor[T] {
	z.wrote()
	z.binaryCheck("Mul", x, y)
	zd, xd, yd := z.data, x.host()[:len(z.data)], y.host()[:len(z.data)]
	for i := range zd {
		zd[i] = xd[i] * yd[i]
	}
	return z
}

// Div sets z = x ⊘ y (elementwise quotient) and returns z.
func (z *Tensor[T]) Div(x, y *Tensor[T]) *Tensor[T] {
	z.wrote()
	z.binaryCheck("Div", x, y)
	zd, xd, yd := z.data, x.host()[:len(z.data)], y.host()[:len(z.data)]
	for i := range zd {
		zd[i] = xd[i] / yd[i]
	}
	return z
}

// Scale sets z = a·x and returns z.
func (z *Tensor[T]) Scale(x *Tensor[T], a T) *Tensor[T] {
	z.wrote()
	mustSameShape("Scale", z.shape, x.shape)
	zd, xd := z.data, x.host()[:len(z.data)]
	for i := range zd {
		zd[i] = a * xd[i]
	}
	return z
}

// AddScalar sets z = x + a and returns z.
func (z *Tensor[T]) AddScalar(x *Tensor[T], a T) *Tensor[T] {
	z.wrote()
	mustSameShape("AddScalar", z.shape, x.shape)
	zd, xd := z.data, x.host()[:len(z.data)]
	for i := range zd {
		zd[i] = xd[i] + a
	}
	return z
}

// Axpy sets z = z + a·x (BLAS axpy) and returns z.
func (z *Tensor[T]) Axpy(a T, x *Tensor[T]) *Tensor[T] {
	z.wrote()
	mustSameShape("Axpy", z.shape, x.shape)
	AxpySlice(a, x.host(), z.data)
	return z
}

// AxpySlice sets y[i] += a·x[i] for every i < len(y) (BLAS axpy on slices;
// x must be at least as long as y): in AVX-512 or AVX2 assembly on those
// kernel paths, else on amd64 with the SIMD kernels of gonum's BLAS (about
// 5x a plain loop on 512 float32 in the first-level cache), elsewhere in
// axpyGo; all round the product before the sum, so they agree bit for bit.
func AxpySlice[T Float](a T, x, y []T) {
	n := len(y)
	if n == 0 {
		return
	}
	x = x[:n]
	switch y := any(y).(type) {
	case []float32:
		if axpyAVX {
			axpyAsm(float32(a), &any(x).([]float32)[0], &y[0], n)
			return
		}
		if gonumRounds {
			gonumBLAS.Saxpy(n, float32(a), any(x).([]float32), 1, y, 1)
			return
		}
	case []float64:
		if axpyAVX {
			axpy64Asm(float64(a), &any(x).([]float64)[0], &y[0], n)
			return
		}
		if gonumRounds {
			gonumBLAS.Daxpy(n, float64(a), any(x).([]float64), 1, y, 1)
			return
		}
	}
	axpyGo(a, x, y)
}

// gonumRounds reports whether gonum's Saxpy and Daxpy round each product
// before the sum: on amd64 they are assembly; elsewhere they are Go loops
// that the compiler may fuse into multiply-adds (it does on arm64).
const gonumRounds = runtime.GOARCH == "amd64"

// axpyGo sets y[i] += a·x[i] for i < len(y), the product rounded before
// the sum: the conversion keeps the compiler from fusing the two into a
// multiply-add, as it does on arm64, ppc64le, s390x, riscv64 and with
// GOAMD64=v3 (the Go specification lets it unless a conversion rounds).
func axpyGo[T Float](a T, x, y []T) {
	x = x[:len(y)]
	for i, v := range x {
		y[i] += T(a * v)
	}
}

// AddColumnSums adds the column sums of the row-major matrix x, of
// len(dst) columns, to dst:
//
//	dst[j] += Σ_i x[i·len(dst) + j]
//
// (a bias gradient from the output gradient of a Linear). float32 on the
// avx512 and avx2 kernel paths sums in registers, even and odd rows apart,
// then adds to dst (the same sums on both); other types and paths add x's
// rows to dst one at a time. It panics
// if len(x) is not a multiple of len(dst).
func AddColumnSums[T Float](dst, x []T) {
	cols := len(dst)
	if cols == 0 || len(x)%cols != 0 {
		if cols == 0 && len(x) == 0 {
			return
		}
		panic(fmt.Sprintf("tensor.AddColumnSums: %d values are not rows of %d columns", len(x), cols))
	}
	rows := len(x) / cols
	if rows == 0 {
		return
	}
	if d, ok := any(dst).([]float32); ok && axpyAVX {
		colSumsAsm(&d[0], &any(x).([]float32)[0], rows, cols)
		return
	}
	for i := range rows {
		AxpySlice(1, x[i*cols:(i+1)*cols], dst)
	}
}

// LinearCombination sets
//
//	dst[i] = base[i] + coef[0]·src[0][i] + … + coef[m−1]·src[m−1][i]
//
// for i < len(dst) (base nil: 0 + …), each product rounded before it is
// added and the terms added in order: bit for bit a copy of base followed
// by AxpySlice(coef[j], src[j], dst) for each j (on the avx512 and avx2
// kernel paths in one pass, the sums in registers, for up to 16 terms). dst
// may be base but must not overlap a source. It panics if coef and src
// differ in length or base or a source is shorter than dst.
func LinearCombination[T Float](dst, base, coef []T, src [][]T) {
	n := len(dst)
	if len(coef) != len(src) {
		panic(fmt.Sprintf("tensor.LinearCombination: %d coefficients for %d sources", len(coef), len(src)))
	}
	if base != nil && len(base) < n {
		panic(fmt.Sprintf("tensor.LinearCombination: base of %d elements for %d", len(base), n))
	}
	for j, s := range src {
		if len(s) < n {
			panic(fmt.Sprintf("tensor.LinearCombination: source %d of %d elements for %d", j, len(s), n))
		}
	}
	if n == 0 {
		return
	}
	if d, ok := any(dst).([]float32); ok && axpyAVX && len(src) <= 16 {
		var ptrs [16]*float32
		var cs [16]float32
		for j, s := range src {
			ptrs[j], cs[j] = &any(s).([]float32)[0], float32(coef[j])
		}
		var bp *float32
		if base != nil {
			bp = &any(base).([]float32)[0]
		}
		linCombAsm(&d[0], bp, n, &cs[0], &ptrs[0], len(src))
		return
	}
	if d, ok := any(dst).([]float64); ok && axpyAVX && len(src) <= 16 {
		var ptrs [16]*float64
		var cs [16]float64
		for j, s := range src {
			ptrs[j], cs[j] = &any(s).([]float64)[0], float64(coef[j])
		}
		var bp *float64
		if base != nil {
			bp = &any(base).([]float64)[0]
		}
		linComb64Asm(&d[0], bp, n, &cs[0], &ptrs[0], len(src))
		return
	}
	const block = 512 // a block of dst stays in the first-level cache across the terms
	for lo := 0; lo < n; lo += block {
		hi := min(lo+block, n)
		d := dst[lo:hi]
		if base != nil {
			copy(d, base[lo:hi])
		} else {
			clear(d)
		}
		for j, s := range src {
			AxpySlice(coef[j], s[lo:hi], d)
		}
	}
}

// AddScaled sets z = x + a·y and returns z.
func (z *Tensor[T]) AddScaled(x *Tensor[T], a T, y *Tensor[T]) *Tensor[T] {
	z.wrote()
	z.binaryCheck("AddScaled", x, y)
	zd, xd, yd := z.data, x.host()[:len(z.data)], y.host()[:len(z.data)]
	for i := range zd {
		zd[i] = xd[i] + a*yd[i]
	}
	return z
}

// unary applies z[i] = f(x[i]).
func unary[T Float](op string, z, x *Tensor[T], f func(T) T) *Tensor[T] {
	mustSameShape(op, z.shape, x.shape)
	zd, xd := z.data, x.host()[:len(z.data)]
	for i := range zd {
		zd[i] = f(xd[i])
	}
	return z
}

// unary64 applies z[i] = f(x[i]) for a function computed in float64. For
// float32 tensors it converts blocks of elements to float64 first and back
// after: converting inside the loop chains every element to the one before
// through the conversion's false register dependency, which makes maps like
// tanh three times slower.
func unary64[T Float](op string, z, x *Tensor[T], f func(float64) float64) *Tensor[T] {
	mustSameShape(op, z.shape, x.shape)
	zd, xd := z.data, x.host()[:len(z.data)]
	var z0 T
	if _, ok := any(z0).(float32); !ok {
		for i, v := range xd {
			zd[i] = T(f(float64(v)))
		}
		return z
	}
	var buf [256]float64
	for lo := 0; lo < len(zd); lo += len(buf) {
		n := min(len(buf), len(zd)-lo)
		b := buf[:n]
		for j, v := range xd[lo : lo+n] {
			b[j] = float64(v)
		}
		for j, v := range b {
			b[j] = f(v)
		}
		for j, v := range b {
			zd[lo+j] = T(v)
		}
	}
	return z
}

// vecMap sets z = f(x): with the float32 kernel k of the vector-math path
// for float32 tensors, the float64 kernel k64 of the float64 path for
// float64 ones, else (named float types) with f64 computed in float64.
func vecMap[T Float](op string, z, x *Tensor[T], k func(z, x []float32), k64 func(z, x []float64), f64 func(float64) float64) *Tensor[T] {
	mustSameShape(op, z.shape, x.shape)
	switch zd := any(z.data).(type) {
	case []float32:
		k(zd, any(x.host()).([]float32))
		return z
	case []float64:
		k64(zd, any(x.host()).([]float64))
		return z
	}
	return unary64(op, z, x, f64)
}

// Map sets z[i] = f(x[i]) for every element and returns z.
func (z *Tensor[T]) Map(x *Tensor[T], f func(T) T) *Tensor[T] {
	z.wrote()
	return unary("Map", z, x, f)
}

// Exp sets z = exp(x) elementwise and returns z.
func (z *Tensor[T]) Exp(x *Tensor[T]) *Tensor[T] {
	z.wrote()
	return vecMap("Exp", z, x, vec.exp, vec64.exp, math.Exp)
}

// Log sets z = ln(x) elementwise and returns z.
func (z *Tensor[T]) Log(x *Tensor[T]) *Tensor[T] {
	z.wrote()
	return vecMap("Log", z, x, vec.log, vec64.log, math.Log)
}

// Sqrt sets z = √x elementwise and returns z.
func (z *Tensor[T]) Sqrt(x *Tensor[T]) *Tensor[T] {
	z.wrote()
	return vecMap("Sqrt", z, x, vec.sqrt, vec64.sqrt, math.Sqrt)
}

// Square sets z = x² elementwise and returns z.
func (z *Tensor[T]) Square(x *Tensor[T]) *Tensor[T] {
	z.wrote()
	return unary("Square", z, x, func(v T) T { return v * v })
}

// Neg sets z = −x and returns z.
func (z *Tensor[T]) Neg(x *Tensor[T]) *Tensor[T] {
	z.wrote()
	return unary("Neg", z, x, func(v T) T { return -v })
}

// Tanh sets z = tanh(x) elementwise and returns z.
func (z *Tensor[T]) Tanh(x *Tensor[T]) *Tensor[T] {
	z.wrote()
	return vecMap("Tanh", z, x, vec.tanh, vec64.tanh, math.Tanh)
}

// SigmoidOf returns the logistic function σ(v) = 1/(1+e^−v), computed without
// overflow for large |v|.
func SigmoidOf(v float64) float64 {
	if v >= 0 {
		return 1 / (1 + math.Exp(-v))
	}
	e := math.Exp(v)
	return e / (1 + e)
}

// SoftplusOf returns softplus(v) = ln(1 + e^v), computed without overflow.
func SoftplusOf(v float64) float64 {
	if v > 0 {
		return v + math.Log1p(math.Exp(-v))
	}
	return math.Log1p(math.Exp(v))
}

// Sigmoid sets z = σ(x) = 1/(1+e^−x) elementwise and returns z.
func (z *Tensor[T]) Sigmoid(x *Tensor[T]) *Tensor[T] {
	z.wrote()
	return vecMap("Sigmoid", z, x, vec.sigmoid, vec64.sigmoid, SigmoidOf)
}

// Softplus sets z = ln(1+eˣ) elementwise and returns z.
func (z *Tensor[T]) Softplus(x *Tensor[T]) *Tensor[T] {
	z.wrote()
	return vecMap("Softplus", z, x, vec.softplus, vec64.softplus, SoftplusOf)
}

// ReLU sets z = max(x, 0) elementwise and returns z. NaN stays NaN, and
// −0 gives +0.
func (z *Tensor[T]) ReLU(x *Tensor[T]) *Tensor[T] {
	z.wrote()
	mustSameShape("ReLU", z.shape, x.shape)
	if z32, ok := any(z.data).([]float32); ok {
		vec.relu(z32, any(x.host()).([]float32))
		return z
	}
	if z64, ok := any(z.data).([]float64); ok && axpyAVX && len(z64) > 0 {
		relu64Asm(z64, any(x.host()).([]float64)[:len(z64)])
		return z
	}
	zd, xd := z.data, x.host()[:len(z.data)]
	for i, v := range xd {
		zd[i] = max(v, 0) // branch-free: signs are random, a branch mispredicts
	}
	return z
}

// ReLUBackward sets z = g ⊙ [y > 0], or adds it to z with accumulate: the
// gradient of a ReLU given its output y and output gradient g. Where y is
// not positive or is NaN, z gets +0 whatever g is (NaN and ±Inf included).
// It returns z.
func (z *Tensor[T]) ReLUBackward(g, y *Tensor[T], accumulate bool) *Tensor[T] {
	z.wrote()
	mustSameShape("ReLUBackward", z.shape, g.shape)
	mustSameShape("ReLUBackward", z.shape, y.shape)
	switch zd := any(z.data).(type) {
	case []float32:
		vec.reluBwd(zd, any(g.host()).([]float32), any(y.host()).([]float32), accumulate)
	case []float64:
		reluMask64(zd, any(g.host()).([]float64), any(y.host()).([]float64), accumulate)
	default: // a named float type
		gd := g.host()
		for i, v := range y.host() {
			var m T
			if v > 0 {
				m = 1
			}
			if accumulate {
				z.data[i] += m * gd[i]
			} else {
				z.data[i] = m * gd[i]
			}
		}
	}
	return z
}

// bwdMap runs the backward kernel k (float32) or k64 (float64) of the
// vector-math paths on z, g and y if they hold float32 or float64, and
// reports whether it did.
func bwdMap[T Float](z, g, y *Tensor[T], accumulate bool, k func(z, g, y []float32, acc bool), k64 func(z, g, y []float64, acc bool)) bool {
	switch zd := any(z.data).(type) {
	case []float32:
		k(zd, any(g.host()).([]float32), any(y.host()).([]float32), accumulate)
		return true
	case []float64:
		k64(zd, any(g.host()).([]float64), any(y.host()).([]float64), accumulate)
		return true
	}
	return false
}

// TanhBackward sets z = g ⊙ (1 − y²), or adds it to z with accumulate: the
// gradient of a Tanh given its output y and output gradient g. float32 and
// float64 tensors round 1 − y² once (so that it keeps its relative accuracy
// as |y| nears 1) and are within an ulp of the exact product. It returns z.
func (z *Tensor[T]) TanhBackward(g, y *Tensor[T], accumulate bool) *Tensor[T] {
	z.wrote()
	mustSameShape("TanhBackward", z.shape, g.shape)
	mustSameShape("TanhBackward", z.shape, y.shape)
	if bwdMap(z, g, y, accumulate, vec.tanhBwd, vec64.tanhBwd) {
		return z
	}
	zd, gd, yd := z.data, g.host()[:len(z.data)], y.host()[:len(z.data)]
	if accumulate {
		for i, v := range yd {
			zd[i] += gd[i] * (1 - v*v)
		}
	} else {
		for i, v := range yd {
			zd[i] = gd[i] * (1 - v*v)
		}
	}
	return z
}

// SigmoidBackward sets z = g ⊙ y(1 − y), or adds it to z with accumulate:
// the gradient of a Sigmoid given its output y and output gradient g.
// float32 and float64 tensors compute y(1 − y) as y − y², rounded once,
// and are within an ulp of the exact product. It returns z.
func (z *Tensor[T]) SigmoidBackward(g, y *Tensor[T], accumulate bool) *Tensor[T] {
	z.wrote()
	mustSameShape("SigmoidBackward", z.shape, g.shape)
	mustSameShape("SigmoidBackward", z.shape, y.shape)
	if bwdMap(z, g, y, accumulate, vec.sigmoidBwd, vec64.sigmoidBwd) {
		return z
	}
	zd, gd, yd := z.data, g.host()[:len(z.data)], y.host()[:len(z.data)]
	if accumulate {
		for i, v := range yd {
			zd[i] += gd[i] * (v * (1 - v))
		}
	} else {
		for i, v := range yd {
			zd[i] = gd[i] * (v * (1 - v))
		}
	}
	return z
}

// SoftplusBackward sets z = g ⊙ σ(x), or adds it to z with accumulate: the
// gradient of a Softplus given its output y = softplus(x) ≥ 0 and output
// gradient g, with σ(x) = 1 − e^−y = −expm1(−y), accurate where y is tiny:
// float32 and float64 tensors compute it from the vector exp's reduction
// (within 2 ulps with the product), named float types with math.Expm1. It
// returns z.
func (z *Tensor[T]) SoftplusBackward(g, y *Tensor[T], accumulate bool) *Tensor[T] {
	z.wrote()
	mustSameShape("SoftplusBackward", z.shape, g.shape)
	mustSameShape("SoftplusBackward", z.shape, y.shape)
	if bwdMap(z, g, y, accumulate, vec.softplusBwd, vec64.softplusBwd) {
		return z
	}
	zd, gd, yd := z.data, g.host()[:len(z.data)], y.host()[:len(z.data)]
	for i, v := range yd {
		d := gd[i] * T(-math.Expm1(-float64(v)))
		if accumulate {
			zd[i] += d
		} else {
			zd[i] = d
		}
	}
	return z
}

func reluMask64(z, g, y []float64, acc bool) {
	g, y = g[:len(z)], y[:len(z)]
	if axpyAVX {
		reluBwd64Asm(z, g, y, acc)
		return
	}
	for i := range z {
		var m uint64
		if y[i] > 0 { // false for NaN
			m = ^uint64(0)
		}
		v := math.Float64frombits(math.Float64bits(g[i]) & m)
		if acc {
			z[i] += v
		} else {
			z[i] = v
		}
	}
}

// LeakyReLU sets z = x for x > 0 and slope·x otherwise, and returns z.
func (z *Tensor[T]) LeakyReLU(x *Tensor[T], slope T) *Tensor[T] {
	z.wrote()
	mustSameShape("LeakyReLU", z.shape, x.shape)
	if z32, ok := any(z.data).([]float32); ok {
		vec.leaky(z32, any(x.host()).([]float32), float32(slope))
		return z
	}
	if z64, ok := any(z.data).([]float64); ok && axpyAVX && len(z64) > 0 {
		leaky64Asm(z64, any(x.host()).([]float64)[:len(z64)], float64(slope))
		return z
	}
	zd, xd := z.data, x.host()[:len(z.data)]
	for i, v := range xd {
		if v > 0 {
			zd[i] = v
		} else {
			zd[i] = slope * v
		}
	}
	return z
}

// LeakyReLUBackward sets z = g where y > 0 and slope·g elsewhere, or adds
// it to z with accumulate: the gradient of a LeakyReLU given its input y, or
// its output where slope > 0 (which keeps the sign), and output gradient g.
// It returns z.
func (z *Tensor[T]) LeakyReLUBackward(g, y *Tensor[T], slope T, accumulate bool) *Tensor[T] {
	z.wrote()
	mustSameShape("LeakyReLUBackward", z.shape, g.shape)
	mustSameShape("LeakyReLUBackward", z.shape, y.shape)
	if z32, ok := any(z.data).([]float32); ok {
		vec.leakyBwd(z32, any(g.host()).([]float32), any(y.host()).([]float32), float32(slope), accumulate)
		return z
	}
	if z64, ok := any(z.data).([]float64); ok {
		leakyMask64(z64, any(g.host()).([]float64), any(y.host()).([]float64), float64(slope), accumulate)
	}
	return z
}

// leakyMask64 is LeakyReLUBackward in float64: z = g where y > 0, else
// slope·g, or added to z with acc.
func leakyMask64(z, g, y []float64, slope float64, acc bool) {
	g, y = g[:len(z)], y[:len(z)]
	if axpyAVX {
		leakyBwd64Asm(z, g, y, slope, acc)
		return
	}
	for i, v := range y {
		d := g[i]
		if !(v > 0) {
			d *= slope
		}
		if acc {
			z[i] += d
		} else {
			z[i] = d
		}
	}
}

// Hardtanh sets z = min(max(x, lo), hi) elementwise and returns z.
func (z *Tensor[T]) Hardtanh(x *Tensor[T], lo, hi T) *Tensor[T] {
	z.wrote()
	if lo > hi {
		panic(&ShapeError{Op: "Hardtanh", Msg: fmt.Sprintf("lower bound %v above upper bound %v", lo, hi)})
	}
	mustSameShape("Hardtanh", z.shape, x.shape)
	zd, xd := z.data, x.host()[:len(z.data)]
	for i, v := range xd {
		zd[i] = min(max(v, lo), hi)
	}
	return z
}

// channelLayout checks that x is [B, C, ...] (rank ≥ 2) with C = c and
// returns B and the size of the trailing (spatial) dimensions.
func channelLayout(op string, xshape []int, c int) (batch, inner int) {
	if len(xshape) < 2 || xshape[1] != c {
		panic(&ShapeError{Op: op, Msg: fmt.Sprintf("per-channel shape [%d] does not fit tensor shape %v (want [B, %d, ...])", c, xshape, c)})
	}
	inner = 1
	for _, d := range xshape[2:] {
		inner *= d
	}
	return xshape[0], inner
}

// AddBias sets z[b, c, ...] = x[b, c, ...] + bias[c] for x of shape [B, C]
// or [B, C, H, W] (any rank ≥ 2) and bias of shape [C], and returns z.
func (z *Tensor[T]) AddBias(x, bias *Tensor[T]) *Tensor[T] {
	z.wrote()
	mustSameShape("AddBias", z.shape, x.shape)
	if len(bias.shape) != 1 {
		panic(newShapeError("AddBias", x.shape, bias.shape))
	}
	c := bias.shape[0]
	batch, inner := channelLayout("AddBias", x.shape, c)
	bd, xa := bias.host(), x.host()
	for b := 0; b < batch; b++ {
		for ch := 0; ch < c; ch++ {
			off := (b*c + ch) * inner
			bv := bd[ch]
			zd, xd := z.data[off:off+inner], xa[off:off+inner]
			for i := range zd {
				zd[i] = xd[i] + bv
			}
		}
	}
	return z
}

// SumPerChannel sets dst[c] = Σ_{b, ...} x[b, c, ...] for x of rank ≥ 2 and
// dst of shape [C], and returns dst. It is the adjoint of AddBias.
func (dst *Tensor[T]) SumPerChannel(x *Tensor[T]) *Tensor[T] {
	dst.wrote()
	if len(dst.shape) != 1 {
		panic(newShapeError("SumPerChannel", dst.shape, x.shape))
	}
	c := dst.shape[0]
	batch, inner := channelLayout("SumPerChannel", x.shape, c)
	clear(dst.data)
	xd := x.host()
	for b := 0; b < batch; b++ {
		for ch := 0; ch < c; ch++ {
			off := (b*c + ch) * inner
			var s T
			for _, v := range xd[off : off+inner] {
				s += v
			}
			dst.data[ch] += s
		}
	}
	return dst
}
