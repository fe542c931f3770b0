package tensor

import "math"

// Vectorised float32 maps.
//
// The float32 maps (Exp, Tanh, Sigmoid, Softplus, Log, Sqrt, ReLU,
// LeakyReLU) and the activations' backward maps run through slice kernels
// of one "path": AVX-512 or AVX2+FMA assembly on amd64
// (vecmath_amd64.s), chosen once from the CPU's features, or the portable
// pure-Go kernels of this file (other architectures, the build tag
// "purego", and tests, which run every path the CPU can run). All paths
// compute the same float32 algorithms with the same constants; they differ
// in whether the multiply-adds are fused (and the pure-Go sigmoid in one
// formula, below), so their results agree to an ulp or two.
//
// # Algorithms
//
// exp: x is clamped to [−104, 89] (beyond it eˣ is 0 or +Inf in float32),
// k = round(x·log₂e), r = x − k·ln2 with ln2 split in two (Cody–Waite;
// the high part has 15 significant bits, so k·ln2hi is exact), and
// eʳ − 1 = r + r²·P(r) with P a degree-4 minimax polynomial on
// |r| ≤ ln2/2. The result 2ᵏ·(1 + q) is scaled in two exact steps (2^⌊k/2⌋
// then 2^⌈k/2⌉, or VSCALEFPS on AVX-512), so denormal results are rounded
// once and overflow gives +Inf.
//
// tanh: t = expm1(2|x|) from the same reduction, as 2ᵏ·q + (2ᵏ − 1), then
// tanh|x| = t/(t + 2) with the sign of x put back. expm1 keeps its
// relative accuracy near 0, so tanh x = x for tiny x without a separate
// series; |x| is clamped at 9.5, beyond which tanh rounds to ±1.
//
// sigmoid: e = exp(−|x|) (never overflows), σ = 1/(1 + e) for x ≥ 0 and
// e/(1 + e) for x < 0, selected without a branch. Results for very
// negative x are eˣ down to float32's smallest denormal. (The pure-Go
// path takes 1/(1 + e⁻ˣ) for |x| ≤ 87.5, which is faster there.)
//
// softplus: max(x, 0) + log1p(e) with e = exp(−|x|) ∈ [0, 1]; log1p(e) =
// L(e) for e ≤ √2 − 1 and ln2 + L((e − 1)/2) above, with L(f) = f + f²·Q(f)
// a degree-8 minimax polynomial for ln(1 + f) on [√2/2 − 1, √2 − 1]. So
// softplus(x) = x for large x and eˣ (to the last denormal) for very
// negative x.
//
// log: x = 2ᵉ·m with m ∈ [√2/2, √2) read from the bits (denormals scaled by
// 2²³ first; VGETEXPPS and VGETMANTPS on AVX-512), ln x = e·ln2hi + (e·ln2lo + L(m − 1)); 0, negative numbers,
// +Inf and NaN give −Inf, NaN, +Inf and NaN.
//
// sqrt: the hardware's correctly rounded square root.
//
// The backward maps of the activations take their derivative from the
// output y and multiply the output gradient g by it: tanh′ = 1 − y² and
// σ′ = y − y², each rounded once (a fused multiply-add in the assembly;
// in the pure-Go kernels from y² in float64, where it is exact), so that
// g·f′ is within an ulp of the exact product, and 1 − y² keeps its
// relative accuracy as |y| approaches 1. softplus′ = σ(x) = 1 − e⁻ʸ from
// y = softplus(x) ≥ 0 is −expm1(−y) from the reduction of exp:
// (1 − 2ᵏ) − 2ᵏ·expm1(r), with −y clamped to [−30, 88] (e⁻³⁰ is below
// half an ulp of 1), which keeps σ(x) = y for tiny y. With acc each adds
// the product, rounded, to z: z + g·f′ rounds twice, never fused, so that
// every path accumulates the value it would have set. The ReLU masks
// select by y > 0 (NaN is not); ReLU's own zeroes are +0.
//
// The polynomial coefficients were fitted for this package with a Remez
// exchange (in 40-digit arithmetic) and rounded to float32. The test
// TestVecAccuracy checks every path against the math package, rounded to
// float32, for edge values and random values across all exponents.

