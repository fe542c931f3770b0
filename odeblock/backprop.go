package odeblock

import (
	"fmt"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock/internal/hooks"
	"github.com/adamnode/adamnode/tensor"
)

// Backprop records every stage of every accepted step on tapes during the
// forward solve and backpropagates through them (discretise-then-optimise):
// the exact gradient of the discrete solve (step sizes held constant).
// Memory grows with the number of evaluations. With a method whose steps
// are not explicit RK stages (the stiff, implicit and Adams methods) it
// runs as Interpolated.
//
// An adaptive solve with dopri5, tsit5 or bosh3 takes its output times
// from the dense output inside its steps, as torchdiffeq's odeint does, and
// differentiates that output as the linear map of the step's start, end
// and stages it is: output times cost no steps (a latent ODE's trajectory
// at fifty observation times takes the steps of one solve). With the other
// methods, and fixed steps, every output time is a step end. Checkpoint
// and Recursive do the same.
type Backprop struct{}

func init() { registerMode(Backprop{}) }

func (Backprop) stepsOnly() GradMode { return Interpolated{} }

func (Backprop) String() string  { return "backprop" }
func (Backprop) validate() error { return nil }

func (m Backprop) strategy32(p *pass[float32]) strategy[float32] { return &backprop[float32]{p: p} }
func (m Backprop) strategy64(p *pass[float64]) strategy[float64] { return &backprop[float64]{p: p} }

// backprop is Backprop at work on one pass: it files each evaluation of
// the forward solve, recorded on a tape of its own, as a stage of the step
// it belongs to.
type backprop[T tensor.Float] struct {
	p       *pass[T]
	stage0  *stageTape[T]   // the first stage of the next step
	pending []*stageTape[T] // the stages of the step being tried
	taken   int             // stage tapes taken from the Block's pool
}

func (r *backprop[T]) stepEnds() bool { return !outputsInside(r.p.b.Solver) }

// forward returns the step hook; the solve evaluates forwardTensors
// (tensorForwarder).
func (r *backprop[T]) forward() func(StepInfo[T]) error {
	r.p.startParamGrads()
	return r.onStep
}

// forwardOnDevice: Backprop's forward solve may run on a device, its
// stage tapes recording there (forwardTensors).
func (r *backprop[T]) forwardOnDevice() bool { return true }

// forwardTensors returns the forward solve's function: each evaluation
// recorded on a stage tape of its own, the stage's input copied into the
// tape's buffer and the dynamics' value into dy by the pass's Elementwise.
func (r *backprop[T]) forwardTensors() hooks.TensorEvalFunc[T] { return r.eval }

func (r *backprop[T]) eval(kind hooks.EvalKind, stage int, t float64, y, dy *tensor.Tensor[T]) (err error) {
	defer recoverUnlisted(&err)
	st := r.takeStageTape()
	r.p.ew.Copy(st.y, y)
	r.recordStageTape(st, t)
	if out := st.out.Value(); out.Len() != dy.Len() {
		r.putStageTape(st)
		return fmt.Errorf("odeblock: dynamics returned shape %v for a state of shape %v", out.Shape(), r.p.shape)
	}
	r.p.ew.Copy(dy, st.out.Value())
	r.file(kind, stage, st)
	return nil
}

// file keeps the stage tape st of an evaluation of the given kind: as a
// stage of the step being tried, as the next step's first, or not at all
// (a probe).
func (r *backprop[T]) file(kind hooks.EvalKind, stage int, st *stageTape[T]) {
	switch kind {
	case hooks.EvalProbe:
		r.putStageTape(st)
	case hooks.EvalStage:
		if r.pending == nil {
			r.pending = make([]*stageTape[T], r.p.solver.Tableau().Stages())
		}
		r.pending[stage] = st
	default: // the first stage of the next step (any former one is a step's last stage)
		r.stage0 = st
	}
}

func (r *backprop[T]) onStep(si StepInfo[T]) error {
	sp := r.p.logStep(si)
	if sp == nil {
		for i, st := range r.pending {
			r.putStageTape(st)
			r.pending[i] = nil
		}
		return nil
	}
	sp.stages = append(sp.stages[:0], r.stage0)
	if r.pending != nil { // none for a one-stage method (euler)
		sp.stages = append(sp.stages, r.pending[1:]...)
	}
	r.stage0 = nil
	if r.p.solver.Tableau().FSAL {
		r.stage0 = sp.stages[len(sp.stages)-1]
	}
	clear(r.pending)
	return nil
}

func (r *backprop[T]) abort() {
	for _, st := range append(r.pending, r.stage0) {
		r.putStageTape(st)
	}
	r.releaseSteps()
}

// releaseSteps gives every step's tapes back to the pool and trims it.
func (r *backprop[T]) releaseSteps() {
	for _, sp := range r.p.steps {
		for _, x := range sp.stages {
			r.putStageTape(x)
		}
	}
	r.trimStagePool()
}

func (r *backprop[T]) backward(g *tensor.Tensor[T]) ([]*tensor.Tensor[T], error) {
	defer r.releaseSteps()
	r.p.b.stats.Stored = r.taken
	next := -1 // the step whose tapes were handed out last
	return r.p.stepsBackward(g, func(j int, _ []bool) ([]*stageTape[T], int, error) {
		// The step after j is spent (its first stage was j's last, already
		// pulled back): let its tapes go now.
		if next >= 0 {
			for i, x := range r.p.steps[next].stages {
				r.putStageTape(x)
				r.p.steps[next].stages[i] = nil
			}
		}
		next = j
		return r.p.steps[j].stages, 0, nil
	})
}

// takeStageTape returns a stage tape from the Block's pool, so that a
// training loop records every pass on the tapes (and buffers) of the one
// before; its input buffer is for the caller to fill.
func (r *backprop[T]) takeStageTape() *stageTape[T] {
	p := r.p
	st := p.b.pools.takeStageTape(p.eng, p.shape)
	st.free = false
	r.taken++
	return st
}

// recordStageTape records the dynamics at time t on st, whose input is
// set.
func (r *backprop[T]) recordStageTape(st *stageTape[T], t float64) {
	p := r.p
	if p.pgrads != nil {
		st.tp.RedirectParams(p.params, p.pgrads)
	}
	st.in = st.tp.Input(st.y)
	st.out = p.b.Dynamics.Eval(st.tp, t, st.in)
}

// putStageTape gives a stage tape back to the Block's pool (once: with FSAL
// methods one tape is the last stage of a step and the first of the next).
func (r *backprop[T]) putStageTape(st *stageTape[T]) {
	if st == nil || st.free {
		return
	}
	st.free = true
	st.tp.Reset()
	st.in, st.out = autograd.Var[T]{}, autograd.Var[T]{}
	r.p.b.pools.putStageTape(st)
}

// trimStagePool lets go of pooled tapes beyond what this pass used, so that
// one long solve does not keep its memory for good.
func (r *backprop[T]) trimStagePool() {
	r.p.b.pools.trimStageTapes(r.taken)
}
