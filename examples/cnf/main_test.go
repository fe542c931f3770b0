package main

import (
	"io"
	"testing"
)

// TestTrainLearns trains for 20 iterations: the training loss and the
// held-out points' negative log-likelihood both fall by a tenth and more.
func TestTrainLearns(t *testing.T) {
	c := defaults()
	c.Train, c.Test, c.Iters, c.Batch, c.Log = 512, 256, 20, 128, io.Discard
	r, err := run(c)
	if err != nil {
		t.Fatal(err)
	}
	first, last := r.Losses[0], r.Losses[len(r.Losses)-1]
	t.Logf("loss %.4f → %.4f, held-out log-likelihood %.4f → %.4f", first, last, r.TestBefore, r.TestAfter)
	if !(last < 0.9*first) {
		t.Errorf("training loss %.4f → %.4f: want it 10%% lower", first, last)
	}
	if !(-r.TestAfter < -0.9*r.TestBefore) {
		t.Errorf("held-out log-likelihood %.4f → %.4f: want its negative 10%% lower", r.TestBefore, r.TestAfter)
	}
}
