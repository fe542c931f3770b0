package sde

import (
	"fmt"
	"math"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/internal/revolve"
	"github.com/adamnode/adamnode/tensor"
)

// solveCheckpoint runs a method that carries no state between steps
// forward (values only), keeping the state at the start of every segment
// of every steps (0: ⌈√N⌉), and records the outputs as one node whose
// backward goes through the segments from the last to the first: each is
// solved again from its checkpoint on a tape of its own, recording every
// step on the same Brownian increments, and backpropagated with the
// cotangent of its end state and of the outputs inside it; the cotangent
// of its start state is the next segment's. The gradients are Backprop's
// (the same operations on the same values) in memory of the checkpoints
// plus one segment's tape.
func solveCheckpoint[T tensor.Float](tp *autograd.Tape[T], p *problem[T], y0 autograd.Var[T], ts []float64, path Path[T], opt Options, method string, every int) ([]autograd.Var[T], *Stats, error) {
	if every == 0 {
		// ⌈√N⌉ for the fixed-step count N (adaptive solves: an estimate).
		n := 0.0
		for k := 1; k < len(ts); k++ {
			n += float64(stepsIn(ts[k]-ts[k-1], opt.Step))
		}
		every = max(1, int(math.Ceil(math.Sqrt(n))))
	}
	checkpoints := []*tensor.Tensor[T]{y0.Value().Clone()}
	count := 0
	taken := func(_ revStep, y autograd.Var[T]) {
		count++
		if count%every == 0 {
			checkpoints = append(checkpoints, y.Value().Clone())
			p.stats.Stored = len(checkpoints)
		}
	}
	p.stats.Stored = 1
	stp := newStepper(p, method, opt.DerivativeFree)
	return solveAsNode(tp, p, y0, ts, path, opt, stp, "sde.Checkpoint", taken,
		func(_ *tensor.Tensor[T], steps []revStep) backwardFunc[T] {
			return func(gy *tensor.Tensor[T], params []*autograd.Param[T]) ([]*tensor.Tensor[T], error) {
				return replaySegments(p, tp.Engine(), method, opt, checkpoints, every, steps, path, gy, params)
			}
		})
}

func replaySegments[T tensor.Float](p *problem[T], eng tensor.Engine[T], method string, opt Options, checkpoints []*tensor.Tensor[T], every int, steps []revStep, path Path[T], gy *tensor.Tensor[T], params []*autograd.Param[T]) (_ []*tensor.Tensor[T], err error) {
	defer recoverUnlisted(&err)
	st := p.stats
	fe, ge := st.NFE, st.DiffusionEvals
	defer func() { // the replays' evaluations count as the backward pass's
		st.BackwardEvals += st.NFE - fe
		st.NFE, st.DiffusionEvals = fe, ge
	}()
	grads := make([]*tensor.Tensor[T], len(params))
	for j, q := range params {
		grads[j] = tensor.New[T](q.Value.Shape()...)
	}
	a := tensor.New[T](p.yShape...)
	tp := autograd.NewTape(eng)
	defer tp.Release()
	for seg := (len(steps) - 1) / every; seg >= 0; seg-- {
		lo, hi := seg*every, min((seg+1)*every, len(steps))
		tp.Reset()
		tp.RedirectParams(params, grads)
		l := &loop[T]{p: p, stp: newStepper(p, method, opt.DerivativeFree), path: path, opt: opt, tp: tp}
		x := tp.Input(checkpoints[seg].Clone())
		if err := l.stp.start(tp, steps[lo].t, x); err != nil {
			return nil, p.fail(backward, steps[lo].t, steps[lo].h, fmt.Errorf("checkpoint replay: %w", err))
		}
		y := x
		loss := autograd.Var[T]{}
		add := func(v autograd.Var[T], cot *tensor.Tensor[T]) {
			term := autograd.Sum(autograd.Mul(v, tp.Const(cot)))
			if loss.IsZero() {
				loss = term
			} else {
				loss = autograd.Add(loss, term)
			}
		}
		for _, sp := range steps[lo:hi] {
			var err error
			if y, err = l.step(sp.t, sp.h, y); err != nil {
				return nil, p.fail(backward, sp.t, sp.h, fmt.Errorf("checkpoint replay: %w", err))
			}
			if sp.out > 0 {
				add(y, gy.Slice(sp.out-1, sp.out).Reshape(p.yShape...).Clone())
			}
		}
		add(y, a.Clone())
		if err := tp.Backward(loss); err != nil {
			return nil, p.fail(backward, steps[lo].t, steps[lo].h, fmt.Errorf("checkpoint replay: %w", err))
		}
		if g := x.Grad(); g != nil {
			a.Copy(g)
		} else {
			a.Zero()
		}
	}
	return append([]*tensor.Tensor[T]{a}, grads...), nil
}

