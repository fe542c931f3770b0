package odeblock

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// Adjoint solves the adjoint system backward from t1 to t0 (Chen et al.
// 2018, "backsolve"): the state is reconstructed by solving the dynamics
// backward alongside the adjoint a and the parameter gradient g_θ. Memory
// does not grow with the number of steps (AnchorEvery trades some for
// robustness); gradients agree with the exact ones to about the backward
// solve's tolerance. Over long horizons the backward reconstruction of the
// state can diverge: that is reported as an error of the backward phase
// (ErrAdjointDrift, or the solver's own), never as wrong or NaN gradients.
//
// Its fields configure the backward solve, which takes the forward
// solve's options otherwise; its error norm is
// torchdiffeq's default for the adjoint: the largest of the RMS norms of
// the state, of its adjoint and of each parameter's gradient
// (Options.ErrorParts), so that no part's error hides in the average of a
// larger one.
type Adjoint struct {
	// RTol and ATol of the backward solve; 0 means the forward's.
	RTol, ATol float64
	// Seminorm leaves the parameters' gradients out of the error norm
	// (Kidger et al. 2021; torchdiffeq's norm="seminorm"): fewer backward
	// steps, the same accuracy in the state and its adjoint.
	Seminorm bool
	// AnchorEvery, if positive, keeps the forward solution at every
	// AnchorEvery-th accepted step and re-anchors the backward solve's
	// reconstruction of the state there, as it does at the output times:
	// an adjoint with checkpoints, whose memory grows with the number of
	// steps over AnchorEvery, that survives the long horizons where the
	// reconstruction of a dissipative system diverges (1 anchors at every
	// step). The drift check then applies to each stretch between anchors.
	AnchorEvery int
	// FlatNorm takes one RMS over the whole augmented state [z, a, g_θ]
	// instead of the mixed norm: fewer backward steps when one part's
	// error is small against the rest, at that part's expense. Not with
	// Seminorm.
	FlatNorm bool
	// Generic uses the VJP of the whole dynamics even when they have a
	// specialised adjoint (Adjointer).
	Generic bool
	// MaxSteps of the backward solve; 0 means the forward's.
	MaxSteps int
	// MaxDrift bounds how far the backward solve's reconstruction of the
	// state may drift from the forward solution. At the end of each
	// backward segment (at each output time, down to the first) the
	// reconstructed state z̃ is compared with the forward's z, which the
	// block kept: a relative difference ‖z̃ − z‖₂ / max(‖z‖₂, ‖z_end‖₂,
	// ATol·√n), z_end the forward state where the segment began, above
	// MaxDrift fails the backward pass with ErrAdjointDrift, for the
	// adjoint computed along z̃ would be wrong. (The reverse solve of a
	// dissipative system amplifies its errors: torchdiffeq returns such
	// gradients without a word.) 0 means 1e-2, or 10 × the backward
	// solve's RTol when that is larger (a loose tolerance reconstructs the
	// state only to about that tolerance); a negative value turns the
	// check off.
	MaxDrift float64
}

// defaultMaxDrift is Adjoint.MaxDrift's default for tolerances up
// to 1e-3.
const defaultMaxDrift = 1e-2

// ErrAdjointDrift is the error of an Adjoint-mode backward pass whose
// reconstruction of the state drifted from the forward solution by more
// than Adjoint.MaxDrift.
var ErrAdjointDrift = errors.New("the backward reconstruction of the state drifted from the forward solution")

