package odeblock

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/adamnode/adamnode/odeblock/internal/hooks"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// Block is an ODE solve as one autograd op: z0 ↦ z(t1) (Forward) or z at
// every time of Times (Trajectory), differentiated by Mode.
//
// A Block is not safe for concurrent use; it keeps its work buffers between
// passes. Give each goroutine its own Block (over the same Dynamics, if its
// field may be evaluated on several tapes at once, as the layers package's
// modules but Dropout and BatchNorm may). A Forward, Trajectory or
// backward pass that finds another one of the same Block under way returns
// an error saying so, leaving that one be. Package infer serves a trained
// model from many goroutines: replicas sharing its parameters, each with
// its own Block.
type Block[T tensor.Float] struct {
	Dynamics Dynamics[T]
	// Times are the output times, strictly monotone; nil means [0, 1].
	Times []float64
	// Solver configures the forward solve (method, tolerances, ...).
	Solver Options
	// Mode picks how gradients are computed: Adjoint{…}, Backprop{},
	// Checkpoint{} or Recursive{…}; nil means Adjoint{}.
	Mode GradMode
	// OnStep, if set, is called after every attempted step of the forward
	// solve and, in Adjoint mode, of the backward solve (StepInfo.Phase
	// "backward"), so that long solves can report progress or be stopped:
	// an error from it stops the pass with it.
	OnStep func(StepInfo[T]) error
	// Shards, if 2 or more, has Forward solve the batch as that many
	// separate ODEs at once (at most one per worker of the tape's engine
	// and one per row: math.MaxInt asks for one per worker), each on a
	// shard of the rows of every part of the state, on a tape of its own
	// computing with tensor.Serial, each with its own steps; the
	// parameters' gradients are summed over the shards
	// (autograd.RowShards.ApplyShards). This is data parallelism below the
	// solver: each core runs a whole solve with nothing to hand off, where
	// one solve of the whole batch synchronises the workers at every
	// product and map. It needs dynamics whose rows evolve independently
	// (ShardableDynamics: the six families over a field without BatchNorm
	// or Dropout), which nothing can check. Each shard's solution is as
	// accurate as the tolerances ask, but not the same bits as the whole
	// batch's, whose step sizes every row shares (as diffrax's vmap over a
	// solve, unlike torchdiffeq's one solve of the batch). Stats then counts
	// the shard that did the most; OnStep is called for each shard's steps,
	// one call at a time. Trajectory solves the whole batch.
	Shards int
	// RowErrors has the forward solve control each batch row's error
	// separately (integrate.Options.ErrorRows): a step is accepted when
	// every row's scaled RMS norm is at most 1, so that a row's answer is
	// as accurate as the tolerances ask whatever rows it is batched with,
	// where the whole state's norm lets a row's error grow up to √B times
	// the tolerance among B − 1 quieter rows. The rows are those of the
	// state's leading axis, within each of its parts (ShardableDynamics'
	// Parts; dynamics that are not shardable have one). The rows still
	// share their steps: a row's answer agrees with its answer alone to
	// the tolerances, not to the bit. The backward solves are unchanged.
	RowErrors bool

	stats  BlockStats
	total  BlockStats // over passes since ResetStats
	passes int

	errParts []int // the adjoint's ErrorParts, kept from pass to pass

	// Work kept from pass to pass, so that a training loop reusing the
	// block allocates little: the forward solver, the evaluation tape, the
	// trajectory's rows and the adjoint solve's buffers.
	fwd      *Solver[T]
	pb       *autograd.Pullback[T] // evaluations and VJPs of the dynamics
	trajRows rowCache[T]           // of the trajectory the forward solve writes
	adj      *adjointWork[T]
	// slab is the memory of the forward and adjoint solvers' buffers: they
	// are never in use at the same time (a Backward runs after its Forward
	// has returned), so they take turns with one slab as large as the
	// adjoint's, instead of keeping both.
	slab []T
	// pools is what the gradient modes keep from pass to pass (a pass of
	// Interpolated takes the dense log's steps and gives them back when its
	// backward is done; a second pass recorded before the first's
	// backward makes its own).
	pools passPools[T]

	shards      *shardSolve[T] // the solves of Shards
	shardedPass bool           // whether the last pass was sharded
	driftSaid   bool           // a drift's re-solve was logged (noteDrift)
	driftCols   []int          // DriftColumns of the last backward pass

	busy useGuard // a forward or backward pass is using the work above
}

