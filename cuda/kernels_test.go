package cuda

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

// kernels returns the kernels on device 0, closed at the test's end; the
// test skips without NVRTC and the driver (and without the stand-in).
func kernels(t *testing.T) *Kernels {
	t.Helper()
	if _, err := loadedKernelLibs(); err != nil {
		t.Skipf("no NVRTC and driver, and no stand-in: %v", err)
	}
	k, err := NewKernels(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := k.Close(); err != nil {
			t.Error(err)
		}
	})
	return k
}

// toDevice returns a new Buffer holding x, freed at the test's end.
func toDevice[T tensor.Float](t *testing.T, k *Kernels, x []T) Buffer[T] {
	t.Helper()
	b, err := Alloc[T](k, len(x))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := Free(k, b); err != nil {
			t.Error(err)
		}
	})
	if err := Upload(k, b, x); err != nil {
		t.Fatal(err)
	}
	return b
}

func fromDevice[T tensor.Float](t *testing.T, k *Kernels, b Buffer[T]) []T {
	t.Helper()
	x := make([]T, b.Len())
	if err := Download(k, x, b); err != nil {
		t.Fatal(err)
	}
	return x
}

// lengths are the sizes the kernels run on: empty, one, a block and
// around it, and more than the stand-in's largest grid (4 multiprocessors ×
// 32 blocks × 256 threads), so the grid-stride loops go round.
var lengths = []int{0, 1, 7, 255, 256, 257, 1000, 40000}

// edges are the values every kernel meets besides random ones.
var edges = []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1e-30, -1e-30, 20, -20, 88, 89, -88, -104, 710, -745, 1e30, -1e30,
	math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat32, 1e-45, 5e-324, math.MaxFloat64}

// values returns n values of T: the edges first, then random ones of
// magnitudes from 1e-3 to 1e2, signs mixed.
func values[T tensor.Float](r *rand.Rand, n int) []T {
	x := make([]T, n)
	for i := range x {
		if i < len(edges) && n > 2*len(edges) {
			x[i] = T(edges[i])
			continue
		}
		v := math.Pow(10, -3+5*r.Float64())
		if r.IntN(2) == 0 {
			v = -v
		}
		x[i] = T(v)
	}
	return x
}

func isNaN[T tensor.Float](v T) bool { return v != v }

// same reports whether a and b are the same value (NaN the same as NaN,
// the signs of zero told apart).
func same[T tensor.Float](a, b T) bool {
	if isNaN(a) || isNaN(b) {
		return isNaN(a) && isNaN(b)
	}
	return a == b && math.Signbit(float64(a)) == math.Signbit(float64(b))
}

// ulp returns the spacing of T's values at |v|.
func ulp[T tensor.Float](v T) float64 {
	a := math.Abs(float64(v))
	if _, ok := any(v).(float32); ok {
		return float64(math.Nextafter32(float32(a), float32(math.Inf(1)))) - a
	}
	return math.Nextafter(a, math.Inf(1)) - a
}

// within reports whether got is want to tol ulps of want (NaN as NaN,
// infinities exactly).
func within[T tensor.Float](got, want T, tol float64) bool {
	if same(got, want) {
		return true
	}
	if isNaN(got) || isNaN(want) || math.IsInf(float64(want), 0) || math.IsInf(float64(got), 0) {
		return same(got, want) || got == want
	}
	return math.Abs(float64(got)-float64(want)) <= tol*ulp(want)
}

func bothTypes(t *testing.T, f32, f64 func(t *testing.T)) {
	t.Run("float32", f32)
	t.Run("float64", f64)
}

// TestFillCopy: Fill sets every element, Copy copies every bit (NaN,
// infinities, −0 and subnormals among them), on every length.
func TestFillCopy(t *testing.T) {
	k := kernels(t)
	bothTypes(t, func(t *testing.T) { testFillCopy[float32](t, k) }, func(t *testing.T) { testFillCopy[float64](t, k) })
}

func testFillCopy[T tensor.Float](t *testing.T, k *Kernels) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range lengths {
		x := values[T](r, n)
		src, dst := toDevice(t, k, x), toDevice(t, k, make([]T, n))
		if err := Copy(k, dst, src); err != nil {
			t.Fatal(err)
		}
		for i, v := range fromDevice(t, k, dst) {
			if !same(v, x[i]) {
				t.Fatalf("n=%d: Copy[%d] = %v, want %v", n, i, v, x[i])
			}
		}
		for _, v := range []T{T(math.NaN()), T(math.Inf(-1)), T(math.Copysign(0, -1)), 3.25} {
			if err := Fill(k, dst, v); err != nil {
				t.Fatal(err)
			}
			for i, got := range fromDevice(t, k, dst) {
				if !same(got, v) {
					t.Fatalf("n=%d: Fill(%v)[%d] = %v", n, v, i, got)
				}
			}
		}
		if n > 3 { // a part of a buffer: the rest untouched
			if err := Fill(k, dst.Slice(1, 3), 7); err != nil {
				t.Fatal(err)
			}
			got := fromDevice(t, k, dst)
			if got[0] != 3.25 || got[1] != 7 || got[2] != 7 || got[3] != 3.25 {
				t.Fatalf("n=%d: Fill of [1, 3): %v", n, got[:4])
			}
		}
	}
}

// linCombRef is the CPU's linear combination: each product rounded, the
// terms added in order.
func linCombRef[T tensor.Float](base []T, coef []T, src [][]T, n int) []T {
	y := make([]T, n)
	for i := range y {
		var s T
		if base != nil {
			s = base[i]
		}
		for j, c := range coef {
			p := T(c * src[j][i]) // the conversion forbids fusing the product into the sum
			s += p
		}
		y[i] = s
	}
	return y
}

// TestLinComb: y = base + Σ cⱼ kⱼ for 0 to MaxTerms terms, with and
// without base, in place over base, equals the CPU's sum bit for bit
// (tensor.LinearCombination and the reference), NaN and Inf included; 12
// terms in two calls are the sum of 12.
func TestLinComb(t *testing.T) {
	k := kernels(t)
	bothTypes(t, func(t *testing.T) { testLinComb[float32](t, k) }, func(t *testing.T) { testLinComb[float64](t, k) })
}