// validate reports the first option out of range. Zero values mean "the
// forward's"; anything else must be a usable value, never silently replaced.
func (a Adjoint) validate() error {
	switch {
	case a.RTol != 0 && (!(a.RTol > 0) || math.IsInf(a.RTol, 1)):
		return fmt.Errorf("odeblock: Adjoint.RTol must be positive and finite (or 0: the forward's), got %g", a.RTol)
	case a.ATol != 0 && (!(a.ATol > 0) || math.IsInf(a.ATol, 1)):
		return fmt.Errorf("odeblock: Adjoint.ATol must be positive and finite (or 0: the forward's), got %g", a.ATol)
	case a.MaxSteps < 0:
		return fmt.Errorf("odeblock: Adjoint.MaxSteps must not be negative (0: the forward's), got %d", a.MaxSteps)
	case a.AnchorEvery < 0:
		return fmt.Errorf("odeblock: Adjoint.AnchorEvery must not be negative (0: no anchors), got %d", a.AnchorEvery)
	case a.FlatNorm && a.Seminorm:
		return fmt.Errorf("odeblock: Adjoint.FlatNorm and Adjoint.Seminorm both set; pick one norm")
	case math.IsNaN(a.MaxDrift) || math.IsInf(a.MaxDrift, 1):
		return fmt.Errorf("odeblock: Adjoint.MaxDrift must be a finite number (0: the default; negative: no check), got %g", a.MaxDrift)
	}
	return nil
}

func init() { registerMode(Adjoint{}) }

func (Adjoint) String() string { return "adjoint" }

func (m Adjoint) strategy32(p *pass[float32]) strategy[float32] {
	return &adjoint[float32]{p: p, opt: m}
}
func (m Adjoint) strategy64(p *pass[float64]) strategy[float64] {
	return &adjoint[float64]{p: p, opt: m}
}

// adjoint is Adjoint at work on one pass.
type adjoint[T tensor.Float] struct {
	p       *pass[T]
	opt     Adjoint
	anchors []anchor[T] // with AnchorEvery: forward states, in time order
}

// anchor is a state of the forward solution the adjoint re-anchors to.
type anchor[T tensor.Float] struct {
	t float64
	z []T
}

func (a *adjoint[T]) stepEnds() bool { return false }
func (a *adjoint[T]) abort()         {}

// forward evaluates the dynamics with no tape and keeps nothing but, with
// AnchorEvery, every AnchorEvery-th accepted step's state.
func (a *adjoint[T]) forward() (evalFunc[T], func(StepInfo[T]) error) {
	if a.opt.AnchorEvery <= 0 {
		return a.p.evaluator(), nil
	}
	count := 0
	return a.p.evaluator(), func(si StepInfo[T]) error {
		if si.Accepted {
			if count++; count%a.opt.AnchorEvery == 0 {
				a.anchors = append(a.anchors, anchor[T]{t: si.End, z: slices.Clone(si.Y1)})
			}
		}
		return nil
	}
}

// backward solves the adjoint system backward over each interval of
// Times, re-anchoring the state to the forward solution at each output time
// and adding that time's output gradient to the adjoint.
func (a *adjoint[T]) backward(g *tensor.Tensor[T]) ([]*tensor.Tensor[T], error) {
	p := a.p
	p.b.stats.Stored = len(a.anchors)
	n := p.n
	sizes := make([]int, len(p.params))
	m := 0
	for j, prm := range p.params {
		sizes[j] = prm.Value.Len()
		m += sizes[j]
	}
	opt := a.options(sizes)
	w := p.adjointWork(sizes)
	p.b.dropStaleViews()
	s := w.solver
	if err := s.configure(opt); err != nil {
		return nil, err
	}
	s.OnStep = p.b.OnStep
	f := a.augmented(w)
	// Each segment starts from y and ends in other; they swap after it.
	y, other := w.y, w.other
	clear(y) // a and g_θ start at zero
	row := func(t *tensor.Tensor[T], k int) []T { return t.Slice(k, k+1).Data() }
	var st Stats
	N := len(p.ts) - 1
	copy(y[n:2*n], row(g, N))
	dir := 1.0
	if p.ts[N] < p.ts[0] {
		dir = -1
	}
	ai := len(a.anchors) - 1 // the latest anchor not passed yet
	for k := N; k >= 1; k-- {
		// The stretch from ts[k] back to ts[k−1], cut at the anchors
		// strictly inside it (latest first); z is re-anchored to the
		// forward solution at the start of each piece.
		t1, z1 := p.ts[k], row(p.traj, k)
		for ai >= 0 && (t1-a.anchors[ai].t)*dir <= 0 {
			ai-- // at or past ts[k]: an output time or the end
		}
		for last := false; !last; {
			t0, z0 := p.ts[k-1], row(p.traj, k-1)
			last = true
			if ai >= 0 && (a.anchors[ai].t-t0)*dir > 0 {
				t0, z0, last = a.anchors[ai].t, a.anchors[ai].z, false
				ai--
			}
			copy(y[:n], z1)               // re-anchor z to the forward solution
			w.out[0], w.out[1] = y, other // out[0] is y0 itself: no copy
			seg, err := s.Solve(f, y, []float64{t1, t0}, w.out)
			st = st.Add(seg)
			if err != nil {
				p.b.stats.Backward = st
				return nil, err
			}
			if err := a.checkDrift(other[:n], z0, z1, t1, t0, opt.RTol, opt.ATol); err != nil {
				p.b.stats.Backward = st
				return nil, err
			}
			y, other = other, y
			t1, z1 = t0, z0
		}
		axpy(y[n:2*n], 1, row(g, k-1))
	}
	p.b.stats.Backward = st
	// Views of the adjoint's buffer: the tape only reads what a custom
	// node's backward returns, before this block's next backward.
	grads := []*tensor.Tensor[T]{tensor.FromSlice(y[n:2*n], p.shape...)}
	off := 2 * n
	for j, prm := range p.params {
		grads = append(grads, tensor.FromSlice(y[off:off+sizes[j]], prm.Value.Shape()...))
		off += sizes[j]
	}
	return grads, nil
}

