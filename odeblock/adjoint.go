package odeblock

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"

	"github.com/adamnode/adamnode/odeblock/internal/hooks"

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
	// MaxDrift means the adjoint computed along z̃ would be wrong: the
	// block recovers, or fails with ErrAdjointDrift (FailOnDrift). (The reverse solve of a
	// dissipative system amplifies its errors: torchdiffeq returns such
	// gradients without a word.) A positive MaxDrift is the bound; a
	// negative value turns the check off. 0, the default, scales with the
	// tolerance asked for: the drift must be at most 10 × RTol (the larger
	// of the forward's and the backward solve's) once weighted by how much
	// the adjoint shrank over the segment (min(1, ‖a(t0)‖/‖a(t1)‖): where
	// the dynamics contract, the
	// adjoint fades backward as fast as the reconstruction's error grows,
	// and that error weighs on the gradient only as much), and at most
	// max(1e-2, 10 × RTol) unweighted. Measured, a tanh-MLP family's
	// gradient is then off by about its drift: the default adjoint's
	// gradient stays within about 10 × the tolerance (and 10 × Checkpoint's
	// error) or is recovered — where a fixed 1e-2 let HBNODE's over
	// [0, 100] at RTol 1e-8 be 4e-3 off in silence.
	MaxDrift float64
	// FailOnDrift makes a reconstruction that drifts (or a backward solve
	// that fails with a step size underflow or NaN, the usual sign of a
	// diverging reconstruction) an error of the backward pass. By default
	// the block recovers instead: it re-solves the forward over the stretch
	// between the two states of the forward solution it knows (output
	// times, anchors), keeping the state at every step, and runs the
	// backward through them, re-anchoring at each (the evaluations count
	// in the backward pass's). The result is checked the same way; what
	// still drifts is an error.
	FailOnDrift bool
}

// defaultMaxDrift is the default bound of the unweighted drift for
// tolerances up to 1e-3 (Adjoint.MaxDrift).
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

func (m Adjoint) stepsOnly() GradMode { return m }

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
	anchors []anchor[T]   // with AnchorEvery: forward states, in time order
	seen    []stretchSeen // per interval of Times

	// log, for the Interpolated mode, keeps the forward's dense output:
	// the backward solve reads the state from it instead of
	// reconstructing it.
	log hooks.DenseLog[T]
	// budget, with log, bounds the forward states kept: the forward keeps
	// at most budget of them (thinned by halves as the steps grow) instead
	// of every step's dense output, and the backward re-solves each
	// stretch between two of them, logging its dense output, before
	// solving the adjoint over it. maxLog is the most steps logged at once.
	budget, maxLog int

	// The backward pass's: its options, buffers and augmented system, the
	// next anchor to pass, the pieces of the current stretch, the work
	// done.
	bopt   Options
	w      *adjointWork[T]
	f      hooks.TensorEvalFunc[T]
	next   int
	pieces []anchor[T]
	stats  Stats
	mask   []bool // the state's pure integrals (integrals); empty for none
	// drifted are the columns of the last drift checkDrift found
	// (driftColumns), for the recovery's report (noteDrift).
	drifted []int

	// Where the phase under way computes (setPhase, adjointpath.go): on
	// the device (onDev) or in host memory, with ew.
	onDev bool
	ew    tensor.Elementwise[T]
}

// anchor is a state of the forward solution the adjoint re-anchors to: z,
// flat (n elements), is an output row of the trajectory or a state kept
// in the block's pool.
type anchor[T tensor.Float] struct {
	t float64
	z *tensor.Tensor[T]
}

func (a *adjoint[T]) stepEnds() bool { return false }

// forwardOnDevice: the forward solve may run on a device, the
// Interpolated mode's keeping its dense output there, but for that mode
// with a Budget (its states and the stretches it re-solves are kept on the
// host).
func (a *adjoint[T]) forwardOnDevice() bool { return a.log == nil || a.budget == 0 }
func (a *adjoint[T]) abort()                {}

