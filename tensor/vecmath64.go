package tensor

import "math"

// Vectorised float64 maps.
//
// The float64 maps Exp, Tanh, Sigmoid, Softplus, Log and Sqrt and the
// backward maps of Tanh, Sigmoid and Softplus run through slice kernels of
// one float64 path, chosen as the float32 one is (vecmath.go): AVX-512
// (8 lanes in ZMM registers) or AVX2+FMA (4 lanes in YMM) assembly in
// vecmath64_amd64.s, NEON (2 lanes) in vecmath64_arm64.s, or the portable
// pure-Go kernels of this file, which compute the same algorithms with
// the same constants one element at a time. TestVec64Accuracy checks every path against results correctly
// rounded in math/big, on edge values and random values over all
// exponents, within 2 ulps (sqrt exact). Measured, also over 2¹⁹ more
// inputs per map in its working range: exp and log 1 ulp at most, tanh,
// sigmoid and softplus 2. They match the math package at ±0, ±Inf, NaN and the documented
// overflow and underflow thresholds of exp (709.78, −745.13); they differ
// from it where it is off: on amd64 math.Exp returns +Inf from 709.44 on,
// and math.Log is far off for denormal inputs. (The ReLU and LeakyReLU
// maps of float64 tensors stay plain Go loops.)
//
// # Algorithms
//
// exp: x is clamped to [−746, 710] (beyond it eˣ is 0 or +Inf in float64),
// k = round(x·log₂e), r = x − k·ln2hi − k·ln2lo with ln2 split in two
// (Cody–Waite: ln2hi has 32 significant bits, so k·ln2hi is exact), and
// eʳ − 1 = r + r²·P(r), P the Taylor polynomial of degree 11 of
// (eʳ − 1 − r)/r² (coefficients 1/n!, n = 2…13, rounded to float64; the
// truncation error on |r| ≤ ln2/2 is below 5e-18 relative), evaluated as
// E(r²) + r·O(r²), two Horner chains of half the length. The result
// 2ᵏ·(1 + q) is scaled in two exact steps (2^⌊k/2⌋, then 2^⌈k/2⌉; one
// VSCALEFPD on AVX-512), so a denormal result is rounded once and
// overflow gives +Inf.
//
// tanh: t = expm1(2|x|) = 2ᵏ·q + (2ᵏ − 1) from the same reduction, then
// tanh|x| = t/(t + 2) with the sign of x put back; |x| is clamped at 20,
// beyond which tanh rounds to ±1 (it does from 19.06). The quotient y =
// t/d, d = t + 2 rounded, is corrected by (t − y·d − y·e)/d with e = (t +
// 2) − d from Fast2Sum and t − y·d from a fused multiply-add (both exact),
// so that only t's error and one rounding remain: without the correction
// tanh was 3 ulps off at some inputs (0.2153…).
//
// sigmoid: e = exp(−|x|), σ = 1/(1 + e) for x ≥ 0 and e/(1 + e) for
// x < 0, selected without a branch in the assembly.
//
// softplus: max(x, 0) + log1p(u) with u = exp(−|x|) ∈ [0, 1]; log1p(u) =
// L(u) for u ≤ √2 − 1, and ln2 + L((u − 1)/2) above.
//
// L(f) = ln(1 + f) for f in [√2/2 − 1, √2 − 1], from the series of
// ln(1 + f) = 2·atanh(s) with s = f/(2 + f), |s| ≤ 0.1716:
// L(f) = f − (f²/2 − s·(f²/2 + R)), R = Σₙ 2s²ⁿ/(2n + 1) for n = 1…10
// (coefficients 2/(2n + 1), rounded; the first term left out is below
// 1e-18 relative). f is exact and leads, so the error of s is damped.
//
// log: x = 2ᵉ·m with m ∈ [√2/2, √2) (denormals scaled by 2⁵² first;
// VGETEXPPD and VGETMANTPD on AVX-512), f = m − 1 exact, and ln x =
// e·ln2hi + (f − ((f²/2 − s·(f²/2 + R)) − e·ln2lo)). 0, negative
// numbers, +Inf and NaN give −Inf, NaN, +Inf and NaN.
//
// sqrt: the hardware's correctly rounded square root.
//
// The backward maps: tanh′ = 1 − y² and σ′ = y − y², each one fused
// multiply-add (math.FMA in Go); softplus′ = 1 − e⁻ʸ = (1 − 2ᵏ) −
// 2ᵏ·expm1(r) from the reduction of −y clamped to [−40, 709] (e⁻⁴⁰ is
// below half an ulp of 1). With acc each adds the product, rounded, to z
// (two roundings, never fused, on every path).

