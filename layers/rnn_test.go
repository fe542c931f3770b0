package layers_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/tensor"
)

// rnnTensor is a tensor of rnn_torch.json: its shape and its row-major
// data.
type rnnTensor struct {
	Shape []int
	Data  []float64
}

// rnnCase is one cell of rnn_torch.json (see gen_rnn.py).
type rnnCase struct {
	Params    map[string]rnnTensor
	X, H0, C0 rnnTensor
	H, C      []rnnTensor
	Loss      float64
	Grad      map[string]rnnTensor
}

// rnnTorch is testdata/rnn_torch.json, written by gen_rnn.py with PyTorch.
type rnnTorch struct {
	StateDictKeys []string `json:"state_dict_keys"`
	RNNTanh       rnnCase  `json:"rnn_tanh"`
	RNNReLU       rnnCase  `json:"rnn_relu"`
	GRU           rnnCase
	LSTM          rnnCase
}

func readRNNTorch(t *testing.T) *rnnTorch {
	t.Helper()
	raw, err := os.ReadFile("testdata/rnn_torch.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref rnnTorch
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	return &ref
}

// cell is any of the three cells as one function of a step: h and c in,
// h' and c' out (c unused but by the LSTM).
type cell[T tensor.Float] struct {
	params func() []*autograd.Param[T]
	step   func(tp *autograd.Tape[T], x, h, c autograd.Var[T]) (autograd.Var[T], autograd.Var[T])
	lstm   bool
}

func rnnCell[T tensor.Float](c *layers.RNNCell[T]) cell[T] {
	return cell[T]{params: c.Params, step: func(tp *autograd.Tape[T], x, h, _ autograd.Var[T]) (autograd.Var[T], autograd.Var[T]) {
		return c.Step(tp, x, h), autograd.Var[T]{}
	}}
}

func gruCell[T tensor.Float](c *layers.GRUCell[T]) cell[T] {
	return cell[T]{params: c.Params, step: func(tp *autograd.Tape[T], x, h, _ autograd.Var[T]) (autograd.Var[T], autograd.Var[T]) {
		return c.Step(tp, x, h), autograd.Var[T]{}
	}}
}

func lstmCell[T tensor.Float](c *layers.LSTMCell[T]) cell[T] {
	return cell[T]{params: c.Params, step: c.Step, lstm: true}
}

// unroll records steps of c over x [S, B, In] from h0 (and c0), returning
// the states after each step and the loss Σ h_S² (+ Σ c_S² for the LSTM),
// gen_rnn.py's.
func unroll[T tensor.Float](tp *autograd.Tape[T], c cell[T], x, h0, c0 autograd.Var[T]) (hs, cs []autograd.Var[T], loss autograd.Var[T]) {
	sh := x.Shape()
	h, cc := h0, c0
	for s := range sh[0] {
		xs := autograd.Reshape(autograd.Narrow(x, 0, s, 1), sh[1], sh[2])
		h, cc = c.step(tp, xs, h, cc)
		hs = append(hs, h)
		cs = append(cs, cc)
	}
	loss = autograd.Sum(autograd.Square(h))
	if c.lstm {
		loss = autograd.Add(loss, autograd.Sum(autograd.Square(cc)))
	}
	return hs, cs, loss
}

// newParam returns a parameter called name holding a copy of r.
func newParam(name string, r rnnTensor) *autograd.Param[float64] {
	return autograd.NewParam(name, tensor.FromSlice(slices.Clone(r.Data), r.Shape...))
}

// TestRNNCellsMatchPyTorch: each cell, loaded with a PyTorch cell's
// weights by their state_dict names, gives PyTorch's states over three
// steps and PyTorch's gradients of the loss with respect to every
// parameter, the inputs and the initial states, in float64.
func TestRNNCellsMatchPyTorch(t *testing.T) {
	ref := readRNNTorch(t)
	rng := rand.New(rand.NewPCG(32, 2))
	cases := []struct {
		name string
		ref  *rnnCase
		cell cell[float64]
	}{
		{"RNNCell/tanh", &ref.RNNTanh, rnnCell(layers.NewRNNCell[float64](rng, 3, 4, layers.RNNTanh))},
		{"RNNCell/relu", &ref.RNNReLU, rnnCell(layers.NewRNNCell[float64](rng, 3, 4, layers.RNNReLU))},
		{"GRUCell", &ref.GRU, gruCell(layers.NewGRUCell[float64](rng, 3, 4))},
		{"LSTMCell", &ref.LSTM, lstmCell(layers.NewLSTMCell[float64](rng, 3, 4))},
	}
	approx := cmpopts.EquateApprox(1e-12, 1e-12)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps := c.cell.params()
			var names []string
			for _, p := range ps {
				names = append(names, p.Name)
				w, ok := c.ref.Params[p.Name]
				if !ok {
					t.Fatalf("PyTorch has no parameter %q", p.Name)
				}
				if !slices.Equal(p.Value.Shape(), w.Shape) {
					t.Fatalf("%s: shape %v, PyTorch %v", p.Name, p.Value.Shape(), w.Shape)
				}
				copy(p.Value.Data(), w.Data)
				p.ZeroGrad()
			}
			if len(names) != len(c.ref.Params) {
				t.Fatalf("parameters %v, PyTorch has %d", names, len(c.ref.Params))
			}
			x, h0 := newParam("x", c.ref.X), newParam("h0", c.ref.H0)
			inputs := []*autograd.Param[float64]{x, h0}
			tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
			var c0 autograd.Var[float64]
			if c.cell.lstm {
				p := newParam("c0", c.ref.C0)
				inputs = append(inputs, p)
				c0 = tp.Param(p)
			}
			hs, cs, loss := unroll(tp, c.cell, tp.Param(x), tp.Param(h0), c0)
			for s, h := range hs {
				if diff := cmp.Diff(c.ref.H[s].Data, h.Value().Data(), approx); diff != "" {
					t.Errorf("h after step %d (-PyTorch +got):\n%s", s+1, diff)
				}
				if c.cell.lstm {
					if diff := cmp.Diff(c.ref.C[s].Data, cs[s].Value().Data(), approx); diff != "" {
						t.Errorf("c after step %d (-PyTorch +got):\n%s", s+1, diff)
					}
				}
			}
			if diff := cmp.Diff(c.ref.Loss, loss.Item(), approx); diff != "" {
				t.Errorf("loss (-PyTorch +got):\n%s", diff)
			}
			if err := tp.Backward(loss); err != nil {
				t.Fatal(err)
			}
			for _, p := range append(ps, inputs...) {
				if diff := cmp.Diff(c.ref.Grad[p.Name].Data, p.Grad.Data(), approx); diff != "" {
					t.Errorf("∂loss/∂%s (-PyTorch +got):\n%s", p.Name, diff)
				}
			}
		})
	}
}

