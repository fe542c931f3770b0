package odeblock

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// TestAdjointValidated: out-of-range adjoint options are an error
// from Forward, not silently replaced by the forward's.
func TestAdjointValidated(t *testing.T) {
	for _, c := range []struct {
		adj  Adjoint
		want string
	}{
		{Adjoint{RTol: -1}, "Adjoint.RTol"},
		{Adjoint{RTol: math.Inf(1)}, "Adjoint.RTol"},
		{Adjoint{ATol: math.NaN()}, "Adjoint.ATol"},
		{Adjoint{MaxSteps: -5}, "Adjoint.MaxSteps"},
		{Adjoint{MaxDrift: math.NaN()}, "Adjoint.MaxDrift"},
		{Adjoint{MaxDrift: math.Inf(1)}, "Adjoint.MaxDrift"},
		{Adjoint{FlatNorm: true, Seminorm: true}, "Adjoint.FlatNorm"},
		{Adjoint{AnchorEvery: -1}, "Adjoint.AnchorEvery"},
	} {
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
		evals := 0
		neg := FieldFunc[float64](nil, func(tp *autograd.Tape[float64], t float64, h autograd.Var[float64]) autograd.Var[float64] {
			evals++
			return autograd.Neg(h)
		})
		b := &Block[float64]{Dynamics: &NODE[float64]{F: neg}, Mode: c.adj}
		_, err := b.Forward(tp, tp.Input(tensor.FromSlice([]float64{1, 2}, 1, 2)))
		if err == nil || !strings.Contains(err.Error(), c.want) || evals != 0 {
			t.Errorf("%+v: got %v after %d evaluations, want an error naming %s and none", c.adj, err, evals, c.want)
		}
	}
}

// TestBlockRefusesQuadrature: a block's state has no quadratures; a
// Solver.Quadrature set on a Block is an error before any evaluation.
func TestBlockRefusesQuadrature(t *testing.T) {
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	evals := 0
	neg := FieldFunc[float64](nil, func(tp *autograd.Tape[float64], t float64, h autograd.Var[float64]) autograd.Var[float64] {
		evals++
		return autograd.Neg(h)
	})
	b := &Block[float64]{Dynamics: &NODE[float64]{F: neg}, Solver: Options{Quadrature: 1}}
	_, err := b.Forward(tp, tp.Input(tensor.FromSlice([]float64{1, 2}, 1, 2)))
	if err == nil || !strings.Contains(err.Error(), "Quadrature") || evals != 0 {
		t.Errorf("got %v after %d evaluations, want an error naming Quadrature and none", err, evals)
	}
}

