package tensor

import (
	"flag"
	"math"
	"math/big"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var vec64Random = flag.Int("vecmath64.random", 1<<15, "how many random inputs TestVec64Accuracy checks")

// vecFunc64 is one float64 kernel with its reference, correctly rounded
// (vecmath64_ref_test.go), and the largest error allowed against it, in
// ulps.
type vecFunc64 struct {
	name   string
	kernel func(p vecPath64) func(z, x []float64)
	ref    func(float64) float64
	ulps   int64
	math   func(float64) float64 // the math package's function, for the log
}

var vecFuncs64 = []vecFunc64{
	{"exp", func(p vecPath64) func(z, x []float64) { return p.exp }, refExp64, 2, math.Exp},
	{"tanh", func(p vecPath64) func(z, x []float64) { return p.tanh }, refTanh64, 2, math.Tanh},
	{"sigmoid", func(p vecPath64) func(z, x []float64) { return p.sigmoid }, refSigmoid64, 2, SigmoidOf},
	{"softplus", func(p vecPath64) func(z, x []float64) { return p.softplus }, refSoftplus64, 2, SoftplusOf},
	{"log", func(p vecPath64) func(z, x []float64) { return p.log }, refLog64, 2, math.Log},
	{"sqrt", func(p vecPath64) func(z, x []float64) { return p.sqrt }, math.Sqrt, 0, math.Sqrt},
}

// ulpDist64 returns the number of float64 values between a and b (0 for
// equal values, +0 and −0 equal; Inf is one past MaxFloat64), or −1 when
// exactly one is NaN. Two NaNs are at distance 0.
func ulpDist64(a, b float64) int64 {
	an, bn := a != a, b != b
	switch {
	case an && bn:
		return 0
	case an || bn:
		return -1
	}
	ord := func(v float64) int64 {
		u := math.Float64bits(v)
		if u>>63 != 0 {
			return -int64(u &^ (1 << 63))
		}
		return int64(u)
	}
	d := ord(a) - ord(b)
	if d < 0 {
		d = -d
	}
	return d
}

// vecEdges64 are inputs at the edges of float64 and of the maps' ranges,
// each with its two neighbours.
func vecEdges64() []float64 {
	inf := math.Inf(1)
	xs := []float64{
		0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 2, -2,
		math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 0x1p-1022, -0x1p-1022, 0x1p-1023,
		0x1.ffffffffffffep-1023, 1e-310, -1e-310, 1e-300, -1e-300, 1e-16, -1e-16, 1e-8, -1e-8, 1e-3, -1e-3,
		math.MaxFloat64, -math.MaxFloat64, inf, -inf, math.NaN(), -math.NaN(),
		709.78, 709.782712893384, 7.09782712893383973096e+02, 709.79, 710, 710.5, 800, 1e300,
		-708.39, -708.4, -709, -744.44, -744.45, -745.13, -745.1332191019411, -7.45133219101941108420e+02,
		-745.14, -746, -746.5, -800, -1e300,
		0.3465, -0.3465, 0.34657359027997264, 0.5493, 0.55, 0.625, 18, 19, 19.06, 19.1, 20, 20.5, -19.1, -20, 37, -37, 40, -40,
		0.41421356237309503, -0.8813735870195429, 0.8813735870195429, 0.7071067811865476, 1.4142135623730951,
		0.9999999999999999, 1.0000000000000002, 1e10, 1e-10,
	}
	for _, v := range append([]float64(nil), xs...) {
		xs = append(xs, math.Nextafter(v, inf), math.Nextafter(v, -inf))
	}
	return xs
}

// vecRandom64 returns n random float64 values: uniform bit patterns (all
// exponents, both signs), values of moderate size, and values across the
// range of exp.
func vecRandom64(rng *rand.Rand, n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		switch i % 4 {
		case 0, 1:
			xs[i] = math.Float64frombits(rng.Uint64())
		case 2:
			xs[i] = rng.NormFloat64() * 4
		default:
			xs[i] = (rng.Float64()*2 - 1) * 750
		}
	}
	return xs
}

