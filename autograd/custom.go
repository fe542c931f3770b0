package autograd

import (
	"fmt"

	"github.com/adamnode/adamnode/tensor"
)

// Custom records a node whose forward value and backward function the caller
// supplies: the way to put an op with a hand-derived gradient on the tape.
//
// value is the node's output, computed by the caller from the inputs' values
// (the tape keeps a reference: do not modify it until the tape is Reset).
// When Backward reaches the node it calls backward with gy = ∂L/∂value
// (shaped like value, valid during the call only, not to be modified).
// backward must return one entry per input, in order: nil for no
// contribution, or ∂L/∂inputs[i] = gyᵀ·∂value/∂inputs[i] shaped like that
// input, which the tape adds into the input's gradient (the returned tensors
// are only read, and may be reused by the caller after backward returns).
// A wrong count or shape panics with a message naming the node.
//
// Parameters: pass their Vars (Tape.Param) as inputs and return their
// gradients, and they accumulate like any other input (respecting VJP
// redirection). A backward that instead adds into Param.Grad itself also
// works; for that reason a custom node is recorded whenever gradients are
// on, even if no input requires a gradient.
//
// backward may fail (an adjoint ODE solve that hits a step-size underflow
// or a NaN): a non-nil error stops the tape's Backward, which returns it
// (wrapped with the node's name); the gradients returned alongside it are
// ignored.
//
// backward runs while the tape's Backward is running: it must not record on
// this tape, but may evaluate and differentiate on other tapes (Pullback).
func Custom[T tensor.Float](name string, value *tensor.Tensor[T], backward func(gy *tensor.Tensor[T]) ([]*tensor.Tensor[T], error), inputs ...Var[T]) Var[T] {
	return custom(name, value, backward, nil, inputs)
}

// CustomDiff is Custom with its backward also written in ops, so that Grad
// (gradients of gradients, JVP, traces) can differentiate through the
// node: backwardOps(gy, inputs) records on the tape, from gy and the
// node's input Vars, the same input gradients as backward computes, one
// per input (the zero Var for none), shaped like it. Backward still calls
// backward, on tensors, with its own kernels; backwardOps runs only under
// Grad, with gradients recorded when GradOptions.CreateGraph asks for
// them. A Custom node without it makes such a Grad return a
// *CreateGraphError naming the node. backwardOps receives the inputs, so a
// function value made once (not a closure per node) serves every node.
func CustomDiff[T tensor.Float](name string, value *tensor.Tensor[T], backward func(gy *tensor.Tensor[T]) ([]*tensor.Tensor[T], error), backwardOps func(gy Var[T], inputs []Var[T]) ([]Var[T], error), inputs ...Var[T]) Var[T] {
	if backwardOps == nil {
		panic(usage("CustomDiff %q: nil backward in ops", name))
	}
	return custom(name, value, backward, backwardOps, inputs)
}

// OpsVJP is a backward in ops for CustomDiff from f, the node's function
// written in the tape's ops (slower than the node's own kernels, the same
// values): it records f at the node's inputs and pulls gy back through it,
// recording the pullback when the caller's Grad asks for CreateGraph.
// Gradients stop at the inputs (what they depend on is the outer pass's
// business), and parameters f reads through Tape.Param are constants in
// it: pass them as inputs to differentiate them.
//
//	autograd.CustomDiff(name, y, backward, func(gy autograd.Var[T], in []autograd.Var[T]) ([]autograd.Var[T], error) {
//		return autograd.OpsVJP(fByOps, in, gy)
//	}, x, w)
func OpsVJP[T tensor.Float](f func(in []Var[T]) Var[T], inputs []Var[T], gy Var[T]) ([]Var[T], error) {
	t := gy.t
	create := !t.noGrad
	defer t.SetNoGrad(t.SetNoGrad(false))
	out := f(inputs)
	var wrt []Var[T]
	var at []int
	for i, x := range inputs {
		if x.RequiresGrad() {
			wrt, at = append(wrt, x), append(at, i)
		}
	}
	res := make([]Var[T], len(inputs))
	if len(wrt) == 0 || !out.RequiresGrad() {
		return res, nil
	}
	gs, err := Grad([]Var[T]{out}, wrt, GradOptions[T]{Cotangents: []Var[T]{gy}, Stop: inputs, CreateGraph: create})
	if err != nil {
		return nil, err
	}
	for k, i := range at {
		res[i] = gs.Inputs[k]
	}
	return res, nil
}

func custom[T tensor.Float](name string, value *tensor.Tensor[T], backward func(gy *tensor.Tensor[T]) ([]*tensor.Tensor[T], error), backwardOps func(gy Var[T], inputs []Var[T]) ([]Var[T], error), inputs []Var[T]) Var[T] {
	if len(inputs) == 0 {
		panic(usage("Custom %q: no inputs (a custom node needs at least one Var to find its tape)", name))
	}
	if value == nil || backward == nil {
		panic(usage("Custom %q: nil value or backward function", name))
	}
	op := "Custom(" + name + ")"
	t, _ := use1(op, inputs[0])
	for _, x := range inputs[1:] {
		if useOpt(op, t, x) == nil {
			panic(usage("%s: zero Var input", op))
		}
	}
	e := t.newEntry(op)
	e.value = value
	if t.noGrad {
		return t.varOf(e)
	}
	e.requires = true
	e.rule = customRule[T]{}
	e.ins = e.ins[:0]
	for _, x := range inputs {
		e.ins = append(e.ins, t.entryAt(int(x.i)))
	}
	e.custom = backward
	e.customOps = backwardOps
	t.ops++
	return t.varOf(e)
}

type customRule[T tensor.Float] struct{}

func (customRule[T]) backward(t *Tape[T], e *entry[T]) {
	grads, err := e.custom(e.grad)
	if err != nil {
		t.err = fmt.Errorf("autograd: backward of %s: %w", e.op, err)
		return
	}
	if len(grads) != len(e.ins) {
		panic(&tensor.ShapeError{Op: "autograd." + e.op, Msg: fmt.Sprintf("backward returned %d gradients for %d inputs; return one per input (nil for none)", len(grads), len(e.ins))})
	}
	for i, g := range grads {
		t.accumulate(e, i, e.ins[i], g)
	}
}
