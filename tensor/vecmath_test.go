package tensor

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

var exhaustive = flag.Bool("vecmath.exhaustive", false, "check the float32 kernels on every float32 value (minutes)")

// vecFunc is one float32 kernel with its reference, computed in float64 by
// the math package, and the largest errors allowed in ulps: ulps on the
// assembly paths (the package doc's bounds), goUlps on the pure-Go path
// (vecmath.go's: exp and log within 1; vecmath_table.go's: the table
// kernels tanh, sigmoid and softplus within 2).
type vecFunc struct {
	name         string
	kernel       func(p vecPath) func(z, x []float32)
	ref          func(float64) float64
	ulps, goUlps int64
}

// bound returns the largest error allowed for f on path p, in ulps.
func (f vecFunc) bound(p vecPath) int64 {
	if p.name == goPath.name {
		return f.goUlps
	}
	return f.ulps
}

var vecFuncs = []vecFunc{
	{"exp", func(p vecPath) func(z, x []float32) { return p.exp }, math.Exp, 2, 1},
	{"tanh", func(p vecPath) func(z, x []float32) { return p.tanh }, math.Tanh, 3, 2},
	{"sigmoid", func(p vecPath) func(z, x []float32) { return p.sigmoid }, SigmoidOf, 3, 2},
	{"softplus", func(p vecPath) func(z, x []float32) { return p.softplus }, SoftplusOf, 2, 2},
	{"log", func(p vecPath) func(z, x []float32) { return p.log }, math.Log, 2, 1},
	{"sqrt", func(p vecPath) func(z, x []float32) { return p.sqrt }, math.Sqrt, 0, 0},
}

// ulpDist returns the number of float32 values between a and b (0 for
// equal values, +0 and −0 equal; Inf is one past MaxFloat32), or −1 when
// exactly one is NaN. Two NaNs are at distance 0.
func ulpDist(a, b float32) int64 {
	an, bn := a != a, b != b
	switch {
	case an && bn:
		return 0
	case an || bn:
		return -1
	}
	ord := func(v float32) int64 {
		u := math.Float32bits(v)
		if u&signBit != 0 {
			return -int64(u &^ signBit)
		}
		return int64(u)
	}
	d := ord(a) - ord(b)
	if d < 0 {
		d = -d
	}
	return d
}

// vecEdges are inputs at the edges of float32 and of the maps' ranges.
func vecEdges() []float32 {
	inf := float32(math.Inf(1))
	xs := []float32{
		0, float32(math.Copysign(0, -1)), 1, -1, 0.5, -0.5, 2, -2,
		math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
		0x1p-126, -0x1p-126, 0x1p-127, 0x1.fffffcp-127, 1e-30, -1e-30, 1e-7, -1e-7, 1e-3, -1e-3,
		math.MaxFloat32, -math.MaxFloat32, inf, -inf, float32(math.NaN()), -float32(math.NaN()),
		88.72, 88.7228, 88.72283, 88.722839, 88.72284, 88.73, 89, 89.5, 100, 1e30,
		-87.33, -87.34, -88, -100, -103.27, -103.28, -103.97, -103.972, -103.98, -104, -104.5, -150, -1e30,
		0.3465, -0.3465, 0.34657, 0.5493, 0.55, 0.625, 9, 9.01, 9.02, 9.5, 10, -9.02, 17, -17, 20, -20,
		0.41421356, -0.8813736, 0.8813736, 0.70710677, 1.4142135, 0.99999994, 1.0000001,
	}
	for _, v := range append([]float32(nil), xs...) {
		xs = append(xs, math.Nextafter32(v, inf), math.Nextafter32(v, -inf))
	}
	return xs
}

// vecRandom returns n random float32 values: uniform bit patterns (all
// exponents, both signs) and values of moderate size.
func vecRandom(rng *rand.Rand, n int) []float32 {
	xs := make([]float32, n)
	for i := range xs {
		switch i % 4 {
		case 0, 1:
			xs[i] = math.Float32frombits(rng.Uint32())
		case 2:
			xs[i] = float32(rng.NormFloat64() * 4)
		default:
			xs[i] = float32((rng.Float64()*2 - 1) * 120)
		}
	}
	return xs
}

