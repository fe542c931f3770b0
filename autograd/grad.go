package autograd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/adamnode/adamnode/tensor"
)

// GradOptions configures Grad. The zero value differentiates scalar outputs
// with respect to the inputs only, returning constants.
type GradOptions[T tensor.Float] struct {
	// Cotangents[i] is ∂L/∂outputs[i], recorded on the same tape and shaped
	// like that output. A nil slice, or a zero Var, stands for ones (the
	// output's own derivative, for a scalar loss). A cotangent may itself
	// require a gradient: Grad's result is linear in it, and with
	// CreateGraph that dependence is recorded (how JVP is built).
	Cotangents []Var[T]

	// Params asks for the gradients of these parameters too: Grads.Params[j]
	// sums the gradient over every leaf Tape.Param(Params[j]) of the pass.
	// Param.Grad is never written.
	Params []*Param[T]

	// Stop lists Vars that the gradients do not pass through: each is
	// treated as a leaf (an input among them still gets its gradient). So
	// the gradient of a parameter is the partial one, along the paths that
	// avoid them: how a node's backward written in ops (CustomDiff) that
	// recomputes its function from its input x keeps what x depends on out
	// of its parameters' gradients.
	Stop []Var[T]

	// CreateGraph records the gradients as ops on the tape, so that they
	// can enter further ops and be differentiated again (by Backward, or by
	// Grad once more), to any order. Without it the gradients are
	// constants: computed by the same rules, but recording nothing.
	CreateGraph bool
}

// Grads holds what Grad computed: Inputs[i] is the gradient with respect to
// the i-th input, Params[j] that with respect to GradOptions.Params[j].
// Each is shaped like what it is the gradient of; one that nothing reached
// is zeros (a constant), as torch.autograd.grad's materialize_grads.
type Grads[T tensor.Float] struct {
	Inputs []Var[T]
	Params []Var[T]
}

// Grad returns the gradients of outputs with respect to inputs (and to
// opt.Params) as Vars on the outputs' tape, leaving Param.Grad and the
// recorded pass alone: what torch.autograd.grad computes.
//
//	∂L/∂x = Σ_i cotangent_iᵀ · ∂outputs[i]/∂x
//
// The inputs are Vars of the same tape that require gradients: leaves
// (Tape.Input, Tape.Param) or results of ops. The derivative is partial:
// with respect to x, whatever x was computed from is held fixed.
//
// With opt.CreateGraph the gradients are recorded as ops built from the
// tape's own ops, so they are differentiable again: a gradient penalty
// ‖∂D/∂x‖ enters the loss and Backward differentiates through it; Grad of
// a gradient gives second derivatives (Hessian-vector products), and so on
// to any order. The first-order path of Backward is untouched: its fused
// kernels run only when Backward is called, never here. Grad may be called
// any number of times before Backward, on the same outputs or others.
//
// Every built-in op can be differentiated this way. A node that cannot —
// a Custom node without a backward written in ops (CustomDiff), a RowShards
// node — makes Grad return a *CreateGraphError naming it, if a gradient
// reaches it; a gradient is never silently cut.
//
// Misuse panics: no outputs, Vars of different tapes or passes, an input
// that requires no gradient, a cotangent of the wrong shape (both shapes
// named), a tape in no-grad mode, during its Backward or after it.
func Grad[T tensor.Float](outputs, inputs []Var[T], opt GradOptions[T]) (Grads[T], error) {
	t, hi := gradTape(outputs, inputs, opt)
	lo := hi
	for _, x := range inputs {
		lo = min(lo, int(x.i))
	}
	if len(opt.Params) > 0 {
		lo = 0
	}
	g := gradMap[T]{lo: lo, g: make([]Var[T], max(hi-lo+1, 0))}
	g.seed(t, outputs, opt.Cotangents)
	stop := make(map[int32]bool, len(opt.Stop))
	for _, v := range opt.Stop {
		stop[useOpt("Grad", t, v).idx] = true
	}
	t.walks = append(t.walks, gradWalk{lo: lo, need: t.needed(lo, hi, inputs, opt.Params, stop)})
	defer func() { t.walks = t.walks[:len(t.walks)-1] }()
	create := opt.CreateGraph || t.gradsRecorded // the tape records: gradTape checked
	defer t.SetNoGrad(t.SetNoGrad(!create))
	if err := g.walk(t, stop); err != nil {
		return Grads[T]{}, err
	}
	return g.results(t, inputs, opt.Params), nil
}

