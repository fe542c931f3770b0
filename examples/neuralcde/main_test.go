package main

import (
	"io"
	"math/rand/v2"
	"testing"
)

// tiny is a configuration that trains in about a second.
func tiny() config {
	c := defaults()
	c.Train, c.Test, c.Points, c.Hidden, c.Width, c.Iters, c.Batch, c.LR = 64, 64, 24, 4, 16, 30, 16, 1e-2
	c.Log = io.Discard
	return c
}

// TestTiny trains a small model for 30 iterations, with the adjoint along
// the forward solution and with backprop, and checks that the training
// loss fell and that the test accuracy is high.
func TestTiny(t *testing.T) {
	for _, mode := range []string{"interpolated", "backprop"} {
		t.Run(mode, func(t *testing.T) {
			c := tiny()
			c.Mode = mode
			r, err := run(c)
			if err != nil {
				t.Fatal(err)
			}
			check(t, r)
		})
	}
}

func check(t *testing.T, r result) {
	t.Helper()
	first, last := mean(r.Losses[:5]), mean(r.Losses[len(r.Losses)-5:])
	t.Logf("loss %.4f → %.4f, accuracy %.3f → %.3f", first, last, r.Untrained, r.TestAcc)
	if last > first/2 {
		t.Errorf("mean training loss of the last 5 iterations %.4f, of the first 5 %.4f: want it halved", last, first)
	}
	if r.TestAcc < 0.9 {
		t.Errorf("test accuracy %.3f after training (%.3f before): want 0.9 or more", r.TestAcc, r.Untrained)
	}
}

// TestSpirals: the label is the direction of rotation — the signed area
// swept, Σ x_k·y_{k+1} − x_{k+1}·y_k, is positive for label 1
// (anticlockwise) and negative for label 0 on noise-free spirals — and the
// times are sorted in [0, 1].
func TestSpirals(t *testing.T) {
	d := spirals(rand.New(rand.NewPCG(3, 4)), 50, 40, 0)
	o := d.obs.Data()
	ones := 0
	for i, l := range d.labels {
		var area float64
		for k := range 39 {
			a, b := o[(i*40+k)*channels:], o[(i*40+k+1)*channels:]
			if b[0] < a[0] || a[0] < 0 || b[0] > 1 {
				t.Fatalf("sample %d: times %v, %v out of order or out of [0, 1]", i, a[0], b[0])
			}
			area += a[1]*b[2] - b[1]*a[2]
		}
		if (area > 0) != (l == 1) {
			t.Errorf("sample %d: label %d, signed area %.3f", i, l, area)
		}
		ones += l
	}
	if ones < 10 || ones > 40 {
		t.Errorf("%d of 50 labels are 1", ones)
	}
}

// TestBadConfig: a gradient mode that does not exist, or a batch larger
// than the training set, is an error.
func TestBadConfig(t *testing.T) {
	c := tiny()
	c.Mode = "bogus"
	if _, err := run(c); err == nil {
		t.Error("no error for -mode bogus")
	}
	c = tiny()
	c.Batch = c.Train + 1
	if _, err := run(c); err == nil {
		t.Errorf("no error for -batch %d with -train %d", c.Batch, c.Train)
	}
}

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
