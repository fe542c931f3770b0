package integrate

import (
	"math"
	"testing"
)

// TestAllFinite: every length and position of a NaN or an infinity.
func TestAllFinite(t *testing.T) {
	ns := []int{1023, 1024, 1025, 3000}
	for n := range 71 { // whole steps of 32 and 16 and masked tails
		ns = append(ns, n)
	}
	for _, n := range ns {
		buf := make([]float32, n+17)
		for i := n; i < len(buf); i++ {
			buf[i] = float32(math.NaN()) // past the end: must not be read
		}
		x := buf[:n]
		for i := range x {
			x[i] = float32(i%7) * 1e30
		}
		if !allFinite(x) {
			t.Fatalf("n=%d: finite values reported non-finite", n)
		}
		for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
			for _, at := range []int{0, n / 2, n - 1} {
				if n == 0 {
					continue
				}
				old := x[at]
				x[at] = bad
				if allFinite(x) {
					t.Fatalf("n=%d: %v at %d not found", n, bad, at)
				}
				x[at] = old
			}
		}
	}
	if allFinite([]float64{1, math.Inf(1)}) || !allFinite([]float64{math.MaxFloat64, -math.MaxFloat64}) {
		t.Fatal("float64")
	}
}
