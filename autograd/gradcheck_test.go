package autograd_test

import (
	"errors"
	"math"
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

// TestCheckGradientsWorstElements: the report keeps the element of the
// largest absolute error and that of the largest relative error apart,
// each with its parameter, index and values, whichever is checked first,
// and counts every element beyond the tolerance.
func TestCheckGradientsWorstElements(t *testing.T) {
	for _, first := range []bool{true, false} {
		// x² with its derivative off by 1% at element 1 (the largest
		// absolute error: 2·10·1%) and by 10% at element 2 (the largest
		// relative error; 2·0.5·10% absolute); element 0 is right.
		vals := []float64{3, 10, 0.5, 2}
		if !first {
			vals = []float64{3, 2, 0.5, 10} // the absolute worst checked last
		}
		w := ag.NewParam("w", tensor.FromSlice(vals, 2, 2))
		bad := map[int]float64{1: 1.01, 2: 1.1}
		if !first {
			bad = map[int]float64{3: 1.01, 2: 1.1}
		}
		f := func(tp *ag.Tape[float64]) ag.Var[float64] {
			x := tp.Param(w)
			xv := x.Value()
			return ag.Sum(ag.Custom("offSquare", tensor.Mul(xv, xv), func(gy *tensor.Tensor[float64]) ([]*tensor.Tensor[float64], error) {
				gx := tensor.Scale(tensor.Mul(gy, xv), 2)
				for k, by := range bad {
					gx.Data()[k] *= by
				}
				return []*tensor.Tensor[float64]{gx}, nil
			}, x))
		}
		rep, err := ag.CheckGradients(f, []*ag.Param[float64]{w}, ag.GradCheckOptions{})
		if err == nil || rep.Checked != 4 || rep.Failed != 2 {
			t.Fatalf("first=%v: %v; %d checked, %d failed, want 4 and 2", first, err, rep.Checked, rep.Failed)
		}
		absAt := []int{0, 1}
		if !first {
			absAt = []int{1, 1}
		}
		ab, rl := rep.WorstAbs, rep.WorstRel
		if ab.Param != "w" || len(ab.Index) != 2 || ab.Index[0] != absAt[0] || ab.Index[1] != absAt[1] || math.Abs(ab.Analytic-20.2) > 1e-9 || math.Abs(ab.Numeric-20) > 1e-6 || math.Abs(ab.AbsErr-0.2) > 1e-6 {
			t.Errorf("first=%v: worst absolute error %+v, want w%v, 20.2 against 20", first, ab, absAt)
		}
		if rl.Param != "w" || len(rl.Index) != 2 || rl.Index[0] != 1 || rl.Index[1] != 0 || math.Abs(rl.Analytic-1.1) > 1e-9 || math.Abs(rl.RelErr-0.1/1.1) > 1e-6 {
			t.Errorf("first=%v: worst relative error %+v, want w[1 0], 1.1 against 1", first, rl)
		}
	}
}

// TestCheckGradientsStepAndTies: each element is perturbed by
// Step·max(1, |x|) either way, and of two elements with equal errors the
// first checked is reported.
func TestCheckGradientsStepAndTies(t *testing.T) {
	w := ag.NewParam("w", tensor.FromSlice([]float64{100, 0.5}, 2))
	var seen []float64
	f := func(tp *ag.Tape[float64]) ag.Var[float64] {
		seen = append(seen, w.Value.Data()...)
		return ag.Sum(ag.Square(tp.Param(w)))
	}
	if _, err := ag.CheckGradients(f, []*ag.Param[float64]{w}, ag.GradCheckOptions{Step: 1e-6}); err != nil {
		t.Fatal(err)
	}
	// The first call records the gradients; then x₀ ± 1e-4 and x₁ ± 1e-6.
	want := []float64{100, 0.5, 100 + 1e-4, 0.5, 100 - 1e-4, 0.5, 100, 0.5 + 1e-6, 100, 0.5 - 1e-6}
	if len(seen) != len(want) {
		t.Fatalf("f saw %v, want %v", seen, want)
	}
	for i := range want {
		if math.Abs(seen[i]-want[i]) > 1e-12 {
			t.Fatalf("f saw %v, want %v", seen, want)
		}
	}
	// Two elements alike, both 1% off: the same errors; the first is worst.
	twin := ag.NewParam("twin", tensor.FromSlice([]float64{2, 2}, 2))
	g := func(tp *ag.Tape[float64]) ag.Var[float64] { return ag.Sum(wrongSquareAt(tp.Param(twin), 0, 1)) }
	rep, err := ag.CheckGradients(g, []*ag.Param[float64]{twin}, ag.GradCheckOptions{})
	if err == nil || rep.WorstAbs.AbsErr == 0 {
		t.Fatalf("%v: the 1%% errors were not found", err)
	}
	if rep.WorstAbs.Index[0] != 0 || rep.WorstRel.Index[0] != 0 {
		t.Errorf("worst elements %v and %v of two equal errors, want the first, [0]", rep.WorstAbs.Index, rep.WorstRel.Index)
	}
}

// wrongSquareAt is x² with its derivative 1% off at the elements bad.
func wrongSquareAt(x ag.Var[float64], bad ...int) ag.Var[float64] {
	xv := x.Value()
	return ag.Custom("wrongSquareAt", tensor.Mul(xv, xv), func(gy *tensor.Tensor[float64]) ([]*tensor.Tensor[float64], error) {
		gx := tensor.Scale(tensor.Mul(gy, xv), 2)
		for _, k := range bad {
			gx.Data()[k] *= 1.01
		}
		return []*tensor.Tensor[float64]{gx}, nil
	}, x)
}