// checkVecWant runs the kernel of f on path p over xs and returns the
// largest error in ulps against want (f's reference at xs), failing t
// beyond f's bound on p.
func checkVecWant(t *testing.T, p vecPath, f vecFunc, xs, wants []float32) int64 {
	t.Helper()
	z := make([]float32, len(xs))
	f.kernel(p)(z, xs)
	var worst int64
	fails := 0
	for i, x := range xs {
		want := wants[i]
		d := ulpDist(z[i], want)
		if d < 0 || d > f.bound(p) {
			if fails++; fails <= 5 {
				t.Errorf("%s %s(%g [%#08x]) = %g [%#08x], want %g [%#08x] (%d ulps)", p.name, f.name, x, math.Float32bits(x), z[i], math.Float32bits(z[i]), want, math.Float32bits(want), d)
			}
		}
		worst = max(worst, d)
	}
	return worst
}

// TestVecAccuracy checks every float32 kernel on every path against the
// math package on edge values and random values across all exponents.
func TestVecAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	random := vecRandom(rng, 1<<18)
	var dense []float32 // every 1021st float32 in [−120, 120]
	for _, lim := range []float32{120, -120} {
		for u := uint32(0); u <= math.Float32bits(lim); u += 1021 {
			dense = append(dense, math.Float32frombits(u|math.Float32bits(lim)&signBit))
		}
	}
	// The inputs and their references, once for every path.
	xs := append(append(vecEdges(), random...), dense...)
	wants := make([][]float32, len(vecFuncs))
	for j, f := range vecFuncs {
		wants[j] = vecRefs(f, xs)
	}
	for _, p := range vecPaths() {
		for j, f := range vecFuncs {
			t.Run(p.name+"/"+f.name, func(t *testing.T) {
				t.Parallel() // xs and wants are only read
				t.Logf("largest error %d ulps", checkVecWant(t, p, f, xs, wants[j]))
			})
		}
	}
}

// vecRefs returns f's reference at xs, rounded to float32.
func vecRefs(f vecFunc, xs []float32) []float32 {
	want := make([]float32, len(xs))
	for i, x := range xs {
		want[i] = float32(f.ref(float64(x)))
	}
	return want
}

// TestVecSpecialValues checks the exact values that the maps must give at
// the ends of their ranges.
func TestVecSpecialValues(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	negZero := float32(math.Copysign(0, -1))
	cases := []struct {
		fn   string
		x    float32
		want float32
	}{
		{"exp", 0, 1}, {"exp", negZero, 1}, {"exp", 89, inf}, {"exp", 1e30, inf}, {"exp", inf, inf},
		{"exp", -104, 0}, {"exp", -1e30, 0}, {"exp", -inf, 0}, {"exp", -103.9, math.SmallestNonzeroFloat32},
		{"tanh", 0, 0}, {"tanh", negZero, negZero}, {"tanh", 1e-30, 1e-30}, {"tanh", -1e-30, -1e-30},
		{"tanh", math.SmallestNonzeroFloat32, math.SmallestNonzeroFloat32}, {"tanh", 20, 1}, {"tanh", -20, -1},
		{"tanh", inf, 1}, {"tanh", -inf, -1}, {"tanh", 1e-8, 1e-8}, {"tanh", -1e-20, -1e-20}, {"tanh", 1e-38, 1e-38},
		{"sigmoid", 0, 0.5}, {"sigmoid", 20, 1}, {"sigmoid", inf, 1}, {"sigmoid", -inf, 0}, {"sigmoid", -1e30, 0},
		{"sigmoid", -103, float32(math.Exp(-103))}, {"sigmoid", -90, float32(math.Exp(-90))},
		{"softplus", 100, 100}, {"softplus", 1e30, 1e30}, {"softplus", inf, inf}, {"softplus", -inf, 0},
		{"softplus", -90, float32(math.Exp(-90))}, {"softplus", -20, float32(math.Exp(-20))}, {"softplus", -1e30, 0},
		{"log", 1, 0}, {"log", 0, -inf}, {"log", negZero, -inf}, {"log", inf, inf}, {"log", -1, nan}, {"log", -inf, nan},
		{"log", math.SmallestNonzeroFloat32, float32(math.Log(math.SmallestNonzeroFloat32))},
		{"sqrt", 4, 2}, {"sqrt", negZero, negZero}, {"sqrt", -1, nan}, {"sqrt", inf, inf},
	}
	for _, p := range vecPaths() {
		for _, f := range vecFuncs {
			k := f.kernel(p)
			for _, c := range cases {
				if c.fn != f.name {
					continue
				}
				z := []float32{42}
				k(z, []float32{c.x})
				if math.Float32bits(z[0]) != math.Float32bits(c.want) && !(z[0] != z[0] && c.want != c.want) {
					t.Errorf("%s %s(%g) = %g, want %g", p.name, f.name, c.x, z[0], c.want)
				}
			}
			z := []float32{42}
			k(z, []float32{nan})
			if z[0] == z[0] {
				t.Errorf("%s %s(NaN) = %g", p.name, f.name, z[0])
			}
		}
	}
}