func testLinComb[T tensor.Float](t *testing.T, k *Kernels) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 257, 40000} {
		base := values[T](r, n)
		var src [][]T
		var bufs []Buffer[T]
		for range MaxTerms {
			s := values[T](r, n)
			r.Shuffle(n, func(i, j int) { s[i], s[j] = s[j], s[i] }) // edges meet other values
			src = append(src, s)
			bufs = append(bufs, toDevice(t, k, s))
		}
		coef := make([]T, MaxTerms)
		for j := range coef {
			coef[j] = T(r.NormFloat64())
		}
		for m := 0; m <= MaxTerms; m++ {
			for _, mode := range []string{"base", "no base", "in place"} {
				dst := toDevice(t, k, make([]T, n))
				b := toDevice(t, k, base)
				var want []T
				switch mode {
				case "base":
					want = linCombRef(base, coef[:m], src[:m], n)
				case "no base":
					b = Buffer[T]{}
					want = linCombRef(nil, coef[:m], src[:m], n)
				case "in place":
					dst = b
					want = linCombRef(base, coef[:m], src[:m], n)
				}
				if err := LinComb(k, dst, b, coef[:m], bufs[:m]); err != nil {
					t.Fatal(err)
				}
				cpu := make([]T, n)
				var cb []T
				if mode != "no base" {
					cb = base
				}
				tensor.LinearCombination(cpu, cb, coef[:m], src[:m])
				for i, v := range fromDevice(t, k, dst) {
					if !same(v, want[i]) || !same(v, cpu[i]) {
						t.Fatalf("n=%d, %d terms, %s: y[%d] = %v, want %v (tensor.LinearCombination %v)", n, m, mode, i, v, want[i], cpu[i])
					}
				}
			}
		}
	}
	// 12 terms in two calls, the second over the first's result: the sum
	// of 12 terms in order.
	n := 257
	base := values[T](r, n)
	var src [][]T
	var bufs []Buffer[T]
	coef := make([]T, 12)
	for j := range coef {
		s := values[T](r, n)
		r.Shuffle(n, func(a, b int) { s[a], s[b] = s[b], s[a] })
		src, bufs, coef[j] = append(src, s), append(bufs, toDevice(t, k, s)), T(r.NormFloat64())
	}
	y := toDevice(t, k, base)
	if err := LinComb(k, y, y, coef[:MaxTerms], bufs[:MaxTerms]); err != nil {
		t.Fatal(err)
	}
	if err := LinComb(k, y, y, coef[MaxTerms:], bufs[MaxTerms:]); err != nil {
		t.Fatal(err)
	}
	want := linCombRef(base, coef, src, n)
	for i, v := range fromDevice(t, k, y) {
		if !same(v, want[i]) {
			t.Fatalf("12 terms in two calls: y[%d] = %v, want %v", i, v, want[i])
		}
	}
	if err := LinComb(k, bufs1[T](t, k), Buffer[T]{}, make([]T, 8), make([]Buffer[T], 8)); err == nil {
		t.Error("LinComb of 8 terms: no error")
	}
}

func bufs1[T tensor.Float](t *testing.T, k *Kernels) Buffer[T] { return toDevice(t, k, []T{1}) }

// mapRef is op(x) computed in float64 with the Go functions the tensor
// package's maps are checked against.
func mapRef(op MapOp, x float64) float64 {
	switch op {
	case Tanh:
		return math.Tanh(x)
	case Sigmoid:
		return tensor.SigmoidOf(x)
	case Exp:
		return math.Exp(x)
	case ReLU:
		if x > 0 || x != x {
			return x
		}
		return 0
	case Log:
		if x > 0 && x < 0x1p-1022 { // math.Log on amd64 is wrong for subnormal x (-709.09 at 5e-324)
			return math.Log(x*0x1p54) - 54*math.Ln2
		}
		return math.Log(x)
	case Sqrt:
		return math.Sqrt(x)
	case Square:
		return x * x
	case Neg:
		return -x
	case Abs:
		return math.Abs(x)
	case Sin:
		return math.Sin(x)
	case Cos:
		return math.Cos(x)
	}
	return tensor.SoftplusOf(x)
}

// exactMap reports whether op is exact (correctly rounded), and so the
// CPU's to the bit.
func exactMap(op MapOp) bool {
	switch op {
	case ReLU, Sqrt, Square, Neg, Abs:
		return true
	}
	return false
}

// cpuMap is op(x) by the tensor package's CPU maps (|x| as autograd.Abs
// computes it).
func cpuMap[T tensor.Float](op MapOp, x []T) []T {
	z, xt := tensor.New[T](len(x)), tensor.FromSlice(slices.Clone(x))
	switch op {
	case Tanh:
		z.Tanh(xt)
	case Sigmoid:
		z.Sigmoid(xt)
	case Exp:
		z.Exp(xt)
	case ReLU:
		z.ReLU(xt)
	case Softplus:
		z.Softplus(xt)
	case Log:
		z.Log(xt)
	case Sqrt:
		z.Sqrt(xt)
	case Square:
		z.Square(xt)
	case Neg:
		z.Neg(xt)
	case Abs:
		z.Map(xt, func(v T) T { return T(math.Abs(float64(v))) })
	case Sin:
		z.Map(xt, func(v T) T { return T(math.Sin(float64(v))) })
	case Cos:
		z.Map(xt, func(v T) T { return T(math.Cos(float64(v))) })
	}
	return z.Data()
}

// cpuTol is the most ulps a map may be from the CPU's: CUDA's bound
// (mapTol) and the tensor package's (within 2 ulps of the math package).
func cpuTol(op MapOp) float64 {
	if exactMap(op) {
		return 0
	}
	return mapTol(op) + 2
}

// mapTol is the most ulps a map may be from the float64 reference rounded
// to T: CUDA's tanhf, expf and log1pf are within 2 ulps, and sigmoid and
// softplus compose them.
func mapTol(op MapOp) float64 {
	switch {
	case exactMap(op):
		return 0
	case op == Log:
		return 1
	case op == Sin || op == Cos:
		return 2
	}
	return 4
}

// TestMap: each map on random and edge values (NaN, ±Inf, ±0, overflow,
// subnormal results, logs and roots of negative numbers, sines of huge
// numbers) is within mapTol
// ulps of the float64 reference and cpuTol ulps of the tensor package's
// CPU map; ReLU, Sqrt, Square, Neg and Abs are exact, the CPU's to the bit
// (ReLU makes −0 +0, Abs −0 +0; NaN as NaN, whatever its bits); in place as well.
func TestMap(t *testing.T) {
	k := kernels(t)
	bothTypes(t, func(t *testing.T) { testMap[float32](t, k) }, func(t *testing.T) { testMap[float64](t, k) })
}