// TestBackpropStageErrorReturned: in Backprop and Checkpoint mode, a
// dynamics whose recorded backward fails (a custom node's error) makes the
// block's Backward fail with that error; it was dropped, and the gradients
// came back as if the stage had none.
func TestBackpropStageErrorReturned(t *testing.T) {
	boom := errors.New("boom")
	f := FieldFunc[float64](nil, func(tp *autograd.Tape[float64], t float64, h autograd.Var[float64]) autograd.Var[float64] {
		v := h.Value().Clone().Scale(h.Value(), -1)
		return autograd.Custom("failing", v, func(g *tensor.Tensor[float64]) ([]*tensor.Tensor[float64], error) {
			return nil, boom
		}, h)
	})
	for _, mode := range everyMode() {
		if mode == (Adjoint{}) {
			continue // its backward evaluates no recorded stage
		}
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
		b := &Block[float64]{Dynamics: &NODE[float64]{F: f}, Mode: mode, Solver: Options{RTol: 1e-6, ATol: 1e-6}}
		z, err := b.Forward(tp, tp.Input(tensor.FromSlice([]float64{1, 2}, 1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		if err := tp.Backward(autograd.Sum(z)); !errors.Is(err, boom) {
			t.Errorf("%v: Backward returned %v, want the stage's error", mode, err)
		}
	}
}

// TestAdjointTakesForwardOptions: the backward solve takes every forward
// option (FirstStep was dropped): with FirstStep set, neither solve
// spends the first-step selection's probe evaluation.
func TestAdjointTakesForwardOptions(t *testing.T) {
	neg := FieldFunc[float64](nil, func(tp *autograd.Tape[float64], t float64, h autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Neg(h)
	})
	nfe := func(first float64) BlockStats {
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
		b := &Block[float64]{Dynamics: &NODE[float64]{F: neg}, Solver: Options{RTol: 1e-6, ATol: 1e-6, StepControl: StepControl{FirstStep: first}}}
		z, err := b.Forward(tp, tp.Input(tensor.FromSlice([]float64{1, 2}, 1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		if err := tp.Backward(autograd.Sum(z)); err != nil {
			t.Fatal(err)
		}
		return b.Stats()
	}
	auto, given := nfe(0), nfe(0.05)
	t.Logf("forward NFE %d / %d steps, backward %d / %d; with the first step chosen: %d / %d, %d / %d",
		given.Forward.NFE, given.Forward.Accepted+given.Forward.Rejected, given.Backward.NFE, given.Backward.Accepted+given.Backward.Rejected,
		auto.Forward.NFE, auto.Forward.Accepted+auto.Forward.Rejected, auto.Backward.NFE, auto.Backward.Accepted+auto.Backward.Rejected)
	// dopri5 is FSAL: the evaluations are 1 + 6·steps, plus the probe's one
	// when the first step is chosen.
	probe := func(s Stats) int { return s.NFE - 1 - 6*(s.Accepted+s.Rejected) }
	if probe(given.Forward) != 0 || probe(given.Backward) != 0 || probe(auto.Backward) != 1 {
		t.Errorf("FirstStep 0.05: forward NFE %d, backward %d; with the step chosen: %d, %d — the backward solve ignores FirstStep",
			given.Forward.NFE, given.Backward.NFE, auto.Forward.NFE, auto.Backward.NFE)
	}
}

// TestErrorParts: the mixed norm (the largest RMS over the parts) sees an
// error that the RMS over the whole state averages away. y' = −50·y on the
// first element and 999 elements that never change: with one RMS over all
// 1000 the solver steps as if the tolerance were √1000 times looser; with
// ErrorParts {1, 999} it takes the steps the first element alone needs,
// and is that much more accurate. Bad parts are errors.
func TestErrorParts(t *testing.T) {
	f := func(t float64, y, dy []float64) error {
		dy[0] = -50 * y[0]
		clear(dy[1:])
		return nil
	}
	y0 := make([]float64, 1000)
	y0[0] = 1
	solve := func(parts []int) (float64, Stats) {
		out, st, err := Solve(f, y0, []float64{0, 1}, Options{RTol: 1e-6, ATol: 1e-9, ErrorNorm: ErrorNorm{ErrorParts: parts}})
		if err != nil {
			t.Fatal(err)
		}
		return math.Abs(out[1][0] - math.Exp(-50)), st
	}
	flatErr, flat := solve(nil)
	mixErr, mix := solve([]int{1, 999})
	single, _, _ := Solve(func(t float64, y, dy []float64) error { dy[0] = -50 * y[0]; return nil }, []float64{1}, []float64{0, 1}, Options{RTol: 1e-6, ATol: 1e-9})
	if mix.Accepted <= flat.Accepted || !(mixErr < flatErr) {
		t.Errorf("mixed norm: %d steps, error %.3g; flat: %d steps, error %.3g; want more steps and less error", mix.Accepted, mixErr, flat.Accepted, flatErr)
	}
	if d := math.Abs(single[1][0] - math.Exp(-50)); math.Abs(mixErr-d) > 1e-3*d {
		t.Errorf("mixed norm's error %.6g, the first element solved alone %.6g", mixErr, d)
	}
	for _, c := range []struct {
		opt  Options
		want string
	}{
		{Options{ErrorNorm: ErrorNorm{ErrorParts: []int{1, 0}}}, "ErrorParts[1]"},
		{Options{ErrorNorm: ErrorNorm{ErrorParts: []int{-3}}}, "ErrorParts[0]"},
		{Options{ErrorNorm: ErrorNorm{ErrorParts: []int{1}, ErrorLen: 1}}, "ErrorLen"},
		{Options{ErrorNorm: ErrorNorm{ErrorParts: []int{600, 401}}}, "cover 1001"},
	} {
		if _, _, err := Solve(f, y0, []float64{0, 1}, c.opt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error naming %s", c.opt.ErrorParts, err, c.want)
		}
	}
}

// TestUndeclaredParamAdjoint: dynamics that read a parameter their Params()
// does not list got a wrong gradient from the adjoint with no error (on
// y' = w·y: 158.3 in w.Grad against the true 4.946), while Backprop and
// Checkpoint wrote a right one into w.Grad behind the outer tape's back.
// Every mode now fails, naming the parameter: Backprop in Forward (its
// stages are recorded there), Adjoint and Checkpoint in Backward.
func TestUndeclaredParamAdjoint(t *testing.T) {
	w := autograd.NewParam("w", tensor.FromSlice([]float64{0.5}, 1))
	f := FieldFunc[float64](nil, func(tp *autograd.Tape[float64], tt float64, h autograd.Var[float64]) autograd.Var[float64] {
		return autograd.MulScalar(h, tp.Param(w))
	})
	for _, c := range []struct {
		name string
		dyn  Dynamics[float64]
		z0   []float64
	}{
		{"node", &NODE[float64]{F: f}, []float64{1, 2}},
		{"hbnode", NewHBNODE[float64](f, -3), []float64{1, 2, 0.5, 0.5}},
		{"adamnode", NewAdamNODE[float64](f, -5, 5, ScaleSoftplus), []float64{1, 2, 0.5, 0.5, 0.25, 0.25}},
	} {
		for _, mode := range everyMode() {
			autograd.ZeroGrads([]*autograd.Param[float64]{w})
			tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
			b := &Block[float64]{Dynamics: c.dyn, Mode: mode, Solver: Options{RTol: 1e-8, ATol: 1e-8}}
			z, err := b.Forward(tp, tp.Input(tensor.FromSlice(c.z0, len(c.z0), 1)))
			if err == nil {
				err = tp.Backward(autograd.Sum(z))
			}
			if err == nil || !strings.Contains(err.Error(), `"w"`) || !strings.Contains(err.Error(), "Params()") {
				t.Errorf("%s, %v: got %v, want an error naming w and Params()", c.name, mode, err)
			}
			if w.Grad != nil && w.Grad.Data()[0] != 0 {
				t.Errorf("%s, %v: w.Grad = %v after the error", c.name, mode, w.Grad.Data())
			}
		}
	}
}

// TestOnStepInBackward: a Block's OnStep sees the forward solve's
// steps and, in Adjoint mode, the backward solve's (Phase "backward",
// times going down); an error from it stops the backward pass.
func TestOnStepInBackward(t *testing.T) {
	neg := FieldFunc[float64](nil, func(tp *autograd.Tape[float64], t float64, h autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Neg(h)
	})
	var phases []string
	var backT []float64
	stop := errors.New("stop")
	failAt := -1
	onStep := func(si StepInfo[float64]) error {
		phases = append(phases, si.Phase)
		if si.Phase == "backward" {
			backT = append(backT, si.T)
			if len(backT) == failAt {
				return stop
			}
		}
		return nil
	}
	run := func() error {
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
		b := &Block[float64]{Dynamics: &NODE[float64]{F: neg}, Times: []float64{0, 2}, Solver: Options{RTol: 1e-6, ATol: 1e-6}, OnStep: onStep}
		z, err := b.Forward(tp, tp.Input(tensor.FromSlice([]float64{1, 2}, 1, 2)))
		if err != nil {
			return err
		}
		return tp.Backward(autograd.Sum(z))
	}
	if err := run(); err != nil {
		t.Fatal(err)
	}
	nf := slices.Index(phases, "backward")
	if nf <= 0 || slices.Contains(phases[nf:], "forward") || !sort.IsSorted(sort.Reverse(sort.Float64Slice(backT))) {
		t.Fatalf("phases %v, backward step times %v: want forward steps, then backward ones going down", phases, backT)
	}
	phases, backT, failAt = nil, nil, 2
	if err := run(); !errors.Is(err, stop) {
		t.Errorf("OnStep's error in the backward solve: Backward returned %v", err)
	}
}

// everyMode returns every registered gradient mode with its default
// options, so that a new mode's file brings it under these tests.
func everyMode() []GradMode {
	var out []GradMode
	for _, name := range GradModeNames() {
		m, _ := ParseGradMode(name)
		out = append(out, m)
	}
	return out
}

// TestAdjointCarriesOptions: the adjoint's backward solve takes every
// field of the forward's Options but those it sets itself (its method as a
// tableau, its phase and error norm; tolerances and step limit when the
// Adjoint sets them). A field added to Options fails here until this test
// gives it a value, and then fails if the backward solve drops it.
func TestAdjointCarriesOptions(t *testing.T) {
	tb, err := Method("bosh3")
	if err != nil {
		t.Fatal(err)
	}
	fwd := Options{
		Method:      "bosh3",
		Tableau:     tb,
		RTol:        1e-5,
		ATol:        1e-6,
		Step:        0.1,
		MaxOrder:    6,
		Quadrature:  4,
		Phase:       "forward",
		StepControl: StepControl{FirstStep: 0.01, MinStep: 1e-8, MaxStep: 0.5, MaxSteps: 77, Safety: 0.8, IFactor: 5, DFactor: 0.3, PCoeff: 0.2},
		ErrorNorm:   ErrorNorm{ErrorLen: 3, ErrorParts: []int{1}, ErrorRows: 2, ErrorRowLen: 1},
		Stops:       Stops{StepTo: []float64{0.5}, Jumps: []float64{0.25}},
	}
	v := reflect.ValueOf(fwd)
	var fields []reflect.StructField // every field, those of the groups (StepControl, …) in place of the group
	for _, f := range reflect.VisibleFields(v.Type()) {
		if !f.Anonymous {
			fields = append(fields, f)
		}
	}
	for _, f := range fields {
		if v.FieldByIndex(f.Index).IsZero() {
			t.Fatalf("Options.%s has no value in this test: give it one", f.Name)
		}
	}
	own := map[string]bool{"Method": true, "Tableau": true, "Phase": true, "ErrorLen": true, "ErrorParts": true, "Quadrature": true,
		"ErrorRows": true, "ErrorRowLen": true}
	cfg := fwd
	cfg.ErrorLen, cfg.ErrorParts = 0, nil // refused beside ErrorRows; the backward solve sets its own
	s, err := NewSolver[float64](cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := &pass[float64]{b: &Block[float64]{}, n: 2, solver: s}
	a := &adjoint[float64]{p: p}
	got := reflect.ValueOf(a.options([]int{3}))
	for _, f := range fields {
		g, w := got.FieldByIndex(f.Index), v.FieldByIndex(f.Index)
		if !own[f.Name] && !reflect.DeepEqual(g.Interface(), w.Interface()) {
			t.Errorf("Options.%s: the backward solve has %v, the forward %v", f.Name, g, w)
		}
	}
	a.opt = Adjoint{RTol: 1e-3, ATol: 1e-4, MaxSteps: 9}
	o := a.options([]int{3})
	if o.RTol != 1e-3 || o.ATol != 1e-4 || o.MaxSteps != 9 || o.Tableau != tb || o.Phase != "backward" || o.ErrorLen != 0 || o.ErrorRows != 0 || o.ErrorRowLen != 0 {
		t.Errorf("the Adjoint's own settings not applied: %+v", o)
	}
	if o.Quadrature != 3 {
		t.Errorf("Quadrature %d, want the parameters' 3 elements", o.Quadrature)
	}
	if want := []int{2, 2, 3}; !reflect.DeepEqual(o.ErrorParts, want) {
		t.Errorf("ErrorParts %v, want the mixed norm's %v", o.ErrorParts, want)
	}
}

// TestTotalStats: a block sums its counts over passes until ResetStats,
// while Stats reports the last pass.
func TestTotalStats(t *testing.T) {
	neg := FieldFunc[float64](nil, func(tp *autograd.Tape[float64], t float64, h autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Neg(h)
	})
	b := &Block[float64]{Dynamics: &NODE[float64]{F: neg}, Solver: Options{RTol: 1e-6, ATol: 1e-6}}
	var sum BlockStats
	for range 3 {
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
		z, err := b.Forward(tp, tp.Input(tensor.FromSlice([]float64{1, 2}, 1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		if err := tp.Backward(autograd.Sum(z)); err != nil {
			t.Fatal(err)
		}
		sum = sum.Add(b.Stats())
	}
	total, passes := b.TotalStats()
	if passes != 3 || total != sum || total.Forward.NFE == 0 || total.Backward.NFE == 0 {
		t.Errorf("totals %+v over %d passes, want %+v over 3", total, passes, sum)
	}
	b.ResetStats()
	if total, passes := b.TotalStats(); passes != 0 || total != (BlockStats{}) {
		t.Errorf("after ResetStats: %+v, %d", total, passes)
	}
}

// TestFamilies: each family's description agrees with its dynamics — the
// state NewFamily's dynamics evaluate has Parts parts, the field sees
// FieldIn times h's width, the family's own scalars are the last of its
// Params — and InitialState stacks the parts.
func TestFamilies(t *testing.T) {
	const width = 3
	for _, fam := range Families() {
		var fieldIn int
		f := FieldFunc[float64](nil, func(tp *autograd.Tape[float64], _ float64, h autograd.Var[float64]) autograd.Var[float64] {
			fieldIn = h.Shape()[1]
			return autograd.Narrow(autograd.Tanh(h), 1, 0, width)
		})
		dyn, own := NewFamily(fam, f, PaperScalars())
		ps := dyn.Params()
		if len(own) > len(ps) || len(own) > 0 && ps[len(ps)-1] != own[len(own)-1] {
			t.Errorf("%s: own scalars %d not the tail of Params %d", fam.Name, len(own), len(ps))
		}
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
		h0 := tp.Const(tensor.Full[float64](0.5, 2, width))
		z := InitialState(fam, h0, tp.Const(tensor.Full[float64](0.25, 2, width)))
		if got := z.Shape()[0]; got != 2*fam.Parts {
			t.Errorf("%s: initial state has %d rows, want %d parts of 2", fam.Name, got, fam.Parts)
		}
		if dz := dyn.Eval(tp, 0, z); !dz.Value().SameShape(z.Value()) {
			t.Errorf("%s: F has shape %v for a state of shape %v", fam.Name, dz.Shape(), z.Shape())
		}
		if fieldIn != fam.FieldIn*width {
			t.Errorf("%s: the field saw %d columns, want %d", fam.Name, fieldIn, fam.FieldIn*width)
		}
		if got, err := FamilyNamed(strings.ToUpper(fam.Name)); err != nil || got != fam {
			t.Errorf("FamilyNamed(%q) = %v, %v", fam.Name, got, err)
		}
	}
	if _, err := FamilyNamed("resnet"); err == nil || !strings.Contains(err.Error(), "adamnode") {
		t.Errorf("unknown family: %v", err)
	}
}

// TestNewFamilyUnknown: a Family of no known name panics naming it (it
// made a NODE before, silently).
func TestNewFamilyUnknown(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), `"adamnod"`) {
			t.Errorf("NewFamily of an unknown name panicked with %v, want a message naming it", r)
		}
	}()
	f := FieldFunc[float64](nil, func(tp *autograd.Tape[float64], _ float64, h autograd.Var[float64]) autograd.Var[float64] { return h })
	NewFamily(Family{Name: "adamnod", Parts: 3}, f, PaperScalars())
}
