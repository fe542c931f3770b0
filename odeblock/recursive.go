package odeblock

import (
	"fmt"

	"github.com/adamnode/adamnode/internal/revolve"
	"github.com/adamnode/adamnode/odeblock/internal/hooks"
	"github.com/adamnode/adamnode/tensor"
)

// Recursive differentiates the discrete solve as Backprop and Checkpoint
// do — the same gradients — while keeping at most Budget states of the
// forward solution at once: binomial checkpointing (Griewank and Walther's
// revolve, the scheme of diffrax's default adjoint). A solve of at most
// Budget steps keeps every step's state, as Checkpoint does; a longer one
// keeps only where its steps lay, and the backward pass recomputes the
// state at the start of each step, last to first, from the nearest kept
// state, keeping new ones where the binomial schedule puts them. With Budget
// states and N steps every step is recomputed at most r times, r the
// least with C(Budget+r, r) ≥ N (the fewest recomputations any schedule
// within the budget takes): for Budget 8, r = 8 at N = 10,000; for
// Budget 32, r = 4.
type Recursive struct {
	// Budget is the most states of the forward solution kept at once, z0
	// included; 0 means DefaultBudget. With 1 every step is recomputed
	// from z0: time quadratic in the number of steps.
	Budget int
}

// DefaultBudget is Recursive's budget when Budget is 0.
const DefaultBudget = 16

func init() { registerMode(Recursive{}) }

// stepsOnly keeps the budget: few states kept, stretches re-solved.
func (m Recursive) stepsOnly() GradMode {
	if m.Budget == 0 {
		return Interpolated{Budget: DefaultBudget}
	}
	return Interpolated{Budget: m.Budget}
}

func (Recursive) String() string { return "recursive" }

func (m Recursive) validate() error {
	if m.Budget < 0 {
		return fmt.Errorf("odeblock: Recursive.Budget must not be negative (0: %d states), got %d", DefaultBudget, m.Budget)
	}
	return nil
}

func (m Recursive) budget() int {
	if m.Budget == 0 {
		return DefaultBudget
	}
	return m.Budget
}

func (m Recursive) strategy32(p *pass[float32]) strategy[float32] {
	return &recursive[float32]{p: p, budget: m.budget()}
}
func (m Recursive) strategy64(p *pass[float64]) strategy[float64] {
	return &recursive[float64]{p: p, budget: m.budget()}
}

// recursive is Recursive at work on one pass.
type recursive[T tensor.Float] struct {
	p      *pass[T]
	budget int
	v      vecs[T]
	kept   []kept[T]           // the states kept, by step index, increasing
	spare  []*tensor.Tensor[T] // state buffers not in use
	// The re-advancing stepper's buffers, in the state's shape: the state,
	// its stages, the stage input and the next state.
	cur, tmp, next *tensor.Tensor[T]
	k              []*tensor.Tensor[T]
	// Its functions, made once per backward pass: the stage input is tmp,
	// each stage the forward's evaluator's, counted in nfe.
	in   func(int) *tensor.Tensor[T]
	eval func(i int, t float64, y *tensor.Tensor[T]) error
	nfe  int
	most int // the most states kept at once
}

// kept is the state at the start of step i.
type kept[T tensor.Float] struct {
	i int
	z *tensor.Tensor[T]
}

func (r *recursive[T]) stepEnds() bool { return !outputsInside(r.p.b.Solver) }
func (r *recursive[T]) abort()         { r.putStates() }

// forwardOnDevice: Recursive's forward solve may run on a device, the
// states it keeps, and those its backward pass recomputes, in its memory.
func (r *recursive[T]) forwardOnDevice() bool { return true }

// forward keeps the state at the start of each step while the steps fit
// the budget: a solve of at most Budget steps needs no recomputation. Past
// that it lets them go; the backward pass recomputes from z0.
// forward returns the step hook; the solve evaluates the dynamics without
// gradients (pass.tensorEvaluator).
func (r *recursive[T]) forward() func(StepInfo[T]) error {
	r.p.startParamGrads()
	return func(si StepInfo[T]) error {
		sp := r.p.logStep(si)
		switch j := len(r.p.steps) - 1; {
		case sp == nil || j == 0: // z0 is the trajectory's first row
		case j < r.budget:
			r.p.keepStart(sp, si)
		case j == r.budget:
			r.putStates()
		}
		return nil
	}
}

// putStates gives the states the forward kept back to the Block's pool.
func (r *recursive[T]) putStates() { r.p.putStarts() }

