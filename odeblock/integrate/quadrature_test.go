package integrate

import (
	"math"
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

// TestAllFinite: every length and position of a NaN or an infinity, for
// each kernel the CPU runs (forEachErrScale).
func TestAllFinite(t *testing.T) {
	forEachErrScale(t, func(t *testing.T) {
		testAllFinite[float32](t, 1e30)
		testAllFinite[float64](t, 1e300)
	})
}

func testAllFinite[T tensor.Float](t *testing.T, big T) {
	ns := []int{1023, 1024, 1025, 3000}
	for n := range 71 { // whole steps of 32, 16 and 8, and masked tails
		ns = append(ns, n)
	}
	for _, n := range ns {
		buf := make([]T, n+17)
		for i := n; i < len(buf); i++ {
			buf[i] = T(math.NaN()) // past the end: must not be read
		}
		x := buf[:n]
		for i := range x {
			x[i] = T(i%7) * big
		}
		if !allFinite(x) {
			t.Fatalf("%T n=%d: finite values reported non-finite", big, n)
		}
		for _, bad := range []T{T(math.NaN()), T(math.Inf(1)), T(math.Inf(-1))} {
			for _, at := range []int{0, n / 2, n - 1} {
				if n == 0 {
					continue
				}
				old := x[at]
				x[at] = bad
				if allFinite(x) {
					t.Fatalf("%T n=%d: %v at %d not found", big, n, bad, at)
				}
				x[at] = old
			}
		}
	}
}
