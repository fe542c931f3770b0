package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// GRUODE is the continuous GRU of De Brouwer et al. (2019), GRU-ODE-Bayes,
// as ODE dynamics: for the hidden state h [B, H],
//
//	r     = σ(W_r h + b_r)
//	z     = σ(W_z h + b_z)
//	g     = tanh(W_h (r ⊙ h) + b_h)
//	dh/dt = (1 − z) ⊙ (g − h)
//
// It is a GRU with no input whose update h' = z ⊙ h + (1 − z) ⊙ g is taken
// as an Euler step: h' − h = (1 − z) ⊙ (g − h). Unlike layers.GRUCell's
// candidate tanh(… + r ⊙ (W_hn h + b_hn)), the reset gate here multiplies
// h before W_h, as in the paper and its code. The parameters are named and
// stacked as PyTorch's GRUCell's hidden-side ones: weight_hh [3H, H] =
// [W_r; W_z; W_h] and bias_hh [3H] = [b_r; b_z; b_h] (nil for none: the
// paper's autonomous cell has no biases).
//
// A GRUODE is an odeblock.Dynamics, so it goes in any odeblock.Block and
// any gradient mode; it is autonomous (t is not read) and its rows evolve
// independently (odeblock.ShardableDynamics).
type GRUODE[T tensor.Float] struct {
	WeightHH *autograd.Param[T] // [W_r; W_z; W_h], shape [3H, H], named "weight_hh"
	BiasHH   *autograd.Param[T] // [b_r; b_z; b_h], shape [3H], named "bias_hh"; nil for none
}

// NewGRUODE returns a GRUODE on a state of hidden features, initialised as
// PyTorch's GRUCell: weight_hh and then bias_hh uniform within ±1/√hidden,
// drawn from rng in that order. It panics if hidden is not positive.
func NewGRUODE[T tensor.Float](rng *rand.Rand, hidden int) *GRUODE[T] {
	if hidden <= 0 {
		panic(fmt.Sprintf("models: NewGRUODE: hidden size %d, want at least 1", hidden))
	}
	g := &GRUODE[T]{
		WeightHH: autograd.NewParam("weight_hh", tensor.New[T](3*hidden, hidden)),
		BiasHH:   autograd.NewParam("bias_hh", tensor.New[T](3*hidden)),
	}
	bound := 1 / math.Sqrt(float64(hidden))
	layers.Uniform(rng, g.WeightHH.Value, -bound, bound)
	layers.Uniform(rng, g.BiasHH.Value, -bound, bound)
	return g
}

// Hidden returns the size H of the state.
func (g *GRUODE[T]) Hidden() int { return g.WeightHH.Value.Dim(1) }

// Eval records dh/dt = (1 − z) ⊙ (g − h) for the state h [B, H] (t is not
// read). It panics with a *tensor.ShapeError naming the shapes if h is not
// [B, H].
func (g *GRUODE[T]) Eval(tp *autograd.Tape[T], _ float64, h autograd.Var[T]) autograd.Var[T] {
	hd := g.Hidden()
	if hv := h.Value(); hv.Rank() != 2 || hv.Dim(1) != hd {
		panic(&tensor.ShapeError{Op: "models.GRUODE", Msg: fmt.Sprintf("state of shape %v, want [B, %d] (weight_hh %v)", hv.Shape(), hd, g.WeightHH.Value.Shape())})
	}
	w := tp.Param(g.WeightHH)
	var brz, bh autograd.Var[T]
	if g.BiasHH != nil {
		b := tp.Param(g.BiasHH)
		brz, bh = autograd.Narrow(b, 0, 0, 2*hd), autograd.Narrow(b, 0, 2*hd, hd)
	}
	rz := autograd.Sigmoid(autograd.Linear(h, autograd.Narrow(w, 0, 0, 2*hd), brz))
	r, z := autograd.Narrow(rz, 1, 0, hd), autograd.Narrow(rz, 1, hd, hd)
	cand := autograd.Tanh(autograd.Linear(autograd.Mul(r, h), autograd.Narrow(w, 0, 2*hd, hd), bh))
	return autograd.Mul(autograd.RSub(1, z), autograd.Sub(cand, h))
}

