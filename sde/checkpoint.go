package sde

import (
	"fmt"
	"math"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// solveCheckpoint runs a method that carries no state between steps
// forward (values only), keeping the state at the start of every segment
// of opt.CheckpointEvery steps, and records the outputs as one node whose
// backward goes through the segments from the last to the first: each is
// solved again from its checkpoint on a tape of its own, recording every
// step on the same Brownian increments, and backpropagated with the
// cotangent of its end state and of the outputs inside it; the cotangent
// of its start state is the next segment's. The gradients are Backprop's
// (the same operations on the same values) in memory of the checkpoints
// plus one segment's tape.
func solveCheckpoint[T tensor.Float](tp *autograd.Tape[T], p *problem[T], y0 autograd.Var[T], ts []float64, path Path[T], opt Options, method string) ([]autograd.Var[T], *Stats, error) {
	every := opt.CheckpointEvery
	if every == 0 {
		// ⌈√N⌉ for the fixed-step count N (adaptive solves: an estimate).
		n := 0
		for k := 1; k < len(ts); k++ {
			n += stepsIn(ts[k]-ts[k-1], opt.Step)
		}
		every = max(1, int(math.Ceil(math.Sqrt(float64(n)))))
	}
	checkpoints := []*tensor.Tensor[T]{y0.Value().Clone()}
	count := 0
	taken := func(_ revStep, y autograd.Var[T]) {
		count++
		if count%every == 0 {
			checkpoints = append(checkpoints, y.Value().Clone())
		}
	}
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
	fe, ge := st.DriftEvals, st.DiffusionEvals
	defer func() { // the replays' evaluations count as the backward pass's
		st.BackwardEvals += st.DriftEvals - fe
		st.DriftEvals, st.DiffusionEvals = fe, ge
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
			return nil, p.fail(steps[lo].t, fmt.Errorf("checkpoint replay: %w", err))
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
				return nil, p.fail(sp.t, fmt.Errorf("checkpoint replay: %w", err))
			}
			if sp.out > 0 {
				add(y, gy.Slice(sp.out-1, sp.out).Reshape(p.yShape...).Clone())
			}
		}
		add(y, a.Clone())
		if err := tp.Backward(loss); err != nil {
			return nil, p.fail(steps[lo].t, fmt.Errorf("checkpoint replay: %w", err))
		}
		if g := x.Grad(); g != nil {
			a.Copy(g)
		} else {
			a.Zero()
		}
	}
	return append([]*tensor.Tensor[T]{a}, grads...), nil
}
