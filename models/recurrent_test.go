package models_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/models"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// rk4 is a fixed-step solver, so that central differences see a smooth
// function of the parameters (no step-size control switching).
var rk4 = odeblock.Options{Method: "rk4", Step: 0.05}

func tape64() *autograd.Tape[float64] {
	return autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
}

// TestGRUODEEval checks the right-hand side against values worked out by
// hand (in Python's math module, from the formulas of the doc comment) on
// fixed weights, with and without biases.
func TestGRUODEEval(t *testing.T) {
	w := []float64{0.1, 0.2, 0.3, -0.4, 0.5, 0.6, -0.7, 0.8, 0.9, -1.0, 1.1, 1.2}
	bias := []float64{0.01, 0.02, 0.03, 0.04, 0.05, 0.06}
	for _, tc := range []struct {
		name string
		bias bool
		want []float64
	}{
		{"bias", true, []float64{0.0729810437431051, 0.23927057047966607}},
		{"no bias", false, []float64{0.050404300108961256, 0.20609536165864564}},
	} {
		g := &models.GRUODE[float64]{WeightHH: autograd.NewParam("weight_hh", tensor.FromSlice(slices.Clone(w), 6, 2))}
		if tc.bias {
			g.BiasHH = autograd.NewParam("bias_hh", tensor.FromSlice(slices.Clone(bias), 6))
		}
		tp := tape64()
		// Two rows: the same state twice, so rows are seen to be separate.
		dh := g.Eval(tp, 0.7, tp.Const(tensor.FromSlice([]float64{0.3, -0.5, 0.3, -0.5}, 2, 2)))
		want := append(slices.Clone(tc.want), tc.want...)
		if diff := cmp.Diff(want, dh.Value().Data(), cmpopts.EquateApprox(0, 1e-14)); diff != "" {
			t.Errorf("%s: dh/dt (-want +got):\n%s", tc.name, diff)
		}
		if got := len(g.Params()); got != map[bool]int{true: 2, false: 1}[tc.bias] {
			t.Errorf("%s: %d params", tc.name, got)
		}
	}
}

// TestNewGRUODE checks the names, shapes and PyTorch's initialisation
// bound ±1/√H.
func TestNewGRUODE(t *testing.T) {
	g := models.NewGRUODE[float64](rand.New(rand.NewPCG(1, 1)), 4)
	type ps struct {
		Name  string
		Shape []int
	}
	var got []ps
	for _, p := range g.Params() {
		got = append(got, ps{p.Name, p.Value.Shape()})
		lo, hi := slices.Min(p.Value.Data()), slices.Max(p.Value.Data())
		if lo < -0.5 || hi >= 0.5 || hi-lo < 0.5 {
			t.Errorf("%s in [%g, %g], want spread within ±1/√4", p.Name, lo, hi)
		}
	}
	if diff := cmp.Diff([]ps{{"weight_hh", []int{12, 4}}, {"bias_hh", []int{12}}}, got); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
	if g.Hidden() != 4 {
		t.Errorf("Hidden() = %d", g.Hidden())
	}
	var _ odeblock.ShardableDynamics[float64] = g
}

// TestGRUODEGradients checks a Block over GRUODE dynamics against central
// differences, w.r.t. its parameters and h0, in several gradient modes.
func TestGRUODEGradients(t *testing.T) {
	for _, tc := range []struct {
		mode odeblock.GradMode
		tol  float64
	}{
		{odeblock.Backprop{}, 1e-6},   // the discrete solve's own gradient
		{odeblock.Checkpoint{}, 1e-6}, // the same
		{odeblock.Adjoint{}, 1e-5},    // the continuous adjoint, rk4 backwards
	} {
		rng := rand.New(rand.NewPCG(2, 3))
		g := models.NewGRUODE[float64](rng, 3)
		h0 := autograd.NewParam("h0", tensor.RandN[float64](rng, 0, 1, 2, 3))
		blk := &odeblock.Block[float64]{Dynamics: g, Times: []float64{0, 0.6}, Solver: rk4, Mode: tc.mode}
		f := func(tp *autograd.Tape[float64]) (autograd.Var[float64], error) {
			return blk.Forward(tp, tp.Param(h0))
		}
		rep, err := autograd.CheckGradients(f, append(g.Params(), h0), autograd.GradCheckOptions{RelTol: tc.tol})
		if err != nil {
			t.Fatalf("%v: %v\n%v", tc.mode, err, rep)
		}
		if rep.Checked != 3*3*3+3*3+2*3 {
			t.Errorf("%v: checked %d elements", tc.mode, rep.Checked)
		}
	}
}