// TestRNNCellGradients checks each cell's gradients with respect to its
// parameters, the inputs and the initial states against central
// differences, over three steps, in float64.
func TestRNNCellGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 3))
	const in, hidden, batch, steps = 3, 5, 2, 3
	cases := []struct {
		name string
		cell cell[float64]
	}{
		{"RNNCell/tanh", rnnCell(layers.NewRNNCell[float64](rng, in, hidden, layers.RNNTanh))},
		{"RNNCell/relu", rnnCell(layers.NewRNNCell[float64](rng, in, hidden, layers.RNNReLU))},
		{"GRUCell", gruCell(layers.NewGRUCell[float64](rng, in, hidden))},
		{"LSTMCell", lstmCell(layers.NewLSTMCell[float64](rng, in, hidden))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := autograd.NewParam("x", tensor.RandN[float64](rng, 0, 1.5, steps, batch, in))
			h0 := autograd.NewParam("h0", tensor.RandN[float64](rng, 0, 1, batch, hidden))
			c0 := autograd.NewParam("c0", tensor.RandN[float64](rng, 0, 1, batch, hidden))
			ps := append(c.cell.params(), x, h0)
			if c.cell.lstm {
				ps = append(ps, c0)
			}
			loss := func(tp *autograd.Tape[float64]) autograd.Var[float64] {
				var cv autograd.Var[float64]
				if c.cell.lstm {
					cv = tp.Param(c0)
				}
				_, _, l := unroll(tp, c.cell, tp.Param(x), tp.Param(h0), cv)
				return l
			}
			if rep, err := autograd.CheckGradients(loss, ps, autograd.GradCheckOptions{Step: 1e-6, AbsTol: 1e-7, RelTol: 1e-6}); err != nil {
				t.Fatalf("%v\n%v", err, rep)
			}
		})
	}
}