// checkVec64 runs the kernel of f on path p over xs and returns the
// largest error in ulps against want, failing t beyond f's bound.
func checkVec64(t *testing.T, p vecPath64, f vecFunc64, xs, want []float64) int64 {
	t.Helper()
	z := make([]float64, len(xs))
	f.kernel(p)(z, xs)
	var worst int64
	fails := 0
	for i, x := range xs {
		want := want[i]
		d := ulpDist64(z[i], want)
		if d < 0 || d > f.ulps {
			if fails++; fails <= 5 {
				t.Errorf("%s %s(%v [%#016x]) = %v, want %v (%d ulps)", p.name, f.name, x, math.Float64bits(x), z[i], want, d)
			}
		}
		worst = max(worst, d)
	}
	return worst
}

// TestVec64Accuracy checks every float64 kernel on every path against the
// correctly rounded result on edge values and random values across all
// exponents. It logs the largest distance from the math package too, over
// the inputs where that is within an ulp of the correctly rounded result
// (on amd64 math.Exp overflows from 709.44 on, and math.Log is far off for
// denormals).
func TestVec64Accuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	xs := append(vecEdges64(), vecRandom64(rng, *vec64Random)...)
	// The correctly rounded references (big.Float arithmetic, most of the
	// test's time), the functions' side by side.
	wants := make([][]float64, len(vecFuncs64))
	var wg sync.WaitGroup
	for j, f := range vecFuncs64 {
		wg.Go(func() {
			wants[j] = make([]float64, len(xs))
			for i, x := range xs {
				wants[j][i] = f.ref(x)
			}
		})
	}
	wg.Wait()
	for j, f := range vecFuncs64 {
		want := wants[j]
		for _, p := range vecPaths64() {
			t.Run(p.name+"/"+f.name, func(t *testing.T) {
				t.Parallel() // xs and want are only read
				t.Logf("largest error %d ulps", checkVec64(t, p, f, xs, want))
				z := make([]float64, len(xs))
				f.kernel(p)(z, xs)
				var worst, off int64
				for i, x := range xs {
					m := f.math(x)
					if d := ulpDist64(m, want[i]); d < 0 || d > 1 {
						off++
						continue
					}
					worst = max(worst, ulpDist64(z[i], m))
				}
				t.Logf("largest distance from the math package %d ulps (math itself off by more than an ulp at %d inputs)", worst, off)
			})
		}
	}
}