// vecPath is a set of float32 slice kernels. The maps set z[i] = f(x[i])
// for len(x) ≥ len(z); z may be x. The backward maps set z[i] = g[i]·f′,
// with the derivative f′ computed from y[i], or add it to z[i] with acc,
// for len(g), len(y) ≥ len(z); z may be g or y.
type vecPath struct {
	name                                    string
	exp, tanh, sigmoid, softplus, log, sqrt func(z, x []float32)

	relu  func(z, x []float32)                // max(x, 0)
	leaky func(z, x []float32, slope float32) // x where x > 0, else slope·x

	// tanhBwd: f′ = 1 − y²; sigmoidBwd: y − y²; softplusBwd: 1 − e⁻ʸ;
	// reluBwd: 1 where y > 0, else 0 (z = +0 even for g = NaN or ±Inf).
	tanhBwd, sigmoidBwd, softplusBwd, reluBwd func(z, g, y []float32, acc bool)
	// leakyBwd: f′ = 1 where y > 0, else slope (NaN y included).
	leakyBwd func(z, g, y []float32, slope float32, acc bool)
}

// goPath is the portable pure-Go path.
var goPath = vecPath{
	name:        "go",
	exp:         expGo,
	tanh:        tanhGo,
	sigmoid:     sigmoidGo,
	softplus:    softplusGo,
	log:         logGo,
	sqrt:        sqrtGo,
	relu:        reluGo,
	leaky:       leakyGo,
	tanhBwd:     tanhBwdGo,
	sigmoidBwd:  sigmoidBwdGo,
	softplusBwd: softplusBwdGo,
	reluBwd:     reluBwdGo,
	leakyBwd:    leakyBwdGo,
}

// vec is the path that the float32 maps use: the fastest of vecPaths.
var vec = vecPaths()[0]

// Constants of the kernels. The assembly has its own copies in
// vecmath_amd64.s with the same values.
const (
	log2e = float32(math.Log2E)
	// ln2hi has 15 significant bits, so k·ln2hi is exact for |k| ≤ 512.
	ln2hi  = float32(0.693145751953125)
	ln2lo  = float32(math.Ln2 - 0.693145751953125)
	ln2f   = float32(math.Ln2)
	magic  = float32(1 << 23 * 1.5) // x + magic − magic rounds x to an integer
	expMin = float32(-104)          // e^−104 rounds to 0 in float32
	expMax = float32(89)            // e^89 overflows float32

	// eʳ − 1 ≈ r + r²·(p0 + p1·r + … + p4·r⁴) on |r| ≤ ln2/2; the error of
	// the polynomial is below 3e-9.
	p0 = float32(0.5)
	p1 = float32(0.166665763)
	p2 = float32(0.0416663736)
	p3 = float32(0.00836318079)
	p4 = float32(0.00139411236)

	// ln(1+f) ≈ f + f²·(q0 + q1·f + … + q8·f⁸) on [√2/2 − 1, √2 − 1];
	// the error of the polynomial is below 3e-9.
	q0 = float32(-0.49999997)
	q1 = float32(0.333333135)
	q2 = float32(-0.25000751)
	q3 = float32(0.200026959)
	q4 = float32(-0.16628921)
	q5 = float32(0.14173454)
	q6 = float32(-0.130725518)
	q7 = float32(0.129178718)
	q8 = float32(-0.0806466192)

	// −y is clamped to [softplusBwdLo, softplusBwdHi] in softplus′.
	softplusBwdLo = float32(-30)
	softplusBwdHi = float32(88)

	// log1pSplit is √2 − 1 rounded down: above it log1p(u) = ln2 + L((u−1)/2).
	log1pSplit = float32(0.41421356)
	// sqrtHalfBits is the bit pattern of √2/2.
	sqrtHalfBits = 0x3f3504f3
	signBit      = 0x80000000
)

// expm1Poly returns eʳ − 1 for |r| ≤ ln2/2. The polynomial is evaluated in
// Estrin's scheme, whose dependency chain is shorter than Horner's.
func expm1Poly(r float32) float32 {
	r2 := r * r
	p := (p0 + p1*r) + r2*((p2+p3*r)+r2*p4)
	return r + r2*p
}

// log1pPoly returns ln(1 + f) for f in [√2/2 − 1, √2 − 1].
func log1pPoly(f float32) float32 {
	f2 := f * f
	f4 := f2 * f2
	q := ((q0 + q1*f) + f2*(q2+q3*f)) + f4*(((q4+q5*f)+f2*(q6+q7*f))+f4*q8)
	return f + f2*q
}