// options returns the options of the backward solve: the forward's, all
// of them (as torchdiffeq's adjoint takes its forward options by default),
// with the Adjoint's tolerances and step limit, and the error norm over
// the augmented state [z, a, g_θ] (g_θ's parts of sizes).
func (a *adjoint[T]) options(sizes []int) Options {
	p := a.p
	n := p.n
	opt := p.solver.opt
	opt.Tableau, opt.Method = p.solver.tb, ""
	opt.Phase, opt.ErrorLen, opt.ErrorParts = "backward", 0, nil
	adj := a.opt
	if adj.RTol > 0 {
		opt.RTol = adj.RTol
	}
	if adj.ATol > 0 {
		opt.ATol = adj.ATol
	}
	if adj.MaxSteps > 0 {
		opt.MaxSteps = adj.MaxSteps
	}
	// The error norm is torchdiffeq's: the largest of the RMS norms of the
	// state, of its adjoint and of each parameter's gradient (the seminorm
	// leaves the gradients out; the flat norm is one RMS over all).
	opt.ErrorParts = append(p.b.errParts[:0], n, n)
	if adj.FlatNorm {
		opt.ErrorParts = opt.ErrorParts[:0]
	} else if !adj.Seminorm {
		for _, l := range sizes {
			if l > 0 {
				opt.ErrorParts = append(opt.ErrorParts, l)
			}
		}
	}
	p.b.errParts = opt.ErrorParts
	return opt
}

// checkDrift returns ErrAdjointDrift, with the numbers, when the backward
// segment from t1 to t0 (where the forward solution is z1) reconstructed
// the state z0 as zr with a relative difference above the block's
// Adjoint.MaxDrift. The difference is relative to the larger of the
// segment's two end states (a state that starts at 0 and grows is
// measured against its size, not against 0), and at least ATol·√n.
func (a *adjoint[T]) checkDrift(zr, z0, z1 []T, t1, t0, rtol, atol float64) error {
	bound := a.opt.MaxDrift
	if bound < 0 {
		return nil
	}
	if bound == 0 {
		bound = math.Max(defaultMaxDrift, 10*rtol)
	}
	var dd, zz0, zz1 float64
	for i, v := range z0 {
		d := float64(zr[i]) - float64(v)
		dd += d * d
		zz0 += float64(v) * float64(v)
		zz1 += float64(z1[i]) * float64(z1[i])
	}
	rel := math.Sqrt(dd) / math.Max(math.Sqrt(math.Max(zz0, zz1)), atol*math.Sqrt(float64(len(z0))))
	if rel <= bound { // false for NaN
		return nil
	}
	return fmt.Errorf("odeblock: backward solve from t=%g to t=%g: %w: relative difference %.3g (Adjoint.MaxDrift %g); the adjoint along it would give wrong gradients: use Mode Checkpoint, or more output Times to re-anchor the state", t1, t0, ErrAdjointDrift, rel, bound)
}