// TestVec64SpecialValues checks the exact values that the maps must give
// at the ends of their ranges.
func TestVec64SpecialValues(t *testing.T) {
	inf, nan, negZero := math.Inf(1), math.NaN(), math.Copysign(0, -1)
	tiny := math.SmallestNonzeroFloat64
	cases := []struct {
		fn      string
		x, want float64
	}{
		{"exp", 0, 1}, {"exp", negZero, 1}, {"exp", 709.79, inf}, {"exp", 710, inf}, {"exp", 1e300, inf}, {"exp", inf, inf},
		{"exp", -745.14, 0}, {"exp", -746, 0}, {"exp", -1e300, 0}, {"exp", -inf, 0}, {"exp", -745.1, tiny},
		{"exp", 709.78, refExp64(709.78)}, {"exp", -744.4, refExp64(-744.4)}, {"exp", 709.782712893384, refExp64(709.782712893384)},
		{"tanh", 0, 0}, {"tanh", negZero, negZero}, {"tanh", 1e-300, 1e-300}, {"tanh", -1e-300, -1e-300},
		{"tanh", tiny, tiny}, {"tanh", -tiny, -tiny}, {"tanh", 1e-10, 1e-10}, {"tanh", 19.1, 1}, {"tanh", -19.1, -1},
		{"tanh", 20, 1}, {"tanh", 1e300, 1}, {"tanh", inf, 1}, {"tanh", -inf, -1},
		{"sigmoid", 0, 0.5}, {"sigmoid", negZero, 0.5}, {"sigmoid", 40, 1}, {"sigmoid", inf, 1}, {"sigmoid", -inf, 0},
		{"sigmoid", -1e300, 0}, {"sigmoid", -746, 0}, {"sigmoid", -745.1, tiny},
		{"softplus", 40, 40}, {"softplus", 1e300, 1e300}, {"softplus", inf, inf}, {"softplus", -inf, 0},
		{"softplus", -1e300, 0}, {"softplus", -745.1, tiny}, {"softplus", 0, math.Ln2},
		{"log", 1, 0}, {"log", 0, -inf}, {"log", negZero, -inf}, {"log", inf, inf}, {"log", -1, nan},
		{"log", -inf, nan}, {"log", -tiny, nan}, {"log", math.E, 1},
		{"log", tiny, refLog64(tiny)}, {"log", 0x1p-1023, refLog64(0x1p-1023)}, {"log", math.MaxFloat64, refLog64(math.MaxFloat64)},
		{"sqrt", 4, 2}, {"sqrt", negZero, negZero}, {"sqrt", -1, nan}, {"sqrt", inf, inf}, {"sqrt", tiny, math.Sqrt(tiny)},
	}
	for _, p := range vecPaths64() {
		for _, f := range vecFuncs64 {
			k := f.kernel(p)
			for _, c := range cases {
				if c.fn != f.name {
					continue
				}
				z := []float64{42}
				k(z, []float64{c.x})
				if !sameBits64(z[0], c.want) {
					t.Errorf("%s %s(%v) = %v [%#016x], want %v [%#016x]", p.name, f.name, c.x, z[0], math.Float64bits(z[0]), c.want, math.Float64bits(c.want))
				}
			}
			z := []float64{42, 42}
			k(z, []float64{nan, -nan})
			if z[0] == z[0] || z[1] == z[1] {
				t.Errorf("%s %s(±NaN) = %v", p.name, f.name, z)
			}
		}
	}
}

// sameBits64 reports whether a and b have the same bits, or are both NaN.
func sameBits64(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || a != a && b != b
}

// TestVec64Lengths checks every length 0..40 at several offsets, in place
// and not, against the math package, and that nothing past len(z) is
// written.
func TestVec64Lengths(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	src := make([]float64, 60)
	for i := range src {
		src[i] = rng.NormFloat64() * 3
		if i%7 == 3 {
			src[i] = -src[i] * src[i]
		}
	}
	// The correctly rounded references, once for each function (big.Float
	// arithmetic: computed for every path, length and offset they took most
	// of the test's time).
	refs := make([][]float64, len(vecFuncs64))
	for j, f := range vecFuncs64 {
		refs[j] = make([]float64, len(src))
		for i, v := range src {
			refs[j][i] = f.ref(v)
		}
	}
	for _, p := range vecPaths64() {
		for j, f := range vecFuncs64 {
			for n := 0; n <= 40; n++ {
				for off := range 4 {
					x, want := src[off:off+n], refs[j][off:off+n]
					buf := make([]float64, n+off+4)
					for i := range buf {
						buf[i] = 12345
					}
					z := buf[off : off+n]
					f.kernel(p)(z, x)
					in := append([]float64{}, x...)
					f.kernel(p)(in, in)
					for i := range x {
						if d := ulpDist64(z[i], want[i]); d < 0 || d > f.ulps {
							t.Fatalf("%s %s n=%d off=%d: z[%d] = %v, want %v", p.name, f.name, n, off, i, z[i], want[i])
						}
					}
					if diff := cmp.Diff(z, in, cmpopts.EquateNaNs()); diff != "" {
						t.Fatalf("%s %s n=%d off=%d: in place differs (-out +in):\n%s", p.name, f.name, n, off, diff)
					}
					if diff := cmp.Diff([]float64{12345, 12345, 12345, 12345}, buf[off+n:]); diff != "" {
						t.Fatalf("%s %s n=%d off=%d: wrote past the end:\n%s", p.name, f.name, n, off, diff)
					}
				}
			}
		}
	}
}

