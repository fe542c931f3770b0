package tensor_test

import (
	"math"
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

// TestHostErrorNormAllocs checks that HostElementwise's ErrorNorm, the
// error norm a device solve's step control takes once an attempted step,
// allocates nothing, with parts and without, and still returns the RMS of
// each part's scaled ratios (the largest) and NaN for a NaN ratio.
func TestHostErrorNormAllocs(t *testing.T) {
	if tensor.RaceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	ew := tensor.HostElementwise[float64]()
	e := tensor.FromSlice([]float64{1, -2, 3, 0.5, 4})
	y := tensor.FromSlice([]float64{0, 0, 0, 0, 0})
	parts := []int{2, 3}
	var whole, split float64
	if n := testing.AllocsPerRun(50, func() {
		whole, _ = ew.ErrorNorm(e, y, y, 1, 0, nil)
		split, _ = ew.ErrorNorm(e, y, y, 1, 0, parts)
	}); n != 0 {
		t.Errorf("ErrorNorm allocates %v times a call pair, want 0", n)
	}
	rms := func(v ...float64) float64 {
		var s float64
		for _, x := range v {
			s += x * x
		}
		return math.Sqrt(s / float64(len(v)))
	}
	if want := rms(1, -2, 3, 0.5, 4); math.Abs(whole-want) > 1e-15*want {
		t.Errorf("ErrorNorm over the whole = %v, want %v", whole, want)
	}
	if want := max(rms(1, -2), rms(3, 0.5, 4)); math.Abs(split-want) > 1e-15*want {
		t.Errorf("ErrorNorm over parts %v = %v, want %v", parts, split, want)
	}
	e.Data()[3] = math.Inf(1)
	e.Data()[4] = math.NaN()
	if r, ok := ew.ErrorNorm(e, y, y, 1, 0, parts); ok || !math.IsNaN(r) {
		t.Errorf("ErrorNorm with a NaN after an Inf = %v, %v; want NaN, false", r, ok)
	}
}
