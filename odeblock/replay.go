package odeblock

import (
	"fmt"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// This file gives the ODEBlock node a backward written in ops (autograd's
// CustomDiff), so that autograd.Grad can differentiate through a block: a
// gradient penalty on an ODE model's input, a Hessian-vector product of a
// loss through a solve. The modes that differentiate the discrete solve
// (Backprop, Checkpoint, Recursive) log every accepted step; replaying
// those steps as ops on the outer tape from z0 records the same discrete
// map, step sizes held constant, and its VJP, recorded by Grad, is the
// node's backward in ops — differentiable again. The adjoint and
// interpolated modes differentiate the continuous solution instead, by a
// solve of their own whose steps are chosen as it runs; they have no
// backward in ops, and such a Grad fails with an error naming the mode.

// stepLogger is implemented by the strategies that log every accepted
// step of the forward pass in p.steps.
type stepLogger interface{ logsSteps() }

func (*backprop[T]) logsSteps()   {}
func (*checkpoint[T]) logsSteps() {}
func (*recursive[T]) logsSteps()  {}

// backwardOps returns the node's backward in ops for the strategy strat
// of mode (which failed it names).
func (p *pass[T]) backwardOps(z0 autograd.Var[T], strat strategy[T], mode GradMode, traj bool) func(gy autograd.Var[T], _ []autograd.Var[T]) ([]autograd.Var[T], error) {
	if _, ok := strat.(stepLogger); !ok || strat == nil {
		return func(autograd.Var[T], []autograd.Var[T]) ([]autograd.Var[T], error) {
			return nil, fmt.Errorf("odeblock: a gradient recorded as ops (autograd.Grad, JVP, HVP) cannot pass through an ODE block in %v mode with method %q: it differentiates the continuous solution by a solve of its own; use Backprop, Checkpoint or Recursive with an explicit Runge–Kutta method", mode, p.b.Solver.Method)
		}
	}
	return func(gy autograd.Var[T], _ []autograd.Var[T]) (_ []autograd.Var[T], err error) {
		defer recoverEval(&err)
		tp := p.tp
		create := !tp.NoGrad()
		defer tp.SetNoGrad(tp.SetNoGrad(false))
		// Grad inside the dynamics records its gradients while they are
		// replayed: this Grad differentiates them again.
		was := tp.SetGradsRecorded(true)
		out := p.replay(z0, traj)
		tp.SetGradsRecorded(was)
		var inputs []autograd.Var[T]
		if z0.RequiresGrad() {
			inputs = []autograd.Var[T]{z0}
		}
		gs, err := autograd.Grad([]autograd.Var[T]{out}, inputs, autograd.GradOptions[T]{Cotangents: []autograd.Var[T]{gy}, Params: p.params, Stop: []autograd.Var[T]{z0}, CreateGraph: create})
		if err != nil {
			return nil, err
		}
		res := make([]autograd.Var[T], 0, 1+len(p.params))
		if len(gs.Inputs) == 1 {
			res = append(res, gs.Inputs[0])
		} else {
			res = append(res, autograd.Var[T]{})
		}
		return append(res, gs.Params...), nil
	}
}

// replay records the logged steps of the forward solve as ops on p's tape
// from z0: each step y ↦ y + h·Σ b_i·k_i with k_i = F(t_i, y + h·Σ a_il·k_l),
// at the forward's times, and the outputs inside a step from its dense
// output. It returns the state at the last time, or with
// traj at every time stacked as the node's value is.
func (p *pass[T]) replay(z0 autograd.Var[T], traj bool) autograd.Var[T] {
	tb := p.solver.Tableau()
	need := needed(tb)
	outs := make([]autograd.Var[T], len(p.ts))
	outs[0] = z0
	y := z0
	ks := make([]autograd.Var[T], tb.Stages())
	stepNeed := make([]bool, len(need))
	for j := range p.steps {
		sp := &p.steps[j]
		h := sp.geom.Size()
		inner := p.innerOutputs(sp)
		copy(stepNeed, need)
		for _, o := range inner {
			for i, w := range o.w {
				stepNeed[i] = stepNeed[i] || w != 0
			}
		}
		for i := range ks {
			ks[i] = autograd.Var[T]{}
			if !stepNeed[i] {
				continue
			}
			ks[i] = p.b.Dynamics.Eval(p.tp, hk[T]().StageTime(sp.geom, tb, i), combine(y, h, tb.A[i][:i], ks))
		}
		y0 := y
		y = combine(y, h, tb.B, ks)
		for _, o := range inner {
			// cy0·y0 + cy1·y1 + h·Σ w_i·k_i, the dense output.
			outs[o.k] = autograd.Add(autograd.Scale(y0, T(o.cy0)), combine(autograd.Scale(y, T(o.cy1)), h, o.w, ks))
		}
		if sp.out != 0 {
			outs[sp.out] = y
		}
	}
	if !traj {
		return outs[len(outs)-1]
	}
	for i, o := range outs {
		outs[i] = autograd.Reshape(o, append([]int{1}, p.shape...)...)
	}
	return autograd.Concat(0, outs...)
}

// combine records y + h·Σ_l c[l]·k[l] over the nonzero c[l].
func combine[T tensor.Float](y autograd.Var[T], h float64, c []float64, k []autograd.Var[T]) autograd.Var[T] {
	coef := []T{1}
	xs := []autograd.Var[T]{y}
	for l, a := range c {
		if a != 0 {
			coef = append(coef, T(h*a))
			xs = append(xs, k[l])
		}
	}
	if len(xs) == 1 {
		return y
	}
	return autograd.LinComb(coef, xs...)
}