// solveBinomial is the Recursive gradient with budget states:
// binomial checkpointing (Griewank and Walther 2000, "Algorithm 799:
// revolve"). The forward solve keeps the state at the start of every step
// while the steps fit the budget, and only y0 once they do not. The
// backward pass goes through the steps from the last to the first; for
// each it finds the state at its start by re-advancing (values only, as the
// forward did) from the latest state kept before it, keeping states on the
// way where the binomial schedule puts them while fewer than the budget
// are kept, then records that one step on a tape of its own and
// backpropagates through it. With budget s and N steps each step is
// re-advanced at most r times, r the least with C(s + r, s) ≥ N.
func solveBinomial[T tensor.Float](tp *autograd.Tape[T], p *problem[T], y0 autograd.Var[T], ts []float64, path Path[T], opt Options, method string, budget int) ([]autograd.Var[T], *Stats, error) {
	kept := []keptState[T]{{0, y0.Value().Clone()}}
	count := 0
	taken := func(_ revStep, y autograd.Var[T]) {
		count++
		switch {
		case count < budget: // the state at the start of step count
			kept = append(kept, keptState[T]{count, y.Value().Clone()})
			p.stats.Stored = max(p.stats.Stored, len(kept))
		case count == budget+1: // more steps than the budget: keep y0 only
			kept = kept[:1]
		}
	}
	p.stats.Stored = 1
	stp := newStepper(p, method, opt.DerivativeFree)
	return solveAsNode(tp, p, y0, ts, path, opt, stp, "sde.Recursive", taken,
		func(_ *tensor.Tensor[T], steps []revStep) backwardFunc[T] {
			return func(gy *tensor.Tensor[T], params []*autograd.Param[T]) ([]*tensor.Tensor[T], error) {
				r := &binomialReplay[T]{p: p, eng: tp.Engine(), method: method, opt: opt, path: path, budget: budget,
					kept: kept, steps: steps}
				return r.backward(gy, params)
			}
		})
}

// keptState is the state at the start of step i.
type keptState[T tensor.Float] struct {
	i int
	y *tensor.Tensor[T]
}

// binomialReplay is the backward pass of solveBinomial, on the schedule of
// package revolve.
type binomialReplay[T tensor.Float] struct {
	p      *problem[T]
	eng    tensor.Engine[T]
	method string
	opt    Options
	path   Path[T]
	budget int
	kept   []keptState[T] // by step index, increasing; kept[0] is y0
	steps  []revStep
	adv    *autograd.Tape[T] // the no-grad tape of the re-advancing steps
}

