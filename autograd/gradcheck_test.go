package autograd_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// wrongSquare is x² as a custom node whose derivative is wrong (by 1%) at
// one element.
func wrongSquare(x ag.Var[float64], bad int) ag.Var[float64] {
	xv := x.Value()
	return ag.Custom("wrongSquare", tensor.Mul(xv, xv), func(gy *tensor.Tensor[float64]) ([]*tensor.Tensor[float64], error) {
		gx := tensor.Scale(tensor.Mul(gy, xv), 2)
		gx.Data()[bad] *= 1.01
		return []*tensor.Tensor[float64]{gx}, nil
	}, x)
}

func TestCheckGradientsFindsWrongGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	a := ag.NewParam("a", tensor.RandN[float64](rng, 0, 1, 3))
	w := ag.NewParam("w", tensor.RandN[float64](rng, 0, 1, 2, 3))
	w.Value.Set(1.5, 1, 2) // the bad element: far from zero
	a.Grad.Fill(42)        // the caller's gradients must survive the check
	f := func(tp *ag.Tape[float64]) ag.Var[float64] {
		return ag.Add(ag.Sum(wrongSquare(tp.Param(w), 5)), ag.Sum(ag.Square(tp.Param(a))))
	}
	rep, err := ag.CheckGradients(f, []*ag.Param[float64]{a, w}, ag.GradCheckOptions{})
	if err == nil {
		t.Fatalf("wrong gradient not found: %v", rep)
	}
	if rep.Failed != 1 || rep.Checked != 9 {
		t.Fatalf("failed %d of %d, want 1 of 9", rep.Failed, rep.Checked)
	}
	if rep.WorstRel.Param != "w" || len(rep.WorstRel.Index) != 2 || rep.WorstRel.Index[0] != 1 || rep.WorstRel.Index[1] != 2 {
		t.Fatalf("worst element %v, want w[1 2]", rep.WorstRel)
	}
	if rep.WorstRel.RelErr < 0.005 || rep.WorstRel.RelErr > 0.02 {
		t.Fatalf("relative error %v, want about 0.01", rep.WorstRel.RelErr)
	}
	if msg := err.Error(); !strings.Contains(msg, "w[1 2]") {
		t.Fatalf("error %q does not name the element", msg)
	}
	for _, g := range a.Grad.Data() {
		if g != 42 {
			t.Fatal("CheckGradients changed the caller's gradient")
		}
	}
	if w.Grad.Norm2() != 0 {
		t.Fatal("CheckGradients left a gradient behind")
	}

	// Sampling checks MaxElems elements per parameter; a loose relative
	// tolerance passes the 1% error.
	big := ag.NewParam("big", tensor.RandN[float64](rng, 0, 1, 40))
	rep, err = ag.CheckGradients(func(tp *ag.Tape[float64]) ag.Var[float64] {
		return ag.Tanh(tp.Param(big))
	}, []*ag.Param[float64]{big}, ag.GradCheckOptions{MaxElems: 7})
	if err != nil || rep.Checked != 7 {
		t.Fatalf("sampled check: %v, %v", rep, err)
	}
	if _, err := ag.CheckGradients(f, []*ag.Param[float64]{w}, ag.GradCheckOptions{RelTol: 0.05}); err != nil {
		t.Fatalf("a 1%% error fails a 5%% tolerance: %v", err)
	}
}

// TestCheckGradientsWithError: a function that returns an error with its
// output is checked as well, and its error ends the check.
func TestCheckGradientsWithError(t *testing.T) {
	w := ag.NewParam("w", tensor.FromSlice([]float64{0.3, -1.2}, 2))
	ok := func(tp *ag.Tape[float64]) (ag.Var[float64], error) {
		return ag.Sum(ag.Tanh(tp.Param(w))), nil
	}
	if rep, err := ag.CheckGradients(ok, []*ag.Param[float64]{w}, ag.GradCheckOptions{}); err != nil || rep.Checked != 2 {
		t.Fatalf("%v: %v", rep, err)
	}
	boom := errors.New("solve failed")
	calls := 0
	failing := func(tp *ag.Tape[float64]) (ag.Var[float64], error) {
		if calls++; calls > 2 {
			return ag.Var[float64]{}, boom
		}
		return ag.Sum(tp.Param(w)), nil
	}
	if _, err := ag.CheckGradients(failing, []*ag.Param[float64]{w}, ag.GradCheckOptions{}); !errors.Is(err, boom) {
		t.Errorf("a failing perturbed evaluation: got %v, want its error", err)
	}
	calls = 10
	if _, err := ag.CheckGradients(failing, []*ag.Param[float64]{w}, ag.GradCheckOptions{}); !errors.Is(err, boom) {
		t.Errorf("a failing first evaluation: got %v, want its error", err)
	}
}
