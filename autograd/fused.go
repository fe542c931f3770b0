package autograd

import (
	"fmt"
	"math"

	"github.com/adamnode/adamnode/tensor"
)

// Activation is an elementwise activation that LinearAct, Conv2DAct and
// Conv2DTimeAct apply to their output in the same op. Each of them has a
// derivative that is a function of its output y, so the fused op keeps one
// tensor (the activated output) where an op followed by an activation keeps
// two, and its backward turns the output gradient into the gradient before
// the activation in place, then runs the op's own backward: half the memory
// traffic and half the tape memory of the pair, with the same values.
//
// The zero Activation is the identity.
type Activation struct {
	kind  actKind
	slope float64
}

type actKind int

const (
	actIdentity actKind = iota
	actReLU
	actLeakyReLU
	actTanh
	actSigmoid
	actSoftplus
)

// The activations, with their derivatives in terms of the output y:
//
//	ReLUAct      max(x, 0)           [y > 0]
//	TanhAct      tanh x              1 − y²
//	SigmoidAct   1/(1 + e⁻ˣ)         y(1 − y)
//	SoftplusAct  ln(1 + eˣ)          1 − e⁻ʸ (= σ(x))
var (
	IdentityAct = Activation{}
	ReLUAct     = Activation{kind: actReLU}
	TanhAct     = Activation{kind: actTanh}
	SigmoidAct  = Activation{kind: actSigmoid}
	SoftplusAct = Activation{kind: actSoftplus}
)

// LeakyReLUAct returns the activation x where x > 0, slope·x elsewhere,
// whose derivative is 1 where y > 0 and slope elsewhere. slope must be
// positive (so that the output's sign is the input's); it panics otherwise.
func LeakyReLUAct(slope float64) Activation {
	if !(slope > 0) || math.IsInf(slope, 1) {
		panic(usage("LeakyReLUAct: slope %g must be positive and finite", slope))
	}
	return Activation{kind: actLeakyReLU, slope: slope}
}

// String names the activation.
func (a Activation) String() string {
	switch a.kind {
	case actReLU:
		return "ReLU"
	case actLeakyReLU:
		return fmt.Sprintf("LeakyReLU(%g)", a.slope)
	case actTanh:
		return "Tanh"
	case actSigmoid:
		return "Sigmoid"
	case actSoftplus:
		return "Softplus"
	}
	return "Identity"
}

// LinearAct returns act(Linear(x, w, b)) as one op (see Activation); x
// may have any leading dimensions, as Linear's.
func LinearAct[T tensor.Float](x, w, b Var[T], act Activation) Var[T] {
	if r := x.use("LinearAct").value.Rank(); r != 2 && r > 0 {
		return linearND(x, w, b, act)
	}
	return fuse[T, linearRule[T]](Linear(x, w, b), act)
}

// Conv2DAct returns act(Conv2D(x, w, b, p)) as one op (see Activation).
func Conv2DAct[T tensor.Float](x, w, b Var[T], p tensor.ConvParams, act Activation) Var[T] {
	return fuse[T, conv2DRule[T]](Conv2D(x, w, b, p), act)
}

// Conv2DTimeAct returns act(Conv2DTime(x, tv, w, b, p)) as one op (see
// Activation).
func Conv2DTimeAct[T tensor.Float](x Var[T], tv T, w, b Var[T], p tensor.ConvParams, act Activation) Var[T] {
	return fuse[T, conv2DTimeRule[T]](Conv2DTime(x, tv, w, b, p), act)
}

// fuse applies act in place to the value of v, the result of an op whose
// rule is R that nothing has read yet, and wraps the rule.
func fuse[T tensor.Float, R rule[T]](v Var[T], act Activation) Var[T] {
	if act.kind == actIdentity {
		return v
	}
	t := v.t
	e := v.use("fuse")
	applyAct(t, act, e.value)
	if e.rule != nil {
		if _, ok := e.rule.(R); !ok {
			panic(usage("fuse: %s has rule %T, not %T", e.op, e.rule, *new(R)))
		}
		e.rule = actRule[T, R]{}
		e.n[3] = int(act.kind)
		e.f[1] = T(act.slope)
	}
	return v
}

// applyAct sets z = act(z) with the engine's Map.
func applyAct[T tensor.Float](t *Tape[T], act Activation, z *tensor.Tensor[T]) {
	t.ew.Map(actOps[act.kind], z, z, T(act.slope), 0)
}

// actRule is the backward of an op with rule R followed by an activation:
// the output gradient g (the tape's own buffer, read by nothing else) becomes
// g ⊙ act'(y) in place, then R pulls it back.
type actRule[T tensor.Float, R rule[T]] struct{}

func (actRule[T, R]) backward(t *Tape[T], e *entry[T]) {
	kind, slope := actKind(e.n[3]), e.f[1]
	t.ew.MapBackward(actOps[kind], e.grad, e.grad, e.value, slope, 0, false)
	var r R
	r.backward(t, e)
}

// actBackward is the backward of a Tanh, Sigmoid or Softplus op e: the
// input's gradient gets e.grad ⊙ act'(x), computed from the output.
func (t *Tape[T]) actBackward(kind actKind, e *entry[T]) { t.ewMapGrad(e, actOps[kind], 0, 0) }
