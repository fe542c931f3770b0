package tensor

import "math"

// Vectorised float32 maps. (The float64 maps have kernels of their own,
// built the same way, with the algorithms carried to float64 precision:
// vecmath64.go.)
//
// The float32 maps (Exp, Tanh, Sigmoid, Softplus, Log, Sqrt, ReLU,
// LeakyReLU) and the activations' backward maps run through slice kernels
// of one "path": AVX-512 or AVX2+FMA assembly on amd64
// (vecmath_amd64.s), NEON assembly on arm64 (vecmath_arm64.s: the AVX2
// kernels' algorithms and order of operations, 4 lanes), chosen once from
// the CPU's features and the kernel path, or the portable
// pure-Go kernels of this file (other architectures, the build tag
// "purego", and tests, which run every path the CPU can run). The
// assembly paths compute the algorithms below; the pure-Go path computes
// the backward maps with the same algorithms and constants, exp and log in
// float64 from tables of 2^(j/32) and of ln(1 + j/32) (expGo, logGo), and
// tanh, sigmoid and softplus from piecewise cubic tables
// (vecmath_table.go: a table lookup and one cubic cost a third of exp's
// reduction, polynomial and a division in scalar code). Every path is
// within 2 ulps of the math package for these maps over every float32
// input (TestVecExhaustive; the pure-Go exp and log within 1).
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
// negative x are eˣ down to float32's smallest denormal.
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

// expGo computes in float64, where scalar operations cost what float32's
// do: with y = x·32/ln2, k = round(y) and r = y − k ∈ [−½, ½],
// eˣ = 2^⌊k/32⌋ · 2^((k mod 32)/32) · 2^(r/32), the middle factor from a
// table of 32 float64 powers, the last a cubic in r (its error is below
// 6e-10 relative), and the float64 product is rounded once to float32 —
// denormal results and overflow included, so every x in [expMin, expMax]
// takes the same path, within an ulp.
func expGo(z, x []float32) {
	x = x[:len(z)]
	for i, v := range x {
		if !(v >= expMin && v <= expMax) { // NaN stays NaN
			z[i] = expCore(min(max(v, expMin), expMax))
			continue
		}
		y := float64(v) * (32 / math.Ln2)
		t := y + 0x1.8p52 // the low bits of t hold k = round(y)
		r := y - (t - 0x1.8p52)
		k := int64(math.Float64bits(t))
		s := math.Float64frombits(exp2Table[k&31] + uint64(k>>5)<<52)
		z[i] = float32(s * (1 + r*(exp2C1+r*(exp2C2+r*exp2C3))))
	}
}

// exp2Table holds the bits of 2^(j/32), j = 0…31; exp2C1…3 are the
// Taylor coefficients of 2^(r/32) = e^(r·ln2/32).
var exp2Table = func() (t [32]uint64) {
	for j := range t {
		t[j] = math.Float64bits(math.Exp2(float64(j) / 32))
	}
	return t
}()

const (
	exp2C1 = math.Ln2 / 32
	exp2C2 = exp2C1 * exp2C1 / 2
	exp2C3 = exp2C2 * exp2C1 / 3
)

// The table kernels (vecmath_table.go) take one well-predicted branch
// per element, to the slow path for inputs beyond their tables; their
// bodies are written out in the loops, which the inliner would not do.

func tanhGo(z, x []float32) {
	x = x[:len(z)]
	for i, v := range x {
		b := math.Float32bits(v)
		u := math.Float32frombits(b&^signBit) * tanhScale
		if !(u <= 9.5*tanhScale) { // tanh rounds to ±1 beyond 9.02; NaN stays NaN
			z[i] = min(u, 1) * math.Float32frombits(b&signBit|math.Float32bits(1))
			continue
		}
		k := int32(u)
		d := u - float32(k)
		c := &tanhTable[uint32(k)&(tanhTableLen-1)]
		r := c[0] + d*(c[1]+d*(c[2]+d*c[3]))
		z[i] = math.Float32frombits(math.Float32bits(r) | b&signBit)
	}
}

func sigmoidGo(z, x []float32) { logitTableMap(z, x, &sigmoidTable, sigmoidBig) }

// logitTableMap sets z[i] to the cubic of tab's interval of x[i] for
// |x[i]| < 16 (vecmath_table.go), else to big(x[i]).
func logitTableMap(z, x []float32, tab *[logitTableLen][4]float32, big func(float32) float32) {
	x = x[:len(z)]
	for i, v := range x {
		if math.Float32bits(v)&^signBit >= logitMaxBits {
			z[i] = big(v)
			continue
		}
		u := v * logitScale
		k := int32(u)
		d := u - float32(k)
		c := &tab[uint32(k+logitTableLen/2)&(logitTableLen-1)]
		z[i] = c[0] + d*(c[1]+d*(c[2]+d*c[3]))
	}
}

