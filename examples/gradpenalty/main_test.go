package main

import (
	"io"
	"testing"
)

// TestTrainLearns trains for 60 iterations (360 steps): the generated
// samples move towards the data, their mean distance to the nearest centre
// falling by a third and more.
func TestTrainLearns(t *testing.T) {
	c := defaults()
	c.Data, c.Iters, c.Batch, c.Log = 2048, 60, 128, io.Discard
	r, err := run(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("critic loss %.4f → %.4f; distance to the centres %.3f → %.3f (data %.3f)", r.CriticFirst, r.CriticEnd, r.Before, r.After, r.Data)
	if len(r.Losses) != 6*c.Iters {
		t.Fatalf("%d losses, want %d", len(r.Losses), 6*c.Iters)
	}
	if !(r.After < 2*r.Before/3) {
		t.Errorf("mean distance to the nearest centre %.3f → %.3f: want it a third lower", r.Before, r.After)
	}
}
