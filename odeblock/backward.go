package odeblock

import (
	"fmt"
	"math"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// backward computes the gradients of the pass's inputs (z0, then each
// parameter) from g = ∂L/∂z at every output time, [len(ts), n].
func (p *pass[T]) backward(g *tensor.Tensor[T]) ([]*tensor.Tensor[T], error) {
	switch p.b.Mode {
	case Adjoint:
		return p.adjointBackward(g)
	default:
		return p.stepsBackward(g)
	}
}

// newStageTape records the dynamics at (t, y) on a tape of its own, y
// copied. The tapes come from the Block's pool, so that a training loop
// records every pass on the tapes (and buffers) of the one before.
func (p *pass[T]) newStageTape(t float64, y []T) *stageTape[T] {
	b := p.b
	var st *stageTape[T]
	for len(b.stagePool) > 0 && st == nil {
		last := len(b.stagePool) - 1
		st, b.stagePool[last] = b.stagePool[last], nil
		b.stagePool = b.stagePool[:last]
		if st.tp.Engine() != p.eng || !st.y.HasShape(p.shape...) {
			st.tp.Release()
			st = nil
		}
	}
	if st == nil {
		st = &stageTape[T]{tp: autograd.NewTape(p.eng), y: tensor.New[T](p.shape...)}
	}
	st.free = false
	p.stagesTaken++
	copy(st.y.Data(), y)
	if p.pgrads != nil {
		st.tp.RedirectParams(p.params, p.pgrads)
	}
	st.in = st.tp.Input(st.y)
	st.out = p.b.Dynamics.Eval(st.tp, t, st.in)
	return st
}

// putStageTape gives a stage tape back to the Block's pool (once: with FSAL
// methods one tape is the last stage of a step and the first of the next).
func (p *pass[T]) putStageTape(st *stageTape[T]) {
	if st == nil || st.free {
		return
	}
	st.free = true
	st.tp.Reset()
	st.in, st.out = autograd.Var[T]{}, autograd.Var[T]{}
	p.b.stagePool = append(p.b.stagePool, st)
}

// trimStagePool lets go of pooled tapes beyond what this pass used, so that
// one long solve does not keep its memory for good.
func (p *pass[T]) trimStagePool() {
	b := p.b
	for len(b.stagePool) > p.stagesTaken {
		last := len(b.stagePool) - 1
		b.stagePool[last].tp.Release()
		b.stagePool[last] = nil
		b.stagePool = b.stagePool[:last]
	}
}

// backpropRecorder files each evaluation of the forward solve, recorded on a
// tape of its own, as a stage of the step it belongs to.
type backpropRecorder[T tensor.Float] struct {
	p       *pass[T]
	kind    evalKind
	stage   int
	stage0  *stageTape[T]
	pending []*stageTape[T]
}

func (r *backpropRecorder[T]) onEval(kind evalKind, stage int) { r.kind, r.stage = kind, stage }

func (r *backpropRecorder[T]) eval(t float64, y, dy []T) (err error) {
	defer recoverUnlisted(&err)
	st := r.p.newStageTape(t, y)
	copy(dy, st.out.Value().Data())
	switch r.kind {
	case evalProbe:
		r.p.putStageTape(st)
	case evalStage:
		if r.pending == nil {
			r.pending = make([]*stageTape[T], r.p.solver.tb.Stages())
		}
		r.pending[r.stage] = st
	default: // the first stage of the next step (any former one is a step's last stage)
		r.stage0 = st
	}
	return nil
}

func (r *backpropRecorder[T]) onStep(si StepInfo) error {
	if !si.Accepted {
		for i, st := range r.pending {
			r.p.putStageTape(st)
			r.pending[i] = nil
		}
	} else {
		stages := append([]*stageTape[T]{r.stage0}, r.pending[1:]...)
		last := len(r.p.steps)
		r.p.steps[last-1].stages = stages
		if r.p.solver.tb.FSAL {
			r.stage0 = stages[len(stages)-1]
		} else {
			r.stage0 = nil
		}
		clear(r.pending)
	}
	return nil
}

func (r *backpropRecorder[T]) release() {
	for _, st := range append(r.pending, r.stage0) {
		r.p.putStageTape(st)
	}
	for _, st := range r.p.steps {
		for _, s := range st.stages {
			r.p.putStageTape(s)
		}
	}
	r.p.trimStagePool()
}

// needed reports, per stage, whether its evaluation affects the step's
// result: B[i] ≠ 0 or a later stage reads it.
func needed(tb *Tableau) []bool {
	s := tb.Stages()
	out := make([]bool, s)
	for i := range out {
		out[i] = tb.B[i] != 0
		for l := i + 1; l < s; l++ {
			out[i] = out[i] || tb.A[l][i] != 0
		}
	}
	return out
}

// stepsBackward is the backward pass of Backprop and Checkpoint: the adjoint
// of each accepted step, last to first.
func (p *pass[T]) stepsBackward(g *tensor.Tensor[T]) ([]*tensor.Tensor[T], error) {
	tb := p.solver.tb
	s := tb.Stages()
	need := needed(tb)
	n := p.n
	// Work buffers from the outer tape: valid until its next Reset, after
	// this backward (ybar, the gradient of z0, is returned, and only read).
	ybar := p.tp.Scratch(n).Data()
	clear(ybar)
	acc := p.tp.Scratch(n).Data()
	kbar := make([][]T, s)
	for i := range kbar {
		kbar[i] = p.tp.Scratch(n).Data()
	}
	var st Stats
	// Checkpoint recomputes each step on tapes reused from step to step, and
	// kept in the Block from pass to pass while the shapes stay the same.
	var tapes []*stageTape[T]
	if p.b.Mode == Checkpoint {
		tapes = p.checkpointTapes(s)
	}
	defer func() {
		for _, sp := range p.steps {
			for _, x := range sp.stages {
				p.putStageTape(x)
			}
			if sp.y0 != nil {
				p.b.statePool = append(p.b.statePool, sp.y0)
			}
		}
		if pool := p.b.statePool; len(pool) > len(p.steps) {
			clear(pool[len(p.steps):])
			p.b.statePool = pool[:len(p.steps)]
		}
		p.trimStagePool()
	}()
	row := func(k int) []T { return g.Slice(k, k+1).Data() }
	for j := len(p.steps) - 1; j >= 0; j-- {
		sp := &p.steps[j]
		if sp.out > 0 {
			axpy(ybar, 1, row(sp.out))
		}
		stages := sp.stages
		if p.b.Mode == Checkpoint {
			nfe, err := p.recomputeStep(sp, tapes, need)
			st.NFE += nfe
			if err != nil {
				p.b.stats.Backward = st
				return nil, err
			}
			stages = tapes
		}
		// The adjoint of y1 = y0 + h·Σ b_i k_i, k_i = F(t_i, y0 + h·Σ a_il k_l).
		copy(acc, ybar)
		for i := range kbar {
			clear(kbar[i])
			if tb.B[i] != 0 {
				axpy(kbar[i], T(sp.h*tb.B[i]), ybar)
			}
		}
		for i := s - 1; i >= 0; i-- {
			if !need[i] {
				continue
			}
			x := stages[i]
			if err := x.tp.BackwardWith(x.out, tensor.FromSlice(kbar[i], p.shape...)); err != nil {
				p.b.stats.Backward = st
				return nil, fmt.Errorf("odeblock: backward through the step at t=%g, stage %d: %w", sp.t, i, err)
			}
			st.NFE++
			ybarI := x.in.Grad().Data()
			axpy(acc, 1, ybarI)
			for l, a := range tb.A[i] {
				if a != 0 {
					axpy(kbar[l], T(sp.h*a), ybarI)
				}
			}
		}
		copy(ybar, acc)
		st.Accepted++
		// Backprop: this step's tapes are spent (its last stage was the
		// next step's first, already pulled back): let them go now.
		for i, x := range sp.stages {
			p.putStageTape(x)
			sp.stages[i] = nil
		}
	}
	axpy(ybar, 1, row(0))
	p.b.stats.Backward = st
	out := make([]*tensor.Tensor[T], 1+len(p.params))
	out[0] = tensor.FromSlice(ybar, p.shape...)
	copy(out[1:], p.pgrads) // nil without gradients
	return out, nil
}

// adjointBackward solves the adjoint system backward over each interval of
// Times, re-anchoring the state to the forward solution at each output time
// and adding that time's output gradient to the adjoint.
func (p *pass[T]) adjointBackward(g *tensor.Tensor[T]) ([]*tensor.Tensor[T], error) {
	n := p.n
	sizes := make([]int, len(p.params))
	m := 0
	for j, prm := range p.params {
		sizes[j] = prm.Value.Len()
		m += sizes[j]
	}
	opt := p.adjointOptions(sizes)
	w := p.adjointWork(sizes)
	p.b.dropStaleViews()
	s := w.solver
	if err := s.configure(opt); err != nil {
		return nil, err
	}
	f := p.augmented(w)
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
	ai := len(p.anchors) - 1 // the latest anchor not passed yet
	for k := N; k >= 1; k-- {
		// The stretch from ts[k] back to ts[k−1], cut at the anchors
		// strictly inside it (latest first); z is re-anchored to the
		// forward solution at the start of each piece.
		t1, z1 := p.ts[k], row(p.traj, k)
		for ai >= 0 && (t1-p.anchors[ai].t)*dir <= 0 {
			ai-- // at or past ts[k]: an output time or the end
		}
		for last := false; !last; {
			t0, z0 := p.ts[k-1], row(p.traj, k-1)
			last = true
			if ai >= 0 && (p.anchors[ai].t-t0)*dir > 0 {
				t0, z0, last = p.anchors[ai].t, p.anchors[ai].z, false
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
			if err := p.checkDrift(other[:n], z0, z1, t1, t0, opt.RTol, opt.ATol); err != nil {
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

// adjointOptions returns the options of the backward solve: the forward's,
// all of them (as torchdiffeq's adjoint takes its forward options by
// default), with AdjointOptions' tolerances and step limit, and the error
// norm over the augmented state [z, a, g_θ] (g_θ's parts of sizes). The
// step hook is the user's (the forward's may have been the block's own
// recorder).
func (p *pass[T]) adjointOptions(sizes []int) Options {
	n := p.n
	opt := p.solver.opt
	opt.Tableau, opt.Method = p.solver.tb, ""
	opt.Phase, opt.ErrorLen, opt.ErrorParts, opt.OnStep = "backward", 0, nil, p.b.Solver.OnStep
	adj := p.b.Adjoint
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

// recomputeStep re-records the stages of the accepted step sp that the
// backward pass needs (need[i]; with the ones before them) on tapes, from
// the state Checkpoint kept at its start, and returns the evaluations
// taken.
func (p *pass[T]) recomputeStep(sp *step[T], tapes []*stageTape[T], need []bool) (nfe int, err error) {
	tb := p.solver.tb
	last := 0
	for i := range need {
		if need[i] {
			last = i
		}
	}
	for i := 0; i <= last; i++ {
		y := tapes[i].y.Data()
		copy(y, sp.y0)
		for l, a := range tb.A[i] {
			if a != 0 {
				axpy(y, T(sp.h*a), tapes[l].out.Value().Data())
			}
		}
		ti := sp.t0eval
		if i > 0 {
			ti = stageTime(sp.t, sp.h, sp.end, tb.C[i], sp.leftLimit)
		}
		x := tapes[i]
		x.tp.Reset()
		if p.pgrads != nil {
			x.tp.RedirectParams(p.params, p.pgrads)
		}
		if err := p.recordStage(x, ti); err != nil {
			return nfe, err
		}
		nfe++
	}
	return nfe, nil
}

// recoverUnlisted turns the panic of a parameter that the dynamics read but
// do not list in Params() (autograd.UnlistedParamError) into *err; other
// panics go on. Call it deferred.
func recoverUnlisted(err *error) {
	r := recover()
	if r == nil {
		return
	}
	u, ok := r.(*autograd.UnlistedParamError)
	if !ok {
		panic(r)
	}
	*err = fmt.Errorf("odeblock: the dynamics read parameter %q, which their Params() does not list: list it there (its gradient would be wrong or lost), or read it with Tape.Const to hold it constant", u.Name)
}

// recordStage records the dynamics at time t on the stage tape x, whose
// input x.y is set.
func (p *pass[T]) recordStage(x *stageTape[T], t float64) (err error) {
	defer recoverUnlisted(&err)
	x.in = x.tp.Input(x.y)
	x.out = p.b.Dynamics.Eval(x.tp, t, x.in)
	return nil
}

// checkDrift returns ErrAdjointDrift, with the numbers, when the backward
// segment from t1 to t0 (where the forward solution is z1) reconstructed
// the state z0 as zr with a relative difference above the block's
// AdjointOptions.MaxDrift. The difference is relative to the larger of the
// segment's two end states (a state that starts at 0 and grows is
// measured against its size, not against 0), and at least ATol·√n.
func (p *pass[T]) checkDrift(zr, z0, z1 []T, t1, t0, rtol, atol float64) error {
	bound := p.b.Adjoint.MaxDrift
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
func (p *pass[T]) augmented(w *adjointWork[T]) Func[T] {
	n := p.n
	pb, dg, sizes := w.pb, w.dg, w.sizes
	special, ok := p.b.Dynamics.(Adjointer[T])
	if p.b.Adjoint.Generic {
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

// checkpointTapes returns the block's s stage tapes for recomputing steps,
// with input buffers shaped like the state, making them when they do not fit.
func (p *pass[T]) checkpointTapes(s int) []*stageTape[T] {
	ts := p.b.ckTapes
	if len(ts) == s && ts[0].tp.Engine() == p.eng && ts[0].y.HasShape(p.shape...) {
		return ts
	}
	ts = make([]*stageTape[T], s)
	for i := range ts {
		ts[i] = &stageTape[T]{tp: autograd.NewTape(p.eng), y: tensor.New[T](p.shape...)}
	}
	p.b.ckTapes = ts
	return ts
}