// expReduce returns t = k + magic, whose low mantissa bits hold the integer
// k = round(x·log₂e), and r = x − k·ln2, so that eˣ = 2ᵏ·eʳ with |r| ≤ ln2/2.
func expReduce(x float32) (t, r float32) {
	t = float32(x*log2e) + magic
	k := t - magic
	return t, x - k*ln2hi - k*ln2lo
}

// pow2 returns 2ᵏ for t = k + magic with k in [−126, 127].
func pow2(t float32) float32 {
	return math.Float32frombits(math.Float32bits(t)<<23 + math.Float32bits(1))
}

// expCore returns eˣ for x in [expMin, expMax] or NaN: 2ᵏ·eʳ with the
// scaling in two exact steps, 2^⌊k/2⌋ and 2^⌈k/2⌉, so that k in
// [−150, 128] works and a denormal result is rounded once.
func expCore(x float32) float32 {
	t, r := expReduce(x)
	k := int32(math.Float32bits(t) - math.Float32bits(magic))
	k1 := k >> 1
	s1 := math.Float32frombits(uint32(k1+127) << 23)
	s2 := math.Float32frombits(uint32(k-k1+127) << 23)
	return (1 + expm1Poly(r)) * s1 * s2
}

// The pure-Go kernels take one well-predicted branch per element: inputs
// whose k is in [−126, 127] (|x| ≤ 87.5 or so) take the short path, with
// 2ᵏ made in one step; the rest (the ends of the range, ±Inf and NaN)
// take a slow path. Everything else is branch-free.

func expGo(z, x []float32) {
	x = x[:len(z)]
	for len(x) >= 4 && len(z) >= 4 {
		v0, v1, v2, v3 := x[0], x[1], x[2], x[3]
		if !(v0 >= -87.5 && v0 <= 88.3 && v1 >= -87.5 && v1 <= 88.3 && v2 >= -87.5 && v2 <= 88.3 && v3 >= -87.5 && v3 <= 88.3) {
			expSlow(z[:4], x[:4])
		} else {
			t0, r0 := expReduce(v0)
			t1, r1 := expReduce(v1)
			t2, r2 := expReduce(v2)
			t3, r3 := expReduce(v3)
			z[0] = (1 + expm1Poly(r0)) * pow2(t0)
			z[1] = (1 + expm1Poly(r1)) * pow2(t1)
			z[2] = (1 + expm1Poly(r2)) * pow2(t2)
			z[3] = (1 + expm1Poly(r3)) * pow2(t3)
		}
		x, z = x[4:], z[4:]
	}
	expSlow(z, x)
}

func expSlow(z, x []float32) {
	x = x[:len(z)]
	for i, v := range x {
		z[i] = expCore(min(max(v, expMin), expMax))
	}
}

// tanh1 returns tanh x for |x| ≤ 9.5; b holds the bits of x and a = |x|.
func tanh1(b uint32, a float32) float32 {
	t, r := expReduce(a + a)
	s := pow2(t)
	e := s*expm1Poly(r) + (s - 1) // e^2a − 1
	return math.Float32frombits(math.Float32bits(e/(e+2)) | b&signBit)
}

func tanhGo(z, x []float32) {
	x = x[:len(z)]
	for len(x) >= 4 && len(z) >= 4 {
		b0, b1, b2, b3 := math.Float32bits(x[0]), math.Float32bits(x[1]), math.Float32bits(x[2]), math.Float32bits(x[3])
		a0, a1, a2, a3 := math.Float32frombits(b0&^signBit), math.Float32frombits(b1&^signBit), math.Float32frombits(b2&^signBit), math.Float32frombits(b3&^signBit)
		if !(a0 <= 9.5 && a1 <= 9.5 && a2 <= 9.5 && a3 <= 9.5) {
			tanhSlow(z[:4], x[:4])
		} else {
			z[0], z[1], z[2], z[3] = tanh1(b0, a0), tanh1(b1, a1), tanh1(b2, a2), tanh1(b3, a3)
		}
		x, z = x[4:], z[4:]
	}
	tanhSlow(z, x)
}

func tanhSlow(z, x []float32) {
	x = x[:len(z)]
	for i, v := range x {
		b := math.Float32bits(v)
		a := math.Float32frombits(b &^ signBit)
		if a <= 9.5 {
			z[i] = tanh1(b, a)
		} else { // tanh rounds to ±1 beyond 9.02; NaN stays NaN
			z[i] = min(a, 1) * math.Float32frombits(b&signBit|math.Float32bits(1))
		}
	}
}