// TestVecLengths checks every length 0..70 at every alignment, in place
// and not, against the math package, and that nothing past len(z) is
// written.
func TestVecLengths(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	src := make([]float32, 90)
	for i := range src {
		src[i] = float32(rng.NormFloat64() * 3)
		if i%7 == 3 {
			src[i] = -src[i] * src[i] // some negatives large enough to matter
		}
	}
	refs := make([][]float32, len(vecFuncs)) // once for each function, not each path, length and offset
	for j, f := range vecFuncs {
		refs[j] = make([]float32, len(src))
		for i, v := range src {
			refs[j][i] = float32(f.ref(float64(v)))
		}
	}
	for _, p := range vecPaths() {
		for j, f := range vecFuncs {
			for n := 0; n <= 70; n++ {
				for off := 0; off < 8; off++ {
					x, want := src[off:off+n], refs[j][off:off+n]
					buf := make([]float32, n+off+4)
					for i := range buf {
						buf[i] = 12345
					}
					z := buf[off : off+n]
					f.kernel(p)(z, x)
					in := append([]float32(nil), x...)
					f.kernel(p)(in, in)
					for i := range z {
						if d := ulpDist(z[i], want[i]); d < 0 || d > f.bound(p) {
							t.Fatalf("%s %s n=%d off=%d: z[%d] = %g, want %g", p.name, f.name, n, off, i, z[i], want[i])
						}
						if math.Float32bits(in[i]) != math.Float32bits(z[i]) {
							t.Fatalf("%s %s n=%d off=%d: in place z[%d] = %g, not %g", p.name, f.name, n, off, i, in[i], z[i])
						}
					}
					for i, v := range buf[off+n:] {
						if v != 12345 {
							t.Fatalf("%s %s n=%d off=%d: wrote past the end at %d", p.name, f.name, n, off, i)
						}
					}
				}
			}
		}
	}
}

// TestVecExhaustive checks every float32 input (go test -run VecExhaustive
// -vecmath.exhaustive; minutes per path).
func TestVecExhaustive(t *testing.T) {
	if !*exhaustive {
		t.Skip("needs -vecmath.exhaustive")
	}
	const block = 1 << 16
	xs, z := make([]float32, block), make([]float32, block)
	for _, p := range vecPaths() {
		for _, f := range vecFuncs {
			k := f.kernel(p)
			var worst int64
			var worstX float32
			for hi := uint64(0); hi < 1<<32; hi += block {
				for i := range xs {
					xs[i] = math.Float32frombits(uint32(hi) + uint32(i))
				}
				k(z, xs)
				for i, x := range xs {
					d := ulpDist(z[i], float32(f.ref(float64(x))))
					if d < 0 {
						d = 1 << 40
					}
					if d > worst {
						worst, worstX = d, x
					}
				}
			}
			msg := fmt.Sprintf("%s %s: largest error %d ulps, at %g", p.name, f.name, worst, worstX)
			if worst > f.bound(p) {
				t.Error(msg)
			} else {
				t.Log(msg)
			}
		}
	}
}

// TestVecShortSource checks that every kernel panics, rather than reading
// past the end, when x is shorter than z.
func TestVecShortSource(t *testing.T) {
	for _, p := range vecPaths() {
		for _, f := range vecFuncs {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s %s: no panic for len(x) < len(z)", p.name, f.name)
					}
				}()
				f.kernel(p)(make([]float32, 20), make([]float32, 19))
			}()
		}
	}
}