// useGuard detects a value used from two goroutines at once: enter marks
// it in use unless it already is (then it reports false, and the caller
// must leave the value alone), exit marks it free. Go has no goroutine
// identity, so it cannot tell a second goroutine from the same one
// entering again: a value whose methods may nest must enter at its
// outermost calls only. Its zero value is free. It is a plain word under
// sync/atomic's functions, not an atomic.Bool, so that a value holding it
// may still be copied (a fresh Block passed by value) without go vet's
// copylocks complaint.
type useGuard struct{ busy uint32 }

func (g *useGuard) enter() bool { return atomic.CompareAndSwapUint32(&g.busy, 0, 1) }
func (g *useGuard) exit()       { atomic.StoreUint32(&g.busy, 0) }

// errConcurrentUse is the error of a Block's pass that finds another one
// under way.
var errConcurrentUse = errors.New("odeblock: Block used from two goroutines at once (a Forward, Trajectory or backward pass of it while another is under way, or one started from within its own dynamics or OnStep); a Block keeps work buffers and is not safe for concurrent use: give each goroutine its own (see Block's documentation)")

// BlockStats counts the work of a Block's last forward and backward passes.
// Backward NFE counts every evaluation the backward pass makes: the
// adjoint's evaluations of its augmented system (plus the forward
// re-solved where it recovered from a drift); in the other modes one per
// stage pulled back, plus the stages re-recorded (Checkpoint, Recursive)
// and the steps re-advanced (Recursive).
type BlockStats struct {
	Forward  Stats
	Backward Stats
	// Stored is the most states of the forward solution the mode kept at
	// once for its backward pass, besides the outputs: Checkpoint one per
	// accepted step, Recursive at most its budget (z0 included), Adjoint
	// its anchors, Backprop one per stage tape (each holding a state and
	// the evaluation's intermediates).
	Stored int
	// Recovered counts the stretches whose backward reconstruction drifted
	// or failed and that the Adjoint mode re-solved (Adjoint.FailOnDrift).
	Recovered int
}

// Stats returns the counts of the last forward and backward passes.
func (b *Block[T]) Stats() BlockStats {
	if b.shardedPass {
		return b.shards.stats() // the shards' backward passes update theirs
	}
	return b.stats
}

// DriftColumns returns the columns (indices along the state's last axis)
// whose drift made the last backward pass in the Adjoint mode re-solve a
// stretch (BlockStats.Recovered), the largest share of each drift first:
// those that held nine tenths of it. A column that only accumulates an
// integral no evaluation reads (a log-density, a running cost) drifts
// harmlessly: list it with IntegralParts and the adjoint stops re-solving
// for it. The first such re-solve of a Block also says so, once, in the log
// (log/slog's default logger). Nil when nothing was re-solved for a drift.
func (b *Block[T]) DriftColumns() []int {
	if len(b.driftCols) == 0 {
		return nil
	}
	return slices.Clone(b.driftCols)
}

// Params returns the parameters of the block's dynamics (its field's, then
// its family's scalars): layers.Prefix names them all through the block.
// Dynamics of the package's that lack a field they need (a CDE without its
// control, a family without its field) have none listed: Forward reports
// what is missing.
func (b *Block[T]) Params() []*autograd.Param[T] {
	if b.Dynamics == nil || incomplete(b.Dynamics) != nil {
		return nil
	}
	return b.Dynamics.Params()
}

