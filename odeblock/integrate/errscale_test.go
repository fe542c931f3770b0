package integrate

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

// TestScaleError: the scaling of the error estimate (each kernel the CPU
// runs: forEachErrScale, and the Go loop on every GOARCH) equals its
// definition bit for bit at every length 0–70, with signed zeros, denormals and a NaN
// in y1.
func TestScaleError(t *testing.T) {
	forEachErrScale(t, func(t *testing.T) {
		testScaleError[float32](t, 1e-41)
		testScaleError[float64](t, 1e-310)
	})
}

func testScaleError[T tensor.Float](t *testing.T, denormal T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 71 {
		e, y0, y1 := make([]T, n+1), make([]T, n), make([]T, n)
		for i := range n {
			e[i] = T(rng.NormFloat64() * 1e-3)
			y0[i] = T(rng.NormFloat64())
			y1[i] = T(rng.NormFloat64() * 10)
			switch i % 9 {
			case 3:
				y0[i], y1[i] = T(math.Copysign(0, -1)), 0
			case 5:
				y1[i] = denormal
			}
		}
		if n > 7 {
			y1[7] = T(math.NaN())
		}
		e[n] = 42
		want := make([]T, n)
		atol, rtol := T(1e-6), T(1e-5)
		for i := range n {
			want[i] = e[i] / (atol + T(rtol*max(absT(y0[i]), absT(y1[i])))) // the product rounded
		}
		scaleError(e[:n], y0, y1, atol, rtol)
		for i := range n {
			// Exact everywhere: the Go loop rounds the product as the
			// assembly does, on every GOARCH.
			same := e[i] == want[i] && math.Signbit(float64(e[i])) == math.Signbit(float64(want[i])) || e[i] != e[i] && want[i] != want[i]
			if !same {
				t.Fatalf("%T n=%d: e[%d] = %g, want %g", e[i], n, i, e[i], want[i])
			}
		}
		if e[n] != 42 {
			t.Fatalf("n=%d: wrote past the end", n)
		}
	}
}