// Params returns weight_hh and bias_hh (if present).
func (g *GRUODE[T]) Params() []*autograd.Param[T] {
	if g.BiasHH == nil {
		return []*autograd.Param[T]{g.WeightHH}
	}
	return []*autograd.Param[T]{g.WeightHH, g.BiasHH}
}

// Parts returns 1: the state is h alone (odeblock.ShardableDynamics).
func (g *GRUODE[T]) Parts() int { return 1 }

// ForShard returns g itself, which keeps no work buffers
// (odeblock.ShardableDynamics).
func (g *GRUODE[T]) ForShard() odeblock.Dynamics[T] { return g }

// Cell is the recurrent update of an ODERNN at an observation: Step records
// the new state for the input x [B, In] and the state h [B, H]. It is
// satisfied by *layers.GRUCell and *layers.RNNCell. layers.LSTMCell, whose
// state is the pair (h, c), is not a Cell: an ODE-LSTM (Lechner and
// Hasani, 2020) would evolve h alone and carry c through the ODE, which
// this interface does not express.
type Cell[T tensor.Float] interface {
	Step(tp *autograd.Tape[T], x, h autograd.Var[T]) autograd.Var[T]
	Params() []*autograd.Param[T]
	// Hidden returns the size H of the state.
	Hidden() int
}

// ODERNN is the ODE-RNN of Rubanova et al. (2019) over an irregularly
// sampled batch (data.SeriesBatch): a state h [B, H] evolves by the ODE of
// the block ODE between consecutive observation times and is updated by
// Cell at each time,
//
//	h⁻_j = ODESolve(h_{j−1}, t_{j−1} → t_j)
//	h_j  = Cell(x_j, h⁻_j)   where series b is observed at t_j,
//	h_j  = h⁻_j              where it is not (every channel masked),
//
// as Rubanova et al.'s code and torchdiffeq's latent ODE encoder do (the
// mask selects: no blending). There is no solve before the first time: h0
// is the state at the first time processed, just before its update (to
// start earlier, solve from your t0 to it with a Block first).
//
// The cell's input x_j [B, 2C] is the batch's values at t_j followed by
// their mask (Values[:, j, :] ‖ Mask[:, j, :]), as in Rubanova et al.'s
// code: the values of missing channels are 0, which the cell could not
// tell from an observed 0 without the mask. With ValuesOnly the input is
// the values alone, [B, C]. The time itself is not an input: the ODE
// carries it.
//
// Each interval is one Forward of the block ODE, whose Times Run
// overwrites (a new slice per interval, so that a backward pass reads the
// times of its own interval); its Dynamics, Solver, Mode, OnStep and
// Shards are the user's. The cell's jumps depend on the state, so the
// intervals cannot share one Trajectory. An ODERNN is not safe for
// concurrent use (its Block is not).
type ODERNN[T tensor.Float] struct {
	Cell Cell[T]
	ODE  *odeblock.Block[T]
	// ValuesOnly feeds the cell the values alone, [B, C], instead of the
	// values and their mask, [B, 2C].
	ValuesOnly bool
}

// ODERNNOutput is what ODERNN.Run returns. States and Before are indexed
// by the batch's times in increasing order whichever the direction.
type ODERNNOutput[T tensor.Float] struct {
	// States [T, B, H]: the state just after the update at Times[j].
	States autograd.Var[T]
	// Before [T, B, H]: the state just before the update at Times[j], the
	// ODE's prediction from the previous time processed (h0 at the first
	// time processed).
	Before autograd.Var[T]
	// Last [B, H]: the state after the last update processed, at
	// Times[T−1] forwards and at Times[0] backwards (the latent ODE's
	// encoding).
	Last autograd.Var[T]
}