func (r *recursive[T]) backward(g *tensor.Tensor[T]) ([]*tensor.Tensor[T], error) {
	p := r.p
	r.v = vecs[T]{ew: p.ew}
	tb := p.solver.Tableau()
	tapes := p.restageTapes(tb.Stages())
	r.cur, r.tmp, r.next = r.buffer(), r.buffer(), r.buffer()
	r.k = make([]*tensor.Tensor[T], tb.Stages())
	for i := range r.k {
		r.k[i] = r.buffer()
	}
	f := p.tensorEvaluator()
	r.in = func(int) *tensor.Tensor[T] { return r.tmp }
	r.eval = func(i int, t float64, y *tensor.Tensor[T]) error {
		r.nfe++
		return f(hooks.EvalStage, i, t, y, r.k[i])
	}
	r.kept = append(r.kept[:0], kept[T]{i: 0, z: p.traj.Slice(0, 1).Reshape(p.shape...)}) // z0
	for j := 1; j < len(p.steps) && p.steps[j].y0 != nil; j++ {                           // kept by the forward
		r.kept = append(r.kept, kept[T]{i: j, z: p.steps[j].y0})
	}
	r.most = len(r.kept)
	defer r.putStates()
	grads, err := p.stepsBackward(g, func(j int, need []bool) ([]*stageTape[T], int, error) {
		y, nfe, err := r.stateAt(j)
		if err != nil {
			return nil, nfe, err
		}
		n, err := p.restage(&p.steps[j], y, tapes, need)
		return tapes, nfe + n, err
	})
	p.b.stats.Stored = r.most
	return grads, err
}

// buffer returns a buffer of the state's shape for this backward pass.
func (r *recursive[T]) buffer() *tensor.Tensor[T] { return r.p.tp.Scratch(r.p.shape...) }

// stateAt returns the state at the start of step j, the steps after j
// having been pulled back: from the latest state kept at or before j,
// re-advanced to j, keeping states on the way where the binomial schedule
// puts them while the budget allows. It returns the evaluations taken.
func (r *recursive[T]) stateAt(j int) (y *tensor.Tensor[T], nfe int, err error) {
	for last := len(r.kept) - 1; r.kept[last].i > j; last-- {
		r.spare = append(r.spare, r.kept[last].z)
		r.kept = r.kept[:last]
	}
	from := r.kept[len(r.kept)-1]
	if from.i == j {
		return from.z, 0, nil
	}
	r.v.ew.Copy(r.cur, from.z)
	for i := from.i; i < j; {
		to := j
		free := r.budget - len(r.kept)
		if free > 0 {
			to = i + revolve.Split(j+1-i, free)
		}
		n, err := r.advance(i, to)
		nfe += n
		if err != nil {
			return nil, nfe, err
		}
		i = to
		if i < j { // keep it: the steps from it on are pulled back first
			z := r.spare
			var buf *tensor.Tensor[T]
			if len(z) > 0 {
				buf, r.spare = z[len(z)-1], z[:len(z)-1]
			} else {
				buf = r.buffer()
			}
			r.v.ew.Copy(buf, r.cur)
			r.kept = append(r.kept, kept[T]{i: i, z: buf})
			r.most = max(r.most, len(r.kept))
		}
	}
	return r.cur, nfe, nil
}

// advance re-takes the accepted steps from, …, to−1 from the state in
// r.cur, leaving the state at the start of step to there, with the
// integrator's stepper and the forward's evaluator: the states are the
// forward's to the bit.
func (r *recursive[T]) advance(from, to int) (nfe int, err error) {
	for q := from; q < to; q++ {
		g := r.p.steps[q].geom
		n, err := r.step(g)
		nfe += n
		if err != nil {
			return nfe, fmt.Errorf("odeblock: recomputing the step at t=%g: %w", g.Start(), err)
		}
		r.cur, r.next = r.next, r.cur
	}
	return nfe, nil
}

// step takes the step g from r.cur into r.next, with the integrator's
// stepper and the pass's Elementwise, and returns the evaluations taken.
func (r *recursive[T]) step(g hooks.StepGeom) (nfe int, err error) {
	ew, tb := r.p.ew, r.p.solver.Tableau()
	r.nfe = 0
	err = hk[T]().RKStagesOn(ew, tb, g, r.cur, r.k, 0, tb.Stages(), r.in, r.eval)
	if err == nil {
		hk[T]().RKSolutionOn(ew, tb, g.Size(), r.cur, r.next, r.tmp, r.k)
	}
	return r.nfe, err
}
