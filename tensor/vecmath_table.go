package tensor

import "math"

// Piecewise cubic tables of the pure-Go path.
//
// Scalar Go code cannot hide the cost of eˣ's reduction and polynomial
// plus a division, so the pure-Go tanh, sigmoid and softplus do not go
// through exp: each reads one cubic from a table instead. A function g is
// split into intervals of width 1/s; with u = x·s (exact: s is a power of
// two), k = u rounded toward zero and d = u − k (exact), g(x) ≈ c₀ +
// d·(c₁ + d·(c₂ + d·c₃)) with the coefficients of interval k, which covers
// d ∈ [0, 1) for k > 0, (−1, 0] for k < 0 and (−1, 1) for k = 0. They are
// computed at package initialisation by interpolating g (in float64, from
// the math package) at the four Chebyshev points of the interval, which is
// within a small factor of the best cubic, and rounded to float32: the
// interpolation error is below 1e-8 relative in every interval, so the
// results' error is mostly that of rounding c₀ and of the float32
// evaluation, within 2 ulps over every float32 input (TestVecExhaustive).
//
//   - tanh: of |x| on [0, 10) with s = 32, the sign of x put back;
//     interval 0 is d/32 + d²·(c₂ + d·c₃), so that tanh x = x for tiny x
//     (denormals too).
//   - sigmoid: on (−16, 16) with s = 16 (σ(x) for x < 0 is relatively
//     accurate down to σ(−16) ≈ 1e-7: each interval's values change by a
//     factor of at most e^(1/16)); interval 0 is ½ + d·(c₁ + d²·c₃), odd
//     about ½ as σ is.
//   - softplus: on (−16, 16) with s = 16.
//
// Inputs outside the tables (|x| beyond 9.5 for tanh, 16 for the others,
// ±Inf and NaN) take the exp-based slow paths of vecmath.go. The tables
// take 8 KB each.

const (
	tanhScale     = 32
	tanhTableLen  = 512 // a power of two: indices are masked, not bounds-checked
	logitScale    = 16
	logitTableLen = 512        // intervals k + 256 for k in (−256, 256)
	logitMaxBits  = 0x41800000 // the bits of 16: |x| < 16 is |x|'s bits below them (NaN is not)
)

var (
	tanhTable     [tanhTableLen][4]float32
	sigmoidTable  [logitTableLen][4]float32
	softplusTable [logitTableLen][4]float32
)

func init() {
	for k := range 320 {
		tanhTable[k] = fitCubic(math.Tanh, tanhScale, k, 0, 1)
	}
	// tanh on [0, 1/32): d/32 + d²·(c₂ + d·c₃), the line fitted to
	// (tanh(d/32) − d/32)/d² at the two Chebyshev points of [0, 1].
	h := func(d float64) float64 { return (math.Tanh(d/tanhScale) - d/tanhScale) / (d * d) }
	d0, d1 := 0.5-0.5*math.Sqrt2/2, 0.5+0.5*math.Sqrt2/2
	c3 := (h(d1) - h(d0)) / (d1 - d0)
	tanhTable[0] = [4]float32{0, 1.0 / tanhScale, float32(h(d0) - c3*d0), float32(c3)}

	for k := -logitTableLen/2 + 1; k < logitTableLen/2; k++ {
		lo, hi := signedInterval(k)
		sigmoidTable[k+logitTableLen/2] = fitCubic(SigmoidOf, logitScale, k, lo, hi)
		softplusTable[k+logitTableLen/2] = fitCubic(SoftplusOf, logitScale, k, lo, hi)
	}
	// σ on (−1/16, 1/16): ½ + d·(c₁ + d²·c₃), the line in d² fitted to
	// (σ(d/16) − ½)/d at the Chebyshev points of [0, 1] (σ − ½ is odd).
	h = func(d float64) float64 { return (SigmoidOf(d/logitScale) - 0.5) / d }
	c3 = (h(d1) - h(d0)) / (d1*d1 - d0*d0)
	sigmoidTable[logitTableLen/2] = [4]float32{0.5, float32(h(d0) - c3*d0*d0), 0, float32(c3)}
}

// fitCubic returns the cubic in d interpolating g((k + d)/scale) at the
// Chebyshev points of [lo, hi].
func fitCubic(g func(float64) float64, scale float64, k int, lo, hi float64) [4]float32 {
	var nodes, vals [4]float64
	for j := range nodes {
		nodes[j] = (lo+hi)/2 + (hi-lo)/2*math.Cos(float64(2*j+1)*math.Pi/8)
		vals[j] = g((float64(k) + nodes[j]) / scale)
	}
	c := monomials(nodes, vals)
	return [4]float32{float32(c[0]), float32(c[1]), float32(c[2]), float32(c[3])}
}

// signedInterval returns the range of d = u − k for u rounded toward zero
// to k: [0, 1) for k > 0, (−1, 0] for k < 0, (−1, 1) for k = 0.
func signedInterval(k int) (lo, hi float64) {
	switch {
	case k > 0:
		return 0, 1
	case k < 0:
		return -1, 0
	}
	return -1, 1
}

// monomials returns the coefficients c of the cubic c₀ + c₁d + c₂d² + c₃d³
// through the points (nodes[k], vals[k]), by Newton's divided differences.
func monomials(nodes, vals [4]float64) [4]float64 {
	dd := vals
	for j := 1; j < 4; j++ {
		for k := 3; k >= j; k-- {
			dd[k] = (dd[k] - dd[k-1]) / (nodes[k] - nodes[k-j])
		}
	}
	// Horner on the Newton form: p = dd₀ + (d − x₀)(dd₁ + (d − x₁)(dd₂ + (d − x₂)dd₃)).
	var c [4]float64
	c[0] = dd[3]
	for j := 2; j >= 0; j-- {
		// c ← c·(d − nodes[j]) + dd[j]
		for k := 3; k >= 1; k-- {
			c[k] = c[k-1] - nodes[j]*c[k]
		}
		c[0] = dd[j] - nodes[j]*c[0]
	}
	return c
}