// irregular returns a batch of four series of 2 channels at the union
// times {0, 0.3, 0.5, 0.8, 1, 1.2}: at 0.3 and 0.8 some series have no
// observation, series 1 misses a channel at 0.3, and the one observation
// at t = 1 has every channel missing, so nobody is observed then.
func irregular(t *testing.T) *data.SeriesBatch[float64] {
	t.Helper()
	b, err := data.NewSeriesBatch[float64]([]data.Series{
		{Times: []float64{0, 0.5, 1.2}, Values: []float64{0.1, -0.2, 0.3, 0.4, -0.5, 0.6}, C: 2},
		{Times: []float64{0, 0.3, 1.2}, Values: []float64{-0.7, 0.8, 0.9, 0, 1.0, -1.1},
			Mask: []bool{true, true, true, false, true, true}, C: 2},
		{Times: []float64{0.5, 0.8}, Values: []float64{1.2, 0.2, -0.4, 0.5}, C: 2},
		{Times: []float64{0.3, 0.8, 1}, Values: []float64{0.6, 0.1, -0.3, -0.9, 0, 0},
			Mask: []bool{true, true, true, true, false, false}, C: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{0, 0.3, 0.5, 0.8, 1, 1.2}; !slices.Equal(b.Times, want) {
		t.Fatalf("union times %v, want %v", b.Times, want)
	}
	return b
}

// observed[j][s]: series s of irregular has an observation at Times[j].
var observed = [][]bool{
	{true, true, false, false},
	{false, true, false, true},
	{true, false, true, false},
	{false, false, true, true},
	{false, false, false, false},
	{true, true, false, false},
}

// handODERNN is the ODE-RNN written out: a Block per interval, the cell's
// input built with ops, the mask blending h + m ⊙ (h' − h) as torchdiffeq's
// latent ODE example does. It returns the states after and before each
// update, indexed by time.
func handODERNN(t *testing.T, tp *autograd.Tape[float64], cell models.Cell[float64], blk odeblock.Block[float64], b *data.SeriesBatch[float64], h autograd.Var[float64], backwards bool) (after, before []autograd.Var[float64]) {
	t.Helper()
	nt := len(b.Times)
	after, before = make([]autograd.Var[float64], nt), make([]autograd.Var[float64], nt)
	vals, mask := tp.Const(b.Values), tp.Const(b.Mask)
	prev := -1
	for k := range nt {
		j := k
		if backwards {
			j = nt - 1 - k
		}
		if prev >= 0 {
			blk.Times = []float64{b.Times[prev], b.Times[j]}
			var err error
			if h, err = blk.Forward(tp, h); err != nil {
				t.Fatal(err)
			}
		}
		before[j] = h
		x := autograd.Concat(1, autograd.Select(vals, 1, j), autograd.Select(mask, 1, j))
		hn := cell.Step(tp, x, h)
		m := tensor.New[float64](b.Len(), 1)
		for s := range b.Len() {
			if observed[j][s] {
				m.Set(1, s, 0)
			}
		}
		h = autograd.Add(h, autograd.Mul(tp.Const(m), autograd.Sub(hn, h)))
		after[j] = h
		prev = j
	}
	return after, before
}

func values(vs []autograd.Var[float64]) [][]float64 {
	out := make([][]float64, len(vs))
	for i, v := range vs {
		out[i] = slices.Clone(v.Value().Data())
	}
	return out
}

// split returns the rows of a [T, B, H] Var, one slice per time.
func split(v autograd.Var[float64]) [][]float64 {
	n := v.Shape()[0]
	d, out := v.Value().Data(), make([][]float64, n)
	for i := range n {
		out[i] = slices.Clone(d[i*len(d)/n : (i+1)*len(d)/n])
	}
	return out
}

// TestODERNNMatchesLoop compares Run with the loop written out, forwards
// and backwards, over GRUODE and an MLP field.
func TestODERNNMatchesLoop(t *testing.T) {
	b := irregular(t)
	for _, backwards := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(4, 5))
		cell := layers.NewGRUCell[float64](rng, 4, 3)
		mlp := layers.NewSequential[float64]().Add("fc1", layers.NewLinear[float64](rng, 3, 8)).Add("act", layers.Tanh[float64]{}).
			Add("fc2", layers.NewLinear[float64](rng, 8, 3))
		for _, dyn := range []odeblock.Dynamics[float64]{models.NewGRUODE[float64](rng, 3), &odeblock.NODE[float64]{F: mlp}} {
			h0 := tensor.RandN[float64](rng, 0, 1, 4, 3)
			m := &models.ODERNN[float64]{Cell: cell, ODE: &odeblock.Block[float64]{Dynamics: dyn, Solver: rk4}}
			tp := tape64()
			out, err := m.Run(tp, b, tp.Const(h0), backwards)
			if err != nil {
				t.Fatal(err)
			}
			after, before := handODERNN(t, tp, cell, odeblock.Block[float64]{Dynamics: dyn, Solver: rk4}, b, tp.Const(h0), backwards)
			if got := out.States.Shape(); !slices.Equal(got, []int{6, 4, 3}) {
				t.Fatalf("States of shape %v", got)
			}
			opt := cmpopts.EquateApprox(0, 1e-12)
			if diff := cmp.Diff(values(after), split(out.States), opt); diff != "" {
				t.Errorf("backwards %v, %T: States (-loop +Run):\n%s", backwards, dyn, diff)
			}
			if diff := cmp.Diff(values(before), split(out.Before), opt); diff != "" {
				t.Errorf("backwards %v, %T: Before (-loop +Run):\n%s", backwards, dyn, diff)
			}
			last := after[len(after)-1]
			if backwards {
				last = after[0]
				// The latent ODE's encoder starts at the last time.
				if diff := cmp.Diff(h0.Data(), before[5].Value().Data()); diff != "" {
					t.Errorf("backwards: Before at the last time is not h0:\n%s", diff)
				}
			}
			if diff := cmp.Diff(last.Value().Data(), out.Last.Value().Data(), opt); diff != "" {
				t.Errorf("backwards %v, %T: Last (-loop +Run):\n%s", backwards, dyn, diff)
			}
			if got, want := len(m.Params()), len(cell.Params())+len(dyn.Params()); got != want {
				t.Errorf("%d params, want %d", got, want)
			}
		}
	}
}

// TestODERNNMask: a series with no observation at a time keeps its state
// through the update (exactly), one with an observation does not; with
// nobody observed (t = 1) the state passes unchanged.
func TestODERNNMask(t *testing.T) {
	b := irregular(t)
	rng := rand.New(rand.NewPCG(6, 7))
	for _, backwards := range []bool{false, true} {
		m := &models.ODERNN[float64]{Cell: layers.NewGRUCell[float64](rng, 4, 3),
			ODE: &odeblock.Block[float64]{Dynamics: models.NewGRUODE[float64](rng, 3), Solver: rk4}}
		tp := tape64()
		out, err := m.Run(tp, b, autograd.Var[float64]{}, backwards) // zero h0
		if err != nil {
			t.Fatal(err)
		}
		first := 0
		if backwards {
			first = 5
		}
		if got := out.Before.Value().Slice(first, first+1).Data(); slices.Max(got) != 0 || slices.Min(got) != 0 {
			t.Errorf("backwards %v: zero h0 gave %v", backwards, got)
		}
		after, before := out.States.Value(), out.Before.Value()
		for j, row := range observed {
			for s, seen := range row {
				a := after.Slice(j, j+1).Data()[s*3 : s*3+3]
				p := before.Slice(j, j+1).Data()[s*3 : s*3+3]
				if kept := slices.Equal(a, p); kept == seen {
					t.Errorf("backwards %v: series %d at t=%g (observed %v): after %v, before %v", backwards, s, b.Times[j], seen, a, p)
				}
			}
		}
	}
}

// TestODERNNValuesOnly: with ValuesOnly the cell sees the values alone,
// and the mask still selects.
func TestODERNNValuesOnly(t *testing.T) {
	b := irregular(t)
	rng := rand.New(rand.NewPCG(8, 9))
	cell := layers.NewRNNCell[float64](rng, 2, 3, layers.RNNTanh)
	dyn := models.NewGRUODE[float64](rng, 3)
	m := &models.ODERNN[float64]{Cell: cell, ODE: &odeblock.Block[float64]{Dynamics: dyn, Solver: rk4}, ValuesOnly: true}
	tp := tape64()
	out, err := m.Run(tp, b, autograd.Var[float64]{}, false)
	if err != nil {
		t.Fatal(err)
	}
	// By hand up to t = 0.3: the cell on the values at 0 for series 0 and
	// 1, zeros for 2 and 3; then a solve to 0.3 and the cell on series 1
	// and 3 only.
	h := tp.Const(tensor.New[float64](4, 3))
	x0 := tp.Const(tensor.FromSlice([]float64{0.1, -0.2, -0.7, 0.8, 0, 0, 0, 0}, 4, 2))
	h1 := cell.Step(tp, x0, h)
	keep := tensor.FromSlice([]float64{1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0}, 4, 3)
	h1 = autograd.Where(keep, h1, h)
	blk := &odeblock.Block[float64]{Dynamics: dyn, Solver: rk4, Times: []float64{0, 0.3}}
	h2, err := blk.Forward(tp, h1)
	if err != nil {
		t.Fatal(err)
	}
	x1 := tp.Const(tensor.FromSlice([]float64{0, 0, 0.9, 0, 0, 0, 0.6, 0.1}, 4, 2))
	keep = tensor.FromSlice([]float64{0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1}, 4, 3)
	h3 := autograd.Where(keep, cell.Step(tp, x1, h2), h2)
	got := split(out.States)[:2]
	if diff := cmp.Diff(values([]autograd.Var[float64]{h1, h3}), got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("States at 0 and 0.3 (-hand +Run):\n%s", diff)
	}
}

// TestODERNNGradients checks the gradients of Run w.r.t. the cell's and
// the dynamics' parameters and h0 against central differences.
func TestODERNNGradients(t *testing.T) {
	b := irregular(t)
	for _, tc := range []struct {
		name      string
		mode      odeblock.GradMode
		mlp       bool
		backwards bool
		tol       float64
	}{
		{"GRUODE backprop", odeblock.Backprop{}, false, false, 1e-6},
		{"GRUODE adjoint", odeblock.Adjoint{}, false, false, 1e-5},
		{"GRUODE adjoint backwards", odeblock.Adjoint{}, false, true, 1e-5},
		{"MLP checkpoint backwards", odeblock.Checkpoint{}, true, true, 1e-6},
	} {
		rng := rand.New(rand.NewPCG(10, 11))
		cell := layers.NewGRUCell[float64](rng, 4, 2)
		var dyn odeblock.Dynamics[float64] = models.NewGRUODE[float64](rng, 2)
		if tc.mlp {
			dyn = &odeblock.NODE[float64]{F: layers.NewSequential[float64]().Add("fc1", layers.NewLinear[float64](rng, 2, 4)).
				Add("act", layers.Tanh[float64]{}).Add("fc2", layers.NewLinear[float64](rng, 4, 2))}
		}
		m := &models.ODERNN[float64]{Cell: cell, ODE: &odeblock.Block[float64]{Dynamics: dyn, Solver: rk4, Mode: tc.mode}}
		h0 := autograd.NewParam("h0", tensor.RandN[float64](rng, 0, 1, 4, 2))
		f := func(tp *autograd.Tape[float64]) (autograd.Var[float64], error) {
			out, err := m.Run(tp, b, tp.Param(h0), tc.backwards)
			if err != nil {
				return autograd.Var[float64]{}, err
			}
			// Every state, before and after the updates, and the last.
			return autograd.Concat(0, autograd.Reshape(out.States, -1), autograd.Reshape(out.Before, -1), autograd.Reshape(out.Last, -1)), nil
		}
		rep, err := autograd.CheckGradients(f, append(m.Params(), h0), autograd.GradCheckOptions{RelTol: tc.tol})
		if err != nil {
			t.Fatalf("%s: %v\n%v", tc.name, err, rep)
		}
		if rep.Checked < 50 {
			t.Errorf("%s: checked %d elements", tc.name, rep.Checked)
		}
	}
}

// hiddenCell hides a GRUCell's type, so that ODERNN cannot read its input
// size and the cell's own shape panic must come back as an error.
type hiddenCell struct{ *layers.GRUCell[float64] }

// TestODERNNErrors: bad input is an error naming the shapes, not a panic.
func TestODERNNErrors(t *testing.T) {
	b := irregular(t)
	rng := rand.New(rand.NewPCG(12, 13))
	ok := func() *models.ODERNN[float64] {
		return &models.ODERNN[float64]{Cell: layers.NewGRUCell[float64](rng, 4, 3),
			ODE: &odeblock.Block[float64]{Dynamics: models.NewGRUODE[float64](rng, 3), Solver: rk4}}
	}
	repeated := *b
	repeated.Times = []float64{0, 0.3, 0.5, 0.5, 1, 1.2}
	decreasing := *b
	decreasing.Times = []float64{0, 0.3, 0.5, 0.8, 1.3, 1.2}
	short := *b
	short.Times = b.Times[:5]
	badMask := *b
	badMask.Mask = tensor.New[float64](4, 6, 3)
	for _, tc := range []struct {
		name  string
		m     *models.ODERNN[float64]
		b     *data.SeriesBatch[float64]
		h0    *tensor.Tensor[float64]
		wants []string
	}{
		{"h0 hidden", ok(), b, tensor.New[float64](4, 5), []string{"[4 5]", "[4, 3]"}},
		{"h0 batch", ok(), b, tensor.New[float64](3, 3), []string{"[3 3]", "[4, 3]", "[4 6 2]"}},
		{"h0 rank", ok(), b, tensor.New[float64](12), []string{"[12]", "[4, 3]"}},
		{"cell input", &models.ODERNN[float64]{Cell: layers.NewGRUCell[float64](rng, 2, 3),
			ODE: &odeblock.Block[float64]{Dynamics: models.NewGRUODE[float64](rng, 3), Solver: rk4}}, b, nil,
			[]string{"[9 2]", "[4 6 2]", "input size is 2", "give 4"}},
		{"values only", &models.ODERNN[float64]{Cell: layers.NewGRUCell[float64](rng, 4, 3), ValuesOnly: true,
			ODE: &odeblock.Block[float64]{Dynamics: models.NewGRUODE[float64](rng, 3), Solver: rk4}}, b, nil,
			[]string{"[9 4]", "[4 6 2]", "give 2"}},
		{"hidden cell", &models.ODERNN[float64]{Cell: hiddenCell{layers.NewGRUCell[float64](rng, 3, 3)},
			ODE: &odeblock.Block[float64]{Dynamics: models.NewGRUODE[float64](rng, 3), Solver: rk4}}, b, nil,
			[]string{"GRUCell", "[4 4]", "[B, 3]"}},
		{"GRUODE size", &models.ODERNN[float64]{Cell: layers.NewGRUCell[float64](rng, 4, 3),
			ODE: &odeblock.Block[float64]{Dynamics: models.NewGRUODE[float64](rng, 2), Solver: rk4}}, b, nil,
			[]string{"[6 2]", "GRUODE's hidden size is 2", "cell's 3"}},
		{"repeated time", ok(), &repeated, nil, []string{"strictly increasing", "Times[3] = 0.5"}},
		{"decreasing time", ok(), &decreasing, nil, []string{"strictly increasing", "Times[5] = 1.2"}},
		{"times vs values", ok(), &short, nil, []string{"[4 6 2]", "5 times"}},
		{"mask vs values", ok(), &badMask, nil, []string{"[4 6 3]", "[4 6 2]"}},
		{"no cell", &models.ODERNN[float64]{ODE: &odeblock.Block[float64]{Dynamics: models.NewGRUODE[float64](rng, 3)}}, b, nil, []string{"no Cell"}},
		{"no block", &models.ODERNN[float64]{Cell: layers.NewGRUCell[float64](rng, 4, 3)}, b, nil, []string{"no ODE"}},
		{"no batch", ok(), nil, nil, []string{"batch"}},
	} {
		tp := tape64()
		var h0 autograd.Var[float64]
		if tc.h0 != nil {
			h0 = tp.Const(tc.h0)
		}
		_, err := tc.m.Run(tp, tc.b, h0, false)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		for _, w := range tc.wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not name %q", tc.name, err, w)
			}
		}
	}
	// A failed solve comes back wrapped, naming the interval.
	m := ok()
	m.ODE.Solver = odeblock.Options{Method: "no such method"}
	_, err := m.Run(tape64(), b, autograd.Var[float64]{}, true)
	if err == nil || !strings.Contains(err.Error(), "from t=1.2 to t=1") {
		t.Errorf("bad solver: error %v", err)
	}
	var se *tensor.ShapeError
	if errors.As(err, &se) {
		t.Errorf("bad solver: a shape error %v", err)
	}
}