// TestVec64ShortSource checks that every kernel panics, rather than
// reading past the end, when x is shorter than z.
func TestVec64ShortSource(t *testing.T) {
	for _, p := range vecPaths64() {
		for _, f := range vecFuncs64 {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s %s: no panic for len(x) < len(z)", p.name, f.name)
					}
				}()
				f.kernel(p)(make([]float64, 20), make([]float64, 19))
			}()
		}
	}
}

// vecBwdFunc64 is a float64 backward kernel with its reference: g·f′(y)
// rounded once from an exact product with f′ from exact(y) (nil for
// 1 − y² and y − y², which are computed exactly here).
type vecBwdFunc64 struct {
	name   string
	kernel func(p vecPath64) func(z, g, y []float64, acc bool)
	deriv  func(y *big.Float) *big.Float
	ulps   int64
	yOK    func(y float64) bool // the y the kernel is defined for
}

// anyY64 accepts every y.
func anyY64(float64) bool { return true }

var vecBwdFuncs64 = []vecBwdFunc64{
	{"tanhBwd", func(p vecPath64) func(z, g, y []float64, acc bool) { return p.tanhBwd },
		func(y *big.Float) *big.Float {
			return new(big.Float).Sub(big.NewFloat(1), new(big.Float).Mul(y, y))
		}, 1, anyY64},
	{"sigmoidBwd", func(p vecPath64) func(z, g, y []float64, acc bool) { return p.sigmoidBwd },
		func(y *big.Float) *big.Float { return new(big.Float).Sub(y, new(big.Float).Mul(y, y)) }, 1, anyY64},
	{"softplusBwd", func(p vecPath64) func(z, g, y []float64, acc bool) { return p.softplusBwd },
		func(y *big.Float) *big.Float {
			v, _ := y.Float64()
			return big.NewFloat(-math.Expm1(-v))
		}, 2, func(y float64) bool { return !(y < 0) }}, // softplus ≥ 0
}

// ref returns g·f′(y) rounded once to float64 (f′ exact for tanh and σ,
// within an ulp for softplus), with NaN for NaN inputs and Inf products.
func (f vecBwdFunc64) ref(g, y float64) float64 {
	if g != g || y != y || math.IsInf(g, 0) || math.IsInf(y, 0) {
		return math.NaN() // not compared: see checkBwd64
	}
	prec := uint(2200)
	yb := new(big.Float).SetPrec(prec).SetFloat64(y)
	d := f.deriv(yb)
	p := new(big.Float).SetPrec(prec).Mul(new(big.Float).SetPrec(prec).SetFloat64(g), d)
	v, _ := p.Float64()
	return v
}

// checkBwd64 runs the kernel of f on path p, set and accumulated onto zs,
// and returns the largest error in ulps, failing t beyond f's bound or
// where the sum is not z + the value set.
func checkBwd64(t *testing.T, p vecPath64, f vecBwdFunc64, zs, gs, ys []float64) int64 {
	t.Helper()
	k := f.kernel(p)
	z := make([]float64, len(ys))
	k(z, gs, ys, false)
	acc := append([]float64(nil), zs...)
	k(acc, gs, ys, true)
	var worst int64
	fails := 0
	for i, y := range ys {
		if want := f.ref(gs[i], y); want == want && f.yOK(y) {
			d := ulpDist64(z[i], want)
			if d < 0 || d > f.ulps {
				if fails++; fails <= 5 {
					t.Errorf("%s %s(g=%v, y=%v) = %v, want %v (%d ulps)", p.name, f.name, gs[i], y, z[i], want, d)
				}
			}
			worst = max(worst, d)
		}
		if sum := zs[i] + z[i]; !sameBits64(acc[i], sum) {
			if fails++; fails <= 5 {
				t.Errorf("%s %s(g=%v, y=%v) accumulated onto %v = %v, want %v", p.name, f.name, gs[i], y, zs[i], acc[i], sum)
			}
		}
	}
	return worst
}