// incomplete returns an error naming the first field that the package's
// dynamics d need and lack (a nil field, a nil parameter, a nil pointer to
// the dynamics themselves), or nil: their Params and Eval would fail on it
// with a nil-pointer panic. A user's own dynamics are theirs to check.
func incomplete[T tensor.Float](d Dynamics[T]) error {
	type need struct {
		name  string
		unset bool
		what  string
	}
	var kind string
	var needs []need
	field := func(f Field[T]) need { return need{"F", f == nil, "the field f"} }
	param := func(name string, p *autograd.Param[T], ctor string) need {
		return need{name, p == nil, "a learnable scalar of shape [1]: make the dynamics with " + ctor + ", or set it"}
	}
	switch d := d.(type) {
	case *NODE[T]:
		if kind = "a NODE"; d != nil {
			needs = []need{field(d.F)}
		}
	case *SONODE[T]:
		if kind = "a SONODE"; d != nil {
			needs = []need{field(d.F)}
		}
	case *HBNODE[T]:
		if kind = "an HBNODE"; d != nil {
			needs = []need{field(d.F), param("GammaRaw", d.GammaRaw, "NewHBNODE")}
		}
	case *GHBNODE[T]:
		if kind = "a GHBNODE"; d != nil {
			needs = []need{field(d.F), param("GammaRaw", d.GammaRaw, "NewGHBNODE"), param("XiRaw", d.XiRaw, "NewGHBNODE")}
		}
	case *AdamNODE[T]:
		if kind = "an AdamNODE"; d != nil {
			needs = []need{field(d.F), param("R1", d.R1, "NewAdamNODE"), param("R2", d.R2, "NewAdamNODE")}
		}
	case *CDE[T]:
		if kind = "a CDE"; d != nil {
			needs = []need{field(d.F), {"X", d.X == nil, "the control, the path X(t) that drives the CDE (an interp.NaturalCubic through the observations, say)"}}
		}
	case *CNF[T]:
		if kind = "a CNF"; d != nil {
			needs = []need{field(d.F)}
		}
	default:
		return nil
	}
	if needs == nil {
		return fmt.Errorf("odeblock: Block.Dynamics is a nil pointer to %s", kind)
	}
	for _, n := range needs {
		if n.unset {
			return fmt.Errorf("odeblock: Block.Dynamics is %s whose %s is nil: it needs %s", kind, n.name, n.what)
		}
	}
	return nil
}

// TotalStats returns the counts summed over every pass since the block was
// made or ResetStats was called (Stored: the most of any pass), with the
// number of forward passes.
func (b *Block[T]) TotalStats() (BlockStats, int) {
	if b.shards != nil {
		return b.total.Add(b.shards.totals()), b.passes
	}
	return b.total, b.passes
}

// ResetStats sets TotalStats to zero.
func (b *Block[T]) ResetStats() {
	b.total, b.passes = BlockStats{}, 0
	if b.shards != nil {
		for _, sb := range b.shards.blocks {
			sb.ResetStats()
		}
	}
}

// Add returns the sum of two BlockStats (Stored: the larger).
func (s BlockStats) Add(o BlockStats) BlockStats {
	return BlockStats{Forward: s.Forward.Add(o.Forward), Backward: s.Backward.Add(o.Backward),
		Stored: max(s.Stored, o.Stored), Recovered: s.Recovered + o.Recovered}
}

func (b *Block[T]) times() []float64 {
	if b.Times == nil {
		return []float64{0, 1}
	}
	return b.Times
}

// checkTimes returns the block's times, or an error naming Block.Times if
// they are not two or more finite, strictly monotone times.
func (b *Block[T]) checkTimes() ([]float64, error) {
	ts := b.times()
	if len(ts) < 2 {
		return nil, fmt.Errorf("odeblock: Block.Times must hold at least two times (the start and the end), got %d: %v (nil means [0, 1])", len(ts), ts)
	}
	for i, t := range ts {
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return nil, fmt.Errorf("odeblock: Block.Times must be finite; Times[%d] = %g", i, t)
		}
	}
	dir := math.Copysign(1, ts[1]-ts[0])
	for i := 1; i < len(ts); i++ {
		if !((ts[i]-ts[i-1])*dir > 0) {
			return nil, fmt.Errorf("odeblock: Block.Times must be strictly monotone; Times[%d] = %g after Times[%d] = %g", i, ts[i], i-1, ts[i-1])
		}
	}
	return ts, nil
}

// Forward records the block on tp: it solves the dynamics from z0 over
// Times and returns z at the last time. A failed solve returns the error,
// with NaNs shaped like z0 (so that tp.Check can carry it to Backward);
// Backward of the returned Var returns the error of a failed backward
// solve.
func (b *Block[T]) Forward(tp *autograd.Tape[T], z0 autograd.Var[T]) (autograd.Var[T], error) {
	return b.record(tp, z0, false)
}

// Trajectory records the block on tp and returns z at every time of Times,
// stacked along a new leading axis: [len(Times), z0's shape...]. The first
// entry is z0 itself. A failed solve returns the error with NaNs of that
// shape, as Forward does.
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

	// The modes that differentiate the discrete solve: its accepted
	// steps, and the parameters' gradients, which their stage tapes
	// accumulate into (autograd.Tape.RedirectParams) and the block's node
	// returns.
	steps   []step[T]
	nextOut int // the first output time after the logged steps
	pgrads  []*tensor.Tensor[T]
	rs      *restaging[T] // restage's work

	// The dynamics without gradients (tensorEvaluator), made once per
	// pass.
	noGrad hooks.TensorEvalFunc[T]

	// ew is the Elementwise the pass keeps and combines its states with
	// (pass.elementwise): the device's when the forward solve runs on one,
	// else the host's. The discrete modes are written once over it.
	ew tensor.Elementwise[T]
	// onDev reports whether the forward solve runs on the device
	// (forwardOnDevice).
	onDev bool
}