// forward evaluates the dynamics with no tape and keeps nothing but, with
// AnchorEvery, every AnchorEvery-th accepted step's state.
//
// It also notes, per interval of Times, how many steps the forward took
// and the largest state it passed: a backward solve that takes far more
// steps, or whose reconstruction grows far larger, is diverging, and is
// stopped early (guard) rather than left to run to MaxSteps.
func (a *adjoint[T]) forward() func(StepInfo[T]) error {
	ts := a.p.ts
	a.seen = make([]stretchSeen, len(ts)-1)
	dir := math.Copysign(1, ts[1]-ts[0])
	count, cur := 0, 0
	if a.log != nil && a.budget == 0 {
		hk[T]().SetDenseLog(a.p.solver, a.log)
	}
	// The backward solve of [z, a, g_θ] takes the forward's slab in turn:
	// sized for it now, the forward's own is not dropped at the first
	// backward pass (garbage as large as the forward's buffers).
	m := 0
	for _, prm := range a.p.params {
		m += prm.Value.Len()
	}
	if need := hk[T]().SlabLen(a.p.solver, 2*a.p.n+m); len(a.p.b.slab) < need {
		a.p.b.slab = make([]T, need)
	}
	a.w = a.p.adjointWork(a.sizes())
	a.setPhase(a.p.onDev)
	pools := &a.p.b.pools
	keep := func(t float64, z *tensor.Tensor[T]) {
		a.anchors = append(a.anchors, anchor[T]{t: t, z: pools.takeState(a.ew, z, a.w.flat)})
	}
	every := 1 // with budget: the steps between kept states
	return func(si StepInfo[T]) error {
		if !si.Accepted {
			return nil
		}
		for cur < len(a.seen)-1 && (si.End-ts[cur+1])*dir > 0 {
			cur++
		}
		a.seen[cur].steps++
		z := a.stepState(si) // one number read on a device
		a.seen[cur].norm2 = math.Max(a.seen[cur].norm2, a.sumSquares(z))
		if count++; a.opt.AnchorEvery > 0 && count%a.opt.AnchorEvery == 0 {
			keep(si.End, z)
		}
		if a.budget > 0 && count%every == 0 {
			keep(si.End, z)
			if len(a.anchors) > a.budget {
				// Keep the states every 2·every steps: those at odd
				// positions (the first is at step every); the others'
				// memory goes back to the block's pool.
				kept := a.anchors[:0]
				for i, an := range a.anchors {
					if i%2 == 1 {
						kept = append(kept, an)
					} else {
						a.p.b.pools.putState(an.z)
					}
				}
				clear(a.anchors[len(kept):])
				a.anchors = kept
				every *= 2
			}
		}
		return nil
	}
}

// sizes returns the number of elements of each parameter.
func (a *adjoint[T]) sizes() []int {
	sizes := make([]int, len(a.p.params))
	for j, prm := range a.p.params {
		sizes[j] = prm.Value.Len()
	}
	return sizes
}

// stretchSeen is what the forward solve saw between two output times: the
// steps that ended there and the largest squared norm of their states.
type stretchSeen struct {
	steps int
	norm2 float64
}

// norm2 returns ‖x‖₂², summed in float64.
func norm2[T tensor.Float](x []T) float64 {
	if adamKernels != "go" && len(x) > 0 {
		switch f := any(x).(type) {
		case []float32:
			if adamKernels == "avx512" {
				return norm2AVX512(&f[0], len(f))
			}
			return norm2AVX2(&f[0], len(f))
		case []float64:
			if adamKernels == "avx512" {
				return norm2F64AVX512(&f[0], len(f))
			}
			return norm2F64AVX2(&f[0], len(f))
		}
	}
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return s
}

// guard returns a step hook for the backward piece from hi to lo inside
// the stretch the forward saw as seen: it stops the solve with
// ErrAdjointDrift once it has tried more than 4 × the forward's steps
// + 20, or once the reconstructed state is more than twice as large as
// any the forward passed there — the signs of a reconstruction that
// diverges, which would otherwise run on to MaxSteps before failing.
func (a *adjoint[T]) guard(seen stretchSeen, hi, lo anchor[T]) func(StepInfo[T]) error {
	n := a.p.n
	limit := 4*seen.steps + 20
	big := 4 * math.Max(seen.norm2, math.Max(a.anchorNorm2(hi), a.anchorNorm2(lo)))
	big = math.Max(big, float64(n)*a.bopt.ATol*a.bopt.ATol)
	tried := 0
	return func(si StepInfo[T]) error {
		tried++
		if tried > limit {
			return fmt.Errorf("odeblock: backward solve from t=%g to t=%g: %w: %d steps tried where the forward took %d", hi.t, lo.t, ErrAdjointDrift, tried, seen.steps)
		}
		if r := a.stepNorm2(si); r > big || math.IsNaN(r) {
			return fmt.Errorf("odeblock: backward solve from t=%g to t=%g: %w: the reconstructed state reached norm %.3g at t=%g, the forward's at most %.3g", hi.t, lo.t, ErrAdjointDrift, math.Sqrt(r), si.End, math.Sqrt(big/4))
		}
		return nil
	}
}

