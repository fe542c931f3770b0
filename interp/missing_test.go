package interp_test

import (
	"math"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/interp"
	"github.com/adamnode/adamnode/tensor"
)

// TestNaNObservationsRefused: an observation that is NaN or infinite —
// first, inside or last in the tensor, float64 or float32 — is an error of
// every constructor naming the series, the channel and the time (index and
// value), not a NaN spread into the pieces of its channel; finite
// observations beside it in other series and channels do not matter.
func TestNaNObservationsRefused(t *testing.T) {
	times := []float64{0, 0.5, 1.25, 2, 3}
	for _, c := range []struct {
		name     string
		b, i, ch int
		bad      float64
		want     []string
	}{
		{"NaN inside", 1, 2, 1, math.NaN(), []string{"observations[1, 2, 1] = NaN is not finite", "series 1, channel 1, at times[2] = 1.25", "not read as a missing value"}},
		{"+Inf last", 1, 4, 2, math.Inf(1), []string{"observations[1, 4, 2] = +Inf is not finite", "series 1, channel 2, at times[4] = 3"}},
		{"-Inf first", 0, 0, 0, math.Inf(-1), []string{"observations[0, 0, 0] = -Inf is not finite", "series 0, channel 0, at times[0] = 0"}},
	} {
		y := tensor.New[float64](2, len(times), 3)
		for k := range y.Data() {
			y.Data()[k] = math.Sin(float64(k))
		}
		y.Data()[(c.b*len(times)+c.i)*3+c.ch] = c.bad
		for _, k := range constructors {
			tp := newTape()
			x, err := k.make(times, tp.Input(y))
			if err == nil {
				t.Errorf("%s, %s: no error; X(1.5) = %v", c.name, k.name, x.Evaluate(tp, 1.5).Value().ReadData())
				continue
			}
			for _, w := range append(c.want, "interp: New"+k.name+": ") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s, %s: %q does not say %q", c.name, k.name, err, w)
				}
			}
		}
	}
	// float32, in the batch's second series.
	y := tensor.New[float32](2, 2, 1)
	y.Data()[3] = float32(math.NaN())
	tp := autograd.NewTape(tensor.EngineFor[float32](tensor.Default()))
	if _, err := interp.NewNaturalCubic([]float64{0, 1}, tp.Const(y)); err == nil || !strings.Contains(err.Error(), "observations[1, 1, 0] = NaN is not finite: series 1, channel 0, at times[1] = 1") {
		t.Errorf("float32: %v", err)
	}
}
