package tensor

import (
	"math"
	"math/big"
)

// Correctly rounded references for the float64 kernels' tests, computed
// with math/big in refPrec bits: eˣ from its Taylor series after the
// reduction x = k·ln2 + r, ln x from the series of 2·atanh((m − 1)/(m + 1))
// after x = 2ᵉ·m.

const refPrec = 200

// refLn2 is ln2 to 110 digits.
var refLn2, _, _ = big.ParseFloat("0.69314718055994530941723212145817656807550013436025525412068000949339362196969471560586332712914218301397560514", 10, refPrec, big.ToNearestEven)

// newRef returns x as a big.Float of refPrec bits.
func newRef(x float64) *big.Float { return new(big.Float).SetPrec(refPrec).SetFloat64(x) }

// bigExp returns eˣ for finite x with |x| < 2000.
func bigExp(x *big.Float) *big.Float {
	q := new(big.Float).SetPrec(refPrec).Quo(x, refLn2)
	kf, _ := q.Float64()
	k := math.Round(kf)
	r := new(big.Float).SetPrec(refPrec).Sub(x, new(big.Float).SetPrec(refPrec).Mul(newRef(k), refLn2))
	sum, term := newRef(1), newRef(1)
	for n := 1; n < 80; n++ {
		term.Mul(term, r)
		term.Quo(term, newRef(float64(n)))
		sum.Add(sum, term)
		if term.Sign() == 0 || term.MantExp(nil)-sum.MantExp(nil) < -refPrec {
			break
		}
	}
	return sum.SetMantExp(sum, int(k))
}

// bigLog returns ln v for v > 0.
func bigLog(v *big.Float) *big.Float {
	m := new(big.Float).SetPrec(refPrec)
	e := v.MantExp(m) // v = m·2ᵉ, m in [½, 1)
	if m.Cmp(newRef(math.Sqrt2/2)) < 0 {
		m.Mul(m, newRef(2)) // m in [√2/2, √2), so that ln 1 = 0 exactly
		e--
	}
	s := new(big.Float).SetPrec(refPrec).Quo(
		new(big.Float).SetPrec(refPrec).Sub(m, newRef(1)),
		new(big.Float).SetPrec(refPrec).Add(m, newRef(1)))
	s2 := new(big.Float).SetPrec(refPrec).Mul(s, s)
	sum, pow := newRef(0), new(big.Float).SetPrec(refPrec).Set(s)
	for n := 0; n < 200 && pow.Sign() != 0; n++ {
		sum.Add(sum, new(big.Float).SetPrec(refPrec).Quo(pow, newRef(float64(2*n+1))))
		pow.Mul(pow, s2)
		if pow.MantExp(nil) < -refPrec-4 {
			break
		}
	}
	sum.Mul(sum, newRef(2))
	return sum.Add(sum, new(big.Float).SetPrec(refPrec).Mul(newRef(float64(e)), refLn2))
}

// rounded returns v rounded to float64 (denormals included).
func rounded(v *big.Float) float64 {
	f, _ := v.Float64()
	return f
}

// refExp64 returns eˣ correctly rounded.
func refExp64(x float64) float64 {
	switch {
	case x != x:
		return x
	case x > 710:
		return math.Inf(1)
	case x < -746:
		return 0
	}
	return rounded(bigExp(newRef(x)))
}

// refLog64 returns ln x correctly rounded.
func refLog64(x float64) float64 {
	switch {
	case x != x || x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	case math.IsInf(x, 1):
		return x
	}
	return rounded(bigLog(newRef(x)))
}

// refTanh64 returns tanh x = (e²ˣ − 1)/(e²ˣ + 1) correctly rounded.
func refTanh64(x float64) float64 {
	switch {
	case x != x || math.Abs(x) < 0x1p-30: // tanh x = x − x³/3 rounds to x
		return x
	case math.Abs(x) > 20:
		return math.Copysign(1, x)
	}
	e := bigExp(newRef(2 * x))
	n := new(big.Float).SetPrec(refPrec).Sub(e, newRef(1))
	return rounded(n.Quo(n, new(big.Float).SetPrec(refPrec).Add(e, newRef(1))))
}

// refSigmoid64 returns 1/(1 + e⁻ˣ) correctly rounded.
func refSigmoid64(x float64) float64 {
	switch {
	case x != x:
		return x
	case x > 40:
		return 1
	case x < -750:
		return 0
	}
	d := new(big.Float).SetPrec(refPrec).Add(bigExp(newRef(-x)), newRef(1))
	return rounded(d.Quo(newRef(1), d))
}

// refSoftplus64 returns ln(1 + eˣ) correctly rounded.
func refSoftplus64(x float64) float64 {
	switch {
	case x != x:
		return x
	case x > 40:
		return x
	case x < -750:
		return 0
	case x < -40: // ln(1 + u) = u − u²/2 + u³/3 − …, u = eˣ < 5e-18
		u := bigExp(newRef(x))
		u2 := new(big.Float).SetPrec(refPrec).Mul(u, u)
		u3 := new(big.Float).SetPrec(refPrec).Mul(u2, u)
		v := new(big.Float).SetPrec(refPrec).Sub(u, u2.Quo(u2, newRef(2)))
		return rounded(v.Add(v, u3.Quo(u3, newRef(3))))
	}
	return rounded(bigLog(new(big.Float).SetPrec(refPrec).Add(bigExp(newRef(x)), newRef(1))))
}