// Params returns the cell's parameters and then the dynamics'. Their
// names are the cell's and the dynamics' own, which may collide (a
// GRUCell and a GRUODE both have weight_hh): give them paths with
// layers.Prefix (say "cell" and "ode") before saving a checkpoint.
func (m *ODERNN[T]) Params() []*autograd.Param[T] {
	var ps []*autograd.Param[T]
	if m.Cell != nil {
		ps = append(ps, m.Cell.Params()...)
	}
	if m.ODE != nil && m.ODE.Dynamics != nil {
		ps = append(ps, m.ODE.Dynamics.Params()...)
	}
	return ps
}

// Run records the ODE-RNN over the batch b from the state h0 [B, H] (the
// zero Var for zeros) on tp: forwards in time from Times[0], or with
// backwards from Times[T−1] down to Times[0] (the latent ODE's encoder),
// solving the ODE backwards in time between observations.
//
// Bad input is an error, not a panic: a batch whose Values and Mask are
// not [B, len(Times), C], times that are not finite and strictly
// increasing, an h0 that is not [B, Cell.Hidden()], a cell whose input
// size is not C or 2C as the batch and ValuesOnly ask, a GRUODE whose
// size is not the cell's; a *tensor.ShapeError raised by a cell or
// dynamics of the user's is returned too. A failed solve returns the
// block's error, naming the interval.
func (m *ODERNN[T]) Run(tp *autograd.Tape[T], b *data.SeriesBatch[T], h0 autograd.Var[T], backwards bool) (out ODERNNOutput[T], err error) {
	defer tensor.Recover(&err)
	nb, nt, nc, err := m.check(b, h0)
	if err != nil {
		return out, err
	}
	hd := m.Cell.Hidden()
	h := h0
	if h.IsZero() {
		h = tp.Const(tp.Scratch(nb, hd).Zero())
	}
	in := nc
	if !m.ValuesOnly {
		in = 2 * nc
	}
	vals, mask := b.Values.Data(), b.Mask.Data()
	after, before := make([]autograd.Var[T], nt), make([]autograd.Var[T], nt)
	order := make([]int, nt)
	for k := range order {
		order[k] = k
		if backwards {
			order[k] = nt - 1 - k
		}
	}
	for k, j := range order {
		if k > 0 {
			prev := order[k-1]
			m.ODE.Times = []float64{b.Times[prev], b.Times[j]}
			h, err = m.ODE.Forward(tp, h)
			if err != nil {
				return ODERNNOutput[T]{}, fmt.Errorf("models: ODERNN: solving from t=%g to t=%g: %w", b.Times[prev], b.Times[j], err)
			}
		}
		before[j] = h
		// The cell's input at t_j and which series are observed there.
		x := tp.Scratch(nb, in)
		xd := x.Data()
		seen := make([]bool, nb)
		nseen := 0
		for s := range nb {
			off := (s*nt + j) * nc
			copy(xd[s*in:s*in+nc], vals[off:off+nc])
			if !m.ValuesOnly {
				copy(xd[s*in+nc:s*in+2*nc], mask[off:off+nc])
			}
			for _, v := range mask[off : off+nc] {
				if v != 0 {
					seen[s] = true
				}
			}
			if seen[s] {
				nseen++
			}
		}
		if nseen > 0 {
			hn := m.Cell.Step(tp, tp.Const(x), h)
			if nseen < nb {
				sel := tp.Scratch(nb, hd)
				sd := sel.Data()
				for s := range nb {
					v := T(0)
					if seen[s] {
						v = 1
					}
					for i := range hd {
						sd[s*hd+i] = v
					}
				}
				hn = autograd.Where(sel, hn, h)
			}
			h = hn
		}
		after[j] = h
	}
	return ODERNNOutput[T]{States: autograd.Stack(0, after...), Before: autograd.Stack(0, before...), Last: h}, nil
}