// backward solves the adjoint system backward over each interval of
// Times, re-anchoring the state to the forward solution at each output time
// (and anchor) and adding that time's output gradient to the adjoint.
func (a *adjoint[T]) backward(g *tensor.Tensor[T]) ([]*tensor.Tensor[T], error) {
	p := a.p
	p.b.stats.Stored = len(a.anchors)
	if a.log != nil && a.budget == 0 {
		p.b.stats.Stored = a.log.Len()
	}
	defer func() {
		if a.budget > 0 {
			p.b.stats.Stored = len(a.anchors) + a.maxLog // states, and steps logged at once
		}
		for _, an := range a.anchors {
			p.b.pools.putState(an.z)
		}
		a.anchors = nil
	}()
	n := p.n
	sizes := a.sizes()
	a.bopt = a.options(sizes)
	w := p.adjointWork(sizes)
	a.w = w
	w.dropStaleParts(p.b.slab)
	if err := w.solver.Configure(a.bopt); err != nil {
		return nil, err
	}
	w.solver.OnStep = p.b.OnStep
	w.solver.StepStatesOnDevice = p.b.OnStep == nil
	a.setPhase(a.backwardOnDevice())
	a.f = a.augmented()
	a.fillMask()
	a.stats = Stats{}
	defer func() { p.b.stats.Backward = a.stats }()
	if a.log != nil {
		defer p.b.pools.giveLog(a.log) // read by the backward solve only
	}
	a.ew.Fill(w.y, 0) // a and g_θ start at zero
	gs := w.gRows.get(g, n)
	adj := w.part(w.y, n, 0, w.flat) // the augmented state's a
	N := len(p.ts) - 1
	a.ew.Copy(adj, gs[N])
	a.next = len(a.anchors) - 1
	for k := N; k >= 1; k-- {
		pieces := a.stretch(k)
		for i := 0; i+1 < len(pieces); i++ {
			if err := a.piece(pieces[i], pieces[i+1], k); err != nil {
				return nil, err
			}
		}
		w.terms[0] = gs[k-1]
		a.ew.LinComb(adj, adj, w.one, w.terms)
	}
	// Views of the adjoint's buffer: the tape only reads what a custom
	// node's backward returns, before this block's next backward.
	grads := make([]*tensor.Tensor[T], 1, 1+len(sizes))
	grads[0] = w.part(w.y, n, 1, p.shape)
	off := 2 * n
	for j, sz := range sizes {
		grads = append(grads, w.part(w.y, off, 2+j, w.shapes[j]))
		off += sz
	}
	return grads, nil
}

// stretch returns the states of the forward solution the backward solve
// re-anchors to from ts[k] back to ts[k−1]: z at ts[k], the anchors
// strictly inside (latest first), z at ts[k−1].
func (a *adjoint[T]) stretch(k int) []anchor[T] {
	p := a.p
	dir := 1.0
	if p.ts[len(p.ts)-1] < p.ts[0] {
		dir = -1
	}
	t1, t0 := p.ts[k], p.ts[k-1]
	rows := a.w.trajRows.get(p.traj, p.n) // the output rows where they are
	out := append(a.pieces[:0], anchor[T]{t: t1, z: rows[k]})
	for a.next >= 0 && (t1-a.anchors[a.next].t)*dir <= 0 {
		a.next-- // at or past ts[k]: an output time or the end
	}
	for a.next >= 0 && (a.anchors[a.next].t-t0)*dir > 0 {
		out = append(out, a.anchors[a.next])
		a.next--
	}
	a.pieces = append(out, anchor[T]{t: t0, z: rows[k-1]})
	return a.pieces
}