// vecPath64 is a set of float64 slice kernels, with vecPath's contracts:
// the maps set z[i] = f(x[i]) for len(x) ≥ len(z), the backward maps set
// (or with acc add) z[i] = g[i]·f′(y[i]) for len(g), len(y) ≥ len(z); z
// may be x, g or y.
type vecPath64 struct {
	name                                    string
	exp, tanh, sigmoid, softplus, log, sqrt func(z, x []float64)

	// tanhBwd: f′ = 1 − y²; sigmoidBwd: y − y²; softplusBwd: 1 − e⁻ʸ.
	tanhBwd, sigmoidBwd, softplusBwd func(z, g, y []float64, acc bool)
}

// goPath64 is the portable pure-Go float64 path.
var goPath64 = vecPath64{
	name:        "go",
	exp:         expGo64,
	tanh:        tanhGo64,
	sigmoid:     sigmoidGo64,
	softplus:    softplusGo64,
	log:         logGo64,
	sqrt:        sqrtGo64,
	tanhBwd:     tanhBwdGo64,
	sigmoidBwd:  sigmoidBwdGo64,
	softplusBwd: softplusBwdGo64,
}

// vec64 is the path that the float64 maps use: the fastest of vecPaths64.
var vec64 = vecPaths64()[0]

// Constants of the float64 kernels; vecmath64_amd64.s has its own copies
// with the same values.
const (
	// ln2hi64 is ln2 with its low 21 mantissa bits cleared (32 significant
	// bits), so k·ln2hi64 is exact for |k| < 2²¹.
	ln2hi64   = 0x1.62e42feep-1
	ln2lo64   = math.Ln2 - ln2hi64
	magic64   = 0x1.8p52 // t + magic64 − magic64 rounds t to an integer
	expMin64  = -746     // e^−746 rounds to 0 in float64
	expMax64  = 710      // e^710 overflows float64
	tanhMax64 = 20       // tanh rounds to ±1 beyond 19.06

	// −y is clamped to [softplusBwdLo64, softplusBwdHi64] in softplus′.
	softplusBwdLo64 = -40
	softplusBwdHi64 = 709

	// log1pSplit64 is √2 − 1 rounded down.
	log1pSplit64   = 0x1.a827999fcef32p-2
	sqrtHalfBits64 = 0x3fe6a09e667f3bcd // the bits of √2/2
	mantMask64     = 1<<52 - 1
)

// The Taylor coefficients 1/n! of eʳ (n = 2…13) and the coefficients
// 2/(2n + 1) of atanh's series (n = 1…10), rounded to float64 by the
// compiler.
const (
	ex2, ex3, ex4, ex5, ex6, ex7 = 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040
	ex8, ex9, ex10               = 1.0 / 40320, 1.0 / 362880, 1.0 / 3628800
	ex11, ex12, ex13             = 1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800
	lg1, lg2, lg3, lg4, lg5      = 2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9, 2.0 / 11
	lg6, lg7, lg8, lg9, lg10     = 2.0 / 13, 2.0 / 15, 2.0 / 17, 2.0 / 19, 2.0 / 21
)

// expm1Poly64 returns eʳ − 1 for |r| ≤ ln2/2 (a little beyond too):
// r + r²·(E(r²) + r·O(r²)).
func expm1Poly64(r float64) float64 {
	w := r * r
	e := ex2 + w*(ex4+w*(ex6+w*(ex8+w*(ex10+w*ex12))))
	o := ex3 + w*(ex5+w*(ex7+w*(ex9+w*(ex11+w*ex13))))
	return r + w*(e+r*o)
}

