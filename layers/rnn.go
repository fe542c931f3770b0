package layers

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// Recurrent cells, as PyTorch's nn.RNNCell, nn.GRUCell and nn.LSTMCell:
// the same gate order, parameter names (weight_ih, weight_hh, bias_ih,
// bias_hh, prefixed by the cell's path) and initialisation, so that a
// PyTorch cell's state_dict, saved as safetensors, loads into them with
// LoadParams. A cell is not a Module, having a state as well as an input:
// its Step records one step for a batch, x [B, In] and h [B, H]. Each is
// written with autograd's ops (two Linear calls, Narrow into the gates), so
// its gradient is theirs.

// Nonlinearities of an RNNCell, named as PyTorch's nonlinearity argument.
const (
	RNNTanh = "tanh"
	RNNReLU = "relu"
)

// cellParams returns the four parameters of a cell of the given number of
// gates from in to hidden features, with gates·hidden rows stacked in
// PyTorch's order, initialised as PyTorch's reset_parameters of its
// recurrent cells: every parameter uniform within ±1/√hidden (0 when
// hidden is 0), drawn from rng in the order weight_ih, weight_hh, bias_ih,
// bias_hh.
func cellParams[T tensor.Float](op string, rng *rand.Rand, in, hidden, gates int) (wih, whh, bih, bhh *autograd.Param[T]) {
	if in < 0 || hidden < 0 {
		panic(shapeError(op, "negative size: %d → %d features (weight_hh [%d, %d])", in, hidden, gates*hidden, hidden))
	}
	wih = autograd.NewParam("weight_ih", tensor.New[T](gates*hidden, in))
	whh = autograd.NewParam("weight_hh", tensor.New[T](gates*hidden, hidden))
	bih = autograd.NewParam("bias_ih", tensor.New[T](gates*hidden))
	bhh = autograd.NewParam("bias_hh", tensor.New[T](gates*hidden))
	bound := 0.0
	if hidden > 0 {
		bound = 1 / math.Sqrt(float64(hidden))
	}
	for _, p := range []*autograd.Param[T]{wih, whh, bih, bhh} {
		Uniform(rng, p.Value, -bound, bound)
	}
	return wih, whh, bih, bhh
}

// cellParamList returns weight_ih, weight_hh and the biases present, in
// PyTorch's order.
func cellParamList[T tensor.Float](wih, whh, bih, bhh *autograd.Param[T]) []*autograd.Param[T] {
	ps := []*autograd.Param[T]{wih, whh}
	if bih != nil {
		ps = append(ps, bih)
	}
	if bhh != nil {
		ps = append(ps, bhh)
	}
	return ps
}

// cellGates records x·W_ihᵀ + b_ih and h·W_hhᵀ + b_hh, each [B, G·H],
// checking the shapes of x and h; a zero h is a zero state (returned as
// zeros). hidden is H.
func cellGates[T tensor.Float](op string, tp *autograd.Tape[T], x, h autograd.Var[T], hidden int, wih, whh, bih, bhh *autograd.Param[T]) (gi, gh, state autograd.Var[T]) {
	// Value's Rank and Dim, not Shape, which copies: a step allocates
	// nothing on a reused tape.
	in, xv := wih.Value.Dim(1), x.Value()
	if xv.Rank() != 2 || xv.Dim(1) != in {
		panic(&tensor.ShapeError{Op: "layers." + op, Msg: fmt.Sprintf("input of shape %v, want [B, %d]", xv.Shape(), in)})
	}
	h = stateOrZeros(op, "state", tp, h, xv.Dim(0), hidden)
	gi = autograd.Linear(x, tp.Param(wih), optParam(tp, bih))
	gh = autograd.Linear(h, tp.Param(whh), optParam(tp, bhh))
	return gi, gh, h
}

// stateOrZeros returns h, or zeros [b, hidden] when h is the zero Var; it
// panics if h is not [b, hidden].
func stateOrZeros[T tensor.Float](op, what string, tp *autograd.Tape[T], h autograd.Var[T], b, hidden int) autograd.Var[T] {
	if h.IsZero() {
		return tp.Const(tp.Scratch(b, hidden).Zero())
	}
	if hv := h.Value(); hv.Rank() != 2 || hv.Dim(0) != b || hv.Dim(1) != hidden {
		panic(&tensor.ShapeError{Op: "layers." + op, Msg: fmt.Sprintf("%s of shape %v, want [%d, %d]", what, hv.Shape(), b, hidden)})
	}
	return h
}

