package main

import (
	"errors"
	"testing"

	"github.com/adamnode/adamnode/odeblock"
)

// TestLearns: 100 steps (5 epochs) of the example cut the epochs' mean
// loss a hundredfold with bdf and the Interpolated mode; with the plain adjoint the backward pass is
// an error (the reverse reconstruction of the stiff state fails), not
// wrong rates.
func TestLearns(t *testing.T) {
	if testing.Short() {
		t.Skip("trains for a second")
	}
	l, err := run(100, "bdf", odeblock.Interpolated{})
	if err != nil {
		t.Fatal(err)
	}
	if l[1] > l[0]/100 {
		t.Errorf("loss %.3g → %.3g from the first epoch to the fifth: not a hundredfold", l[0], l[1])
	}
	_, err = run(1, "bdf", odeblock.Adjoint{})
	if !errors.Is(err, odeblock.ErrAdjointDrift) && !errors.Is(err, odeblock.ErrNonFinite) && !errors.Is(err, odeblock.ErrStepUnderflow) {
		t.Errorf("adjoint: %v, want a reconstruction error", err)
	}
}
