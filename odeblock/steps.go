package odeblock

import (
	"fmt"
	"slices"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// This file holds what the modes that differentiate the discrete solve
// (Backprop, Checkpoint, Recursive) share: the log of accepted steps, the
// stage tapes, and the backward pass through the steps, last to first.

// step is one accepted step of the forward solve.
type step[T tensor.Float] struct {
	geom   stepGeom
	y0     []T             // Checkpoint: the state at its start
	stages []*stageTape[T] // Backprop: its stages, recorded
	out    int             // index into Times of the output at its end, or −1
}

// stageTape is one evaluation of the dynamics recorded on its own tape.
type stageTape[T tensor.Float] struct {
	tp      *autograd.Tape[T]
	y       *tensor.Tensor[T] // the input, owned
	in, out autograd.Var[T]
	free    bool // in the Block's pool
}

// logStep appends the accepted step of si to p.steps (with the output
// time it ends on) and returns it; nil for a rejected step.
func (p *pass[T]) logStep(si StepInfo[T]) *step[T] {
	if !si.Accepted {
		return nil
	}
	st := step[T]{geom: si.geom, out: -1}
	if k := slices.Index(p.ts, si.End); k > 0 {
		st.out = k
	}
	p.steps = append(p.steps, st)
	return &p.steps[len(p.steps)-1]
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

// startParamGrads makes the pass's parameter gradient buffers, which the
// stage tapes accumulate into (autograd.Tape.RedirectParams) and the
// block's node returns — never Param.Grad behind the outer tape's back.
func (p *pass[T]) startParamGrads() {
	p.pgrads = make([]*tensor.Tensor[T], len(p.params))
	for j, prm := range p.params {
		p.pgrads[j] = p.tp.Scratch(prm.Value.Shape()...)
		p.pgrads[j].Zero()
	}
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

// stagesOf returns the tapes of step j's stages and the evaluations it
// took to get them (0 when the forward recorded them).
type stagesOf[T tensor.Float] func(j int) ([]*stageTape[T], int, error)

// stepsBackward is the backward pass through the accepted steps, last to
// first: the adjoint of y1 = y0 + h·Σ b_i·k_i, k_i = F(t_i, y0 + h·Σ a_il·k_l),
// with each step's stages from stages. It returns the gradients of z0 and
// of the parameters (p.pgrads).
func (p *pass[T]) stepsBackward(g *tensor.Tensor[T], stages stagesOf[T]) ([]*tensor.Tensor[T], error) {
	tb := p.solver.tb
	need := needed(tb)
	// Work buffers from the outer tape: valid until its next Reset, after
	// this backward (ybar, the gradient of z0, is returned, and only read).
	ybar := p.tp.Scratch(p.n).Data()
	clear(ybar)
	acc := p.tp.Scratch(p.n).Data()
	kbar := make([][]T, tb.Stages())
	kbarT := make([]*tensor.Tensor[T], tb.Stages())
	for i := range kbar {
		kbarT[i] = p.tp.Scratch(p.shape...)
		kbar[i] = kbarT[i].Data()
	}
	row := func(k int) []T { return g.Slice(k, k+1).Data() }
	var st Stats
	defer func() { p.b.stats.Backward = st }()
	for j := len(p.steps) - 1; j >= 0; j-- {
		sp := &p.steps[j]
		if sp.out > 0 {
			axpy(ybar, 1, row(sp.out))
		}
		tapes, nfe, err := stages(j)
		st.NFE += nfe
		if err != nil {
			return nil, err
		}
		copy(acc, ybar)
		for i := range kbar {
			clear(kbar[i])
			if tb.B[i] != 0 {
				axpy(kbar[i], T(sp.geom.h*tb.B[i]), ybar)
			}
		}
		for i := tb.Stages() - 1; i >= 0; i-- {
			if !need[i] {
				continue
			}
			x := tapes[i]
			if err := x.tp.BackwardWith(x.out, kbarT[i]); err != nil {
				return nil, fmt.Errorf("odeblock: backward through the step at t=%g, stage %d: %w", sp.geom.t, i, err)
			}
			st.NFE++
			ybarI := x.in.Grad().Data()
			axpy(acc, 1, ybarI)
			for l, a := range tb.A[i] {
				if a != 0 {
					axpy(kbar[l], T(sp.geom.h*a), ybarI)
				}
			}
		}
		copy(ybar, acc)
		st.Accepted++
	}
	axpy(ybar, 1, row(0))
	out := make([]*tensor.Tensor[T], 1+len(p.params))
	out[0] = tensor.FromSlice(ybar, p.shape...)
	copy(out[1:], p.pgrads)
	return out, nil
}

// restage records the stages of the step sp from the state y0 at its
// start on the tapes, up to the last one the backward pass needs, with the
// shared stepper: the inputs and times are the forward's to the bit. It
// returns the evaluations taken.
func (p *pass[T]) restage(sp *step[T], y0 []T, tapes []*stageTape[T], need []bool) (nfe int, err error) {
	tb := p.solver.tb
	last := 0
	for i := range need {
		if need[i] {
			last = i
		}
	}
	k := p.stageValues(len(tapes))
	in := func(i int) []T { return tapes[i].y.Data() }
	err = rkStages(&p.solver.comb, tb, sp.geom, y0, k, 0, last+1, in, func(i int, t float64, _ []T) error {
		x := tapes[i]
		x.tp.Reset()
		if p.pgrads != nil {
			x.tp.RedirectParams(p.params, p.pgrads)
		}
		if err := p.recordStage(x, t); err != nil {
			return err
		}
		nfe++
		k[i] = x.out.Value().Data()
		return nil
	})
	return nfe, err
}

// stageValues returns the pass's slice of s stage values (reused).
func (p *pass[T]) stageValues(s int) [][]T {
	if len(p.kv) != s {
		p.kv = make([][]T, s)
	}
	return p.kv
}

// restageTapes returns the block's s stage tapes for recomputing steps,
// with input buffers shaped like the state, making them when they do not
// fit. They are reused from step to step and kept from pass to pass.
func (p *pass[T]) restageTapes(s int) []*stageTape[T] {
	ts := p.b.restaged
	if len(ts) == s && ts[0].tp.Engine() == p.eng && ts[0].y.HasShape(p.shape...) {
		return ts
	}
	ts = make([]*stageTape[T], s)
	for i := range ts {
		ts[i] = &stageTape[T]{tp: autograd.NewTape(p.eng), y: tensor.New[T](p.shape...)}
	}
	p.b.restaged = ts
	return ts
}

// recordStage records the dynamics at time t on the stage tape x, whose
// input x.y is set.
func (p *pass[T]) recordStage(x *stageTape[T], t float64) (err error) {
	defer recoverUnlisted(&err)
	x.in = x.tp.Input(x.y)
	x.out = p.b.Dynamics.Eval(x.tp, t, x.in)
	return nil
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