// sigmoid1 returns σ(x) = 1/(1 + e⁻ˣ) for |x| ≤ 87.5, where e⁻ˣ is a
// normal number. (The assembly's e/(1 + e), e = e^−|x|, for x < 0 is as
// accurate; choosing the numerator by the sign bit made this loop 25%
// slower.)
func sigmoid1(x float32) float32 {
	t, r := expReduce(-x)
	return 1 / (1 + (1+expm1Poly(r))*pow2(t))
}

func sigmoidGo(z, x []float32) {
	x = x[:len(z)]
	for len(x) >= 4 && len(z) >= 4 {
		v0, v1, v2, v3 := x[0], x[1], x[2], x[3]
		if !(v0 >= -87.5 && v0 <= 87.5 && v1 >= -87.5 && v1 <= 87.5 && v2 >= -87.5 && v2 <= 87.5 && v3 >= -87.5 && v3 <= 87.5) {
			sigmoidSlow(z[:4], x[:4])
		} else {
			z[0], z[1], z[2], z[3] = sigmoid1(v0), sigmoid1(v1), sigmoid1(v2), sigmoid1(v3)
		}
		x, z = x[4:], z[4:]
	}
	sigmoidSlow(z, x)
}

func sigmoidSlow(z, x []float32) {
	x = x[:len(z)]
	for i, v := range x {
		switch {
		case v >= -87.5 && v <= 87.5:
			z[i] = sigmoid1(v)
		case v > 0 || v != v:
			z[i] = min(v, 1) // 1, or NaN
		default: // e/(1+e) with e = eˣ, down to the smallest denormal
			e := expCore(max(v, expMin))
			z[i] = e / (1 + e)
		}
	}
}

// softplus1 returns softplus(x) for a = |x| ≤ 87.5: max(x, 0) + log1p(u)
// with u = e^−|x|, where log1p(u) = L(u), or ln2 + L((u − 1)/2) above √2 − 1.
func softplus1(v, a float32) float32 {
	t, r := expReduce(-a)
	u := (1 + expm1Poly(r)) * pow2(t)
	var big int32
	if u > log1pSplit { // compiled to a conditional move
		big = 1
	}
	h := float32(big)
	f := (u - h) * (1 - 0.5*h)
	return (v+a)*0.5 + (h*ln2f + log1pPoly(f))
}

func softplusGo(z, x []float32) {
	x = x[:len(z)]
	for len(x) >= 4 && len(z) >= 4 {
		v0, v1, v2, v3 := x[0], x[1], x[2], x[3]
		a0, a1, a2, a3 := math.Float32frombits(math.Float32bits(v0)&^signBit), math.Float32frombits(math.Float32bits(v1)&^signBit), math.Float32frombits(math.Float32bits(v2)&^signBit), math.Float32frombits(math.Float32bits(v3)&^signBit)
		if !(a0 <= 87.5 && a1 <= 87.5 && a2 <= 87.5 && a3 <= 87.5) {
			softplusSlow(z[:4], x[:4])
		} else {
			z[0], z[1], z[2], z[3] = softplus1(v0, a0), softplus1(v1, a1), softplus1(v2, a2), softplus1(v3, a3)
		}
		x, z = x[4:], z[4:]
	}
	softplusSlow(z, x)
}

func softplusSlow(z, x []float32) {
	x = x[:len(z)]
	for i, v := range x {
		a := math.Float32frombits(math.Float32bits(v) &^ signBit)
		switch {
		case a <= 87.5:
			z[i] = softplus1(v, a)
		case v > 0 || v != v:
			z[i] = v
		default:
			z[i] = expCore(max(v, expMin))
		}
	}
}

// log1 returns ln x for the bits b of a positive normal x.
func log1(b uint32) float32 {
	t := b - sqrtHalfBits
	e := float32(int32(t) >> 23)
	f := math.Float32frombits(t&0x7fffff+sqrtHalfBits) - 1
	return e*ln2hi + (e*ln2lo + log1pPoly(f))
}

func logGo(z, x []float32) {
	x = x[:len(z)]
	const lo, span = 0x00800000, 0x7f800000 - 0x00800000 // b − lo < span: a positive normal number
	for len(x) >= 4 && len(z) >= 4 {
		b0, b1, b2, b3 := math.Float32bits(x[0]), math.Float32bits(x[1]), math.Float32bits(x[2]), math.Float32bits(x[3])
		if !(b0-lo < span && b1-lo < span && b2-lo < span && b3-lo < span) {
			logSlow(z[:4], x[:4])
		} else {
			z[0], z[1], z[2], z[3] = log1(b0), log1(b1), log1(b2), log1(b3)
		}
		x, z = x[4:], z[4:]
	}
	logSlow(z, x)
}

