package integrate

import "testing"

// TestNewtonScale checks the scale an implicit Runge–Kutta Newton change
// is measured by: the tolerance's ATol + RTol·|y|, or the roundoff floor
// roundoff·(|y| + |z|) where that is larger (a float32 iteration stalls
// there).
func TestNewtonScale(t *testing.T) {
	for _, c := range []struct {
		atol, rtol, roundoff, y, z, want float64
	}{
		{atol: 1e-6, rtol: 1e-3, roundoff: 1e-9, y: 1e3, want: 1 + 1e-6},
		{atol: 1e-6, rtol: 1e-3, roundoff: 1e-9, y: -1e3, z: 5, want: 1 + 1e-6},
		{atol: 1e-9, rtol: 1e-12, roundoff: 4e-4, y: 1e3, want: 0.4},
		{atol: 1e-9, rtol: 0, roundoff: 4e-4, y: -2, want: 8e-4},
		{atol: 1e-9, rtol: 0, roundoff: 4e-4, y: -2, z: -3, want: 2e-3},
		{atol: 1e-9, rtol: 1e-3, roundoff: 4e-4, y: 0, want: 1e-9},
		{atol: 1e-9, rtol: 1e-3, roundoff: 4e-4, y: 0, z: 0.5, want: 2e-4},
	} {
		if got := newtonScale(c.atol, c.rtol, c.roundoff, c.y, c.z); got != c.want {
			t.Errorf("newtonScale(%g, %g, %g, %g, %g) = %g, want %g", c.atol, c.rtol, c.roundoff, c.y, c.z, got, c.want)
		}
	}
}