// gradMap holds, for the slots lo…lo+len(g)−1 of one Grad walk, the
// gradient reaching each (the zero Var for none); slots outside receive
// none (an input recorded after every output).
type gradMap[T tensor.Float] struct {
	lo int
	g  []Var[T]
}

// add adds v to the gradient of slot i, if it is in the map.
func (m *gradMap[T]) add(i int32, v Var[T]) {
	if k := int(i) - m.lo; k >= 0 && k < len(m.g) {
		m.g[k] = accumulateVar(m.g[k], v)
	}
}

// of returns the gradient of slot i (the zero Var outside the map).
func (m *gradMap[T]) of(i int32) Var[T] {
	if k := int(i) - m.lo; k >= 0 && k < len(m.g) {
		return m.g[k]
	}
	return Var[T]{}
}

// seed puts each output's cotangent (ones where none is given) on it.
func (m *gradMap[T]) seed(t *Tape[T], outputs, cotangents []Var[T]) {
	for i, y := range outputs {
		ye := t.entryAt(int(y.i))
		var c Var[T]
		if cotangents != nil {
			c = cotangents[i]
		}
		if c.IsZero() {
			ones := t.arena.like(ye.value)
			ones.Fill(1)
			c = t.Const(ones)
		} else if ce := useOpt("Grad", t, c); !ce.value.SameShape(ye.value) {
			panic(&tensor.ShapeError{Op: "autograd.Grad", Msg: fmt.Sprintf("cotangent %d of shape %v does not match output %d of shape %v", i, ce.value.Shape(), i, ye.value.Shape())})
		}
		if ye.requires {
			m.add(y.i, c)
		}
	}
}

// walk pulls the gradients back from the highest slot to the lowest
// through each op's backward in ops, recording on t, not through the
// stopped slots nor into inputs that no requested gradient needs.
func (m *gradMap[T]) walk(t *Tape[T], stop map[int32]bool) error {
	for k := len(m.g) - 1; k >= 0; k-- {
		gi, e := m.g[k], t.entryAt(m.lo+k)
		if gi.IsZero() || e.rule == nil || stop[e.idx] || !t.wantsAny(e) {
			continue
		}
		dr, ok := e.rule.(gradRule[T])
		if !ok {
			return &CreateGraphError{Op: e.op}
		}
		gs, err := dr.gradVars(t, e, gi)
		if err != nil {
			return err
		}
		ins := e.inputs()
		for j, gj := range gs { // the rules return at most one per input
			in := ins[j]
			if gj.IsZero() || !needs(in) {
				continue
			}
			if gv := t.entryAt(int(gj.i)).value; !gv.SameShape(in.value) {
				panic(&tensor.ShapeError{Op: "autograd." + e.op, Msg: fmt.Sprintf("differentiable backward gave a gradient of shape %v for input %d of shape %v", gv.Shape(), j, in.value.Shape())})
			}
			m.add(in.idx, gj) // below lo: no input depends on it
		}
	}
	return nil
}

// results returns the gradients of the inputs and of each parameter (the
// sum over its leaves), zeros where none arrived.
func (m *gradMap[T]) results(t *Tape[T], inputs []Var[T], params []*Param[T]) Grads[T] {
	var res Grads[T]
	for _, x := range inputs {
		res.Inputs = append(res.Inputs, t.gradOrZeros(m.of(x.i), t.entryAt(int(x.i)).value))
	}
	for _, p := range params {
		var s Var[T]
		for k, gk := range m.g {
			if e := t.entryAt(m.lo + k); e.param == p && !gk.IsZero() {
				s = accumulateVar(s, gk)
			}
		}
		res.Params = append(res.Params, t.gradOrZeros(s, p.Value))
	}
	return res
}

