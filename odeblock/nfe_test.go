package odeblock_test

import (
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// TestNFE: BlockStats.NFE and Block.NFE return the forward and the
// backward pass's evaluations of the dynamics, as Stats counts them.
func TestNFE(t *testing.T) {
	var s odeblock.BlockStats
	s.Forward.NFE, s.Backward.NFE = 5, 9
	if f, b := s.NFE(); f != 5 || b != 9 {
		t.Errorf("BlockStats.NFE() = %d, %d; want 5, 9", f, b)
	}
	w := autograd.NewParam("w", tensor.Full(-0.5, 1))
	field := odeblock.FieldFunc([]*autograd.Param[float64]{w}, func(tp *autograd.Tape[float64], _ float64, h autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Mul(h, tp.Param(w))
	})
	blk := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Mode: odeblock.Adjoint{}, Solver: odeblock.Options{Method: "dopri5", RTol: 1e-6, ATol: 1e-8}}
	tp := autograd.NewTape(tensor.Default().Float64())
	defer tp.Release()
	y, err := blk.Forward(tp, tp.Input(tensor.Full(1.0, 2, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := tp.Backward(autograd.Sum(y)); err != nil {
		t.Fatal(err)
	}
	st := blk.Stats()
	f, b := blk.NFE()
	if f != st.Forward.NFE || b != st.Backward.NFE || f == 0 || b == 0 || f == b {
		t.Errorf("Block.NFE() = %d, %d; want Stats' %d, %d, both counted", f, b, st.Forward.NFE, st.Backward.NFE)
	}
}