// RNNCell is PyTorch's nn.RNNCell, an Elman cell: for x [B, In] and the
// state h [B, H],
//
//	h' = act(x·W_ihᵀ + b_ih + h·W_hhᵀ + b_hh)
//
// with act tanh (Nonlinearity RNNTanh) or ReLU (RNNReLU). Its parameters
// are weight_ih [H, In], weight_hh [H, H], bias_ih [H] and bias_hh [H].
type RNNCell[T tensor.Float] struct {
	WeightIH     *autograd.Param[T] // W_ih, shape [H, In], named "weight_ih"
	WeightHH     *autograd.Param[T] // W_hh, shape [H, H], named "weight_hh"
	BiasIH       *autograd.Param[T] // b_ih, shape [H], named "bias_ih"; nil for none
	BiasHH       *autograd.Param[T] // b_hh, shape [H], named "bias_hh"; nil for none
	Nonlinearity string             // RNNTanh or RNNReLU
}

// NewRNNCell returns an RNNCell from in to hidden features with the given
// nonlinearity (RNNTanh or RNNReLU; it panics for others), initialised as
// PyTorch's: weight_ih, weight_hh, bias_ih, bias_hh uniform within
// ±1/√hidden, drawn from rng in that order.
func NewRNNCell[T tensor.Float](rng *rand.Rand, in, hidden int, nonlinearity string) *RNNCell[T] {
	if nonlinearity != RNNTanh && nonlinearity != RNNReLU {
		panic(usage("NewRNNCell", "nonlinearity %q, want %q or %q", nonlinearity, RNNTanh, RNNReLU))
	}
	c := &RNNCell[T]{Nonlinearity: nonlinearity}
	c.WeightIH, c.WeightHH, c.BiasIH, c.BiasHH = cellParams[T]("NewRNNCell", rng, in, hidden, 1)
	return c
}

// Step records the next state h' for the input x [B, In] and the state h
// [B, H] (the zero Var for zeros, as PyTorch's hx=None). It panics with
// the shapes if they do not fit.
func (c *RNNCell[T]) Step(tp *autograd.Tape[T], x, h autograd.Var[T]) autograd.Var[T] {
	gi, gh, _ := cellGates("RNNCell", tp, x, h, c.Hidden(), c.WeightIH, c.WeightHH, c.BiasIH, c.BiasHH)
	s := autograd.Add(gi, gh)
	switch c.Nonlinearity {
	case RNNTanh:
		return autograd.Tanh(s)
	case RNNReLU:
		return autograd.ReLU(s)
	}
	panic(usage("RNNCell", "nonlinearity %q, want %q or %q", c.Nonlinearity, RNNTanh, RNNReLU))
}

// Params returns weight_ih, weight_hh, bias_ih and bias_hh (the biases if
// present), PyTorch's order.
func (c *RNNCell[T]) Params() []*autograd.Param[T] {
	return cellParamList(c.WeightIH, c.WeightHH, c.BiasIH, c.BiasHH)
}

// Hidden returns the size H of the state.
func (c *RNNCell[T]) Hidden() int { return c.WeightHH.Value.Dim(1) }

// GRUCell is PyTorch's nn.GRUCell (Cho et al., 2014): for x [B, In] and
// the state h [B, H],
//
//	r  = σ(W_ir x + b_ir + W_hr h + b_hr)
//	z  = σ(W_iz x + b_iz + W_hz h + b_hz)
//	n  = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))
//	h' = (1 − z) ⊙ n + z ⊙ h
//
// The gates' weights are stacked in the order r, z, n: weight_ih
// [3H, In] = [W_ir; W_iz; W_in], weight_hh [3H, H], bias_ih [3H],
// bias_hh [3H].
type GRUCell[T tensor.Float] struct {
	WeightIH *autograd.Param[T] // W_ih, shape [3H, In], named "weight_ih"
	WeightHH *autograd.Param[T] // W_hh, shape [3H, H], named "weight_hh"
	BiasIH   *autograd.Param[T] // b_ih, shape [3H], named "bias_ih"; nil for none
	BiasHH   *autograd.Param[T] // b_hh, shape [3H], named "bias_hh"; nil for none
}

// NewGRUCell returns a GRUCell from in to hidden features, initialised as
// PyTorch's: weight_ih, weight_hh, bias_ih, bias_hh uniform within
// ±1/√hidden, drawn from rng in that order.
func NewGRUCell[T tensor.Float](rng *rand.Rand, in, hidden int) *GRUCell[T] {
	c := &GRUCell[T]{}
	c.WeightIH, c.WeightHH, c.BiasIH, c.BiasHH = cellParams[T]("NewGRUCell", rng, in, hidden, 3)
	return c
}