func testMap[T tensor.Float](t *testing.T, k *Kernels) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range lengths {
		x := values[T](r, n)
		for i := range x {
			if r.IntN(2) == 0 && !math.IsInf(float64(x[i]), 0) && i >= len(edges) {
				x[i] = T(math.Mod(float64(x[i]), 30)) // most where the functions bend
			}
		}
		for op := range numMapOps {
			src, dst := toDevice(t, k, x), toDevice(t, k, make([]T, n))
			if err := Map(k, op, dst, src); err != nil {
				t.Fatal(err)
			}
			got := fromDevice(t, k, dst)
			if err := Map(k, op, src, src); err != nil { // in place
				t.Fatal(err)
			}
			inPlace := fromDevice(t, k, src)
			cpu := cpuMap(op, x)
			for i, v := range got {
				if (op == Sin || op == Cos) && math.Abs(float64(x[i])) >= 1<<29 {
					// Go's math.Sin and Cos are not accurate there (sin 1e30
					// 40 ulps off; C's and CUDA's are): the CPU's Sin differs.
					continue
				}
				want := T(mapRef(op, float64(x[i])))
				if !within(v, want, mapTol(op)) || !same(inPlace[i], v) {
					t.Fatalf("n=%d: %v(%v) = %v (in place %v), want %v", n, op, x[i], v, inPlace[i], want)
				}
				if !within(v, cpu[i], cpuTol(op)) || exactMap(op) && !same(v, cpu[i]) {
					t.Fatalf("n=%d: %v(%v) = %v, the CPU's %v", n, op, x[i], v, cpu[i])
				}
				if op == ReLU && v == 0 && math.Signbit(float64(v)) {
					t.Fatalf("ReLU(%v) = −0", x[i])
				}
			}
		}
	}
	if err := Map(k, numMapOps, bufs1[T](t, k), bufs1[T](t, k)); err == nil {
		t.Error("an unknown map: no error")
	}
}

// bwdRef is the backward map's g·f′(y) in float64 (the once-rounded
// factors of tanh and sigmoid as fma).
func bwdRef(op MapOp, g, y float64) float64 {
	switch op {
	case Tanh:
		return g * math.FMA(-y, y, 1)
	case Sigmoid:
		return g * math.FMA(-y, y, y)
	case Exp:
		return g * y
	case ReLU:
		if y > 0 {
			return g
		}
		return 0
	}
	return g * -math.Expm1(-y)
}

// TestMapBackward: each backward map, set and accumulated, on the outputs
// of its map (and on edge values: NaN and Inf gradients and outputs), is
// within a few ulps of the float64 reference; ReLU and Exp exactly, ReLU's
// +0 where y is not positive whatever g.
func TestMapBackward(t *testing.T) {
	k := kernels(t)
	bothTypes(t, func(t *testing.T) { testMapBackward[float32](t, k) }, func(t *testing.T) { testMapBackward[float64](t, k) })
}

func testMapBackward[T tensor.Float](t *testing.T, k *Kernels) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 257, 40000} {
		g, z := values[T](r, n), values[T](r, n)
		r.Shuffle(n, func(i, j int) { g[i], g[j] = g[j], g[i] })
		for op := range Softplus + 1 { // the others: TestMapBackwardExact
			y := values[T](r, n)
			for i := range y {
				if i >= len(edges) {
					y[i] = T(mapRef(op, float64(y[i])))
				}
			}
			yb, gb := toDevice(t, k, y), toDevice(t, k, g)
			for _, acc := range []bool{false, true} {
				dst := toDevice(t, k, z)
				if err := MapBackward(k, op, dst, gb, yb, acc); err != nil {
					t.Fatal(err)
				}
				for i, v := range fromDevice(t, k, dst) {
					d := T(bwdRef(op, float64(g[i]), float64(y[i])))
					want, tol := d, 2.0
					if op == Softplus {
						tol = 4
					}
					if op == ReLU || op == Exp || is64[T]() && op != Softplus {
						tol = 0
					}
					if acc {
						want = z[i] + d
						// the product's error, in ulps of the sum
						if u := ulp(want); u > 0 && !math.IsInf(float64(want), 0) {
							tol = tol*ulp(d)/u + 1
						}
					}
					if !within(v, want, tol) {
						t.Fatalf("n=%d: %vBackward(g=%v, y=%v), acc %v: %v, want %v", n, op, g[i], y[i], acc, v, want)
					}
					if op == ReLU && !acc && !(y[i] > 0) && (v != 0 || math.Signbit(float64(v))) {
						t.Fatalf("ReLUBackward(g=%v, y=%v) = %v, want +0", g[i], y[i], v)
					}
				}
			}
		}
	}
}

// ratio is e/w in T, or in float64 where that overflows from finite e
// and w.
func ratio[T tensor.Float](e, w T) float64 {
	r := float64(e / w)
	if math.IsInf(r, 0) && !math.IsInf(float64(e), 0) && !math.IsInf(float64(w), 0) && !isNaN(w) {
		r = float64(e) / float64(w)
	}
	return r
}

// normRef is the scaled error norm formed as the CPU solvers form it:
// the ratios in T (max NaN when either is), their squares summed in
// float64 here.
func normRef[T tensor.Float](e, y0, y1 []T, atol, rtol T) Norm {
	var res Norm
	var sum float64
	for i := range e {
		a, b := y0[i], y1[i]
		if a < 0 {
			a = -a
		}
		if b < 0 {
			b = -b
		}
		w := atol + T(rtol*max(a, b))
		r := ratio(e[i], w)
		switch {
		case math.IsNaN(r):
			res.NaN++
		case math.IsInf(r, 0):
			res.Inf++
		default:
			res.Max = math.Max(res.Max, math.Abs(r))
		}
	}
	for i := range e { // scaled by the largest: no square overflows or underflows
		a, b := y0[i], y1[i]
		if a < 0 {
			a = -a
		}
		if b < 0 {
			b = -b
		}
		if r := ratio(e[i], atol+T(rtol*max(a, b))) / res.Max; !math.IsNaN(r) && !math.IsInf(r, 0) {
			sum += r * r
		}
	}
	switch {
	case res.NaN > 0:
		res.RMS = math.NaN()
	case res.Inf > 0:
		res.RMS = math.Inf(1)
	case res.Max > 0:
		res.RMS = res.Max * math.Sqrt(sum/float64(len(e)))
	}
	return res
}

// TestErrorNorm: the RMS of e/(atol + rtol·max(|y0|, |y1|)) agrees with
// the reference to 1e-12 relative (the same ratios, summed in another
// order), the largest ratio exactly, the NaN and Inf counts exactly (a NaN
// in y0 or y1 alone counts); errors so large or small that their squares
// leave float64 are rescaled; float32 ratios that overflow from finite
// values are formed in float64, not counted as infinite.
func TestErrorNorm(t *testing.T) {
	k := kernels(t)
	bothTypes(t, func(t *testing.T) { testErrorNorm[float32](t, k) }, func(t *testing.T) { testErrorNorm[float64](t, k) })
}

