package main

import (
	"io"
	"math"
	"path/filepath"
	"testing"

	"github.com/adamnode/adamnode/internal/pngtest"
)

// tiny is a configuration that trains in about a second.
func tiny(t *testing.T) config {
	c := defaults()
	c.Train, c.Test, c.Iters, c.Batch, c.Plot = 200, 40, 150, 20, 2
	c.Out, c.Log = filepath.Join(t.TempDir(), "latentode.png"), io.Discard
	return c
}

// TestTiny trains a small latent ODE for 150 steps and checks that the loss
// (−ELBO) fell, that the reconstruction of held-out series improved on the
// untrained model's and on predicting zero, and that the plot was written.
func TestTiny(t *testing.T) {
	c := tiny(t)
	r, err := run[float32](c)
	if err != nil {
		t.Fatal(err)
	}
	first, last := mean(r.Losses[:10]), mean(r.Losses[len(r.Losses)-10:])
	t.Logf("loss %.2f → %.2f; test MSE reconstruction %.4f (untrained %.4f, zero %.4f), extrapolation %.4f", first, last, r.ReconMSE, r.UntrainedRecon, r.ZeroRecon, r.ExtrapMSE)
	if !(last < first/2) {
		t.Errorf("mean loss of the last 10 steps %.2f, of the first 10 %.2f: want it halved", last, first)
	}
	if !(r.ReconMSE < 0.7*r.UntrainedRecon && r.ReconMSE < 0.7*r.ZeroRecon) {
		t.Errorf("test reconstruction MSE %.4f, untrained %.4f, predicting zero %.4f: want 30%% below both", r.ReconMSE, r.UntrainedRecon, r.ZeroRecon)
	}
	if math.IsNaN(r.ExtrapMSE) {
		t.Error("extrapolation MSE is NaN")
	}
	pngtest.Check(t, c.Out, 600, 300)
}

// TestSameSeed: a run is deterministic given the seed.
func TestSameSeed(t *testing.T) {
	c := tiny(t)
	c.Iters, c.Out = 5, ""
	a, err := run[float32](c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := run[float32](c)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Losses {
		if a.Losses[i] != b.Losses[i] {
			t.Fatalf("step %d: loss %v, then %v with the same seed", i, a.Losses[i], b.Losses[i])
		}
	}
}

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