// log1pCorr64 returns c with ln(1 + f) = f − c for f in [√2/2 − 1,
// √2 − 1]: c = f²/2 − s·(f²/2 + R(s²)), s = f/(2 + f).
func log1pCorr64(f float64) float64 {
	s := f / (2 + f)
	w := s * s
	r := w * (lg1 + w*(lg2+w*(lg3+w*(lg4+w*(lg5+w*(lg6+w*(lg7+w*(lg8+w*(lg9+w*lg10)))))))))
	h := 0.5 * f * f
	return h - s*(h+r)
}

// expReduce64 returns t = k + magic64, whose low mantissa bits hold the
// integer k = round(x·log₂e), and r = x − k·ln2, so that eˣ = 2ᵏ·eʳ.
func expReduce64(x float64) (t, r float64) {
	t = float64(x*math.Log2E) + magic64
	k := t - magic64
	return t, x - k*ln2hi64 - k*ln2lo64
}

// pow2of64 returns 2ᵏ for t = k + magic64 with k in [−1022, 1023].
func pow2of64(t float64) float64 {
	return math.Float64frombits(math.Float64bits(t)<<52 + math.Float64bits(1))
}

// expCore64 returns eˣ for x in [expMin64, expMax64] or NaN: 2ᵏ·eʳ scaled
// in two exact steps, 2^⌊k/2⌋ and 2^⌈k/2⌉, so that k in [−1077, 1025]
// works and a denormal result is rounded once.
func expCore64(x float64) float64 {
	t, r := expReduce64(x)
	k := int64(math.Float64bits(t) - math.Float64bits(magic64))
	k1 := k >> 1
	s1 := math.Float64frombits(uint64(k1+1023) << 52)
	s2 := math.Float64frombits(uint64(k-k1+1023) << 52)
	return (1 + expm1Poly64(r)) * s1 * s2
}

// expGo64 sets z[i] = e^x[i].
func expGo64(z, x []float64) {
	x = x[:len(z)]
	for i, v := range x {
		z[i] = expCore64(min(max(v, expMin64), expMax64)) // NaN stays NaN
	}
}

// tanhOf64 returns tanh v = sign(v)·t/(t + 2), t = expm1(2·min(|v|, 20)),
// with the quotient corrected for the rounding of t + 2 and its own.
func tanhOf64(v float64) float64 {
	a := min(math.Abs(v), tanhMax64)
	k, r := expReduce64(a + a)
	s := pow2of64(k)
	t := s*expm1Poly64(r) + (s - 1)
	return math.Copysign(quoCorrected(t), v)
}

// quoCorrected returns t/(t + 2) for t ≥ 0 within about half an ulp more
// than t's own error: y = t/d with d = t + 2 rounded, plus (t − y·d −
// y·e)/d, where e = (t + 2) − d exactly (Fast2Sum) and t − y·d is exact
// (a fused multiply-add).
func quoCorrected(t float64) float64 {
	d := t + 2
	e := (max(t, 2) - d) + min(t, 2)
	y := t / d
	c := math.FMA(-y, d, t) - y*e
	return y + c/d
}

// tanhGo64 sets z[i] = tanh x[i].
func tanhGo64(z, x []float64) {
	x = x[:len(z)]
	for i, v := range x {
		z[i] = tanhOf64(v)
	}
}

// sigmoidGo64 sets z[i] = σ(x[i]) = n/(1 + e), e = e^−|x|, n = e for
// x < 0 and 1 otherwise.
func sigmoidGo64(z, x []float64) {
	x = x[:len(z)]
	for i, v := range x {
		e := expCore64(max(-math.Abs(v), expMin64))
		n := math.Float64bits(1)
		if v < 0 { // chosen as bits, for a conditional move
			n = math.Float64bits(e)
		}
		z[i] = math.Float64frombits(n) / (1 + e)
	}
}