// check validates the model, the batch and h0, returning B, T and C.
func (m *ODERNN[T]) check(b *data.SeriesBatch[T], h0 autograd.Var[T]) (nb, nt, nc int, err error) {
	if m.Cell == nil {
		return 0, 0, 0, fmt.Errorf("models: ODERNN has no Cell")
	}
	if m.ODE == nil || m.ODE.Dynamics == nil {
		return 0, 0, 0, fmt.Errorf("models: ODERNN has no ODE block with Dynamics")
	}
	if b == nil || b.Values == nil || b.Mask == nil {
		return 0, 0, 0, fmt.Errorf("models: ODERNN.Run: the batch, its Values and its Mask must not be nil")
	}
	nt = len(b.Times)
	if nt == 0 {
		return 0, 0, 0, fmt.Errorf("models: ODERNN.Run: the batch has no times")
	}
	vs, ms := b.Values.Shape(), b.Mask.Shape()
	if len(vs) != 3 || vs[1] != nt {
		return 0, 0, 0, fmt.Errorf("models: ODERNN.Run: batch Values of shape %v, want [B, %d, C] for its %d times", vs, nt, nt)
	}
	if !slices.Equal(vs, ms) {
		return 0, 0, 0, fmt.Errorf("models: ODERNN.Run: batch Mask of shape %v, Values of shape %v: want the same", ms, vs)
	}
	nb, nc = vs[0], vs[2]
	for j, t := range b.Times {
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return 0, 0, 0, fmt.Errorf("models: ODERNN.Run: batch Times[%d] = %g, want finite times", j, t)
		}
		if j > 0 && !(t > b.Times[j-1]) {
			return 0, 0, 0, fmt.Errorf("models: ODERNN.Run: batch Times must be strictly increasing; Times[%d] = %g after Times[%d] = %g", j, t, j-1, b.Times[j-1])
		}
	}
	hd := m.Cell.Hidden()
	if !h0.IsZero() {
		if hs := h0.Shape(); len(hs) != 2 || hs[0] != nb || hs[1] != hd {
			return 0, 0, 0, fmt.Errorf("models: ODERNN.Run: h0 of shape %v, want [%d, %d] (the batch's Values %v, the cell's hidden size %d)", hs, nb, hd, vs, hd)
		}
	}
	in, wantIn := cellInput(m.Cell), 2*nc
	if m.ValuesOnly {
		wantIn = nc
	}
	if in >= 0 && in != wantIn {
		what := "values and mask"
		if m.ValuesOnly {
			what = "values only (ValuesOnly)"
		}
		return 0, 0, 0, fmt.Errorf("models: ODERNN.Run: the cell's input size is %d (weight_ih %v), the batch's Values %v give %d (%s)", in, cellWeightShape(m.Cell), vs, wantIn, what)
	}
	if g, ok := m.ODE.Dynamics.(*GRUODE[T]); ok && g.Hidden() != hd {
		return 0, 0, 0, fmt.Errorf("models: ODERNN: the GRUODE's hidden size is %d (weight_hh %v), the cell's %d", g.Hidden(), g.WeightHH.Value.Shape(), hd)
	}
	return nb, nt, nc, nil
}

// cellInput returns the input size of the layers package's cells, or −1
// for a cell of unknown type (whose shape errors surface from its Step).
func cellInput[T tensor.Float](c Cell[T]) int {
	if s := cellWeightShape(c); s != nil {
		return s[1]
	}
	return -1
}

// cellWeightShape returns the shape of weight_ih of the layers package's
// cells, or nil.
func cellWeightShape[T tensor.Float](c Cell[T]) []int {
	switch c := c.(type) {
	case *layers.GRUCell[T]:
		return c.WeightIH.Value.Shape()
	case *layers.RNNCell[T]:
		return c.WeightIH.Value.Shape()
	}
	return nil
}