// TestVec64BwdAccuracy checks the float64 backward maps on every path
// against the exact reference on y values at the edges, near ±1, ½ and 0
// and across the activations' ranges, with random g; every length up to
// 19 exercises the tails.
func TestVec64BwdAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	ys := []float64{}
	for _, v := range vecEdges64() {
		if !(v < -700) && !math.IsInf(v, 0) && math.Abs(v) < 1e150 { // softplus′'s clamp; y² finite
			ys = append(ys, v)
		}
	}
	for range 1 << 13 {
		ys = append(ys, rng.Float64()*2-1, 1-math.Ldexp(rng.Float64(), -rng.IntN(53)),
			-1+math.Ldexp(rng.Float64(), -rng.IntN(53)), 0.5+math.Ldexp(rng.Float64()-0.5, -rng.IntN(53)),
			math.Ldexp(rng.Float64(), -rng.IntN(1074)), rng.Float64()*60)
	}
	gs, zs := make([]float64, len(ys)), make([]float64, len(ys))
	for i := range gs {
		gs[i], zs[i] = rng.NormFloat64(), rng.NormFloat64()
	}
	for _, p := range vecPaths64() {
		for _, f := range vecBwdFuncs64 {
			t.Run(p.name+"/"+f.name, func(t *testing.T) {
				w := checkBwd64(t, p, f, zs, gs, ys)
				for n := range 20 {
					w = max(w, checkBwd64(t, p, f, zs[n:2*n], gs[n:2*n], ys[n:2*n]))
				}
				t.Logf("largest error %d ulps", w)
			})
		}
	}
}

// TestVec64BwdSpecialValues checks exact values of the derivatives.
func TestVec64BwdSpecialValues(t *testing.T) {
	inf, nan, negZero := math.Inf(1), math.NaN(), math.Copysign(0, -1)
	tiny := math.SmallestNonzeroFloat64
	cases := []struct {
		fn      string
		g, y, z float64
	}{
		{"tanhBwd", 3, 0, 3}, {"tanhBwd", 3, 1, 0}, {"tanhBwd", 3, -1, 0}, {"tanhBwd", 2, 0.5, 1.5},
		{"tanhBwd", 1, 1 - 0x1p-53, 0x1p-52 - 0x1p-106}, {"tanhBwd", 1, nan, nan}, {"tanhBwd", nan, 0.5, nan},
		{"sigmoidBwd", 1, 0.5, 0.25}, {"sigmoidBwd", 2, 0, 0}, {"sigmoidBwd", 2, 1, 0},
		{"sigmoidBwd", 1, 1 - 0x1p-53, 0x1p-53 - 0x1p-106}, {"sigmoidBwd", 1, 1e-310, 1e-310}, {"sigmoidBwd", 1, nan, nan},
		{"softplusBwd", 1, 0, 0}, {"softplusBwd", 1, negZero, 0}, {"softplusBwd", 2, 1e-300, 2e-300},
		{"softplusBwd", 1, tiny, tiny}, {"softplusBwd", 1, 1e-17, 1e-17}, {"softplusBwd", 3, 40, 3},
		{"softplusBwd", 3, 1e300, 3}, {"softplusBwd", 3, inf, 3}, {"softplusBwd", 1, nan, nan},
	}
	for _, p := range vecPaths64() {
		for _, f := range vecBwdFuncs64 {
			k := f.kernel(p)
			for _, c := range cases {
				if c.fn != f.name {
					continue
				}
				z := []float64{42}
				k(z, []float64{c.g}, []float64{c.y}, false)
				if !sameBits64(z[0], c.z) {
					t.Errorf("%s %s(g=%v, y=%v) = %v, want %v", p.name, f.name, c.g, c.y, z[0], c.z)
				}
			}
		}
	}
}
