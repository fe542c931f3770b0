package main

import (
	"io"
	"testing"
)

// TestTrainLearns trains for 25 iterations: the training loss and the
// held-out trajectories' error both fall (by a tenth and more).
func TestTrainLearns(t *testing.T) {
	c := defaults()
	c.Train, c.Test, c.Iters, c.Batch, c.Log = 128, 64, 25, 64, io.Discard
	r, err := run(c)
	if err != nil {
		t.Fatal(err)
	}
	first, last := r.Losses[0], r.Losses[len(r.Losses)-1]
	t.Logf("loss %.4g → %.4g, held out %.4g → %.4g", first, last, r.TestBefore, r.TestAfter)
	if !(last < 0.9*first) {
		t.Errorf("training loss %.4g → %.4g: want it 10%% lower", first, last)
	}
	if !(r.TestAfter < 0.9*r.TestBefore) {
		t.Errorf("held-out MSE %.4g → %.4g: want it 10%% lower", r.TestBefore, r.TestAfter)
	}
}