func testErrorNorm[T tensor.Float](t *testing.T, k *Kernels) {
	r := rand.New(rand.NewPCG(9, 10))
	type tc struct {
		name   string
		scale  float64 // of the errors
		nonfin bool    // plant a NaN in y1 and an Inf in e
	}
	cases := []tc{{"plain", 1e-4, false}, {"non-finite", 1e-4, true}}
	if is64[T]() {
		cases = append(cases, tc{"huge", 1e200, false}, tc{"tiny", 1e-200, false})
	} else {
		cases = append(cases, tc{"ratios beyond float32", 1e36, false})
	}
	for _, n := range lengths {
		for _, c := range cases {
			e, y0, y1 := make([]T, n), make([]T, n), make([]T, n)
			for i := range e {
				e[i] = T(c.scale * r.NormFloat64())
				y0[i] = T(r.NormFloat64())
				y1[i] = y0[i] + T(0.01*r.NormFloat64())
			}
			if c.nonfin && n >= 3 {
				y1[n/2] = T(math.NaN())
				e[n-1] = T(math.Inf(-1))
			}
			atol, rtol := T(1e-6), T(1e-3)
			got, err := ErrorNorm(k, toDevice(t, k, e), toDevice(t, k, y0), toDevice(t, k, y1), atol, rtol)
			if err != nil {
				t.Fatal(err)
			}
			want := normRef(e, y0, y1, atol, rtol)
			okRMS := math.Abs(got.RMS-want.RMS) <= 1e-12*want.RMS || same(got.RMS, want.RMS)
			if !okRMS || got.Max != want.Max || got.NaN != want.NaN || got.Inf != want.Inf || got.NonFinite() != (want.NaN+want.Inf > 0) {
				t.Fatalf("n=%d %s: %+v, want %+v", n, c.name, got, want)
			}
		}
	}
}

// TestCompileErrorLog: a source that does not compile is a
// *CompileError whose log names what is wrong.
func TestCompileErrorLog(t *testing.T) {
	kernels(t)
	libs, _ := loadedKernelLibs()
	src := "extern \"C\" __global__ void broken(float *y) { y[0] = no_such_thing; }\n"
	if standinDir != "" {
		src = strings.Replace(src, "extern \"C\" ", "", 1) // the stand-in builds C
	}
	_, err := libs.compile(src, "broken.cu", slices.Concat(nvrtcOptions, []string{"--gpu-architecture=sm_80"}), false)
	var ce *CompileError
	if !errors.As(err, &ce) || !strings.Contains(ce.Log, "no_such_thing") || !strings.Contains(err.Error(), "no_such_thing") || ce.Arch != "sm_80" {
		t.Fatalf("compile error %v, want a *CompileError naming no_such_thing", err)
	}
	_, err = libs.compile("__global__ void f(float *y) {}\n", "f.cu", []string{"--no-such-option", "--gpu-architecture=sm_80"}, false)
	if !errors.As(err, &ce) || ce.Status != 5 { // NVRTC_ERROR_INVALID_OPTION
		t.Fatalf("an unknown option: %v", err)
	}
}