// gradWalk is what one Grad call needs to know while it walks the tape:
// need[i−lo] says whether a gradient reaching slot i can reach an input or
// a listed parameter. Grad calls nest (a CustomDiff backward may call
// Grad), so the tape keeps a stack of them.
type gradWalk struct {
	lo   int
	need []bool
}

// needed returns, for the slots lo…hi, whether a gradient there can reach
// an input or a leaf of params without passing a stopped slot.
func (t *Tape[T]) needed(lo, hi int, inputs []Var[T], params []*Param[T], stop map[int32]bool) []bool {
	need := make([]bool, max(hi-lo+1, 0))
	for _, x := range inputs {
		if k := int(x.i) - lo; k >= 0 && k < len(need) {
			need[k] = true
		}
	}
	for k := range need {
		e := t.entryAt(lo + k)
		switch {
		case need[k]:
		case e.param != nil:
			need[k] = slices.Contains(params, e.param)
		case e.rule != nil && !stop[e.idx]:
			need[k] = slices.ContainsFunc(e.inputs(), func(in *entry[T]) bool {
				return in != nil && int(in.idx) >= lo && need[int(in.idx)-lo]
			})
		}
	}
	return need
}

// wants reports whether the innermost Grad call needs the gradient of the
// input slot x (true outside Grad): the rules compute only those.
func (t *Tape[T]) wants(x *entry[T]) bool {
	if x == nil || !x.requires {
		return false
	}
	if len(t.walks) == 0 {
		return true
	}
	w := t.walks[len(t.walks)-1]
	i := int(x.idx) - w.lo
	return i >= 0 && i < len(w.need) && w.need[i]
}

// wantsAny reports whether any input of e wants its gradient.
func (t *Tape[T]) wantsAny(e *entry[T]) bool {
	for _, in := range e.inputs() {
		if t.wants(in) {
			return true
		}
	}
	return false
}

// gradTape checks Grad's arguments and returns their tape and the highest
// slot of the outputs.
func gradTape[T tensor.Float](outputs, inputs []Var[T], opt GradOptions[T]) (*Tape[T], int) {
	if len(outputs) == 0 {
		panic(usage("Grad: no outputs"))
	}
	if opt.Cotangents != nil && len(opt.Cotangents) != len(outputs) {
		panic(usage("Grad: %d cotangents for %d outputs", len(opt.Cotangents), len(outputs)))
	}
	t, _ := use1("Grad", outputs[0])
	switch {
	case t.running:
		panic(usage("Grad: the tape's Backward is running"))
	case t.noGrad && t.retryGrad:
		panic(wantsRecording{})
	case t.noGrad:
		panic(usage("Grad: the tape is in no-grad mode and recorded nothing (GradOf, ValueAndGrad, VJPOf, JVP, HVP and the traces record their function with gradients on)"))
	}
	hi := 0
	for _, y := range outputs {
		hi = max(hi, int(useOpt("Grad", t, y).idx))
	}
	for i, x := range inputs {
		e := useOpt("Grad", t, x)
		if e == nil {
			panic(usage("Grad: input %d is the zero Var", i))
		}
		if !e.requires {
			panic(usage("Grad: input %d (%s, shape %v) requires no gradient: use Tape.Input or Tape.Param for a leaf to differentiate with respect to", i, e.op, e.value.Shape()))
		}
	}
	for j, p := range opt.Params {
		if p == nil {
			panic(usage("Grad: parameter %d is nil", j))
		}
	}
	return t, hi
}

// wantsRecording is the panic of Grad on a tape evaluating a function in
// no-grad mode for Pullback.Value, which recovers it and evaluates the
// function again recording gradients (valueOnly).
type wantsRecording struct{}

