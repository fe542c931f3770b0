package odeblock

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// GradMode is how a Block computes its gradients. The model code is the same
// in every mode.
type GradMode int

const (
	// Adjoint solves the adjoint system backward from t1 to t0 (Chen et
	// al. 2018, "backsolve"): the state is reconstructed by solving the
	// dynamics backward alongside the adjoint a and the parameter gradient
	// g_θ. Memory does not grow with the number of steps; gradients agree
	// with the exact ones to about the backward solve's tolerance. Over long
	// horizons the backward reconstruction of the state can diverge: that
	// is reported as an error of the backward phase (ErrAdjointDrift, or
	// the solver's own), never as wrong or NaN gradients.
	Adjoint GradMode = iota
	// Backprop records every stage of every accepted step on tapes during
	// the forward solve and backpropagates through them
	// (discretise-then-optimise): the exact gradient of the discrete solve
	// (step sizes held constant). Memory grows with the number of
	// evaluations.
	Backprop
	// Checkpoint keeps the state at the start of each accepted step and, in
	// backward, recomputes one step at a time on tapes. Its gradients equal
	// Backprop's; memory grows with steps × state only.
	Checkpoint
)

func (m GradMode) String() string {
	switch m {
	case Adjoint:
		return "adjoint"
	case Backprop:
		return "backprop"
	case Checkpoint:
		return "checkpoint"
	}
	return fmt.Sprintf("GradMode(%d)", int(m))
}

// ParseGradMode returns the mode named "adjoint", "backprop" or "checkpoint".
func ParseGradMode(s string) (GradMode, error) {
	for _, m := range []GradMode{Adjoint, Backprop, Checkpoint} {
		if m.String() == s {
			return m, nil
		}
	}
	return 0, fmt.Errorf("odeblock: unknown gradient mode %q (want adjoint, backprop or checkpoint)", s)
}

