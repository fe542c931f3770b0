package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The tests of the ReLU kernels and the activations' backward maps.
//
// Bounds, against a reference computed in float64 (exact but for the last
// of float64's 53 bits) and rounded once to float32:
//
//	tanh′ = g·(1 − y²), σ′ = g·(y − y²)   1 ulp (two roundings: f′, then the product)
//	softplus′ = g·(1 − e⁻ʸ)               vecBwdFuncs' ulps (exp's reduction and polynomial)
//	ReLU′, LeakyReLU′, ReLU, LeakyReLU    exact (the bits, any NaN for NaN)
//
// The derivative f′ is a float32 on every path, so where it overflows
// (|y| > 1.8e19, outside the activations' ranges) the reference is g
// times the infinity. With accumulate, every path must give exactly the
// float32 sum of z and the value it sets without.

// vecBwdFunc is a backward kernel with its reference: deriv(y) is f′ in
// float64, yOK says which y the kernel is defined for.
type vecBwdFunc struct {
	name   string
	kernel func(p vecPath) func(z, g, y []float32, acc bool)
	deriv  func(y float64) float64
	ulps   int64
	yOK    func(y float32) bool
}

func anyY(float32) bool { return true }

var vecBwdFuncs = []vecBwdFunc{
	{"tanhBwd", func(p vecPath) func(z, g, y []float32, acc bool) { return p.tanhBwd }, func(y float64) float64 { return 1 - y*y }, 1, anyY},
	{"sigmoidBwd", func(p vecPath) func(z, g, y []float32, acc bool) { return p.sigmoidBwd }, func(y float64) float64 { return y - y*y }, 1, anyY},
	// softplus′ is defined for y ≥ −88 (softplus itself is ≥ 0) and NaN.
	{"softplusBwd", func(p vecPath) func(z, g, y []float32, acc bool) { return p.softplusBwd }, func(y float64) float64 { return -math.Expm1(-y) }, 2,
		func(y float32) bool { return !(y < -88) }},
	{"reluBwd", func(p vecPath) func(z, g, y []float32, acc bool) { return p.reluBwd }, func(y float64) float64 { return b2f(y > 0) }, 0, anyY},
	{"leakyBwd(0.3)", func(p vecPath) func(z, g, y []float32, acc bool) { return leakyBwdWith(p, 0.3) }, leakyDeriv(0.3), 0, anyY},
	{"leakyBwd(-1.7)", func(p vecPath) func(z, g, y []float32, acc bool) { return leakyBwdWith(p, -1.7) }, leakyDeriv(-1.7), 0, anyY},
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func leakyBwdWith(p vecPath, slope float32) func(z, g, y []float32, acc bool) {
	return func(z, g, y []float32, acc bool) { p.leakyBwd(z, g, y, slope, acc) }
}

func leakyDeriv(slope float32) func(float64) float64 {
	return func(y float64) float64 {
		if y > 0 {
			return 1
		}
		return float64(slope)
	}
}

// ref returns g·f′(y) rounded to float32, f′ overflowing as a float32
// would; the ReLU masks give +0, not 0·g, where they are 0.
func (f vecBwdFunc) ref(g, y float32) float32 {
	d := f.deriv(float64(y))
	if d == 0 && f.name == "reluBwd" {
		return 0
	}
	if d32 := float32(d); math.IsInf(float64(d32), 0) {
		return g * d32
	}
	return float32(float64(g) * d)
}

// vecBwdYs returns y values for the backward maps: the edges, values near
// ±1 and ½ (where 1 − y² and y − y² cancel), in the activations' ranges,
// and random bit patterns.
func vecBwdYs(rng *rand.Rand, n int) []float32 {
	ys := vecEdges()
	for k := range 40 {
		for _, v := range []float32{1 - float32(k)*0x1p-24, 1 + float32(k)*0x1p-23, 0.5 + float32(k)*0x1p-24, 0.5 - float32(k)*0x1p-25} {
			ys = append(ys, v, -v)
		}
	}
	for i := range n {
		var v float32
		switch i % 6 {
		case 0:
			v = math.Float32frombits(rng.Uint32())
		case 1: // tanh's range
			v = float32(rng.Float64()*2 - 1)
		case 2: // σ's
			v = float32(rng.Float64())
		case 3: // softplus's
			v = float32(rng.ExpFloat64() * 3)
		case 4: // near ±1 and 0
			v = 1 - float32(rng.IntN(1<<14))*0x1p-24
			if rng.IntN(2) == 0 {
				v = -v
			}
			if rng.IntN(3) == 0 {
				v = float32(rng.NormFloat64() * 1e-6)
			}
		default:
			v = float32(rng.NormFloat64() * 4)
		}
		ys = append(ys, v)
	}
	return ys
}

// checkBwd runs the kernel of f on path p over (gs, ys), set and then
// accumulated onto zs, and returns the largest error in ulps, failing t
// beyond f.ulps.
func checkBwd(t *testing.T, p vecPath, f vecBwdFunc, zs, gs, ys []float32) int64 {
	t.Helper()
	k := f.kernel(p)
	z := make([]float32, len(ys))
	k(z, gs, ys, false)
	acc := append([]float32(nil), zs...)
	k(acc, gs, ys, true)
	var worst int64
	fails := 0
	for i, y := range ys {
		want := f.ref(gs[i], y)
		d := ulpDist(z[i], want)
		if d < 0 || d > f.ulps {
			if fails++; fails <= 5 {
				t.Errorf("%s %s(g=%g, y=%g [%#08x]) = %g [%#08x], want %g [%#08x] (%d ulps)", p.name, f.name, gs[i], y, math.Float32bits(y), z[i], math.Float32bits(z[i]), want, math.Float32bits(want), d)
			}
		}
		worst = max(worst, d)
		if sum := zs[i] + z[i]; !sameBits(acc[i], sum) {
			if fails++; fails <= 5 {
				t.Errorf("%s %s(g=%g, y=%g) accumulated onto %g = %g, want %g + %g = %g", p.name, f.name, gs[i], y, zs[i], acc[i], zs[i], z[i], sum)
			}
		}
	}
	return worst
}

// sameBits reports whether a and b have the same bits, or are both NaN.
func sameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
}