// TestKernelCache: the first Kernels compiles and writes the disk cache
// (through a temporary file renamed, none left behind); a second in the
// same process takes the image from the process cache; one in a new
// process (a new process cache) from the disk; a cache file cut short, or
// one with a byte changed, or an image the driver refuses, is compiled
// again and rewritten; with no cache directory nothing is written.
func TestKernelCache(t *testing.T) {
	kernels(t)
	libs, _ := loadedKernelLibs()
	dir := t.TempDir()
	mk := func(c *imageCache, dir string) ImageSource {
		t.Helper()
		k, err := newKernels(libs, c, dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		// the kernels run, whichever the image's source
		b, err := Alloc[float32](k, 3)
		if err != nil {
			t.Fatal(err)
		}
		defer Free(k, b)
		if err := Fill(k, b, 5); err != nil {
			t.Fatal(err)
		}
		if got := fromDevice(t, k, b); got[2] != 5 {
			t.Fatalf("Fill: %v", got)
		}
		return k.Source()
	}
	files := func() []string {
		t.Helper()
		names, err := filepath.Glob(filepath.Join(dir, "*"))
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	var proc imageCache
	if s := mk(&proc, dir); s != FromNVRTC {
		t.Fatalf("first Kernels: image from %v", s)
	}
	fs := files()
	if len(fs) != 1 || !strings.HasSuffix(fs[0], ".bin") {
		t.Fatalf("cache directory holds %v, want one .bin file", fs)
	}
	path := fs[0]
	good, _ := os.ReadFile(path)
	if s := mk(&proc, dir); s != FromProcessCache {
		t.Fatalf("second Kernels: image from %v", s)
	}
	if s := mk(new(imageCache), dir); s != FromDiskCache {
		t.Fatalf("new process: image from %v", s)
	}
	for name, corrupt := range map[string]func([]byte) []byte{
		"cut short":    func(b []byte) []byte { return b[:len(b)/2] },
		"byte changed": func(b []byte) []byte { c := bytes.Clone(b); c[len(c)-100] ^= 1; return c },
		"empty":        func([]byte) []byte { return nil },
	} {
		if err := os.WriteFile(path, corrupt(good), 0o644); err != nil {
			t.Fatal(err)
		}
		if s := mk(new(imageCache), dir); s != FromNVRTC {
			t.Fatalf("%s cache file: image from %v", name, s)
		}
		if b, _ := os.ReadFile(path); !bytes.Equal(b, good) {
			t.Fatalf("%s cache file: not rewritten", name)
		}
	}
	// A whole file whose image the driver refuses.
	key := [32]byte{}
	copy(key[:], mustHex(t, strings.TrimSuffix(filepath.Base(path), ".bin")))
	// NUL-terminated: a real driver reads it as PTX text, and must not read
	// beyond it.
	if err := writeCached(dir, key, []byte("not an image at all\x00")); err != nil {
		t.Fatal(err)
	}
	if s := mk(new(imageCache), dir); s != FromNVRTC {
		t.Fatalf("a refused image: from %v", s)
	}
	if fs := files(); len(fs) != 1 {
		t.Fatalf("cache directory holds %v", fs)
	}
	if s := mk(new(imageCache), ""); s != FromNVRTC {
		t.Fatalf("no cache directory: image from %v", s)
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	var b []byte
	for i := 0; i+1 < len(s); i += 2 {
		var v byte
		for _, c := range s[i : i+2] {
			v <<= 4
			switch {
			case c >= '0' && c <= '9':
				v |= byte(c - '0')
			default:
				v |= byte(c-'a') + 10
			}
		}
		b = append(b, v)
	}
	return b
}

// TestLaunchRefusesHostPointer: the stand-in refuses a kernel argument
// that points into host memory, and the memory is left as it was; and a
// launch with the wrong number of arguments.
func TestLaunchRefusesHostPointer(t *testing.T) {
	k := kernels(t)
	if standinDir == "" {
		t.Skip("a real GPU: a host pointer in a kernel would spoil the context")
	}
	host, err := newCMemory(64)
	if err != nil {
		t.Fatal(err)
	}
	defer host.free()
	if err := k.enter(); err != nil {
		t.Fatal(err)
	}
	err = k.launch(kernelIndex[float32](kFill), 1, uint64(host.addr(0)), uint64(math.Float32bits(1)), 16)
	k.leave()
	var ce *Error
	if !errors.As(err, &ce) || ce.Status != 700 || ce.Call != "cuLaunchKernel fill_f32" || !strings.Contains(ce.Msg, "ILLEGAL_ADDRESS") {
		t.Fatalf("a host pointer as a kernel argument: %v", err)
	}
	if host[0] != 0 {
		t.Fatal("the kernel wrote the host memory")
	}
	// Too few and too many arguments.
	dev := toDevice(t, k, make([]float32, 16))
	for _, args := range [][]uint64{{uint64(dev.ptr), 0}, {uint64(dev.ptr), 0, 16, 0}} {
		if err := k.enter(); err != nil {
			t.Fatal(err)
		}
		err = k.launch(kernelIndex[float32](kFill), 1, args...)
		k.leave()
		if !errors.As(err, &ce) || ce.Status != 1 {
			t.Errorf("fill_f32 with %d arguments of 3: %v", len(args), err)
		}
	}
}

// TestContextPerThread: the driver's current context is per OS thread;
// every call sets it, so calls from threads that have none (or had it
// unset) succeed, and from many goroutines at once.
func TestContextPerThread(t *testing.T) {
	k := kernels(t)
	d := &k.libs.drv
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The thread ends with the goroutine (locked, never unlocked),
			// so each goroutine after it starts on a fresh thread.
			runtime.LockOSThread()
			if standinDir != "" {
				d.cuCtxSetCurrent(0)
				var p uintptr
				if st := d.cuMemAlloc(&p, 8); st != 201 { // CUDA_ERROR_INVALID_CONTEXT
					errs <- errors.New("the stand-in allocated without a current context")
					return
				}
			}
			x := make([]float64, 300)
			b, err := Alloc[float64](k, len(x))
			if err == nil {
				err = Fill(k, b, float64(g))
			}
			if err == nil {
				err = Download(k, x, b)
			}
			if err == nil {
				err = Free(k, b)
			}
			if err == nil && (x[0] != float64(g) || x[299] != float64(g)) {
				err = errors.New("Fill from another thread: wrong values")
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestKernelsMisuse: wrong lengths are errors naming the call, and so is
// any call after Close; nothing panics.
func TestKernelsMisuse(t *testing.T) {
	kernels(t)
	k, err := NewKernels(0)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(x []float32) Buffer[float32] {
		b, err := Alloc[float32](k, len(x))
		if err != nil {
			t.Fatal(err)
		}
		if err := Upload(k, b, x); err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b := mk([]float32{1, 2}), mk([]float32{1, 2, 3})
	for name, err := range map[string]error{
		"Copy":        Copy(k, a, b),
		"Map":         Map(k, Tanh, a, b),
		"MapBackward": MapBackward(k, Tanh, a, a, b, false),
		"LinComb":     LinComb(k, a, b, []float32{1}, []Buffer[float32]{a}),
		"Upload":      Upload(k, a, []float32{1}),
		"Download":    Download(k, []float32{1}, a),
	} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s with lengths 2 and 3: %v", name, err)
		}
	}
	if _, err := ErrorNorm(k, a, a, b, 1, 1); err == nil {
		t.Error("ErrorNorm with lengths 2 and 3: no error")
	}
	if _, err := NewKernels(5); !errors.Is(err, ErrNoDevice) {
		t.Errorf("device 5: %v", err)
	}
	for _, buf := range []Buffer[float32]{a, b} {
		if err := Free(k, buf); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Fill(k, a, 1); !errors.Is(err, ErrClosed) {
		t.Errorf("Fill after Close: %v", err)
	}
	if err := k.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestKernelLibsUnavailable: without NVRTC and the driver, the error says
// which library is missing.
func TestKernelLibsUnavailable(t *testing.T) {
	_, err := loadKernelLibs(t.TempDir())
	if err == nil {
		t.Skip("NVRTC and the driver are on the loader's path")
	}
	if !strings.Contains(err.Error(), "libnvrtc") && !strings.Contains(err.Error(), "libcuda") {
		t.Errorf("error %q names neither library", err)
	}
}

// TestRealNVRTC compiles the kernel source with a real NVRTC when one is
// on the loader's path (Debian's libnvrtc11.2, even without a GPU): what
// only the CUDA compiler rejects fails here.
func TestRealNVRTC(t *testing.T) {
	h, err := open("", []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"})
	if err != nil {
		t.Skip("no NVRTC on the loader's path")
	}
	var libs kernelLibs
	if err := libs.bindNVRTC(h); err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"sm_70", "sm_80"} {
		img, err := libs.compile(kernelSource(), "adamnode.cu", slices.Concat(nvrtcOptions, []string{"--gpu-architecture=" + arch}), false)
		if err != nil {
			t.Fatalf("NVRTC %s, %s: %v", libs.nvrtcVersion, arch, err)
		}
		if len(img) < 4 || string(img[1:4]) != "ELF" {
			t.Fatalf("NVRTC %s, %s: the CUBIN is no ELF image", libs.nvrtcVersion, arch)
		}
	}
	if a := libs.supportedArchs(); len(a) == 0 || !slices.Contains(a, 80) {
		t.Errorf("NVRTC %s: supported architectures %v", libs.nvrtcVersion, a)
	}
	// The precision flags at work: with --fmad=false no multiply-add is
	// fused in the linear combination (with --fmad=true there would be),
	// while the backward maps' explicit fma stays.
	fused := func(fmad string) map[string]bool {
		opts := slices.Concat(slices.DeleteFunc(slices.Clone(nvrtcOptions), func(o string) bool { return strings.HasPrefix(o, "--fmad=") }),
			[]string{fmad, "--gpu-architecture=compute_80"})
		ptx, err := libs.compile(kernelSource(), "adamnode.cu", opts, true)
		if err != nil {
			t.Fatalf("NVRTC %s, PTX %s: %v", libs.nvrtcVersion, fmad, err)
		}
		has := map[string]bool{}
		for _, fn := range strings.Split(string(ptx), ".entry ")[1:] {
			name, _, _ := strings.Cut(fn, "(")
			has[name] = strings.Contains(fn, "fma.rn.")
		}
		return has
	}
	off, on := fused("--fmad=false"), fused("--fmad=true")
	for _, name := range []string{"lincomb_f32", "lincomb_f64", "mapbwd_f32", "mapbwd_f64", "errnorm_f32", "errnorm_f64",
		"binary_f32", "binary_f64", "binbwd_f32", "binbwd_f64", "axisreduce_f32", "axisreduce_f64", "sumparts_f32", "sumparts_f64"} {
		want := strings.HasPrefix(name, "mapbwd")
		if _, ok := off[name]; !ok || off[name] != want {
			t.Errorf("%s with --fmad=false: fma %v, want %v (kernels %v)", name, off[name], want, off)
		}
	}
	if !on["lincomb_f32"] {
		t.Errorf("lincomb_f32 with --fmad=true has no fma: the check above checks nothing")
	}
	_, err = libs.compile("extern \"C\" __global__ void broken(float *y) { y[0] = no_such_thing; }\n", "broken.cu", slices.Concat(nvrtcOptions, []string{"--gpu-architecture=sm_80"}), false)
	var ce *CompileError
	if !errors.As(err, &ce) || !strings.Contains(ce.Log, "no_such_thing") {
		t.Fatalf("NVRTC %s: compile error %v", libs.nvrtcVersion, err)
	}
	t.Logf("NVRTC %s compiled the kernels", libs.nvrtcVersion)
}

// TestKernelsOnRuntimeMemory: the kernels run on device memory from the
// CUDA runtime (cudaMalloc, as the backend's pool has it), in the same
// primary context: what device-resident tensors will pass them.
func TestKernelsOnRuntimeMemory(t *testing.T) {
	k := kernels(t)
	l, err := loaded()
	if err != nil {
		t.Skipf("no CUDA runtime: %v", err)
	}
	const n = 1000
	var p uintptr
	if err := l.rtCheck("cudaMalloc", l.cudaMalloc(&p, n*8)); err != nil {
		t.Fatal(err)
	}
	defer l.cudaFree(p)
	b := Buffer[float64]{ptr: p, n: n}
	if err := Fill(k, b, 2); err != nil {
		t.Fatal(err)
	}
	if err := Map(k, Exp, b, b); err != nil {
		t.Fatal(err)
	}
	got := make([]float64, n)
	if err := l.rtCheck("cudaMemcpy", l.cudaMemcpy(addr(got), p, n*8, deviceToHost)); err != nil {
		t.Fatal(err)
	}
	if want := math.Exp(2); !within(got[0], want, 4) || !within(got[n-1], want, 4) {
		t.Fatalf("exp(2) on runtime memory: %v … %v, want %v", got[0], got[n-1], want)
	}
}

// TestTarget: CUBIN for the device's own architecture when NVRTC has it
// (or does not say what it has), else PTX for the newest older one NVRTC
// has, else nothing.
func TestTarget(t *testing.T) {
	for _, c := range []struct {
		cc        int
		supported []int
		opt       string
		ptx       bool
	}{
		{90, nil, "--gpu-architecture=sm_90", false},
		{90, []int{75, 80, 86, 89, 90}, "--gpu-architecture=sm_90", false},
		{100, []int{75, 80, 86, 89, 90}, "--gpu-architecture=compute_90", true},
		{87, []int{75, 80, 86, 89, 90}, "--gpu-architecture=compute_86", true},
		{70, []int{75, 80, 90}, "", false},
	} {
		opt, ptx := target(c.cc, c.supported)
		if opt != c.opt || ptx != c.ptx {
			t.Errorf("target(%d, %v) = %q, %v; want %q, %v", c.cc, c.supported, opt, ptx, c.opt, c.ptx)
		}
	}
}

// TestPTXImage: a program compiled for a virtual architecture gives PTX
// and no CUBIN, which the driver loads and runs (the stand-in's "PTX" is
// its shared object).
func TestPTXImage(t *testing.T) {
	k := kernels(t)
	opts := slices.Concat(nvrtcOptions, []string{"--gpu-architecture=compute_80"})
	img, err := k.libs.compile(kernelSource(), "adamnode.cu", opts, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.libs.compile(kernelSource(), "adamnode.cu", opts, false); err == nil {
		t.Error("the CUBIN of a program compiled for compute_80: no error")
	}
	if err := k.enter(); err != nil {
		t.Fatal(err)
	}
	defer k.leave()
	d := &k.libs.drv
	var mod, fn uintptr
	if err := k.libs.check("cuModuleLoadData", d.cuModuleLoadData(&mod, &img[0])); err != nil {
		t.Fatal(err)
	}
	defer d.cuModuleUnload(mod)
	if err := k.libs.check("cuModuleGetFunction", d.cuModuleGetFunction(&fn, mod, "fill_f64")); err != nil {
		t.Fatal(err)
	}
}

// TestNormThreads: the reductions' blocks are as large as the source's
// NORM_THREADS says.
func TestNormThreads(t *testing.T) {
	want := "#define NORM_THREADS " + strconv.Itoa(blockThreads) + "\n"
	if !strings.Contains(kernelSource(), want) {
		t.Errorf("the kernel source lacks %q", want)
	}
}

// TestStandinBarriers: the stand-in runs a block's threads as coroutines
// meeting at __syncthreads, with static shared memory: a kernel that
// shares values through it behind a barrier is right, the same kernel
// without the barrier is wrong (the threads run in shuffled order), and a
// barrier that only some threads reach fails the launch.
func TestStandinBarriers(t *testing.T) {
	k := kernels(t)
	if standinDir == "" {
		t.Skip("the stand-in's emulation")
	}
	const src = `
__global__ void shift(float *y, int barrier) {
	__shared__ float s[256];
	s[threadIdx.x] = (float)(blockIdx.x * blockDim.x + threadIdx.x);
	if (barrier) __syncthreads();
	y[blockIdx.x * blockDim.x + threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x];
}
__global__ void diverge(float *y) {
	if (threadIdx.x < 10) __syncthreads();
	y[threadIdx.x] = 1;
}
`
	img, err := k.libs.compile(src, "barriers.cu", slices.Concat(nvrtcOptions, []string{"--gpu-architecture=sm_90"}), false)
	if err != nil {
		t.Fatal(err)
	}
	y := toDevice(t, k, make([]float32, 3*blockThreads))
	if err := k.enter(); err != nil {
		t.Fatal(err)
	}
	d := &k.libs.drv
	var mod, shift, diverge uintptr
	err = errors.Join(k.libs.check("cuModuleLoadData", d.cuModuleLoadData(&mod, &img[0])),
		k.libs.check("cuModuleGetFunction", d.cuModuleGetFunction(&shift, mod, "shift")),
		k.libs.check("cuModuleGetFunction", d.cuModuleGetFunction(&diverge, mod, "diverge")))
	k.leave()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if k.enter() == nil {
			d.cuModuleUnload(mod)
			k.leave()
		}
	}()
	run := func(f uintptr, args ...uint64) int32 {
		t.Helper()
		if err := k.enter(); err != nil {
			t.Fatal(err)
		}
		defer k.leave()
		return k.launchFunc(f, 3, args...)
	}
	for _, barrier := range []uint64{1, 0} {
		if st := run(shift, uint64(y.ptr), barrier); st != 0 {
			t.Fatalf("shift: status %d", st)
		}
		wrong := 0
		for i, v := range fromDevice(t, k, y) {
			b, th := i/blockThreads, i%blockThreads
			if v != float32(b*blockThreads+(th+1)%blockThreads) {
				wrong++
			}
		}
		if barrier == 1 && wrong > 0 || barrier == 0 && wrong == 0 {
			t.Errorf("shift with barrier %d: %d values wrong", barrier, wrong)
		}
	}
	if st := run(diverge, uint64(y.ptr)); st != 719 { // CUDA_ERROR_LAUNCH_FAILED
		t.Errorf("a barrier 10 threads of 256 reach: status %d", st)
	}
}

// bwdExactRef is the gradient of the maps after Softplus (and of
// LeakyReLU, Hardtanh) as autograd's rules and the tensor package compute
// it in T: each factor rounded, then the product, then the sum.
func bwdExactRef[T tensor.Float](op MapOp, g, u, a, b T) T {
	switch op {
	case Log:
		return g * T(1/u)
	case Sqrt:
		return g * T(1/T(2*u))
	case Square:
		return g * T(2*u)
	case Neg:
		return -1 * g
	case Abs:
		s := T(0)
		if u > 0 {
			s = 1
		} else if u < 0 {
			s = -1
		}
		return g * s
	case leakyReLU:
		if u > 0 {
			return g
		}
		return a * g
	case Sin:
		return g * T(math.Cos(float64(u)))
	case Cos:
		return g * T(-math.Sin(float64(u)))
	case clampOp:
		f := T(0)
		if u >= a && u <= b {
			f = 1
		}
		return g * f
	case eluOp: // u the output
		if u > 0 {
			return g * 1
		}
		return g * (u + a)
	case powOp:
		if a == 0 {
			return g * 0
		}
		p := float64(a)
		return g * T(p*math.Pow(float64(u), p-1))
	}
	f := T(0) // hardtanh
	if u > a && u < b {
		f = 1
	}
	return g * f
}

// bwdTol is the most ulps (of the factor's product) a backward map of
// bwdExactRef may be from it: those with a function of float64 (CUDA's
// sin, cos, pow within 2 ulps of float64, Go's sin and cos within 1) may
// round the other way; and Go's math.Pow, autograd's, is tens of ulps off
// for large results (16 at 1e-45^−2.5; C's and CUDA's pow are not), which
// float32's rounding hides.
func bwdTol(op MapOp, f64 bool) float64 {
	switch {
	case op == Sin || op == Cos:
		return 2
	case op == powOp && f64:
		return 64
	case op == powOp:
		return 2
	}
	return 0
}

// TestMapBackwardExact: the backward maps of Log, Sqrt, Square, Neg, Abs,
// LeakyReLU, Hardtanh, Clamp and ELU, set and accumulated, on random and
// edge values of g and u (NaN, ±Inf, ±0), are the CPU's to the bit
// (autograd's rule, and tensor.LeakyReLUBackward); those of Sin, Cos and
// Pow (p = 2, ½, 0, −1.5, 3), whose factors are float64 functions
// rounded, within 2 ulps (float64 Pow 64: Go's math.Pow); a lower bound above the upper, and ELU's α < 0,
// are errors.
func TestMapBackwardExact(t *testing.T) {
	k := kernels(t)
	bothTypes(t, func(t *testing.T) { testMapBackwardExact[float32](t, k) }, func(t *testing.T) { testMapBackwardExact[float64](t, k) })
}

func testMapBackwardExact[T tensor.Float](t *testing.T, k *Kernels) {
	r := rand.New(rand.NewPCG(11, 12))
	type tc struct {
		op   MapOp
		a, b T
	}
	cases := []tc{{Log, 0, 0}, {Sqrt, 0, 0}, {Square, 0, 0}, {Neg, 0, 0}, {Abs, 0, 0},
		{leakyReLU, 0.01, 0}, {leakyReLU, 0.3, 0}, {hardtanh, -1, 1}, {hardtanh, 0, 5},
		{Sin, 0, 0}, {Cos, 0, 0}, {clampOp, -1, 1}, {clampOp, 0, 5}, {eluOp, 1, 0}, {eluOp, 0, 0},
		{powOp, 2, 0}, {powOp, 0.5, 0}, {powOp, 0, 0}, {powOp, -1.5, 0}, {powOp, 3, 0}}
	for _, n := range lengths {
		g, u, z := values[T](r, n), values[T](r, n), values[T](r, n)
		r.Shuffle(n, func(i, j int) { g[i], g[j] = g[j], g[i] })
		r.Shuffle(n, func(i, j int) { z[i], z[j] = z[j], z[i] })
		for i := range u {
			if r.IntN(4) == 0 {
				u[i] = T(math.Round(float64(u[i]))) // some ±1, ±0 on Hardtanh's bounds
			}
		}
		gb, ub := toDevice(t, k, g), toDevice(t, k, u)
		for _, c := range cases {
			for _, acc := range []bool{false, true} {
				dst := toDevice(t, k, z)
				var err error
				switch c.op {
				case leakyReLU:
					err = LeakyReLUBackward(k, dst, gb, ub, c.a, acc)
				case hardtanh:
					err = HardtanhBackward(k, dst, gb, ub, c.a, c.b, acc)
				case clampOp:
					err = ClampBackward(k, dst, gb, ub, c.a, c.b, acc)
				case eluOp:
					err = ELUBackward(k, dst, gb, ub, c.a, acc)
				case powOp:
					err = PowBackward(k, dst, gb, ub, c.a, acc)
				case Neg:
					err = MapBackward(k, c.op, dst, gb, Buffer[T]{}, acc) // u not read
				default:
					err = MapBackward(k, c.op, dst, gb, ub, acc)
				}
				if err != nil {
					t.Fatal(err)
				}
				var cpu []T
				if c.op == leakyReLU {
					ct := tensor.FromSlice(slices.Clone(z))
					ct.LeakyReLUBackward(tensor.FromSlice(g), tensor.FromSlice(u), c.a, acc)
					cpu = ct.Data()
				}
				for i, v := range fromDevice(t, k, dst) {
					if (c.op == Sin || c.op == Cos) && math.Abs(float64(u[i])) >= 1<<29 {
						continue // Go's math.Sin and Cos are not accurate there (TestMap)
					}
					d := bwdExactRef(c.op, g[i], u[i], c.a, c.b)
					want, tol := d, bwdTol(c.op, is64[T]())
					if acc {
						want = z[i] + d
						if u := ulp(want); tol > 0 && u > 0 && !math.IsInf(float64(want), 0) {
							tol = tol*ulp(d)/u + 1
						}
					}
					if !within(v, want, tol) || cpu != nil && !same(v, cpu[i]) {
						t.Fatalf("n=%d: %vBackward(g=%v, u=%v; %v, %v), acc %v: %v, want %v", n, c.op, g[i], u[i], c.a, c.b, acc, v, want)
					}
				}
			}
		}
	}
	b := bufs1[T](t, k)
	if err := HardtanhBackward(k, b, b, b, 1, -1, false); err == nil {
		t.Error("HardtanhBackward with lo > hi: no error")
	}
	if err := ClampBackward(k, b, b, b, 1, -1, false); err == nil {
		t.Error("ClampBackward with lo > hi: no error")
	}
	if err := ELUBackward(k, b, b, b, -1, false); err == nil {
		t.Error("ELUBackward with α < 0: no error")
	}
}

// TestParamMaps: LeakyReLU, Hardtanh, Clamp, Scale and AddScalar on
// random and edge values equal the tensor package's to the bit (NaN as
// NaN, signed zeros told apart), ELU and Pow (p = 2, ½, −1, 3, 0)
// autograd's within 3 and 2 ulps (float64 Pow 64: Go's math.Pow), in place as well; Hardtanh and Clamp
// with lo > hi are errors.
func TestParamMaps(t *testing.T) {
	k := kernels(t)
	bothTypes(t, func(t *testing.T) { testParamMaps[float32](t, k) }, func(t *testing.T) { testParamMaps[float64](t, k) })
}

func testParamMaps[T tensor.Float](t *testing.T, k *Kernels) {
	r := rand.New(rand.NewPCG(13, 14))
	type tc struct {
		op   MapOp
		a, b T
	}
	cases := []tc{{leakyReLU, 0.01, 0}, {leakyReLU, 0.3, 0}, {leakyReLU, -2, 0}, {hardtanh, -1, 1}, {hardtanh, 0, 5},
		{hardtanh, T(math.Copysign(0, -1)), 0}, {scaleOp, -1.5, 0}, {scaleOp, 1e30, 0}, {addScalar, 0.25, 0}, {addScalar, T(math.Copysign(0, -1)), 0},
		{clampOp, -1, 1}, {eluOp, 1, 0}, {eluOp, 0.3, 0}, {powOp, 2, 0}, {powOp, 0.5, 0}, {powOp, -1, 0}, {powOp, 3, 0}, {powOp, 0, 0}}
	for _, n := range lengths {
		x := values[T](r, n)
		for _, c := range cases {
			src, dst := toDevice(t, k, x), toDevice(t, k, make([]T, n))
			run := func(dst, x Buffer[T]) error {
				switch c.op {
				case leakyReLU:
					return LeakyReLU(k, dst, x, c.a)
				case hardtanh:
					return Hardtanh(k, dst, x, c.a, c.b)
				case scaleOp:
					return Scale(k, dst, x, c.a)
				case clampOp:
					return Clamp(k, dst, x, c.a, c.b)
				case eluOp:
					return ELU(k, dst, x, c.a)
				case powOp:
					return Pow(k, dst, x, c.a)
				}
				return AddScalar(k, dst, x, c.a)
			}
			if err := run(dst, src); err != nil {
				t.Fatal(err)
			}
			got := fromDevice(t, k, dst)
			if err := run(src, src); err != nil {
				t.Fatal(err)
			}
			inPlace := fromDevice(t, k, src)
			cpu, xt := tensor.New[T](n), tensor.FromSlice(slices.Clone(x))
			switch c.op {
			case leakyReLU:
				cpu.LeakyReLU(xt, c.a)
			case hardtanh, clampOp:
				cpu.Hardtanh(xt, c.a, c.b)
			case eluOp: // autograd.ELU's loop
				for i, v := range x {
					if v > 0 {
						cpu.Data()[i] = v
					} else {
						cpu.Data()[i] = c.a * T(math.Expm1(float64(v)))
					}
				}
			case powOp: // autograd.Pow's
				cpu.Map(xt, func(v T) T { return T(math.Pow(float64(v), float64(c.a))) })
			case scaleOp:
				cpu.Scale(xt, c.a)
			default:
				cpu.AddScalar(xt, c.a)
			}
			tol := 0.0
			switch c.op {
			case eluOp:
				tol = 3 // CUDA's expm1 within an ulp of float64, then the product
			case powOp:
				tol = bwdTol(powOp, is64[T]())
			}
			for i, v := range got {
				if want := cpu.Data()[i]; !within(v, want, tol) || !same(inPlace[i], v) {
					t.Fatalf("n=%d: %v(%v; %v, %v) = %v (in place %v), the CPU's %v", n, c.op, x[i], c.a, c.b, v, inPlace[i], want)
				}
			}
		}
	}
	b := bufs1[T](t, k)
	if err := Hardtanh(k, b, b, 1, -1); err == nil {
		t.Error("Hardtanh with lo > hi: no error")
	}
	if err := Clamp(k, b, b, 1, -1); err == nil {
		t.Error("Clamp with lo > hi: no error")
	}
}