// AdjointOptions configure the backward solve of the Adjoint mode. It
// takes the forward solve's options otherwise; its error norm is
// torchdiffeq's default for the adjoint: the largest of the RMS norms of
// the state, of its adjoint and of each parameter's gradient
// (Options.ErrorParts), so that no part's error hides in the average of a
// larger one.
type AdjointOptions struct {
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

// defaultMaxDrift is AdjointOptions.MaxDrift's default for tolerances up
// to 1e-3.
const defaultMaxDrift = 1e-2

// ErrAdjointDrift is the error of an Adjoint-mode backward pass whose
// reconstruction of the state drifted from the forward solution by more
// than AdjointOptions.MaxDrift.
var ErrAdjointDrift = errors.New("the backward reconstruction of the state drifted from the forward solution")

// validate reports the first option out of range. Zero values mean "the
// forward's"; anything else must be a usable value, never silently replaced.
func (a AdjointOptions) validate() error {
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

// Block is an ODE solve as one autograd op: z0 ↦ z(t1) (Forward) or z at
// every time of Times (Trajectory), differentiated by Mode.
//
// A Block is not safe for concurrent use; it keeps its work buffers between
// passes.
type Block[T tensor.Float] struct {
	Dynamics Dynamics[T]
	// Times are the output times, strictly monotone; nil means [0, 1].
	Times []float64
	// Solver configures the forward solve (method, tolerances, ...).
	Solver Options
	// Mode picks how gradients are computed.
	Mode GradMode
	// Adjoint configures the Adjoint mode's backward solve.
	Adjoint AdjointOptions

	stats BlockStats

	errParts []int // the adjoint's ErrorParts, kept from pass to pass

	// Work kept from pass to pass, so that a training loop reusing the
	// block allocates little: the forward solver, the evaluation tape and
	// its state views, and the adjoint solve's buffers.
	fwd   *Solver[T]
	pb    *autograd.Pullback[T] // evaluations and VJPs of the dynamics
	views viewCache[T]
	adj   *adjointWork[T]
	// slab is the memory of the forward and adjoint solvers' buffers: they
	// are never in use at the same time (a Backward runs after its Forward
	// has returned), so they take turns with one slab as large as the
	// adjoint's, instead of keeping both.
	slab []T
	// slabSeen is where slab began when the view caches were last checked:
	// views of a replaced slab are dropped (they would keep it alive).
	slabSeen *T
	ckTapes  []*stageTape[T] // Checkpoint's recomputation tapes
	// stagePool holds Backprop's stage tapes between passes, statePool
	// Checkpoint's saved states.
	stagePool []*stageTape[T]
	statePool [][]T
}

// viewCache holds tensor views of the few buffers a solver evaluates its
// dynamics at, so that wrapping a buffer as a tensor allocates once.
type viewCache[T tensor.Float] struct {
	views []*tensor.Tensor[T]
	limit int // how many views are kept; 0 means 8
}

// reset drops the cached views.
func (c *viewCache[T]) reset() {
	clear(c.views)
	c.views = c.views[:0]
}

// of returns y viewed with the given shape.
func (c *viewCache[T]) of(y []T, shape []int) *tensor.Tensor[T] {
	for _, v := range c.views {
		if d := v.Data(); len(d) == len(y) && len(y) > 0 && &d[0] == &y[0] && v.HasShape(shape...) {
			return v
		}
	}
	v := tensor.FromSlice(y, shape...)
	if limit := max(c.limit, 8); len(c.views) == limit {
		c.reset() // a new set of buffers: start over
	}
	c.views = append(c.views, v)
	return v
}

// BlockStats counts the work of a Block's last forward and backward passes.
// Backward NFE counts evaluations of the dynamics' VJP (the adjoint's
// backward evaluations; in Checkpoint and Backprop, one per stage pulled
// back, plus the recomputed stages in Checkpoint).
type BlockStats struct {
	Forward  Stats
	Backward Stats
}

// Stats returns the counts of the last forward and backward passes.
func (b *Block[T]) Stats() BlockStats { return b.stats }

func (b *Block[T]) times() []float64 {
	if b.Times == nil {
		return []float64{0, 1}
	}
	return b.Times
}

// Forward records the block on tp: it solves the dynamics from z0 over
// Times and returns z at the last time. A failed solve returns the error;
// so does Backward of the returned Var if the backward solve fails.
func (b *Block[T]) Forward(tp *autograd.Tape[T], z0 autograd.Var[T]) (autograd.Var[T], error) {
	return b.record(tp, z0, false)
}

// Trajectory records the block on tp and returns z at every time of Times,
// stacked along a new leading axis: [len(Times), z0's shape...]. The first
// entry is z0 itself.
func (b *Block[T]) Trajectory(tp *autograd.Tape[T], z0 autograd.Var[T]) (autograd.Var[T], error) {
	return b.record(tp, z0, true)
}

// pass holds what one forward pass keeps for its backward.
type pass[T tensor.Float] struct {
	b      *Block[T]
	tp     *autograd.Tape[T] // the tape the pass is recorded on
	eng    tensor.Engine[T]
	shape  []int
	n      int
	ts     []float64
	traj   *tensor.Tensor[T] // [len(ts), n]: z at every output time
	params []*autograd.Param[T]
	solver *Solver[T]
	steps  []step[T] // Backprop and Checkpoint: the accepted steps

	stagesTaken int // Backprop: stage tapes taken from the Block's pool

	// Backprop and Checkpoint: the parameters' gradients, which the stage
	// tapes accumulate into (autograd.Tape.RedirectParams) and the block's
	// node returns — never Param.Grad behind the outer tape's back.
	pgrads []*tensor.Tensor[T]

	anchors []anchor[T] // Adjoint with AnchorEvery: forward states, in time order
}

// anchor is a state of the forward solution the adjoint re-anchors to.
type anchor[T tensor.Float] struct {
	t float64
	z []T
}

// step is one accepted step of the forward solve.
type step[T tensor.Float] struct {
	t, h, end float64 // start, size and end (t+h, or the stop it landed on)
	t0eval    float64 // where the first stage was evaluated (after a jump: just past t)
	leftLimit bool    // the step ended at a jump: end stages just before it
	y0        []T     // Checkpoint: the state at t
	stages    []*stageTape[T]
	out       int // index into ts of the output at the step's end, or −1
}

// stageTape is one evaluation of the dynamics recorded on its own tape.
type stageTape[T tensor.Float] struct {
	tp      *autograd.Tape[T]
	y       *tensor.Tensor[T] // the input, owned
	in, out autograd.Var[T]
	free    bool // in the Block's pool
}

func (b *Block[T]) record(tp *autograd.Tape[T], z0 autograd.Var[T], traj bool) (autograd.Var[T], error) {
	if b.Dynamics == nil {
		return autograd.Var[T]{}, fmt.Errorf("odeblock: Block has no Dynamics")
	}
	if err := b.Adjoint.validate(); err != nil {
		return autograd.Var[T]{}, err
	}
	ts := b.times()
	p := &pass[T]{b: b, tp: tp, eng: tp.Engine(), shape: z0.Shape(), n: z0.Len(), ts: ts, params: listed(b.Dynamics.Params())}
	if (b.Mode == Backprop || b.Mode == Checkpoint) && !tp.NoGrad() {
		p.pgrads = make([]*tensor.Tensor[T], len(p.params))
		for j, prm := range p.params {
			p.pgrads[j] = tp.Scratch(prm.Value.Shape()...)
			p.pgrads[j].Zero()
		}
	}
	opt := b.Solver
	if b.Mode != Adjoint {
		// Every output time is a step end, so backward needs no
		// interpolant.
		opt.StepTo = append(slices.Clone(opt.StepTo), ts[1:len(ts)-1]...)
	}
	opt.Phase = "forward"
	if b.fwd == nil {
		b.fwd = &Solver[T]{shared: &b.slab}
	}
	s := b.fwd
	if err := s.configure(opt); err != nil {
		return autograd.Var[T]{}, err
	}
	p.solver = s
	p.traj = tp.Scratch(len(ts), p.n) // every row is written by the solve
	outs := make([][]T, len(ts))
	for i := range outs {
		outs[i] = p.traj.Slice(i, i+1).Data()
	}

	f, bp, err := p.forwardHooks(s, tp.NoGrad())
	if err != nil {
		return autograd.Var[T]{}, err
	}
	st, err := s.Solve(f, z0.Value().Data(), ts, outs)
	// The kept solver must not keep this pass (its checkpoints, its tapes)
	// alive through the hooks.
	s.opt.OnStep, s.onEval = nil, nil
	b.stats = BlockStats{Forward: st}
	if err != nil {
		if bp != nil {
			bp.release()
		}
		return autograd.Var[T]{}, err
	}

	var value *tensor.Tensor[T]
	if traj {
		value = p.traj.Reshape(append([]int{len(ts)}, p.shape...)...)
	} else {
		value = p.traj.Slice(len(ts)-1, len(ts)).Reshape(p.shape...)
	}
	inputs := []autograd.Var[T]{z0}
	for _, prm := range p.params {
		inputs = append(inputs, tp.Param(prm))
	}
	backward := func(gy *tensor.Tensor[T]) ([]*tensor.Tensor[T], error) {
		g := tp.Scratch(len(ts), p.n)
		if traj {
			g.Copy(gy)
		} else {
			last := (len(ts) - 1) * p.n
			clear(g.Data()[:last])
			copy(g.Data()[last:], gy.Data())
		}
		return p.backward(g)
	}
	return autograd.CustomE("ODEBlock", value, backward, inputs...), nil
}

// forwardHooks returns the function the forward solve evaluates and sets
// the solver's hooks for what the mode keeps for its backward pass: the
// anchors of an anchored adjoint, Checkpoint's step states, Backprop's
// stage tapes (bp); nothing without gradients.
func (p *pass[T]) forwardHooks(s *Solver[T], noGrad bool) (f Func[T], bp *backpropRecorder[T], err error) {
	b := p.b
	switch {
	case b.Mode != Adjoint && b.Mode != Backprop && b.Mode != Checkpoint:
		return nil, nil, fmt.Errorf("odeblock: unknown gradient mode %v", b.Mode)
	case b.Mode == Adjoint && b.Adjoint.AnchorEvery > 0 && !noGrad:
		every, count := b.Adjoint.AnchorEvery, 0
		s.opt.OnStep = func(si StepInfo) error {
			if si.Accepted {
				if count++; count%every == 0 {
					p.anchors = append(p.anchors, anchor[T]{t: si.End, z: slices.Clone(si.Y1.([]T))})
				}
			}
			if b.Solver.OnStep != nil {
				return b.Solver.OnStep(si)
			}
			return nil
		}
		return p.evaluator(), nil, nil
	case b.Mode == Adjoint || noGrad:
		// No-grad (evaluation) keeps nothing for a backward pass.
		return p.evaluator(), nil, nil
	case b.Mode == Checkpoint:
		s.opt.OnStep = p.stepRecorder(true, b.Solver.OnStep)
		return p.evaluator(), nil, nil
	}
	// Backprop
	bp = &backpropRecorder[T]{p: p}
	s.onEval = bp.onEval
	s.opt.OnStep = p.stepRecorder(false, func(si StepInfo) error {
		if err := bp.onStep(si); err != nil || b.Solver.OnStep == nil {
			return err
		}
		return b.Solver.OnStep(si)
	})
	return bp.eval, bp, nil
}

// listed returns ps, or an empty list for none: a non-nil VJPDest.Params,
// so that a VJP reading a parameter missing from it fails (see
// autograd.UnlistedParamError) instead of sending its gradient to
// Param.Grad, where the adjoint would sum it wrongly.
func listed[T tensor.Float](ps []*autograd.Param[T]) []*autograd.Param[T] {
	if ps == nil {
		return []*autograd.Param[T]{}
	}
	return ps
}

// pullback returns the block's Pullback for engine eng: the forward
// evaluations (no grad) and the adjoint's VJPs record on its one tape, so
// they share its buffers.
func (b *Block[T]) pullback(eng tensor.Engine[T]) *autograd.Pullback[T] {
	if b.pb == nil || b.pb.Engine() != eng {
		b.pb = autograd.NewPullback(eng)
	}
	return b.pb
}

// dropStaleViews empties the view caches when the solvers' slab has been
// replaced since they were filled.
func (b *Block[T]) dropStaleViews() {
	var base *T
	if len(b.slab) > 0 {
		base = &b.slab[0]
	}
	if base != b.slabSeen {
		b.slabSeen = base
		b.views.reset()
		if b.adj != nil {
			b.adj.views.reset()
		}
	}
}

// evaluator returns f(t, y) → dy evaluating the dynamics with no gradient.
func (p *pass[T]) evaluator() Func[T] {
	b := p.b
	b.dropStaleViews()
	pb := b.pullback(p.eng)
	at := make([]*tensor.Tensor[T], 1)
	return func(t float64, y, dy []T) error {
		at[0] = b.views.of(y, p.shape)
		out := pb.Value(func(tp *autograd.Tape[T], in []autograd.Var[T]) autograd.Var[T] {
			return b.Dynamics.Eval(tp, t, in[0])
		}, at)
		at[0] = nil
		if out.Len() != len(dy) {
			return fmt.Errorf("odeblock: dynamics returned shape %v for a state of shape %v", out.Shape(), p.shape)
		}
		copy(dy, out.Data())
		return nil
	}
}

// takeState returns a copy of y in a buffer from the Block's pool (given
// back when the pass's backward ends).
func (p *pass[T]) takeState(y []T) []T {
	pool := p.b.statePool
	for len(pool) > 0 {
		last := len(pool) - 1
		buf := pool[last]
		pool[last] = nil
		pool = pool[:last]
		if len(buf) == len(y) {
			p.b.statePool = pool
			copy(buf, y)
			return buf
		}
	}
	p.b.statePool = pool
	return slices.Clone(y)
}

// stepRecorder returns an OnStep hook that records each accepted step (with
// the state at its start when keepState is set), then calls the user's hook.
func (p *pass[T]) stepRecorder(keepState bool, then func(StepInfo) error) func(StepInfo) error {
	restartNext := false
	return func(si StepInfo) error {
		if si.Accepted {
			st := step[T]{t: si.T, h: si.H, end: si.End, t0eval: si.T, out: -1, leftLimit: p.solver.leftLimit}
			if restartNext {
				st.t0eval = math.Nextafter(si.T, si.T+si.H)
			}
			if keepState {
				st.y0 = p.takeState(si.Y0.([]T))
			}
			if k := slices.Index(p.ts, si.End); k > 0 {
				st.out = k
			}
			restartNext = st.leftLimit
			p.steps = append(p.steps, st)
		}
		if then != nil {
			return then(si)
		}
		return nil
	}
}