// TestRNNCellZeroState: a zero Var state is zeros (PyTorch's hx=None), for
// h and for the LSTM's c.
func TestRNNCellZeroState(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 4))
	x := tensor.RandN[float64](rng, 0, 1, 2, 3)
	for _, c := range []cell[float64]{
		rnnCell(layers.NewRNNCell[float64](rng, 3, 4, layers.RNNTanh)),
		gruCell(layers.NewGRUCell[float64](rng, 3, 4)),
		lstmCell(layers.NewLSTMCell[float64](rng, 3, 4)),
	} {
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
		zeros := tp.Const(tensor.New[float64](2, 4))
		h1, c1 := c.step(tp, tp.Const(x), autograd.Var[float64]{}, autograd.Var[float64]{})
		h2, c2 := c.step(tp, tp.Const(x), zeros, zeros)
		if diff := cmp.Diff(h2.Value().Data(), h1.Value().Data()); diff != "" {
			t.Errorf("%s: h' from a zero Var state differs from zeros' (-zeros +zero Var):\n%s", c.params()[0].Name, diff)
		}
		if c.lstm {
			if diff := cmp.Diff(c2.Value().Data(), c1.Value().Data()); diff != "" {
				t.Errorf("LSTM: c' from a zero Var state differs from zeros' (-zeros +zero Var):\n%s", diff)
			}
		}
	}
}

// The cells list their parameters as modules do: Prefix names them, and
// checkpoints and optimizers take them.
var (
	_ layers.HasParams[float64] = (*layers.RNNCell[float64])(nil)
	_ layers.HasParams[float64] = (*layers.GRUCell[float64])(nil)
	_ layers.HasParams[float32] = (*layers.LSTMCell[float32])(nil)
)

// TestRNNCellNoBias: cells without biases (PyTorch's bias=False: BiasIH
// and BiasHH nil) list weight_ih and weight_hh only, and compute what zero
// biases give.
func TestRNNCellNoBias(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 5))
	x, h0 := tensor.RandN[float64](rng, 0, 1, 2, 3), tensor.RandN[float64](rng, 0, 1, 2, 4)
	r, g, l := layers.NewRNNCell[float64](rng, 3, 4, layers.RNNTanh), layers.NewGRUCell[float64](rng, 3, 4), layers.NewLSTMCell[float64](rng, 3, 4)
	with := []cell[float64]{rnnCell(r), gruCell(g), lstmCell(l)}
	run := func() [][]float64 {
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
		var out [][]float64
		for _, c := range with {
			h, cc := c.step(tp, tp.Const(x), tp.Const(h0), tp.Const(h0))
			out = append(out, slices.Clone(h.Value().Data()))
			if c.lstm {
				out = append(out, slices.Clone(cc.Value().Data()))
			}
		}
		return out
	}
	for _, c := range with {
		for _, p := range c.params()[2:] {
			p.Value.Zero()
		}
	}
	want := run()
	r.BiasIH, r.BiasHH, g.BiasIH, g.BiasHH, l.BiasIH, l.BiasHH = nil, nil, nil, nil, nil, nil
	for _, c := range with {
		var names []string
		for _, p := range c.params() {
			names = append(names, p.Name)
		}
		if diff := cmp.Diff([]string{"weight_ih", "weight_hh"}, names); diff != "" {
			t.Errorf("parameters without biases (-want +got):\n%s", diff)
		}
	}
	if diff := cmp.Diff(want, run()); diff != "" {
		t.Errorf("without biases (-zero biases +none):\n%s", diff)
	}
}

