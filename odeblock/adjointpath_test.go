package odeblock_test

import (
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// TestAdjointGenericSkipsAdjointer: on the CPU the adjoint's backward
// solve calls the dynamics' own adjoint (a user's Adjointer here), and
// with Adjoint.Generic the VJP of the dynamics instead, never the
// Adjointer.
func TestAdjointGenericSkipsAdjointer(t *testing.T) {
	var f family
	for _, g := range families(3) {
		if g.name == "adamnode" {
			f = g
		}
	}
	for _, c := range []struct {
		mode      odeblock.Adjoint
		wantCalls bool
	}{
		{odeblock.Adjoint{}, true},
		{odeblock.Adjoint{Generic: true}, false},
	} {
		own := &ownAdjointer{AdamNODE: f.dyn.(*odeblock.AdamNODE[float64])}
		b := &odeblock.Block[float64]{Dynamics: own, Times: []float64{0, 0.5}, Mode: c.mode}
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Gonum(1)))
		z, err := b.Forward(tp, f.state(tp))
		if err != nil {
			t.Fatal(err)
		}
		if err := tp.Backward(autograd.Sum(autograd.Square(z))); err != nil {
			t.Fatal(err)
		}
		if got := own.calls > 0; got != c.wantCalls {
			t.Errorf("Generic %v: the Adjointer was called %d times", c.mode.Generic, own.calls)
		}
	}
}