// sigmoidBig returns σ(x) for |x| ≥ 16, ±Inf and NaN: 1/(1 + e⁻ˣ) for
// x > 0 (1 beyond 17), e/(1 + e) with e = eˣ for x < 0 (down to the
// smallest denormal).
func sigmoidBig(v float32) float32 {
	switch {
	case v != v:
		return v
	case v > 0:
		return 1 / (1 + expCore(max(-v, expMin)))
	}
	e := expCore(max(v, expMin))
	return e / (1 + e)
}

func softplusGo(z, x []float32) { logitTableMap(z, x, &softplusTable, softplusBig) }

// softplusBig returns softplus(v) for |v| ≥ 16, ±Inf and NaN: v beyond
// 16 (e⁻¹⁶ is below half an ulp of 16), eᵛ below −16.
func softplusBig(v float32) float32 {
	if v > 0 || v != v {
		return v
	}
	return expCore(max(v, expMin))
}

// log1 returns ln x for the bits b of a positive normal x.
func log1(b uint32) float32 {
	t := b - sqrtHalfBits
	e := float32(int32(t) >> 23)
	f := math.Float32frombits(t&0x7fffff+sqrtHalfBits) - 1
	return e*ln2hi + (e*ln2lo + log1pPoly(f))
}

// logGo computes in float64, as expGo: x = 2ᵉ·m with m ∈ [1, 2), c = 1 +
// j/32 the nearest of 33 points to m, r = m/c − 1 (|r| ≤ 1/64), and
// ln x = e·ln2 + ln c + ln(1 + r) with a degree-5 Taylor polynomial for
// the last (its error is below 1e-12), rounded once to float32: within an
// ulp, and ln 1 = 0 exactly (c = 1, r = 0). Zero, negative and denormal
// inputs, +Inf and NaN take logSlow.
func logGo(z, x []float32) {
	x = x[:len(z)]
	const lo, span = 0x00800000, 0x7f800000 - 0x00800000 // b − lo < span: a positive normal number
	for i, v := range x {
		b := math.Float32bits(v)
		if b-lo >= span {
			logSlow(z[i:i+1], x[i:i+1])
			continue
		}
		j := (b&0x7fffff + 1<<17) >> 18 // round((m − 1)·32), 0…32
		m := float64(math.Float32frombits(b&0x7fffff | 0x3f800000))
		r := m*logTable[j].inv - 1
		p := r * (1 + r*(-0.5+r*(1.0/3+r*(-0.25+r*0.2))))
		z[i] = float32(float64(int32(b>>23)-127)*math.Ln2 + logTable[j].log + p)
	}
}

// logTable holds 1/c and ln c for c = 1 + j/32, j = 0…32.
var logTable = func() (t [33]struct{ inv, log float64 }) {
	for j := range t {
		c := 1 + float64(j)/32
		t[j].inv, t[j].log = 1/c, math.Log(c)
	}
	return t
}()

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
		// The choice between the bits, not the floats, compiles to a
		// conditional move: a branch on the sign mispredicts half the
		// time on zero-mean inputs (4.8 against 0.8 ns per element).
		w, ws := math.Float32bits(v), math.Float32bits(slope*v)
		if !(v > 0) {
			w = ws
		}
		z[i] = math.Float32frombits(w)
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
	// As in leakyGo, the bits are chosen, for a conditional move.
	if acc {
		for i, v := range y {
			d := math.Float32bits(g[i])
			if !(v > 0) {
				d = 0
			}
			z[i] += math.Float32frombits(d)
		}
		return
	}
	for i, v := range y {
		d := math.Float32bits(g[i])
		if !(v > 0) {
			d = 0
		}
		z[i] = math.Float32frombits(d)
	}
}

func leakyBwdGo(z, g, y []float32, slope float32, acc bool) {
	g, y = g[:len(z)], y[:len(z)]
	// As in leakyGo, the bits are chosen, for a conditional move.
	if acc {
		for i, v := range y {
			d, ds := math.Float32bits(g[i]), math.Float32bits(slope*g[i])
			if !(v > 0) {
				d = ds
			}
			z[i] += math.Float32frombits(d)
		}
		return
	}
	for i, v := range y {
		d, ds := math.Float32bits(g[i]), math.Float32bits(slope*g[i])
		if !(v > 0) {
			d = ds
		}
		z[i] = math.Float32frombits(d)
	}
}