// countingCell is a GRUCell that counts its steps.
type countingCell struct {
	*layers.GRUCell[float64]
	steps *int
}

func (c countingCell) Step(tp *autograd.Tape[float64], x, h autograd.Var[float64]) autograd.Var[float64] {
	*c.steps++
	return c.GRUCell.Step(tp, x, h)
}

// TestODERNNSkipsUnobservedTimes: at a union time where no series has an
// observation (t = 1 in irregular: series 3's channels are all masked) the
// cell is not called: five steps for six times.
func TestODERNNSkipsUnobservedTimes(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 15))
	var steps int
	m := &models.ODERNN[float64]{Cell: countingCell{layers.NewGRUCell[float64](rng, 4, 3), &steps},
		ODE: &odeblock.Block[float64]{Dynamics: models.NewGRUODE[float64](rng, 3), Solver: rk4}}
	if _, err := m.Run(tape64(), irregular(t), autograd.Var[float64]{}, false); err != nil {
		t.Fatal(err)
	}
	if steps != 5 {
		t.Errorf("the cell took %d steps for 6 times, one unobserved: want 5", steps)
	}
}

// TestGRUODEEvalShape: a state of the wrong width or rank panics with a
// *tensor.ShapeError of the GRU-ODE's own, naming the shapes.
func TestGRUODEEvalShape(t *testing.T) {
	g := models.NewGRUODE[float64](rand.New(rand.NewPCG(16, 17)), 3)
	for _, shape := range [][]int{{2, 4}, {2, 3, 1}} {
		func() {
			defer func() {
				se, ok := recover().(*tensor.ShapeError)
				if !ok || se.Op != "models.GRUODE" || !strings.Contains(se.Error(), fmt.Sprint(shape)) {
					t.Errorf("state %v: panic %v, want the GRU-ODE's ShapeError naming it", shape, se)
				}
			}()
			tp := tape64()
			g.Eval(tp, 0, tp.Const(tensor.New[float64](shape...)))
		}()
	}
}