// TestVecBwdAccuracy checks the backward maps on every path against the
// float64 reference: every pair of edge values, and random pairs.
func TestVecBwdAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	edges := vecEdges()
	ys := vecBwdYs(rng, 1<<16)
	gs := vecRandom(rng, len(ys))
	zs := vecRandom(rng, len(ys))
	for i := range gs {
		if i%3 == 0 { // gradients of ordinary size
			gs[i] = float32(rng.NormFloat64())
		}
	}
	var eg, ey, ez []float32 // all pairs of edge values
	for i, g := range edges {
		for j, y := range edges {
			eg, ey, ez = append(eg, g), append(ey, y), append(ez, edges[(i+j)%len(edges)])
		}
	}
	for _, p := range vecPaths() {
		for _, f := range vecBwdFuncs {
			t.Run(p.name+"/"+f.name, func(t *testing.T) {
				keep := func(zs, gs, ys []float32) (z, g, y []float32) {
					for i, v := range ys {
						if f.yOK(v) {
							z, g, y = append(z, zs[i]), append(g, gs[i]), append(y, v)
						}
					}
					return
				}
				z, g, y := keep(ez, eg, ey)
				w := checkBwd(t, p, f, z, g, y)
				z, g, y = keep(zs, gs, ys)
				w = max(w, checkBwd(t, p, f, z, g, y))
				t.Logf("largest error %d ulps", w)
			})
		}
	}
}