// gradOrZeros returns g, or a constant of zeros shaped like v when g is the
// zero Var.
func (t *Tape[T]) gradOrZeros(g Var[T], v *tensor.Tensor[T]) Var[T] {
	if !g.IsZero() {
		return g
	}
	z := t.arena.like(v)
	z.Zero()
	return t.Const(z)
}

// accumulateVar returns a + b, or b when a is the zero Var.
func accumulateVar[T tensor.Float](a, b Var[T]) Var[T] {
	if a.IsZero() {
		return b
	}
	return Add(a, b)
}

// inputs returns the slots of e's inputs in the order its rule sees them:
// the variadic inputs when there are any, else the three fixed ones (nil
// for absent operands).
func (e *entry[T]) inputs() []*entry[T] {
	if len(e.ins) > 0 {
		return e.ins
	}
	return e.in[:]
}

// gradRule is implemented by the rules whose backward can be written in
// the tape's own ops: gradVars records, on t, the gradients of e's inputs
// (in the order of e.inputs; the zero Var for none) for the output
// gradient g. Recorded with gradients on, the result is differentiable in
// g and in e's inputs.
type gradRule[T tensor.Float] interface {
	gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error)
}

// CreateGraphError is the error of Grad (and of JVP, HVP and the traces)
// when a gradient reaches a node whose backward cannot be recorded as ops:
// a Custom node without a differentiable backward (see CustomDiff), or a
// RowShards node.
type CreateGraphError struct {
	Op string // the node, as recorded ("Custom(name)", "RowShards")
}

func (e *CreateGraphError) Error() string {
	fix := "give a Custom node one with CustomDiff"
	if strings.Contains(e.Op, "RowShards") {
		fix = "evaluate (or, with odeblock's Block.Shards, solve) the batch whole"
	}
	return fmt.Sprintf("autograd: cannot differentiate through %s in ops (a gradient of a gradient, a JVP or a trace): it has no backward written in ops; %s", e.Op, fix)
}

// vars returns the Vars of the slots es (the zero Var for nil).
func (t *Tape[T]) vars(es ...*entry[T]) []Var[T] {
	vs := make([]Var[T], len(es))
	for i, e := range es {
		if e != nil {
			vs[i] = t.varOf(e)
		}
	}
	return vs
}

// constLike returns a constant leaf holding f(x[i], y[i]) for the values of
// x and y (y may be nil): the piecewise-constant factors of a derivative
// (a mask, a sign), whose own derivative is zero almost everywhere.
func (t *Tape[T]) constMap(x, y *tensor.Tensor[T], f func(x, y T) T) Var[T] {
	c := t.arena.like(x)
	cd, xd := c.Data(), x.Data()
	var yd []T
	if y != nil {
		yd = y.Data()
	}
	for i, v := range xd {
		var w T
		if yd != nil {
			w = yd[i]
		}
		cd[i] = f(v, w)
	}
	return t.Const(c)
}

// sumTo returns g summed over the axes along which a tensor of the given
// shape was broadcast to g's shape: the gradient of a broadcast operand.
func sumTo[T tensor.Float](g Var[T], shape []int) Var[T] {
	gs := g.Shape()
	if slices.Equal(gs, shape) {
		return g
	}
	lead := len(gs) - len(shape)
	for a := len(gs) - 1; a >= 0; a-- {
		if a < lead || shape[a-lead] == 1 && gs[a] != 1 {
			g = SumAxis(g, a, true)
		}
	}
	return Reshape(g, shape...)
}

// expandTo returns g broadcast to shape (g's shape broadcasting to it).
func expandTo[T tensor.Float](g Var[T], shape []int) Var[T] {
	if slices.Equal(g.Shape(), shape) {
		return g
	}
	z := g.t.arena.get(shape...)
	g.t.ew.Fill(z, 0) // where the engine keeps g
	return Add(g.t.Const(z), g)
}