// TestRNNCellInit: every parameter is drawn uniformly within ±1/√H, in
// the order weight_ih, weight_hh, bias_ih, bias_hh, as PyTorch's
// reset_parameters, with PyTorch's shapes.
func TestRNNCellInit(t *testing.T) {
	const in, hidden = 5, 16
	bound := 1 / math.Sqrt(hidden)
	for _, tc := range []struct {
		name  string
		gates int
		new   func(rng *rand.Rand) []*autograd.Param[float64]
	}{
		{"RNNCell", 1, func(rng *rand.Rand) []*autograd.Param[float64] {
			return layers.NewRNNCell[float64](rng, in, hidden, layers.RNNReLU).Params()
		}},
		{"GRUCell", 3, func(rng *rand.Rand) []*autograd.Param[float64] {
			return layers.NewGRUCell[float64](rng, in, hidden).Params()
		}},
		{"LSTMCell", 4, func(rng *rand.Rand) []*autograd.Param[float64] {
			return layers.NewLSTMCell[float64](rng, in, hidden).Params()
		}},
	} {
		ps := tc.new(rand.New(rand.NewPCG(7, 7)))
		g := tc.gates * hidden
		wantShapes := [][]int{{g, in}, {g, hidden}, {g}, {g}}
		want := rand.New(rand.NewPCG(7, 7))
		for i, p := range ps {
			if !slices.Equal(p.Value.Shape(), wantShapes[i]) {
				t.Errorf("%s %s: shape %v, want %v", tc.name, p.Name, p.Value.Shape(), wantShapes[i])
			}
			u := layers.Uniform(want, tensor.New[float64](wantShapes[i]...), -bound, bound)
			if diff := cmp.Diff(u.Data(), p.Value.Data()); diff != "" {
				t.Errorf("%s %s: not U(−1/√H, 1/√H) drawn in PyTorch's order (-want +got):\n%s", tc.name, p.Name, diff)
			}
			lo, hi := slices.Min(p.Value.Data()), slices.Max(p.Value.Data())
			if lo < -bound || hi > bound || hi-lo < bound {
				t.Errorf("%s %s: values in [%v, %v], want spread over ±%v", tc.name, p.Name, lo, hi, bound)
			}
		}
	}
}

// TestRNNCellSafetensors: prefixed as in a PyTorch ModuleDict, the cells'
// parameter names are PyTorch's state_dict keys; saved as safetensors they
// load back by name into fresh cells, in float64 and in float32.
func TestRNNCellSafetensors(t *testing.T) {
	ref := readRNNTorch(t)
	model := func(rng *rand.Rand) []*autograd.Param[float64] {
		r, g, l := layers.NewRNNCell[float64](rng, 3, 4, layers.RNNTanh), layers.NewGRUCell[float64](rng, 3, 4), layers.NewLSTMCell[float64](rng, 3, 4)
		layers.Prefix[float64]("rnn", r)
		layers.Prefix[float64]("gru", g)
		layers.Prefix[float64]("lstm", l)
		return slices.Concat(r.Params(), g.Params(), l.Params())
	}
	ps := model(rand.New(rand.NewPCG(1, 1)))
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff(ref.StateDictKeys, names); diff != "" {
		t.Errorf("names differ from PyTorch's state_dict keys (-PyTorch +got):\n%s", diff)
	}
	path := filepath.Join(t.TempDir(), "cells.safetensors")
	if err := layers.SaveParams(path, ps, nil); err != nil {
		t.Fatal(err)
	}
	fresh := model(rand.New(rand.NewPCG(2, 2)))
	if _, err := layers.LoadParams(path, fresh); err != nil {
		t.Fatal(err)
	}
	for i, p := range fresh {
		if diff := cmp.Diff(ps[i].Value.Data(), p.Value.Data()); diff != "" {
			t.Errorf("%s not restored (-saved +loaded):\n%s", p.Name, diff)
		}
	}
	rng := rand.New(rand.NewPCG(3, 3))
	r, g, l := layers.NewRNNCell[float32](rng, 3, 4, layers.RNNTanh), layers.NewGRUCell[float32](rng, 3, 4), layers.NewLSTMCell[float32](rng, 3, 4)
	layers.Prefix[float32]("rnn", r)
	layers.Prefix[float32]("gru", g)
	layers.Prefix[float32]("lstm", l)
	f32 := slices.Concat(r.Params(), g.Params(), l.Params())
	if _, err := layers.LoadParams(path, f32); err != nil {
		t.Fatal(err)
	}
	for i, p := range f32 {
		for j, v := range p.Value.Data() {
			if v != float32(ps[i].Value.Data()[j]) {
				t.Fatalf("float32 %s[%d] = %v, saved %v", p.Name, j, v, ps[i].Value.Data()[j])
			}
		}
	}
}