// TestVecBwdSpecialValues checks exact values of the derivatives.
func TestVecBwdSpecialValues(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	negZero := float32(math.Copysign(0, -1))
	cases := []struct {
		fn      string
		g, y, z float32
	}{
		{"tanhBwd", 3, 0, 3}, {"tanhBwd", 3, 1, 0}, {"tanhBwd", 3, -1, 0}, {"tanhBwd", 2, 0.5, 1.5},
		{"tanhBwd", 1, 1 - 0x1p-24, 0x1p-23 - 0x1p-48}, {"tanhBwd", 1, nan, nan}, {"tanhBwd", nan, 0.5, nan},
		{"sigmoidBwd", 1, 0.5, 0.25}, {"sigmoidBwd", 2, 0, 0}, {"sigmoidBwd", 2, 1, 0},
		{"sigmoidBwd", 1, 1 - 0x1p-24, 0x1p-24 - 0x1p-48}, {"sigmoidBwd", 1, 1e-40, 1e-40}, {"sigmoidBwd", 1, nan, nan},
		{"softplusBwd", 1, 0, 0}, {"softplusBwd", 1, negZero, 0}, {"softplusBwd", 2, 1e-30, 2e-30},
		{"softplusBwd", 1, math.SmallestNonzeroFloat32, math.SmallestNonzeroFloat32}, {"softplusBwd", 1, 1e-8, 1e-8},
		{"softplusBwd", 3, 30, 3}, {"softplusBwd", 3, 1e30, 3}, {"softplusBwd", 3, inf, 3}, {"softplusBwd", 1, nan, nan},
		{"reluBwd", 2, 1e-45, 2}, {"reluBwd", 2, 0, 0}, {"reluBwd", 2, negZero, 0}, {"reluBwd", nan, -1, 0},
		{"reluBwd", inf, 0, 0}, {"reluBwd", -inf, inf, -inf}, {"reluBwd", 2, nan, 0}, {"reluBwd", 2, -nan, 0},
		{"leakyBwd(0.3)", 2, 1e-45, 2}, {"leakyBwd(0.3)", 2, 0, 0.6}, {"leakyBwd(0.3)", 2, nan, 0.6}, {"leakyBwd(0.3)", nan, 1, nan},
	}
	for _, p := range vecPaths() {
		for _, f := range vecBwdFuncs {
			k := f.kernel(p)
			for _, c := range cases {
				if c.fn != f.name {
					continue
				}
				z := []float32{42}
				k(z, []float32{c.g}, []float32{c.y}, false)
				if !sameBits(z[0], c.z) {
					t.Errorf("%s %s(g=%g, y=%g) = %g [%#08x], want %g [%#08x]", p.name, f.name, c.g, c.y, z[0], math.Float32bits(z[0]), c.z, math.Float32bits(c.z))
				}
			}
		}
	}
}

// TestVecBwdLengths checks every length 0..70 at several alignments
// against the reference, with z a separate slice, z = g and z = y, set and
// accumulated, and that nothing past len(z) is written.
func TestVecBwdLengths(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	const n0 = 90
	gsrc, ysrc, zsrc := make([]float32, n0), vecBwdYs(rng, n0)[len(vecEdges())+320:], make([]float32, n0)
	for i := range gsrc {
		gsrc[i] = float32(rng.NormFloat64())
		zsrc[i] = float32(rng.NormFloat64())
	}
	const mark = 12345
	for _, p := range vecPaths() {
		for _, f := range vecBwdFuncs {
			k := f.kernel(p)
			for n := 0; n <= 70; n++ {
				for off := 0; off < 8; off++ {
					g, y := gsrc[off:off+n], ysrc[off:off+n]
					for i, v := range y {
						if !f.yOK(v) {
							y[i] = 1
						}
					}
					for _, acc := range []bool{false, true} {
						buf := make([]float32, n+off+4)
						for i := range buf {
							buf[i] = mark
						}
						z := buf[off : off+n]
						copy(z, zsrc)
						k(z, g, y, acc)
						for i := range z {
							want := f.ref(g[i], y[i])
							if acc {
								set := []float32{0}
								k(set, g[i:i+1], y[i:i+1], false)
								want = zsrc[i] + set[0]
							}
							if d := ulpDist(z[i], want); d < 0 || d > f.ulps {
								t.Fatalf("%s %s acc=%v n=%d off=%d: z[%d] = %g, want %g", p.name, f.name, acc, n, off, i, z[i], want)
							}
						}
						for i, v := range buf[off+n:] {
							if v != mark {
								t.Fatalf("%s %s acc=%v n=%d off=%d: wrote past the end at %d", p.name, f.name, acc, n, off, i)
							}
						}
						// In place: z = g, then z = y.
						zg := append([]float32(nil), g...)
						zy := append([]float32(nil), y...)
						if acc {
							zg = make([]float32, n)
							zy = make([]float32, n)
							k(zg, g, y, false)
							copy(zy, zg)
							k(zg, zg, y, true) // z = z + z·f′
							k(zy, g, zy, true) // y is the set value, not y
							want := make([]float32, n)
							k(want, g, y, false)
							wg := make([]float32, n)
							k(wg, want, y, false)
							wy := make([]float32, n)
							k(wy, g, want, false)
							for i := range want {
								if !sameBits(zg[i], want[i]+wg[i]) || !sameBits(zy[i], want[i]+wy[i]) {
									t.Fatalf("%s %s acc n=%d off=%d: in place z[%d] = %g (z = g), %g (z = y)", p.name, f.name, n, off, i, zg[i], zy[i])
								}
							}
							continue
						}
						k(zg, zg, y, false)
						k(zy, g, zy, false)
						for i := range z {
							if !sameBits(zg[i], z[i]) || !sameBits(zy[i], z[i]) {
								t.Fatalf("%s %s n=%d off=%d: in place z[%d] = %g (z = g), %g (z = y), not %g", p.name, f.name, n, off, i, zg[i], zy[i], z[i])
							}
						}
					}
				}
			}
		}
	}
}

