package main

import (
	"io"
	"testing"
)

// TestTrainLearns trains for 20 iterations: the training loss falls and
// the held-out log-likelihood rises, each by a tenth and more.
func TestTrainLearns(t *testing.T) {
	c := defaults()
	c.Train, c.Test, c.Iters, c.Batch, c.Log = 512, 256, 20, 128, io.Discard
	r, err := run(c)
	if err != nil {
		t.Fatal(err)
	}
	first, last := r.Losses[0], r.Losses[len(r.Losses)-1]
	t.Logf("loss %.4f → %.4f; held out %+v → %+v", first, last, r.Before, r.After)
	if !(last < 0.9*first) {
		t.Errorf("training loss %.4f → %.4f: want it 10%% lower", first, last)
	}
	if !(-r.After.LogLik < -0.9*r.Before.LogLik) {
		t.Errorf("held-out log-likelihood %.4f → %.4f: want its negative 10%% lower", r.Before.LogLik, r.After.LogLik)
	}
	if !(r.After.Kinetic > 0 && r.After.Jacobian > 0) {
		t.Errorf("regularisers %+v: want both positive", r.After)
	}
}