// log1pUnit64 returns ln(1 + u) for u in [0, 1] or NaN.
func log1pUnit64(u float64) float64 {
	if u > log1pSplit64 {
		f := 0.5 * (u - 1)
		return ln2hi64 + (ln2lo64 + (f - log1pCorr64(f)))
	}
	return u - log1pCorr64(u)
}

// softplusGo64 sets z[i] = max(x, 0) + log1p(e^−|x|) for x = x[i].
func softplusGo64(z, x []float64) {
	x = x[:len(z)]
	for i, v := range x {
		u := expCore64(max(-math.Abs(v), expMin64))
		z[i] = max(v, 0) + log1pUnit64(u)
	}
}

// logBits64 returns ln x for the bits b of a positive normal x·2^−adj.
func logBits64(b uint64, adj int64) float64 {
	t := b - sqrtHalfBits64
	e := float64(int64(t)>>52 - adj)
	f := math.Float64frombits(t&mantMask64+sqrtHalfBits64) - 1
	return e*ln2hi64 + (f - (log1pCorr64(f) - e*ln2lo64))
}

// logGo64 sets z[i] = ln x[i]: 0 gives −Inf, negative numbers and NaN
// give NaN, +Inf gives +Inf.
func logGo64(z, x []float64) {
	x = x[:len(z)]
	const lo, span = 1 << 52, 0x7ff<<52 - 1<<52 // b − lo < span: a positive normal number
	for i, v := range x {
		b := math.Float64bits(v)
		switch {
		case b-lo < span:
			z[i] = logBits64(b, 0)
		case v > 0 && v < 0x1p-1022: // denormal: scaled into the normal range
			z[i] = logBits64(math.Float64bits(v*0x1p52), 52)
		case v == 0:
			z[i] = math.Inf(-1)
		case v > 0: // +Inf
			z[i] = v
		default: // negative or NaN
			z[i] = math.NaN()
		}
	}
}

// sqrtGo64 sets z[i] = √x[i].
func sqrtGo64(z, x []float64) {
	x = x[:len(z)]
	for i, v := range x {
		z[i] = math.Sqrt(v)
	}
}

// softplusDeriv64 returns 1 − e⁻ʸ = (1 − 2ᵏ) − 2ᵏ·expm1(r) with −y clamped
// to [−40, 709] = k·ln2 + r.
func softplusDeriv64(y float64) float64 {
	t, r := expReduce64(min(max(-y, softplusBwdLo64), softplusBwdHi64))
	s := pow2of64(t)
	return (1 - s) - s*expm1Poly64(r)
}

// tanhBwdGo64 sets (or with acc adds) z[i] = g[i]·(1 − y[i]²), 1 − y² in
// one fused multiply-add.
func tanhBwdGo64(z, g, y []float64, acc bool) {
	g, y = g[:len(z)], y[:len(z)]
	if acc {
		for i, v := range y {
			z[i] += float64(g[i] * math.FMA(-v, v, 1))
		}
		return
	}
	for i, v := range y {
		z[i] = g[i] * math.FMA(-v, v, 1)
	}
}

// sigmoidBwdGo64 sets (or with acc adds) z[i] = g[i]·(y[i] − y[i]²),
// y − y² in one fused multiply-add.
func sigmoidBwdGo64(z, g, y []float64, acc bool) {
	g, y = g[:len(z)], y[:len(z)]
	if acc {
		for i, v := range y {
			z[i] += float64(g[i] * math.FMA(-v, v, v))
		}
		return
	}
	for i, v := range y {
		z[i] = g[i] * math.FMA(-v, v, v)
	}
}

// softplusBwdGo64 sets (or with acc adds) z[i] = g[i]·(1 − e^−y[i]).
func softplusBwdGo64(z, g, y []float64, acc bool) {
	g, y = g[:len(z)], y[:len(z)]
	if acc {
		for i, v := range y {
			z[i] += float64(g[i] * softplusDeriv64(v))
		}
		return
	}
	for i, v := range y {
		z[i] = g[i] * softplusDeriv64(v)
	}
}