// TestVecBwdShortSource checks that the backward maps panic, rather than
// read past the end, when g or y is shorter than z.
func TestVecBwdShortSource(t *testing.T) {
	for _, p := range vecPaths() {
		for _, f := range vecBwdFuncs {
			for _, acc := range []bool{false, true} {
				for _, short := range []string{"g", "y"} {
					func() {
						defer func() {
							if recover() == nil {
								t.Errorf("%s %s acc=%v: no panic for a short %s", p.name, f.name, acc, short)
							}
						}()
						g, y := make([]float32, 20), make([]float32, 20)
						if short == "g" {
							g = make([]float32, 19)
						} else {
							y = make([]float32, 19)
						}
						f.kernel(p)(make([]float32, 20), g, y, acc)
					}()
				}
			}
		}
	}
}

// reluRef and leakyRef are ReLU and LeakyReLU on one value.
func reluRef(x float32) float32 {
	if x > 0 || x != x {
		return x
	}
	return 0
}

func leakyRef(slope float32) func(float32) float32 {
	return func(x float32) float32 {
		if x > 0 {
			return x
		}
		return slope * x
	}
}

// TestVecReLU checks ReLU and LeakyReLU on every path exactly: edge values,
// random values, every length 0..70 at several alignments, in place, and
// that nothing past len(z) is written.
func TestVecReLU(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	xs := append(vecEdges(), vecRandom(rng, 1<<14)...)
	type kern struct {
		name string
		k    func(p vecPath) func(z, x []float32)
		ref  func(float32) float32
	}
	kerns := []kern{{"relu", func(p vecPath) func(z, x []float32) { return p.relu }, reluRef}}
	for _, s := range []float32{0.3, 0, -2.5, float32(math.Inf(1))} {
		kerns = append(kerns, kern{"leaky", func(p vecPath) func(z, x []float32) {
			return func(z, x []float32) { p.leaky(z, x, s) }
		}, leakyRef(s)})
	}
	const mark = 12345
	for _, p := range vecPaths() {
		for _, kr := range kerns {
			k := kr.k(p)
			check := func(z, x []float32, what string) {
				for i, v := range x {
					if want := kr.ref(v); !sameBits(z[i], want) {
						t.Fatalf("%s %s %s: f(%g [%#08x]) = %g [%#08x], want %g [%#08x]", p.name, kr.name, what, v, math.Float32bits(v), z[i], math.Float32bits(z[i]), want, math.Float32bits(want))
					}
				}
			}
			z := make([]float32, len(xs))
			k(z, xs)
			check(z, xs, "values")
			for n := 0; n <= 70; n++ {
				for off := 0; off < 8; off++ {
					x := xs[off+100 : off+100+n]
					buf := make([]float32, n+off+4)
					for i := range buf {
						buf[i] = mark
					}
					k(buf[off:off+n], x)
					check(buf[off:off+n], x, "lengths")
					for i, v := range buf[off+n:] {
						if v != mark {
							t.Fatalf("%s %s n=%d off=%d: wrote past the end at %d", p.name, kr.name, n, off, i)
						}
					}
					in := append([]float32(nil), x...)
					k(in, in)
					check(in, x, "in place")
				}
			}
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s %s: no panic for len(x) < len(z)", p.name, kr.name)
					}
				}()
				k(make([]float32, 20), make([]float32, 19))
			}()
		}
	}
}
