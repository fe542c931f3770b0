package optim

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// TestMinimize: one call is ZeroGrad, Backward, Step — the same update as
// the three — and on Backward's error nothing is stepped and the partial
// gradients are zeroed.
func TestMinimize(t *testing.T) {
	eng := tensor.EngineFor[float64](tensor.Default())
	pass := func(w *autograd.Param[float64], tp *autograd.Tape[float64], fail error) autograd.Var[float64] {
		v := tp.Param(w)
		loss := autograd.Sum(autograd.Mul(v, v))
		if fail != nil {
			return tp.Check(loss, fail)
		}
		return loss
	}
	a := autograd.NewParam("w", tensor.FromSlice([]float64{1, -2, 3}, 3))
	b := autograd.NewParam("w", tensor.FromSlice([]float64{1, -2, 3}, 3))
	optA, optB := NewAdam([]*autograd.Param[float64]{a}, AdamDefaults().WithLR(0.1)), NewAdam([]*autograd.Param[float64]{b}, AdamDefaults().WithLR(0.1))
	tpA, tpB := autograd.NewTape(eng), autograd.NewTape(eng)
	for range 3 {
		tpA.Reset()
		if err := Minimize(optA, tpA, pass(a, tpA, nil)); err != nil {
			t.Fatal(err)
		}
		tpB.Reset()
		optB.ZeroGrad()
		if err := tpB.Backward(pass(b, tpB, nil)); err != nil {
			t.Fatal(err)
		}
		optB.Step()
	}
	if diff := cmp.Diff(b.Value.Data(), a.Value.Data()); diff != "" {
		t.Errorf("Minimize against ZeroGrad, Backward, Step (-three +Minimize):\n%s", diff)
	}
	before := a.Value.Clone()
	fail := errors.New("the pass failed")
	tpA.Reset()
	if err := Minimize(optA, tpA, pass(a, tpA, fail)); err != fail {
		t.Errorf("Minimize of a failed pass = %v, want its error", err)
	}
	if diff := cmp.Diff(before.Data(), a.Value.Data()); diff != "" {
		t.Errorf("a failed pass stepped (-before +after):\n%s", diff)
	}
	if a.Grad.Sum() != 0 {
		t.Errorf("gradients after a failed pass: %v, want zeros", a.Grad.Data())
	}
}

// TestWithLR: the learning rate replaced, every other field kept.
func TestWithLR(t *testing.T) {
	if got, want := AdamWDefaults().WithLR(3e-4), (AdamConfig{LR: 3e-4, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-2}); got != want {
		t.Errorf("AdamWDefaults().WithLR(3e-4) = %+v, want %+v", got, want)
	}
	if got := SGDDefaults().WithLR(0.5); got.LR != 0.5 || got.Momentum != SGDDefaults().Momentum {
		t.Errorf("SGDDefaults().WithLR(0.5) = %+v", got)
	}
	if got, want := RMSpropDefaults().WithLR(0.5), RMSpropDefaults(); got.LR != 0.5 || got.Alpha != want.Alpha || got.Eps != want.Eps {
		t.Errorf("RMSpropDefaults().WithLR(0.5) = %+v", got)
	}
}