func logSlow(z, x []float32) {
	x = x[:len(z)]
	for i, v := range x {
		switch {
		case v >= 0x1p-126 && v < float32(math.Inf(1)):
			z[i] = log1(math.Float32bits(v))
		case v > 0 && v < 0x1p-126: // denormal: scale into the normal range
			z[i] = log1(math.Float32bits(v*0x1p23)) - 23*ln2hi - 23*ln2lo
		case v == 0:
			z[i] = float32(math.Inf(-1))
		case v > 0: // +Inf
			z[i] = v
		default: // negative or NaN
			z[i] = float32(math.NaN())
		}
	}
}

func sqrtGo(z, x []float32) {
	x = x[:len(z)]
	for i, v := range x {
		z[i] = float32(math.Sqrt(float64(v))) // compiled to SQRTSS
	}
}

func reluGo(z, x []float32) {
	x = x[:len(z)]
	for i, v := range x {
		z[i] = max(v, 0) // +0 for ±0, NaN stays NaN
	}
}

func leakyGo(z, x []float32, slope float32) {
	x = x[:len(z)]
	for i, v := range x {
		w := slope * v
		if v > 0 {
			w = v
		}
		z[i] = w
	}
}

// tanhDeriv returns 1 − y² rounded once to float32: y² is exact in float64.
func tanhDeriv(y float32) float32 {
	v := float64(y)
	return float32(1 - v*v)
}

// sigmoidDeriv returns y − y² rounded once to float32 (see tanhDeriv).
func sigmoidDeriv(y float32) float32 {
	v := float64(y)
	return float32(v - v*v)
}

// softplusDeriv returns 1 − e⁻ʸ = (1 − 2ᵏ) − 2ᵏ·expm1(r) for −y clamped to
// [−30, 88] (2ᵏ is then a normal number) = k·ln2 + r.
func softplusDeriv(y float32) float32 {
	a := -y
	if !(a >= softplusBwdLo && a <= softplusBwdHi) { // rare; NaN stays NaN
		a = min(max(a, softplusBwdLo), softplusBwdHi)
	}
	t, r := expReduce(a)
	s := pow2(t)
	return (1 - s) - s*expm1Poly(r)
}

// The backward kernels convert the product to float32 before adding it,
// so that no compiler fuses the addition (arm64's would).

func tanhBwdGo(z, g, y []float32, acc bool) {
	g, y = g[:len(z)], y[:len(z)]
	if acc {
		for i, v := range y {
			z[i] += float32(g[i] * tanhDeriv(v))
		}
		return
	}
	for i, v := range y {
		z[i] = g[i] * tanhDeriv(v)
	}
}

func sigmoidBwdGo(z, g, y []float32, acc bool) {
	g, y = g[:len(z)], y[:len(z)]
	if acc {
		for i, v := range y {
			z[i] += float32(g[i] * sigmoidDeriv(v))
		}
		return
	}
	for i, v := range y {
		z[i] = g[i] * sigmoidDeriv(v)
	}
}

func softplusBwdGo(z, g, y []float32, acc bool) {
	g, y = g[:len(z)], y[:len(z)]
	if acc {
		for i, v := range y {
			z[i] += float32(g[i] * softplusDeriv(v))
		}
		return
	}
	for i, v := range y {
		z[i] = g[i] * softplusDeriv(v)
	}
}

func reluBwdGo(z, g, y []float32, acc bool) {
	g, y = g[:len(z)], y[:len(z)]
	if acc {
		for i, v := range y {
			d := g[i]
			if !(v > 0) {
				d = 0
			}
			z[i] += d
		}
		return
	}
	for i, v := range y {
		d := g[i]
		if !(v > 0) {
			d = 0
		}
		z[i] = d
	}
}

func leakyBwdGo(z, g, y []float32, slope float32, acc bool) {
	g, y = g[:len(z)], y[:len(z)]
	if acc {
		for i, v := range y {
			d := g[i]
			if !(v > 0) {
				d *= slope
			}
			z[i] += float32(d)
		}
		return
	}
	for i, v := range y {
		d := g[i]
		if !(v > 0) {
			d *= slope
		}
		z[i] = d
	}
}