// augmented returns the right-hand side of the adjoint system on the flat
// state [z, a, g_θ]: z' = F(t, z), a' = −aᵀ·∂F/∂z, g_θ' = −aᵀ·∂F/∂θ.
func (a *adjoint[T]) augmented(w *adjointWork[T]) Func[T] {
	p := a.p
	n := p.n
	pb, dg, sizes := w.pb, w.dg, w.sizes
	special, ok := p.b.Dynamics.(Adjointer[T])
	if a.opt.Generic {
		ok = false
	}
	dyn := p.b.Dynamics
	at := make([]*tensor.Tensor[T], 1)
	dst := autograd.VJPDest[T]{Inputs: make([]*tensor.Tensor[T], 1), Params: p.params, ParamGrads: dg}
	return func(t float64, y, dy []T) (err error) {
		defer recoverUnlisted(&err)
		// The parts of y and dy as tensors: views, no copies.
		z, a := w.views.of(y[:n], p.shape), w.views.of(y[n:2*n], p.shape)
		dz, da := w.views.of(dy[:n], p.shape), w.views.of(dy[n:2*n], p.shape)
		off := 2 * n
		for j := range dg {
			dg[j] = w.views.of(dy[off:off+sizes[j]], p.params[j].Value.Shape())
			off += sizes[j]
		}
		if ok {
			return special.EvalAdjoint(pb, t, z, a, dz, da, dg)
		}
		// One VJP of the whole dynamics: F(z) and aᵀ·∂F/∂(z, θ), negated.
		at[0], dst.Inputs[0] = z, da
		val, err := pb.VJPE(func(tp *autograd.Tape[T], in []autograd.Var[T]) autograd.Var[T] {
			return dyn.Eval(tp, t, in[0])
		}, at, a, dst)
		if err != nil {
			return err
		}
		dz.Copy(val)
		da.Neg(da)
		for _, g := range dg {
			g.Neg(g)
		}
		return nil
	}
}

// adjointWork holds the buffers of the adjoint solve, kept in the Block
// from pass to pass while the shapes stay the same.
type adjointWork[T tensor.Float] struct {
	solver   *Solver[T]
	pb       *autograd.Pullback[T]
	dg       []*tensor.Tensor[T] // views of the parameter parts of dy
	shapes   [][]int             // the parameters' shapes
	sizes    []int
	y, other []T
	out      [][]T
	views    viewCache[T] // of the parts of the buffers f is evaluated at
	eng      tensor.Engine[T]
	n        int
}

// adjointWork returns the block's adjoint buffers for this pass's shapes,
// making them when they do not fit.
func (p *pass[T]) adjointWork(sizes []int) *adjointWork[T] {
	w := p.b.adj
	fits := w != nil && w.eng == p.eng && w.n == p.n && len(w.shapes) == len(p.params)
	for j := 0; fits && j < len(p.params); j++ {
		fits = p.params[j].Value.HasShape(w.shapes[j]...)
	}
	if fits {
		return w
	}
	m := 0
	for _, sz := range sizes {
		m += sz
	}
	w = &adjointWork[T]{
		solver: &Solver[T]{shared: &p.b.slab}, pb: p.b.pullback(p.eng), eng: p.eng, n: p.n,
		sizes: sizes, y: make([]T, 2*p.n+m), other: make([]T, 2*p.n+m), out: make([][]T, 2),
		dg: make([]*tensor.Tensor[T], len(p.params)),
		// Four parts of y and dy and one per parameter, for each of the
		// solver's buffers that f is evaluated at or into.
		views: viewCache[T]{limit: (4 + len(p.params)) * 16},
	}
	for _, prm := range p.params {
		w.shapes = append(w.shapes, prm.Value.Shape())
	}
	p.b.adj = w
	return w
}