// piece solves the adjoint system from hi back to lo, from the augmented
// state in w.y with z re-anchored to hi.z, leaving the end in w.y, and
// checks the reconstruction of z against lo.z. When the reconstruction
// fails or drifts and recovery is allowed (k > 0: the piece lies in the
// interval of Times ending at ts[k]; without FailOnDrift), the forward is
// re-solved over the piece and the backward re-run through its every step
// (recover).
func (a *adjoint[T]) piece(hi, lo anchor[T], k int) error {
	n, w := a.p.n, a.w
	if a.budget > 0 {
		if err := a.relog(hi, lo); err != nil {
			return err
		}
	}
	recovery := k > 0 && !a.opt.FailOnDrift
	a.ew.Copy(w.part(w.y, 0, 0, w.flat), hi.z)
	if recovery && a.seen != nil && a.opt.MaxDrift >= 0 {
		w.solver.OnStep = chainHooks(a.guard(a.seen[k-1], hi, lo), a.p.b.OnStep)
	}
	w.outs[0], w.outs[1] = w.y, w.other // outs[0] is y0 itself
	st, err := a.solve(w.solver, a.f, w.y, []float64{hi.t, lo.t}, w.outs[:])
	a.stats = a.stats.Add(st)
	if err == nil {
		a1 := math.Sqrt(a.sumSquares(w.part(w.y, n, 0, w.flat)))
		a0 := math.Sqrt(a.sumSquares(w.part(w.other, n, 0, w.flat)))
		err = a.checkDrift(w.part(w.other, 0, 0, w.flat), lo.z, hi.z, hi.t, lo.t, a.driftRTol(k), a1, a0)
	}
	w.solver.OnStep = a.p.b.OnStep
	return a.settle(err, recovery, hi, lo, func() { a.ew.Copy(w.y, w.other) })
}

// driftRTol returns the tolerance a backward piece's drift is measured
// against: the looser of the backward's and the forward's (the drift holds
// the forward's error too), or +Inf for a piece of a recovery (k = 0: one
// step re-anchored at both ends, where only the gross bound applies).
func (a *adjoint[T]) driftRTol(k int) float64 {
	if k == 0 {
		return math.Inf(1)
	}
	return math.Max(a.bopt.RTol, a.p.solver.Options().RTol)
}

// settle ends the backward piece from hi to lo whose solve and drift check
// returned err: with none, accept takes the piece's end as the state to go
// on from; a drift, an underflow or a non-finite state is recovered from
// (recover) when recovery is allowed; any other error is returned.
func (a *adjoint[T]) settle(err error, recovery bool, hi, lo anchor[T], accept func()) error {
	switch {
	case err == nil:
		accept()
		return nil
	case recovery && (errors.Is(err, ErrAdjointDrift) || errors.Is(err, ErrStepUnderflow) || errors.Is(err, ErrNonFinite)):
		a.p.b.stats.Recovered++
		a.p.b.noteDrift(a.drifted, a.p.shape, err)
		a.drifted = nil
		if rerr := a.recover(hi, lo); rerr != nil {
			return fmt.Errorf("%w (after %w)", rerr, err)
		}
		return nil
	}
	return err
}

// noteDrift adds the columns whose drift (err) made the adjoint re-solve a
// stretch to the block's DriftColumns and, the first time for the block, says
// so in the log: re-solving costs evaluations, and a column that only
// accumulates an integral (IntegralParts) need not cause it.
func (b *Block[T]) noteDrift(cols, shape []int, err error) {
	for _, c := range cols {
		if !slices.Contains(b.driftCols, c) {
			b.driftCols = append(b.driftCols, c)
		}
	}
	if b.driftSaid || cols == nil {
		return
	}
	b.driftSaid = true
	slog.Warn("odeblock: the adjoint re-solved a stretch whose backward reconstruction drifted, which costs evaluations (BlockStats.Recovered, Block.DriftColumns); if these columns only accumulate an integral that no evaluation reads (a log-density, a running cost), list them with an Integrals(shape) method (odeblock.IntegralParts) and the adjoint will not re-solve for them",
		"columns", cols, "state", fmt.Sprint(shape), "drift", err.Error())
}

// relog re-solves the forward from lo to hi (kept states of the forward
// solution) into the dense log the backward piece over them reads.
func (a *adjoint[T]) relog(hi, lo anchor[T]) error {
	a.log.Reset()
	if err := a.resolve(hi, lo, a.log, nil); err != nil {
		return fmt.Errorf("odeblock: re-solving the forward from t=%g to t=%g for its dense output: %w", lo.t, hi.t, err)
	}
	a.maxLog = max(a.maxLog, a.log.Len())
	return nil
}