// TestRNNCellLoadsTorchSafetensors: the state_dict of PyTorch's cells
// (gen_rnn.py's ModuleDict of rnn, gru and lstm, as a safetensors file)
// loads by name into cells prefixed the same, giving the weights of the
// reference cells of rnn_torch.json; into float32 cells too, rounded.
func TestRNNCellLoadsTorchSafetensors(t *testing.T) {
	ref := readRNNTorch(t)
	const path = "testdata/rnn_torch.safetensors"
	rng := rand.New(rand.NewPCG(4, 4))
	r, g, l := layers.NewRNNCell[float64](rng, 3, 4, layers.RNNTanh), layers.NewGRUCell[float64](rng, 3, 4), layers.NewLSTMCell[float64](rng, 3, 4)
	layers.Prefix[float64]("rnn", r)
	layers.Prefix[float64]("gru", g)
	layers.Prefix[float64]("lstm", l)
	meta, err := layers.LoadParams(path, slices.Concat(r.Params(), g.Params(), l.Params()))
	if err != nil {
		t.Fatal(err)
	}
	if meta["format"] != "pt" {
		t.Errorf("metadata %v, want format pt", meta)
	}
	for _, c := range []struct {
		prefix string
		ps     []*autograd.Param[float64]
		ref    *rnnCase
	}{{"rnn.", r.Params(), &ref.RNNTanh}, {"gru.", g.Params(), &ref.GRU}, {"lstm.", l.Params(), &ref.LSTM}} {
		for _, p := range c.ps {
			if diff := cmp.Diff(c.ref.Params[p.Name[len(c.prefix):]].Data, p.Value.Data()); diff != "" {
				t.Errorf("%s (-rnn_torch.json +loaded):\n%s", p.Name, diff)
			}
		}
	}
	g32 := layers.NewGRUCell[float32](rng, 3, 4)
	layers.Prefix[float32]("gru", g32)
	if _, err := layers.LoadCheckpointWith(path, g32.Params(), nil, layers.LoadOptions{IgnoreUnknown: true}); err != nil {
		t.Fatal(err)
	}
	for _, p := range g32.Params() {
		for i, v := range p.Value.Data() {
			if want := float32(ref.GRU.Params[p.Name[len("gru."):]].Data[i]); v != want {
				t.Fatalf("float32 %s[%d] = %v, want %v", p.Name, i, v, want)
			}
		}
	}
}

// TestRNNCellFloat32: in float32 each cell gives its float64 states to
// float32's precision.
func TestRNNCellFloat32(t *testing.T) {
	x64 := tensor.RandN[float64](rand.New(rand.NewPCG(5, 5)), 0, 1, 3, 2, 3)
	x32 := tensor.New[float32](3, 2, 3)
	for i, v := range x64.Data() {
		x32.Data()[i] = float32(v)
	}
	for _, tc := range []struct {
		name string
		c64  cell[float64]
		c32  cell[float32]
	}{
		{"RNNCell", rnnCell(layers.NewRNNCell[float64](rand.New(rand.NewPCG(6, 6)), 3, 4, layers.RNNTanh)), rnnCell(layers.NewRNNCell[float32](rand.New(rand.NewPCG(6, 6)), 3, 4, layers.RNNTanh))},
		{"GRUCell", gruCell(layers.NewGRUCell[float64](rand.New(rand.NewPCG(6, 6)), 3, 4)), gruCell(layers.NewGRUCell[float32](rand.New(rand.NewPCG(6, 6)), 3, 4))},
		{"LSTMCell", lstmCell(layers.NewLSTMCell[float64](rand.New(rand.NewPCG(6, 6)), 3, 4)), lstmCell(layers.NewLSTMCell[float32](rand.New(rand.NewPCG(6, 6)), 3, 4))},
	} {
		tp64 := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
		hs64, _, _ := unroll(tp64, tc.c64, tp64.Const(x64), autograd.Var[float64]{}, autograd.Var[float64]{})
		tp32 := autograd.NewTape(tensor.EngineFor[float32](tensor.Default()))
		hs32, _, _ := unroll(tp32, tc.c32, tp32.Const(x32), autograd.Var[float32]{}, autograd.Var[float32]{})
		got := make([]float64, hs32[2].Len())
		for i, v := range hs32[2].Value().Data() {
			got[i] = float64(v)
		}
		if diff := cmp.Diff(hs64[2].Value().Data(), got, cmpopts.EquateApprox(0, 1e-5)); diff != "" {
			t.Errorf("%s: float32 final state (-float64 +float32):\n%s", tc.name, diff)
		}
	}
}