// mode returns the block's gradient mode.
func (b *Block[T]) mode() GradMode {
	if b.Mode == nil {
		return Adjoint{}
	}
	return b.Mode
}

// stepsOnlyMode returns the mode a block with solver options opt runs in:
// mode itself, or its stand-in (GradMode.stepsOnly) for a method whose
// steps are not explicit RK stages.
func stepsOnlyMode(mode GradMode, opt Options) (GradMode, error) {
	tb, err := opt.MethodTableau()
	if err != nil {
		return nil, err
	}
	if !tb.Explicit() {
		return mode.stepsOnly(), nil
	}
	return mode, nil
}

func (b *Block[T]) record(tp *autograd.Tape[T], z0 autograd.Var[T], traj bool) (v autograd.Var[T], err error) {
	defer func() {
		if err != nil && tp != nil && !z0.IsZero() {
			v = b.failedOutput(tp, z0, traj)
		}
	}()
	if !b.busy.enter() {
		return autograd.Var[T]{}, errConcurrentUse
	}
	defer b.busy.exit()
	return b.recordHeld(tp, z0, traj)
}

// failedOutput is what Forward and Trajectory return with an error: NaNs
// shaped like their result (see autograd.Tape.Check).
func (b *Block[T]) failedOutput(tp *autograd.Tape[T], z0 autograd.Var[T], traj bool) autograd.Var[T] {
	if !traj {
		return tp.NaNs(z0.Shape()...)
	}
	return tp.NaNs(append([]int{len(b.times())}, z0.Shape()...)...)
}

// recordHeld is record for a caller that holds the Block's guard (busy).
func (b *Block[T]) recordHeld(tp *autograd.Tape[T], z0 autograd.Var[T], traj bool) (_ autograd.Var[T], err error) {
	defer recoverEval(&err)
	mode, ts, err := b.checkRecord()
	if err != nil {
		return autograd.Var[T]{}, err
	}
	b.shardedPass = false
	if !traj && b.Shards > 1 {
		k, parts, err := b.shardCount(z0, tensor.Workers(tp.Engine()))
		if err != nil {
			return autograd.Var[T]{}, err
		}
		if k > 1 {
			b.shardedPass = true
			return b.recordSharded(tp, z0, k, parts)
		}
	}
	p := &pass[T]{b: b, tp: tp, eng: tp.Engine(), shape: z0.Shape(), n: z0.Len(), ts: ts, params: listed(b.Dynamics.Params())}
	if mode, err = stepsOnlyMode(mode, b.Solver); err != nil {
		return autograd.Var[T]{}, err
	}
	strat, err := newStrategy(mode, p)
	if err != nil {
		return autograd.Var[T]{}, err
	}
	if err := p.forwardSolver(strat.stepEnds()); err != nil {
		return autograd.Var[T]{}, err
	}
	s := p.solver
	p.traj = tp.Scratch(len(ts), p.n) // every row is written by the solve
	if tp.NoGrad() {
		strat = nil // no gradients: nothing to keep
	}
	p.forwardOnDevice(strat) // before strat.forward, which reads p.ew
	f, hook := p.tensorEvaluator(), (func(StepInfo[T]) error)(nil)
	if strat != nil {
		// The function is forwardTensors' where the strategy records
		// its evaluations (Backprop), else the dynamics without gradients.
		hook = strat.forward()
		if tf, ok := strat.(tensorForwarder[T]); ok {
			f = tf.forwardTensors()
		}
	}
	s.OnStep = chainHooks(hook, b.OnStep)
	st, err := p.solve(f, z0.Value())
	s.OnStep = nil // the kept solver must not keep this pass alive
	hk[T]().SetDenseLog(s, nil)
	b.stats = BlockStats{Forward: st}
	b.driftCols = b.driftCols[:0]
	b.total.Forward = b.total.Forward.Add(st)
	b.passes++
	if err != nil {
		if strat != nil {
			strat.abort()
		}
		return autograd.Var[T]{}, err
	}
	return p.node(z0, strat, mode, traj), nil
}

