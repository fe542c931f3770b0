package main

import (
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/adamnode/adamnode/internal/pngtest"
)

// tiny is a configuration that trains in about a second.
func tiny(t *testing.T, data string) config {
	c := defaults()
	c.Data, c.Train, c.Test, c.Hidden, c.Iters, c.Batch = data, 500, 200, 16, 40, 64
	c.Tol, c.EvalTol, c.Samples, c.Grid = 1e-3, 1e-4, 200, 24
	c.Out, c.Log = filepath.Join(t.TempDir(), "ffjord.png"), io.Discard
	return c
}

// TestTiny trains a small flow for 40 iterations and checks that it learnt
// (its test log-likelihood and its training loss improved), that the
// samples' log-densities from the backward solve (Times [1, 0]) agree with
// the forward solve's at the same points, and that the plot was written.
func TestTiny(t *testing.T) {
	for _, data := range []string{"moons", "8gaussians"} {
		t.Run(data, func(t *testing.T) {
			c := tiny(t, data)
			r, err := run[float32](c)
			if err != nil {
				t.Fatal(err)
			}
			if r.TestLL < r.Untrained+0.3 {
				t.Errorf("test log-likelihood %.3f after training, %.3f before: want an improvement of 0.3 or more", r.TestLL, r.Untrained)
			}
			first, last := mean(r.Losses[:10]), mean(r.Losses[len(r.Losses)-10:])
			if last > first-0.2 {
				t.Errorf("mean training loss of the last 10 iterations %.3f, of the first 10 %.3f: want a drop of 0.2 or more", last, first)
			}
			pngtest.Check(t, c.Out, 1000, 400)
		})
	}
}

// TestSampleLogProb: log p of samples of a trained flow, carried back from
// t = 1 to t = 0 by the augmented CNF (Times [1, 0]), equals log p computed
// forward from the samples; and the flow is far from the identity there,
// so that the log-density change matters.
func TestSampleLogProb(t *testing.T) {
	c := tiny(t, "moons")
	rng := rand.New(rand.NewPCG(1, 2))
	f := newField[float32](rng, c.Hidden)
	if _, err := train(c, f, moons(rng, c.Train), rng); err != nil {
		t.Fatal(err)
	}
	xs, back, err := sample(f, rng, 100, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	fwd, err := logProb(f, xs, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	var change float64
	for i, x := range xs {
		if math.Abs(fwd[i]-back[i]) > 1e-3 {
			t.Fatalf("sample %d at %v: log p %.6f from the backward solve, %.6f forward", i, x, back[i], fwd[i])
		}
		change += math.Abs(fwd[i]-(-0.5*(x[0]*x[0]+x[1]*x[1])-math.Log(2*math.Pi))) / float64(len(xs))
	}
	if change < 0.2 {
		t.Errorf("mean |log p(x) − log N(x; 0, I)| = %.3f over the samples: the flow is too near the identity for the check", change)
	}
}

// TestFloat64 runs a few iterations in float64.
func TestFloat64(t *testing.T) {
	c := tiny(t, "moons")
	c.Iters, c.Out = 5, ""
	r, err := run[float64](c)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Losses) != 5 || math.IsNaN(r.TestLL) {
		t.Errorf("%d losses, test log-likelihood %v", len(r.Losses), r.TestLL)
	}
}

// TestUnknownData: a name that is not a toy is an error.
func TestUnknownData(t *testing.T) {
	c := tiny(t, "spirals")
	if _, err := run[float32](c); err == nil {
		t.Error("no error for -data spirals")
	}
}

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