// TestRNNCellSteadyStateAllocs: a training step of three cell steps (from
// a zero state) on a reused tape allocates nothing once its buffers exist.
func TestRNNCellSteadyStateAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	x := tensor.RandN[float32](rng, 0, 1, 3, 2, 3)
	for _, tc := range []struct {
		name string
		c    cell[float32]
	}{
		{"RNNCell", rnnCell(layers.NewRNNCell[float32](rng, 3, 4, layers.RNNTanh))},
		{"GRUCell", gruCell(layers.NewGRUCell[float32](rng, 3, 4))},
		{"LSTMCell", lstmCell(layers.NewLSTMCell[float32](rng, 3, 4))},
	} {
		tp := autograd.NewTape(tensor.EngineFor[float32](tensor.Default()))
		step := func() {
			tp.Reset()
			xs := tp.Const(x)
			var h, c autograd.Var[float32]
			for s := range 3 {
				h, c = tc.c.step(tp, autograd.Reshape(autograd.Narrow(xs, 0, s, 1), 2, 3), h, c)
			}
			loss := autograd.Sum(autograd.Square(h))
			if tc.c.lstm {
				loss = autograd.Add(loss, autograd.Sum(autograd.Square(c)))
			}
			if err := tp.Backward(loss); err != nil {
				t.Fatal(err)
			}
		}
		step()
		if n := testing.AllocsPerRun(20, step); n != 0 {
			t.Errorf("%s: a step on a reused tape allocates %v times", tc.name, n)
		}
	}
}

// TestRNNCellShapes: an input or a state of the wrong shape, or an unknown
// nonlinearity, panics, with a *tensor.ShapeError for shapes.
func TestRNNCellShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	g := layers.NewGRUCell[float64](rng, 3, 4)
	l := layers.NewLSTMCell[float64](rng, 3, 4)
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	c := func(n ...int) autograd.Var[float64] { return tp.Const(tensor.New[float64](n...)) }
	shapeErr := func(name string, f func()) {
		t.Helper()
		defer func() {
			t.Helper()
			e, _ := recover().(error)
			var se *tensor.ShapeError
			if !errors.As(e, &se) {
				t.Errorf("%s: panicked with %v, want a *tensor.ShapeError", name, e)
			}
		}()
		f()
	}
	shapeErr("input [2, 5]", func() { g.Step(tp, c(2, 5), c(2, 4)) })
	shapeErr("input [3]", func() { g.Step(tp, c(3), c(1, 4)) })
	shapeErr("state [2, 3]", func() { g.Step(tp, c(2, 3), c(2, 3)) })
	shapeErr("state [1, 4] for batch 2", func() { g.Step(tp, c(2, 3), c(1, 4)) })
	shapeErr("cell state [2, 5]", func() { l.Step(tp, c(2, 3), c(2, 4), c(2, 5)) })
	func() {
		defer func() {
			if recover() == nil {
				t.Error("NewRNNCell with nonlinearity sigmoid did not panic")
			}
		}()
		layers.NewRNNCell[float64](rng, 3, 4, "sigmoid")
	}()
}

// A GRU cell run over a short sequence from a zero state: its parameters,
// named as PyTorch's (a GRUCell called "gru" in a PyTorch module has the
// same state_dict keys), and its final state.
func ExampleGRUCell() {
	rng := rand.New(rand.NewPCG(1, 2))
	gru := layers.NewGRUCell[float64](rng, 3, 4)
	layers.Prefix[float64]("gru", gru)
	for _, p := range gru.Params() {
		fmt.Println(p.Name, p.Value.Shape())
	}

	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	var h autograd.Var[float64] // the zero Var: a zero state
	for s := range 3 {
		x := tensor.FromSlice([]float64{float64(s), 1, -1, 0.5, float64(-s), 2}, 2, 3) // [B, In] = [2, 3]
		h = gru.Step(tp, tp.Const(x), h)
	}
	fmt.Println(h.Shape())
	fmt.Printf("%.4f\n", h.Value().Data())
	// Output:
	// gru.weight_ih [12 3]
	// gru.weight_hh [12 4]
	// gru.bias_ih [12]
	// gru.bias_hh [12]
	// [2 4]
	// [0.2559 -0.7466 0.4169 -0.7872 0.7909 0.3107 -0.2970 0.5391]
}