func (r *binomialReplay[T]) backward(gy *tensor.Tensor[T], params []*autograd.Param[T]) (_ []*tensor.Tensor[T], err error) {
	defer recoverUnlisted(&err)
	p := r.p
	st := p.stats
	fe, ge := st.NFE, st.DiffusionEvals
	defer func() { // the replays' evaluations count as the backward pass's
		st.BackwardEvals += st.NFE - fe
		st.NFE, st.DiffusionEvals = fe, ge
	}()
	st.Stored = max(st.Stored, len(r.kept))
	grads := make([]*tensor.Tensor[T], len(params))
	for j, q := range params {
		grads[j] = tensor.New[T](q.Value.Shape()...)
	}
	a := tensor.New[T](p.yShape...)
	tp := autograd.NewTape(r.eng)
	defer tp.Release()
	r.adv = autograd.NewTape(r.eng)
	r.adv.SetNoGrad(true)
	defer r.adv.Release()
	for j := len(r.steps) - 1; j >= 0; j-- {
		sp := r.steps[j]
		y, err := r.stateAt(j)
		if err != nil {
			return nil, err
		}
		tp.Reset()
		tp.RedirectParams(params, grads)
		l := &loop[T]{p: p, stp: newStepper(p, r.method, r.opt.DerivativeFree), path: r.path, opt: r.opt, tp: tp}
		x := tp.Input(y.Clone())
		if err := l.stp.start(tp, sp.t, x); err != nil {
			return nil, p.fail(backward, sp.t, sp.h, fmt.Errorf("checkpoint replay: %w", err))
		}
		y1, err := l.step(sp.t, sp.h, x)
		if err != nil {
			return nil, p.fail(backward, sp.t, sp.h, fmt.Errorf("checkpoint replay: %w", err))
		}
		cot := a.Clone()
		if sp.out > 0 {
			cot.Add(cot, gy.Slice(sp.out-1, sp.out).Reshape(p.yShape...))
		}
		if err := tp.Backward(autograd.Sum(autograd.Mul(y1, tp.Const(cot)))); err != nil {
			return nil, p.fail(backward, sp.t, sp.h, fmt.Errorf("checkpoint replay: %w", err))
		}
		if g := x.Grad(); g != nil {
			a.Copy(g)
		} else {
			a.Zero()
		}
	}
	return append([]*tensor.Tensor[T]{a}, grads...), nil
}

// stateAt returns the state at the start of step j, the steps after j
// having been pulled back: from the latest state kept at or before j,
// re-advanced to j, keeping states on the way where the binomial schedule
// puts them while the budget allows.
func (r *binomialReplay[T]) stateAt(j int) (*tensor.Tensor[T], error) {
	for r.kept[len(r.kept)-1].i > j {
		r.kept = r.kept[:len(r.kept)-1]
	}
	from := r.kept[len(r.kept)-1]
	y := from.y
	for i := from.i; i < j; {
		to := j
		if free := r.budget - len(r.kept); free > 0 {
			to = i + revolve.Split(j+1-i, free)
		}
		var err error
		if y, err = r.advance(i, to, y); err != nil {
			return nil, err
		}
		if i = to; i < j { // keep it: the steps from it on are pulled back first
			r.kept = append(r.kept, keptState[T]{i, y})
			r.p.stats.Stored = max(r.p.stats.Stored, len(r.kept))
		}
	}
	return y, nil
}

// advance takes steps from, …, to−1 from y, values only, as the forward
// solve took them, and returns the state at the start of step to.
func (r *binomialReplay[T]) advance(from, to int, y *tensor.Tensor[T]) (*tensor.Tensor[T], error) {
	p := r.p
	for q := from; q < to; q++ {
		sp := r.steps[q]
		r.adv.Reset()
		l := &loop[T]{p: p, stp: newStepper(p, r.method, r.opt.DerivativeFree), path: r.path, opt: r.opt, tp: r.adv}
		x := r.adv.Const(y)
		if err := l.stp.start(r.adv, sp.t, x); err != nil {
			return nil, p.fail(backward, sp.t, sp.h, fmt.Errorf("checkpoint recomputation: %w", err))
		}
		y1, err := l.step(sp.t, sp.h, x)
		if err != nil {
			return nil, p.fail(backward, sp.t, sp.h, fmt.Errorf("checkpoint recomputation: %w", err))
		}
		y = y1.Value().Clone()
	}
	return y, nil
}
