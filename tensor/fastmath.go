package tensor

import "math"

// Fast exponential-based maps for float32 tensors. They compute in float64
// with a polynomial exponential accurate to about 2e-10 relative, far inside
// float32's precision (6e-8), and run about twice as fast as the math
// package's functions. float64 tensors use the math package, so the
// gradient checks run on the exact functions.

// expFast returns eˣ to about 2e-10 relative accuracy for results in
// float32's range (0 below it, +Inf above): 2^k·e^r with |r| ≤ ln2/2 and a
// degree-8 Taylor polynomial evaluated in parts (error below 2e-10).
func expFast(x float64) float64 {
	switch {
	case x > 89:
		return math.Inf(1)
	case x < -104:
		return 0
	case x != x:
		return x
	}
	const log2e, ln2 = 1.4426950408889634, 0.6931471805599453
	// k = round(x/ln2) by truncating x/ln2 ± ½ (math.Floor is a call).
	k := float64(int64(x*log2e + math.Copysign(0.5, x)))
	r := x - k*ln2
	r2 := r * r
	p := (1 + r) + r2*(1.0/2+r*(1.0/6)) + r2*r2*((1.0/24+r*(1.0/120))+r2*(1.0/720+r*(1.0/5040)+r2*(1.0/40320)))
	return p * math.Float64frombits(uint64(int64(k)+1023)<<52)
}

// tanhFast returns tanh(x) to float32 accuracy.
func tanhFast(x float64) float64 {
	a := math.Abs(x)
	var t float64
	switch {
	case a < 0.02: // the series; the formula below would lose relative accuracy
		a2 := a * a
		t = a * (1 - a2*(1.0/3-a2*(2.0/15)))
	case a > 9.1:
		t = 1
	default:
		t = 1 - 2/(expFast(2*a)+1)
	}
	return math.Copysign(t, x)
}

// sigmoidFast returns 1/(1+e⁻ˣ) to float32 accuracy.
func sigmoidFast(x float64) float64 { return 1 / (1 + expFast(-x)) }

// isFloat32 reports whether T is float32.
func isFloat32[T Float]() bool {
	var z T
	_, ok := any(z).(float32)
	return ok
}