// Step records the next state h' for the input x [B, In] and the state h
// [B, H] (the zero Var for zeros). It panics with the shapes if they do
// not fit.
func (c *GRUCell[T]) Step(tp *autograd.Tape[T], x, h autograd.Var[T]) autograd.Var[T] {
	gi, gh, h := cellGates("GRUCell", tp, x, h, c.Hidden(), c.WeightIH, c.WeightHH, c.BiasIH, c.BiasHH)
	hd := c.Hidden()
	// r and z together: σ of the first 2H columns of both.
	rz := autograd.Sigmoid(autograd.Add(autograd.Narrow(gi, 1, 0, 2*hd), autograd.Narrow(gh, 1, 0, 2*hd)))
	r, z := autograd.Narrow(rz, 1, 0, hd), autograd.Narrow(rz, 1, hd, hd)
	n := autograd.Tanh(autograd.Add(autograd.Narrow(gi, 1, 2*hd, hd), autograd.Mul(r, autograd.Narrow(gh, 1, 2*hd, hd))))
	// (1 − z) ⊙ n + z ⊙ h = n + z ⊙ (h − n)
	return autograd.Add(n, autograd.Mul(z, autograd.Sub(h, n)))
}

// Params returns weight_ih, weight_hh, bias_ih and bias_hh (the biases if
// present), PyTorch's order.
func (c *GRUCell[T]) Params() []*autograd.Param[T] {
	return cellParamList(c.WeightIH, c.WeightHH, c.BiasIH, c.BiasHH)
}

// Hidden returns the size H of the state.
func (c *GRUCell[T]) Hidden() int { return c.WeightHH.Value.Dim(1) }

// LSTMCell is PyTorch's nn.LSTMCell (Hochreiter and Schmidhuber, 1997):
// for x [B, In], the hidden state h [B, H] and the cell state c [B, H],
//
//	i  = σ(W_ii x + b_ii + W_hi h + b_hi)
//	f  = σ(W_if x + b_if + W_hf h + b_hf)
//	g  = tanh(W_ig x + b_ig + W_hg h + b_hg)
//	o  = σ(W_io x + b_io + W_ho h + b_ho)
//	c' = f ⊙ c + i ⊙ g
//	h' = o ⊙ tanh(c')
//
// The gates' weights are stacked in the order i, f, g, o: weight_ih
// [4H, In], weight_hh [4H, H], bias_ih [4H], bias_hh [4H].
type LSTMCell[T tensor.Float] struct {
	WeightIH *autograd.Param[T] // W_ih, shape [4H, In], named "weight_ih"
	WeightHH *autograd.Param[T] // W_hh, shape [4H, H], named "weight_hh"
	BiasIH   *autograd.Param[T] // b_ih, shape [4H], named "bias_ih"; nil for none
	BiasHH   *autograd.Param[T] // b_hh, shape [4H], named "bias_hh"; nil for none
}

// NewLSTMCell returns an LSTMCell from in to hidden features, initialised
// as PyTorch's: weight_ih, weight_hh, bias_ih, bias_hh uniform within
// ±1/√hidden, drawn from rng in that order.
func NewLSTMCell[T tensor.Float](rng *rand.Rand, in, hidden int) *LSTMCell[T] {
	c := &LSTMCell[T]{}
	c.WeightIH, c.WeightHH, c.BiasIH, c.BiasHH = cellParams[T]("NewLSTMCell", rng, in, hidden, 4)
	return c
}

// Step records the next states (h', c') for the input x [B, In] and the
// states h and c [B, H] (either the zero Var for zeros). It panics with
// the shapes if they do not fit.
func (l *LSTMCell[T]) Step(tp *autograd.Tape[T], x, h, c autograd.Var[T]) (autograd.Var[T], autograd.Var[T]) {
	hd := l.Hidden()
	gi, gh, _ := cellGates("LSTMCell", tp, x, h, hd, l.WeightIH, l.WeightHH, l.BiasIH, l.BiasHH)
	c = stateOrZeros("LSTMCell", "cell state", tp, c, gi.Value().Dim(0), hd)
	s := autograd.Add(gi, gh)
	// i and f together: σ of the first 2H columns.
	fi := autograd.Sigmoid(autograd.Narrow(s, 1, 0, 2*hd))
	i, f := autograd.Narrow(fi, 1, 0, hd), autograd.Narrow(fi, 1, hd, hd)
	g, o := autograd.Tanh(autograd.Narrow(s, 1, 2*hd, hd)), autograd.Sigmoid(autograd.Narrow(s, 1, 3*hd, hd))
	c = autograd.Add(autograd.Mul(f, c), autograd.Mul(i, g))
	return autograd.Mul(o, autograd.Tanh(c)), c
}

// Params returns weight_ih, weight_hh, bias_ih and bias_hh (the biases if
// present), PyTorch's order.
func (l *LSTMCell[T]) Params() []*autograd.Param[T] {
	return cellParamList(l.WeightIH, l.WeightHH, l.BiasIH, l.BiasHH)
}

// Hidden returns the size H of the state.
func (l *LSTMCell[T]) Hidden() int { return l.WeightHH.Value.Dim(1) }