// checkRecord returns the block's gradient mode and output times, or the
// error naming what it lacks or what is out of range.
func (b *Block[T]) checkRecord() (GradMode, []float64, error) {
	if b.Dynamics == nil {
		return nil, nil, fmt.Errorf("odeblock: Block has no Dynamics")
	}
	if err := incomplete(b.Dynamics); err != nil {
		return nil, nil, err
	}
	mode := b.mode()
	if err := mode.validate(); err != nil {
		return nil, nil, err
	}
	ts, err := b.checkTimes()
	return mode, ts, err
}

// forwardSolver configures the block's forward solver for the pass (p.solver),
// with every output time a step end when stepEnds.
func (p *pass[T]) forwardSolver(stepEnds bool) error {
	b, ts := p.b, p.ts
	opt := b.Solver
	if stepEnds {
		// Every output time is a step end, so backward needs no
		// interpolant (and the value is the same with or without
		// gradients).
		opt.StepTo = append(slices.Clone(opt.StepTo), ts[1:len(ts)-1]...)
	}
	opt.Phase = "forward"
	if b.RowErrors {
		rows, w, err := rowLayout(b.Dynamics, p.shape)
		if err != nil {
			return err
		}
		opt.ErrorRows, opt.ErrorRowLen = rows, w
	}
	if opt.Quadrature != 0 {
		return fmt.Errorf("odeblock: Block.Solver.Quadrature must be 0, got %d: a block's state has no quadratures (its adjoint solve sets its own)", opt.Quadrature)
	}
	if b.fwd == nil {
		b.fwd = hk[T]().NewShared(&b.slab)
	}
	s := b.fwd
	hk[T]().UseWorkers(s, p.eng)
	if err := s.Configure(opt); err != nil {
		return err
	}
	p.solver = s
	return nil
}

// rowLayout returns the rows and row length of Options.ErrorRows for a
// state of the given shape of dynamics d: its leading axis split into d's
// parts (one for dynamics that are not ShardableDynamics), each row the
// elements of one index along it. An empty state has none (0, 0).
func rowLayout[T tensor.Float](d Dynamics[T], shape []int) (rows, w int, err error) {
	n := 1
	for _, s := range shape {
		n *= s
	}
	if len(shape) == 0 || n == 0 {
		return 0, 0, nil
	}
	parts := 1
	if sd, ok := d.(ShardableDynamics[T]); ok {
		parts = sd.Parts()
	}
	if shape[0]%parts != 0 {
		return 0, 0, fmt.Errorf("odeblock: Block.RowErrors: a state of shape %v does not split into the dynamics' %d parts along axis 0", shape, parts)
	}
	return shape[0] / parts, n / shape[0], nil
}

// node records the pass's ODEBlock node on its tape: its value (z at the
// last time, or at every time with traj), the backward that hands the
// cotangents to strat (nil: recorded without gradients), and the backward
// in ops (replay.go).
func (p *pass[T]) node(z0 autograd.Var[T], strat strategy[T], mode GradMode, traj bool) autograd.Var[T] {
	var value *tensor.Tensor[T]
	if traj {
		value = p.traj.Reshape(append([]int{len(p.ts)}, p.shape...)...)
	} else {
		value = p.traj.Slice(len(p.ts)-1, len(p.ts)).Reshape(p.shape...)
	}
	inputs := []autograd.Var[T]{z0}
	for _, prm := range p.params {
		inputs = append(inputs, p.tp.Param(prm))
	}
	backward := func(gy *tensor.Tensor[T]) (_ []*tensor.Tensor[T], err error) {
		defer recoverEval(&err)
		if strat == nil {
			return nil, fmt.Errorf("odeblock: the block's forward pass was recorded without gradients (Tape.NoGrad): it kept nothing to differentiate")
		}
		if !p.b.busy.enter() {
			return nil, errConcurrentUse
		}
		defer p.b.busy.exit()
		g := p.gradients(gy, traj)
		grads, err := strat.backward(g)
		bs := p.b.stats
		bs.Forward = Stats{}
		p.b.total = p.b.total.Add(bs)
		return grads, err
	}
	return autograd.CustomDiff("ODEBlock", value, backward, p.backwardOps(z0, strat, mode, traj), inputs...)
}

// gradients returns ∂L/∂z at every output time, [len(Times), n], from
// the node's output gradient gy (of the last row only unless traj),
// formed by the pass's Elementwise (on a device, there).
func (p *pass[T]) gradients(gy *tensor.Tensor[T], traj bool) *tensor.Tensor[T] {
	g := p.tp.Scratch(len(p.ts), p.n)
	if traj {
		p.ew.Copy(g, gy)
		return g
	}
	// Whole, then a part of the engine's copy: a device engine writes a
	// part of a storage in place only where it holds all of it.
	last := len(p.ts) - 1
	p.ew.Fill(g, 0)
	p.ew.Copy(g.Slice(last, last+1), gy)
	return g
}