// resolve re-solves the forward from lo to hi on the forward's solver
// (idle during backward), keeping its dense output in keep and calling
// onStep after each step when they are not nil. Its evaluations count in
// the backward pass's.
func (a *adjoint[T]) resolve(hi, lo anchor[T], keep hooks.DenseLog[T], onStep func(StepInfo[T]) error) error {
	p := a.p
	s := p.solver
	hk[T]().SetDenseLog(s, keep)
	s.OnStep = onStep
	// From lo's state where it is: on the device when the phase runs
	// there (solve sets the solver's device mode).
	outs := []*tensor.Tensor[T]{p.tp.Scratch(p.shape...), p.tp.Scratch(p.shape...)}
	st, err := a.solve(s, p.valueEval(a.ew), lo.z.Reshape(p.shape...), []float64{lo.t, hi.t}, outs)
	hk[T]().SetDenseLog(s, nil)
	s.OnStep = nil
	a.stats = a.stats.Add(st)
	return err
}

// recover re-solves the forward from lo to hi with the forward's options,
// keeping the state at every accepted step (in the block's pool, where
// the phase computes), and runs the backward piece from hi to lo through
// them, re-anchoring at each: the adjoint with checkpoints, for this piece
// only, in memory for its steps. Its evaluations count in the backward
// pass's.
func (a *adjoint[T]) recover(hi, lo anchor[T]) error {
	var states []anchor[T]
	pools := &a.p.b.pools
	defer func() {
		for _, an := range states {
			pools.putState(an.z)
		}
	}()
	err := a.resolve(hi, lo, nil, func(si StepInfo[T]) error {
		switch {
		case !si.Accepted || si.End == hi.t:
		default:
			states = append(states, anchor[T]{t: si.End, z: pools.takeState(a.ew, a.stepState(si), a.w.flat)})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("odeblock: re-solving the forward from t=%g to t=%g to re-anchor the adjoint: %w", lo.t, hi.t, err)
	}
	for i := len(states) - 1; i >= -1; i-- {
		next := lo
		if i >= 0 {
			next = states[i]
		}
		if err := a.piece(hi, next, 0); err != nil {
			return err
		}
		hi = next
	}
	return nil
}

// options returns the options of the backward solve: the forward's, all
// of them (as torchdiffeq's adjoint takes its forward options by default),
// with the Adjoint's tolerances and step limit, and the error norm over
// the augmented state [z, a, g_θ] (g_θ's parts of sizes).
func (a *adjoint[T]) options(sizes []int) Options {
	p := a.p
	n := p.n
	opt := p.solver.Options()
	opt.Tableau, opt.Method = p.solver.Tableau(), ""
	opt.Phase, opt.ErrorLen, opt.ErrorParts = "backward", 0, nil
	opt.ErrorRows, opt.ErrorRowLen = 0, 0 // a forward's Block.RowErrors: the norm is set below
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
	// The parameters' gradients are quadratures: nothing reads them, so
	// the steps form no stage inputs for them and skip the weight-gradient
	// products at the stages nothing weights (dopri5's second).
	opt.Quadrature = 0
	for _, l := range sizes {
		opt.Quadrature += l
	}
	return opt
}

// checkDrift returns ErrAdjointDrift, with the numbers, when the backward
// segment from t1 to t0 (where the forward solution is z1) reconstructed
// the state z0 as zr too far from it, leaving out the elements that are
// pure integrals (IntegralParts). The drift is the relative
// difference ‖zr − z0‖ / max(‖z0‖, ‖z1‖, ATol·√n) (a state that starts at
// 0 and grows is measured against its size, not against 0). With an
// Adjoint.MaxDrift it must be at most that. By default it must be at most
// max(1e-2, 10·rtol) (defaultMaxDrift: the reconstruction is sane), and,
// weighted by how much the adjoint shrank over the segment,
// min(1, ‖a(t0)‖/‖a(t1)‖) (a1 and a0: the norms at the two ends), at most
// 10·rtol (tolDriftFactor): the state error the gradient sees is then of
// the order of the tolerance. An infinite rtol asks for the first test
// only, at 1e-2.
func (a *adjoint[T]) checkDrift(zr, z0, z1 *tensor.Tensor[T], t1, t0, rtol, a1, a0 float64) error {
	bound := a.opt.MaxDrift
	if bound < 0 {
		return nil
	}
	w, ew := a.w, a.ew
	// The three sums over the elements the mask keeps (1; 0 for a pure
	// integral, whose error reaches no gradient), in w.diff in turn.
	mask := w.mask
	w.terms[0] = z0
	ew.LinComb(w.diff, zr, w.minusOne, w.terms)
	ew.Binary(tensor.BinaryMul, w.diff, w.diff, mask)
	dd := a.sumSquares(w.diff)
	ew.Binary(tensor.BinaryMul, w.diff, z0, mask)
	zz0 := a.sumSquares(w.diff)
	ew.Binary(tensor.BinaryMul, w.diff, z1, mask)
	zz1 := a.sumSquares(w.diff)
	rel := math.Sqrt(dd) / math.Max(math.Sqrt(math.Max(zz0, zz1)), a.bopt.ATol*math.Sqrt(float64(z0.Len())))
	err := driftVerdict(rel, bound, rtol, a1, a0, t1, t0)
	if err != nil && !a.onDev { // named from the states in host memory
		a.drifted = driftColumns(zr.ReadData(), z0.ReadData(), a.integrals(), a.width())
	}
	return err
}

// fillMask fills w.mask, the elements the drift check sums: 1, and 0 for
// the state's pure integrals (integrals).
func (a *adjoint[T]) fillMask() {
	w := a.w
	a.ew.Fill(w.mask, 1)
	if m := a.integrals(); m != nil {
		d := w.mask.Data()
		for i, integral := range m {
			if integral {
				d[i] = 0
			}
		}
	}
}

// width returns the length of the state's last axis (1 for an adjoint
// without a pass, as a unit test's).
func (a *adjoint[T]) width() int {
	if a.p == nil || len(a.p.shape) == 0 {
		return 1
	}
	return a.p.shape[len(a.p.shape)-1]
}

// driftColumns returns the columns (indices along the state's last axis,
// of width d) of the elements of zr that differ from z0 most, the largest
// squared difference first: as many as hold nine tenths of it. Elements
// in mask are left out.
func driftColumns[T tensor.Float](zr, z0 []T, mask []bool, d int) []int {
	sums := make([]float64, d)
	var total float64
	for i, v := range z0 {
		if mask != nil && mask[i] {
			continue
		}
		e := float64(zr[i]) - float64(v)
		sums[i%d] += e * e
		total += e * e
	}
	cols := make([]int, d)
	for c := range cols {
		cols[c] = c
	}
	slices.SortStableFunc(cols, func(x, y int) int { return cmp.Compare(sums[y], sums[x]) })
	var held float64
	for k, c := range cols {
		held += sums[c]
		if !(held < 0.9*total) {
			return cols[:k+1]
		}
	}
	return cols
}

// integrals returns the mask of the state's pure integrals when the
// dynamics have any (IntegralParts), else nil; made once per pass.
func (a *adjoint[T]) integrals() []bool {
	if a.mask == nil {
		a.mask = []bool{}
		if a.p == nil || a.p.b == nil {
			return nil
		}
		if ip, ok := a.p.b.Dynamics.(IntegralParts); ok {
			if m := ip.Integrals(a.p.shape); len(m) == a.p.n {
				a.mask = m
			}
		}
	}
	if len(a.mask) == 0 {
		return nil
	}
	return a.mask
}

// driftVerdict is checkDrift's decision for a drift rel (see there): nil
// or ErrAdjointDrift; NaN fails.
func driftVerdict(rel, maxDrift, rtol, a1, a0, t1, t0 float64) error {
	if maxDrift > 0 {
		if rel <= maxDrift { // false for NaN
			return nil
		}
		return fmt.Errorf("odeblock: backward solve from t=%g to t=%g: %w: relative difference %.3g (Adjoint.MaxDrift %g); the adjoint along it would give wrong gradients: use Interpolated{}, Checkpoint{} or Recursive{}, or anchors (Adjoint.AnchorEvery, more output Times)", t1, t0, ErrAdjointDrift, rel, maxDrift)
	}
	gross := defaultMaxDrift
	if !math.IsInf(rtol, 1) {
		gross = math.Max(gross, tolDriftFactor*rtol)
	}
	if !(rel <= gross) {
		return fmt.Errorf("odeblock: backward solve from t=%g to t=%g: %w: relative difference %.3g (at most %g by default); the adjoint along it would give wrong gradients: use Interpolated{}, Checkpoint{} or Recursive{}, or anchors (Adjoint.AnchorEvery, more output Times)", t1, t0, ErrAdjointDrift, rel, gross)
	}
	weight := 1.0
	if a1 > 0 && a0 < a1 {
		weight = a0 / a1
	}
	if w := rel * weight; !(w <= tolDriftFactor*rtol) {
		return fmt.Errorf("odeblock: backward solve from t=%g to t=%g: %w: relative difference %.3g, %.3g weighted by the adjoint's shrinking, above %g × RTol %g; the adjoint along it would give gradients less accurate than the tolerance asks", t1, t0, ErrAdjointDrift, rel, w, tolDriftFactor, rtol)
	}
	return nil
}

// tolDriftFactor × RTol (the looser of the forward's and the backward
// solve's) bounds the default drift check's weighted drift (see
// checkDrift).
const tolDriftFactor = 10.0

// augmented returns the right-hand side of the adjoint system on the flat
// state [z, a, g_θ]: z' = F(t, z), a' = −aᵀ·∂F/∂z, g_θ' = −aᵀ·∂F/∂θ. In
// host memory the dynamics' own adjoint (Adjointer, unless Generic)
// computes it; otherwise, and always on a device, one VJP of the whole
// dynamics, F(z) copied into dz and the cotangents negated by ew.
func (a *adjoint[T]) augmented() hooks.TensorEvalFunc[T] {
	p, w, ew := a.p, a.w, a.ew
	n, shape := p.n, p.shape
	special, fused := p.b.Dynamics.(Adjointer[T])
	fused = fused && !a.opt.Generic && !a.onDev
	dyn := p.b.Dynamics
	family := takesNilGrads(dyn)
	dst := autograd.VJPDest[T]{Inputs: make([]*tensor.Tensor[T], 1), Params: p.params, ParamGrads: w.vjpGrads}
	var now float64
	eval := func(tp *autograd.Tape[T], in []autograd.Var[T]) autograd.Var[T] {
		return dyn.Eval(tp, now, in[0])
	}
	// The Interpolated mode's: the state from the forward's dense output;
	// the z part of the augmented state stays as it is (dz = 0).
	log := a.log
	var zlog, zlogShaped *tensor.Tensor[T] // flat, as the log writes it
	if log != nil {
		zlog = tensor.New[T](n)
		zlogShaped = zlog.Reshape(shape...)
	}
	return func(_ hooks.EvalKind, _ int, t float64, y, dy *tensor.Tensor[T]) (err error) {
		defer recoverUnlisted(&err)
		if a.onDev {
			// dy whole on the device first: its parts are then written
			// into its copy in place.
			ew.Fill(dy, 0)
		}
		z, adj := w.part(y, 0, 1, shape), w.part(y, n, 1, shape)
		dz, da := w.part(dy, 0, 1, shape), w.part(dy, n, 1, shape)
		if log != nil {
			log.AtTensor(t, zlog)
			z = zlogShaped
			defer ew.Fill(dz, 0)
		}
		// dy stops at 2n where the solver wants no parameter gradients
		// (Options.Quadrature).
		grads := dy.Len() > 2*n
		if fused {
			off := 2 * n
			for j := range w.dg {
				switch {
				case grads:
					w.dg[j] = w.part(dy, off, 2+j, w.shapes[j])
				case !family: // a user's Adjointer fills every buffer
					w.dg[j] = w.spare(j, p.params[j].Value)
				}
				off += w.sizes[j]
			}
			if !grads && family {
				return special.EvalAdjoint(w.pb, t, z, adj, dz, da, nil)
			}
			return special.EvalAdjoint(w.pb, t, z, adj, dz, da, w.dg)
		}
		// One VJP of the whole dynamics: F(z) and aᵀ·∂F/∂(z, θ), negated.
		// The parameters' gradients are tensors of their own: a host
		// access to one (Conv2DTime's time channel is assembled on the
		// host) then copies that gradient, not the whole augmented state.
		vd := dst
		if !grads {
			vd.ParamGrads, vd.SkipParams = nil, true
		}
		w.at[0], vd.Inputs[0], now = z, da, t
		val, err := w.pb.VJP(eval, w.at, adj, vd)
		w.at[0] = nil
		if err != nil {
			return err
		}
		ew.Copy(dz, val)
		ew.Map(tensor.MapNeg, da, da, 0, 0)
		if grads {
			off := 2 * n
			for j, g := range w.vjpGrads {
				ew.Map(tensor.MapNeg, w.part(dy, off, 2+j, w.shapes[j]), g, 0, 0)
				off += w.sizes[j]
			}
		}
		return nil
	}
}

// takesNilGrads reports whether dyn is one of the package's Adjointers,
// whose EvalAdjoint takes a nil dg where the parameters' gradients are not
// wanted (a stage the solver weights by zero) and skips them. Any other,
// a type embedding one of them included, gets spare buffers to fill.
func takesNilGrads[T tensor.Float](dyn Dynamics[T]) bool {
	f, ok := dyn.(nilGradsAdjointer)
	return ok && f.adjointSelf() == any(dyn)
}

// nilGradsAdjointer is implemented by the package's Adjointers whose
// EvalAdjoint takes a nil dg. adjointSelf returns the receiver itself:
// through a type that embeds one, the promoted method returns the
// embedded value, not the embedding one, which takesNilGrads then refuses
// (its EvalAdjoint may be its own).
type nilGradsAdjointer interface{ adjointSelf() any }

func (d *HBNODE[T]) adjointSelf() any   { return d }
func (d *AdamNODE[T]) adjointSelf() any { return d }

// spare returns a buffer shaped like parameter j's value v, for an
// Adjointer's gradient that nothing reads.
func (w *adjointWork[T]) spare(j int, v *tensor.Tensor[T]) *tensor.Tensor[T] {
	if len(w.spares) != len(w.shapes) {
		w.spares = make([]*tensor.Tensor[T], len(w.shapes))
	}
	if w.spares[j] == nil {
		w.spares[j] = tensor.New[T](v.Shape()...)
	}
	return w.spares[j]
}

// adjointWork holds the buffers of the adjoint solve, kept in the Block
// from pass to pass while the shapes and the engine stay the same.
type adjointWork[T tensor.Float] struct {
	solver *Solver[T]
	pb     *autograd.Pullback[T]
	eng    tensor.Engine[T]
	n      int
	shapes [][]int // the parameters' shapes
	sizes  []int
	// y and other are the augmented state [z, a, g_θ], flat: the state
	// reached and the end of the piece solved; diff and mask the drift
	// check's (n elements).
	y, other, diff, mask *tensor.Tensor[T]
	vjpGrads             []*tensor.Tensor[T]
	dg                   []*tensor.Tensor[T] // an Adjointer's parameter gradients: parts of dy
	spares               []*tensor.Tensor[T] // see spare
	at, terms, outs      []*tensor.Tensor[T]
	one, minusOne        []T
	flat                 []int // the shape [n]
	parts                map[partKey[T]]*tensor.Tensor[T]
	slabSeen             *T // the slab parts were made over (dropStaleParts)
	trajRows, gRows      rowCache[T]
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
	N := 2 * p.n
	for _, sz := range sizes {
		N += sz
	}
	w = &adjointWork[T]{
		solver: hk[T]().NewShared(&p.b.slab), pb: p.b.pullback(p.eng), eng: p.eng, n: p.n, sizes: sizes,
		y: tensor.New[T](N), other: tensor.New[T](N), diff: tensor.New[T](p.n), mask: tensor.New[T](p.n),
		dg: make([]*tensor.Tensor[T], len(p.params)), at: make([]*tensor.Tensor[T], 1),
		terms: make([]*tensor.Tensor[T], 1), outs: make([]*tensor.Tensor[T], 2),
		one: []T{1}, minusOne: []T{-1}, flat: []int{p.n}, parts: map[partKey[T]]*tensor.Tensor[T]{},
	}
	hk[T]().UseWorkers(w.solver, p.eng)
	for _, prm := range p.params {
		w.shapes = append(w.shapes, prm.Value.Shape())
		w.vjpGrads = append(w.vjpGrads, tensor.New[T](prm.Value.Shape()...))
	}
	p.b.adj = w
	return w
}
