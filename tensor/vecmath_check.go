//go:build (amd64 || arm64) && !purego

package tensor

// The wrappers of the assembly kernels (vecmath_amd64.s,
// vecmath64_amd64.s, vecmath_arm64.s, vecmath64_arm64.s), which leave out
// the bounds checks: each checks that the sources are at least as long as
// z before it runs the kernel.

// checked returns k with the bounds check that the assembly leaves out.
func checked(k func(z, x []float32)) func(z, x []float32) {
	return func(z, x []float32) {
		_ = x[:len(z)]
		k(z, x)
	}
}

// checkedSlope is checked for kernels with a slope.
func checkedSlope(k func(z, x []float32, slope float32)) func(z, x []float32, slope float32) {
	return func(z, x []float32, slope float32) {
		_ = x[:len(z)]
		k(z, x, slope)
	}
}

// checked3 returns a backward map that runs k, or kAcc with acc, after the
// bounds checks that the assembly leaves out.
func checked3(k, kAcc func(z, g, y []float32)) func(z, g, y []float32, acc bool) {
	return func(z, g, y []float32, acc bool) {
		_, _ = g[:len(z)], y[:len(z)]
		if acc {
			kAcc(z, g, y)
		} else {
			k(z, g, y)
		}
	}
}

// checked3Slope is checked3 for kernels with a slope.
func checked3Slope(k, kAcc func(z, g, y []float32, slope float32)) func(z, g, y []float32, slope float32, acc bool) {
	return func(z, g, y []float32, slope float32, acc bool) {
		_, _ = g[:len(z)], y[:len(z)]
		if acc {
			kAcc(z, g, y, slope)
		} else {
			k(z, g, y, slope)
		}
	}
}

// checked64 returns k with the bounds check that the assembly leaves out.
func checked64(k func(z, x []float64)) func(z, x []float64) {
	return func(z, x []float64) {
		_ = x[:len(z)]
		k(z, x)
	}
}

// checked3_64 returns a backward map that runs k, or kAcc with acc, after
// the bounds checks that the assembly leaves out.
func checked3_64(k, kAcc func(z, g, y []float64)) func(z, g, y []float64, acc bool) {
	return func(z, g, y []float64, acc bool) {
		_, _ = g[:len(z)], y[:len(z)]
		if acc {
			kAcc(z, g, y)
		} else {
			k(z, g, y)
		}
	}
}