// chainHooks returns a step hook calling first, then then (either may be
// nil), stopping at the first error.
func chainHooks[T tensor.Float](first, then func(StepInfo[T]) error) func(StepInfo[T]) error {
	switch {
	case first == nil:
		return then
	case then == nil:
		return first
	}
	return func(si StepInfo[T]) error {
		if err := first(si); err != nil {
			return err
		}
		return then(si)
	}
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

// tensorForwarder is a strategy whose forward solve evaluates
// forwardTensors, on the host and on a device alike (the others evaluate
// the dynamics without gradients, pass.tensorEvaluator).
type tensorForwarder[T tensor.Float] interface {
	forwardTensors() hooks.TensorEvalFunc[T]
}

// forwardOnDevice sets whether the forward solve runs on the device
// (p.onDev) in the pass's solver's device mode: on an engine with an
// Elementwise, without gradients or with a strategy that allows it. It
// sets the pass's Elementwise (p.ew): the device's when it does, else the
// host's.
func (p *pass[T]) forwardOnDevice(strat strategy[T]) {
	eng := p.eng
	if strat != nil && !strat.forwardOnDevice() {
		eng = nil // in host memory, on any engine
	}
	p.solver.StepStatesOnDevice = p.b.OnStep == nil
	p.onDev = hk[T]().UseDevice(p.solver, eng)
	p.ew = hostElementwise(p.eng)
	if p.onDev {
		p.ew = tensor.DeviceElementwise(p.eng)
	}
}

// hostElementwise returns the Elementwise of host memory for engine eng:
// a CPU engine's own (its vector kernels and workers), or, for a device
// engine or one without an Elementwise (a third party's),
// tensor.HostElementwise, the same arithmetic on the calling goroutine.
func hostElementwise[T tensor.Float](eng tensor.Engine[T]) tensor.Elementwise[T] {
	if ew := tensor.ElementwiseOf(eng); ew != nil && !tensor.OnDevice(eng) {
		return ew
	}
	return tensor.HostElementwise[T]()
}

// elementwise returns the pass's Elementwise (p.ew), the host's for a
// pass that has not set it (an event's search, which solves on the host).
func (p *pass[T]) elementwise() tensor.Elementwise[T] {
	if p.ew == nil {
		p.ew = hostElementwise(p.eng)
	}
	return p.ew
}

// solve is the forward solve of f from z0 in the solver's device mode
// (forwardOnDevice), its outputs written into the rows of p.traj.
func (p *pass[T]) solve(f hooks.TensorEvalFunc[T], z0 *tensor.Tensor[T]) (Stats, error) {
	if p.onDev {
		// The trajectory whole on the device first: its rows are then
		// written into its copy in place.
		p.ew.Fill(p.traj, 0)
	}
	return hk[T]().SolveTensorsEval(p.solver, f, z0, p.ts, p.b.trajRows.get(p.traj, p.n))
}

// tensorEvaluator returns valueEval with the pass's Elementwise: one
// function per pass, made on the first call.
func (p *pass[T]) tensorEvaluator() hooks.TensorEvalFunc[T] {
	if p.noGrad == nil {
		p.noGrad = p.valueEval(p.elementwise())
	}
	return p.noGrad
}

// valueEval returns f(t, y) → dy evaluating the dynamics with no
// gradient, its value copied into dy by ew: the pass's Elementwise for
// its own solves (tensorEvaluator), the adjoint phase's for the forward
// it re-solves (a user's Adjointer runs the backward on the host after a
// forward on a device).
func (p *pass[T]) valueEval(ew tensor.Elementwise[T]) hooks.TensorEvalFunc[T] {
	b := p.b
	pb := b.pullback(p.eng)
	at := make([]*tensor.Tensor[T], 1)
	return func(_ hooks.EvalKind, _ int, t float64, y, dy *tensor.Tensor[T]) error {
		at[0] = y
		out := pb.Value(func(tp *autograd.Tape[T], in []autograd.Var[T]) autograd.Var[T] {
			return b.Dynamics.Eval(tp, t, in[0])
		}, at)
		at[0] = nil
		if out.Len() != dy.Len() {
			return fmt.Errorf("odeblock: dynamics returned shape %v for a state of shape %v", out.Shape(), p.shape)
		}
		ew.Copy(dy, out)
		return nil
	}
}
