package autograd

import (
	"fmt"

	"github.com/adamnode/adamnode/tensor"
)

// usageError is the panic value of a misuse of the package other than a bad
// shape (which panics with *tensor.ShapeError).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usage(format string, args ...any) *usageError {
	return &usageError{msg: "autograd: " + fmt.Sprintf(format, args...)}
}

// Param is a trainable tensor with a name and a gradient accumulator. It
// outlives tapes: each forward pass uses it through Tape.Param, and each
// Backward adds its contribution to Grad. Nothing in this package zeroes
// Grad except ZeroGrad and ZeroGrads. Backward passes on different
// goroutines must not accumulate into the same Param at the same time.
type Param[T tensor.Float] struct {
	Name  string            // names the parameter in messages and reports
	Value *tensor.Tensor[T] // the parameter's value, read by the forward pass
	Grad  *tensor.Tensor[T] // ∂L/∂Value, accumulated by Backward; shaped like Value
}

// NewParam returns a parameter that uses value as its storage (no copy), with
// a zero gradient of the same shape.
func NewParam[T tensor.Float](name string, value *tensor.Tensor[T]) *Param[T] {
	return &Param[T]{Name: name, Value: value, Grad: tensor.New[T](value.Shape()...)}
}

// ZeroGrad sets p.Grad to zero, allocating it if it is nil.
func (p *Param[T]) ZeroGrad() {
	if p.Grad == nil || !p.Grad.SameShape(p.Value) {
		p.Grad = tensor.New[T](p.Value.Shape()...)
		return
	}
	p.Grad.Zero()
}

// ZeroGrads zeroes the gradient of every parameter in ps.
func ZeroGrads[T tensor.Float](ps []*Param[T]) {
	for _, p := range ps {
		p.ZeroGrad()
	}
}

// Var is a handle to a value recorded on a tape: a leaf (Tape.Const,
// Tape.Input, Tape.Param) or the result of an op. It is a small value, passed
// and copied freely; recording an op allocates nothing. The zero Var stands
// for an absent optional operand (a bias). A Var is valid until its tape's
// next Reset or Release; after that every use of it panics, so a stale Var
// can never read a later pass's buffers.
type Var[T tensor.Float] struct {
	t   *Tape[T]
	i   int32  // slot index on t
	gen uint32 // t's pass that made the Var
}

// IsZero reports whether v is the zero Var (no value).
func (v Var[T]) IsZero() bool { return v.t == nil }

// Value returns the Var's value. For a leaf it is the caller's tensor; for an
// op result it is owned by the tape: read it, do not modify it, and do not
// keep it past the tape's next Reset.
//
// While the tape records gradients, the value of a Var that requires one is
// marked as such: a VJP taken at it (Pullback.VJP) is an error
// (ErrVJPOfRecorded), since its result could only re-enter the computation
// as a constant.
func (v Var[T]) Value() *tensor.Tensor[T] {
	e := v.use("Value")
	if e.requires && e.param == nil && !v.t.noGrad && !v.t.spent && !v.t.valueOnly {
		e.value.Mark(v.t)
	}
	return e.value
}

// Grad returns ∂L/∂v after Backward for a leaf made by Tape.Input or
// Tape.Param (for a Param, its gradient accumulator), or nil when no gradient
// reached v. Gradients of op results are recycled while Backward runs, so
// Grad of an op result is nil afterwards.
func (v Var[T]) Grad() *tensor.Tensor[T] { return v.use("Grad").grad }

// Shape returns a copy of the dimensions of v's value.
func (v Var[T]) Shape() []int { return v.use("Shape").value.Shape() }

// Len returns the number of elements of v's value.
func (v Var[T]) Len() int { return v.use("Len").value.Len() }

// Item returns the only element of a one-element Var (a loss). It panics if v
// has more than one element.
func (v Var[T]) Item() T {
	x := v.use("Item").value
	if x.Len() != 1 {
		panic(usage("Item of a Var of shape %v: want exactly one element", x.Shape()))
	}
	return x.ReadData()[0]
}

// Tape returns the tape v is recorded on (nil for the zero Var).
func (v Var[T]) Tape() *Tape[T] { return v.t }

// Param returns the parameter v stands for, or nil if v is not a parameter
// leaf.
func (v Var[T]) Param() *Param[T] { return v.use("Param").param }

// RequiresGrad reports whether Backward computes a gradient for v: v is a
// Param or Input leaf, or the result of an op with such an input, recorded
// with gradients on.
func (v Var[T]) RequiresGrad() bool { return v.use("RequiresGrad").requires }

// use returns v's slot, panicking unless v is a live Var.
func (v Var[T]) use(op string) *entry[T] {
	t := v.t
	if t == nil {
		panic(usage("%s: zero Var (no value)", op))
	}
	if v.gen != t.gen {
		panic(usage("%s: Var from an earlier pass of its tape (before Reset or Release)", op))
	}
	return t.entryAt(int(v.i))
}

// rule is the backward rule of an op: given the slot of a recorded op whose
// output gradient e.grad is set, it adds the op's vector–Jacobian product
// into the gradients of the op's inputs, obtained through Tape.gradDst or
// Tape.accumulate. Rules are zero-size types so that recording one allocates
// nothing.
type rule[T tensor.Float] interface {
	backward(t *Tape[T], e *entry[T])
}

// entry is one slot of a tape: a value and its gradient and, for a recorded
// op, what its backward rule needs.
type entry[T tensor.Float] struct {
	value    *tensor.Tensor[T]
	grad     *tensor.Tensor[T]
	param    *Param[T] // set for a leaf made by Tape.Param
	requires bool      // whether a gradient flows to this slot
	idx      int32     // the slot's index
	cls      int32     // the arena size class of value, −1 if unknown
	gcls     int32     // the arena size class of grad, −1 if unknown

	op     string
	rule   rule[T]           // nil for leaves and unrecorded results
	in     [3]*entry[T]      // inputs of fixed-arity ops (nil when absent)
	ins    []*entry[T]       // inputs of variadic ops and custom nodes
	fs     []T               // per-input coefficients of variadic ops
	view   *tensor.Tensor[T] // the last view made in this slot, kept across Reset for reuse
	gview  *tensor.Tensor[T] // Reshape's output gradient viewed as its input, kept likewise
	aux    *tensor.Tensor[T] // a tensor saved for backward, from the arena
	f      [2]T              // scalar settings (slope, bounds, constants)
	n      [4]int            // integer settings (axis, offsets, stride, pad)
	ix     []int             // indices saved for backward (Gather's offsets, IndexSelect's), kept across Reset for reuse
	custom func(gy *tensor.Tensor[T]) ([]*tensor.Tensor[T], error)
	// customOps is a custom node's backward written in ops (CustomDiff).
	customOps func(gy Var[T], inputs []Var[T]) ([]Var[T], error)
}

// clearGraph drops what the entry keeps for its backward rule, keeping its
// Var.
func (e *entry[T]) clearGraph() {
	e.rule = nil
	e.in = [3]*entry[T]{}
	clear(e.ins[:cap(e.ins)])
	e.ins = e.ins[:0]
	e.aux = nil
	e.custom = nil
	e.customOps = nil
}

// chunkSize is the number of entries per block of tape storage. Blocks are
// never moved, so a pointer to a slot stays valid.
const chunkSize = 128

// Tape records a define-by-run forward pass and runs it backward. A tape is
// bound to one element type and computes with one tensor.Engine. It is not
// safe for concurrent use; separate tapes are independent (but see Param for
// accumulating into shared gradients).
//
// The life of a tape is: record ops, call Backward (or BackwardWith) once,
// read the gradients, then Reset to record the next pass with the same
// buffers, or drop the tape. Backward releases the recorded graph (inputs,
// saved tensors, custom closures); the values and gradients stay readable
// until Reset.
type Tape[T tensor.Float] struct {
	eng tensor.Engine[T]
	// ew is eng's Elementwise (tensor.ElementwiseOf; HostElementwise for
	// an engine without one): the elementwise ops compute with it.
	ew tensor.Elementwise[T]
	// onDevice is tensor.OnDevice(eng): eng computes in memory of its own,
	// so the tape minds where values are (residency, host syncs).
	onDevice bool
	blocks   tensor.BlockCopier[T] // eng's block copies on a device that has them (conv_time.go, Concat, Narrow)
	ewCoef   []T                   // LinComb's coefficients for ew (ewLinComb)
	ewXs     []*tensor.Tensor[T]   // LinComb's operands for ew
	splits   []splitFilter[T]      // Conv2DTime's filters split for ew (conv_time.go)
	chunks   [][]entry[T]
	n        int    // entries in use
	ops      int    // recorded ops (entries with a rule)
	gen      uint32 // incremented by Reset and Release
	noGrad   bool
	spent    bool  // Backward has run since the last Reset
	running  bool  // Backward is running
	err      error // the error a custom backward returned, ending Backward
	// poison is the error Backward returns without running: a VJP was
	// taken at a value of this pass (ErrVJPOfRecorded).
	poison error
	// constParams makes every Param leaf a constant (a VJP that leaves
	// Param.Grad alone and was given no Params).
	constParams bool
	arena       arena[T]

	// gradsRecorded makes Grad record its results whenever the tape
	// records gradients (SetGradsRecorded).
	gradsRecorded bool
	// retryGrad marks a no-grad evaluation by Pullback.Value: Grad called
	// within it asks, by a panic of wantsRecording, for the evaluation to
	// run again recording (valueOnly).
	retryGrad bool
	// valueOnly: the tape records gradients only so that the function
	// evaluated on it can differentiate parts of itself (a field's
	// autograd.Grad, in Pullback.Value); nothing differentiates the whole
	// from outside, so its values are not marked as recorded.
	valueOnly bool

	// Gradient redirection for Pullback: Tape.Param(p) accumulates into
	// redirGrads[i] for p == redirParams[i].
	redirOn     bool
	redirSkip   bool // the redirected parameters are constants (VJPDest.SkipParams)
	redirParams []*Param[T]
	redirGrads  []*tensor.Tensor[T]
	redirNext   int

	// The Grad calls under way, innermost last (grad.go).
	walks []gradWalk

	// The shard sets of RowShards nodes on the tape, returned to their
	// RowShards at Reset (or when Backward reaches the node).
	held []shardHold[T]
}

// NewTape returns an empty tape that computes with eng and records gradients.
func NewTape[T tensor.Float](eng tensor.Engine[T]) *Tape[T] {
	if eng == nil {
		panic(usage("NewTape: nil engine (use tensor.EngineFor[T](tensor.Default()))"))
	}
	t := &Tape[T]{eng: eng, ew: tensor.ElementwiseOf(eng), onDevice: tensor.OnDevice(eng), gen: 1}
	if t.ew == nil {
		t.ew = tensor.HostElementwise[T]()
	}
	if t.onDevice {
		t.blocks = tensor.BlockCopierOf(eng)
	}
	return t
}

// Engine returns the engine the tape computes with.
func (t *Tape[T]) Engine() tensor.Engine[T] { return t.eng }

// Len returns the number of ops recorded for backward since the last Reset
// (zero after Backward, which releases them, and in no-grad mode).
func (t *Tape[T]) Len() int { return t.ops }

// NoGrad reports whether the tape is in no-grad mode.
func (t *Tape[T]) NoGrad() bool { return t.noGrad }

// SetNoGrad turns no-grad mode on or off and returns the previous setting.
// In no-grad mode ops compute values only: nothing is recorded, no Var
// requires a gradient, and Backward panics. Use it for evaluation, or for a
// stretch of a pass whose gradient is not wanted:
//
//	defer t.SetNoGrad(t.SetNoGrad(true))
func (t *Tape[T]) SetNoGrad(on bool) bool {
	was := t.noGrad
	t.noGrad = on
	return was
}

// SetGradsRecorded turns on or off, and returns the previous setting of,
// the rule that Grad records the gradients it returns (as with
// GradOptions.CreateGraph) whenever the tape records gradients. It is for
// tapes on which a function is recorded to be differentiated as a whole —
// a Pullback's (always on), an ODE block's stages — so that a gradient the
// function takes of a part of itself stays part of it, however it was
// asked for: a Hamiltonian field's ∇H, whose derivative the training pass
// needs. Off by default: on a tape of one's own, Grad without CreateGraph
// returns constants, as torch.autograd.grad without create_graph does.
func (t *Tape[T]) SetGradsRecorded(on bool) bool {
	was := t.gradsRecorded
	t.gradsRecorded = on
	return was
}

// Reset empties the tape for a new pass, keeping its buffers: a training loop
// that records the same shapes each pass allocates nothing in steady state.
// Every Var of the previous pass, and every tensor it returned, becomes
// invalid; using such a Var in an op panics. The no-grad setting is kept.
func (t *Tape[T]) Reset() {
	if t.running {
		panic(usage("Reset called while the tape's Backward is running"))
	}
	for i := 0; i < t.n; i++ {
		e := &t.chunks[i/chunkSize][i%chunkSize]
		ins, fs, view, gview, ix := e.ins[:0], e.fs[:0], e.view, e.gview, e.ix[:0]
		clear(e.ins[:cap(e.ins)])
		*e = entry[T]{ins: ins, fs: fs, view: view, gview: gview, ix: ix}
	}
	t.n, t.ops, t.spent, t.poison = 0, 0, false, nil
	t.gen++
	t.clearRedirect()
	t.releaseHeld()
	t.arena.reset()
}

// Release empties the tape and drops every buffer and reference it holds
// (Reset keeps them for reuse), so that the garbage collector can take them.
// The tape stays usable.
func (t *Tape[T]) Release() {
	if t.running {
		panic(usage("Release called while the tape's Backward is running"))
	}
	clear(t.chunks)
	t.chunks = nil
	t.splits = nil
	t.n, t.ops, t.spent, t.poison = 0, 0, false, nil
	t.gen++
	t.clearRedirect()
	t.releaseHeld()
	t.held = nil
	t.arena.release()
}

func (t *Tape[T]) clearRedirect() {
	t.redirOn, t.redirSkip, t.constParams = false, false, false
	clear(t.redirParams)
	clear(t.redirGrads)
	t.redirParams, t.redirGrads = t.redirParams[:0], t.redirGrads[:0]
	t.redirNext = 0
}

// newEntry returns a fresh slot for a Var made by op.
func (t *Tape[T]) newEntry(op string) *entry[T] {
	if t.running {
		panic(usage("%s: cannot record on a tape while its Backward is running; inside a custom backward, evaluate on another tape (Pullback, VJP)", op))
	}
	if t.spent {
		panic(usage("%s: the tape already ran Backward; call Reset to record a new pass", op))
	}
	c := t.n / chunkSize
	if c == len(t.chunks) {
		t.chunks = append(t.chunks, make([]entry[T], chunkSize))
	}
	e := &t.chunks[c][t.n%chunkSize]
	e.idx = int32(t.n)
	e.cls, e.gcls = -1, -1
	e.op = op
	t.n++
	return e
}

// varOf returns the handle of slot e.
func (t *Tape[T]) varOf(e *entry[T]) Var[T] { return Var[T]{t: t, i: e.idx, gen: t.gen} }

// entryAt returns slot i.
func (t *Tape[T]) entryAt(i int) *entry[T] { return &t.chunks[i/chunkSize][i%chunkSize] }

// Const returns a leaf holding x that needs no gradient (data, targets,
// frozen values). The tape keeps a reference to x, not a copy: do not modify
// x until the tape is Reset.
func (t *Tape[T]) Const(x *tensor.Tensor[T]) Var[T] {
	if x == nil {
		panic(usage("Const: nil tensor"))
	}
	e := t.newEntry("Const")
	e.value = x
	return t.varOf(e)
}

// Scratch returns a tensor of the given shape from the tape's buffers,
// valid until the tape's next Reset. Its elements are whatever a previous
// pass left there: overwrite them all. It is memory for a Custom node's
// value and for what the node keeps for its backward (Scratch may be called
// from the backward function too): a tape reused from pass to pass hands
// out the same buffers again instead of allocating.
func (t *Tape[T]) Scratch(dims ...int) *tensor.Tensor[T] {
	return t.arena.get(dims...)
}

// Scalar returns a one-element leaf (rank 0) holding a, needing no gradient.
func (t *Tape[T]) Scalar(a T) Var[T] {
	e := t.newEntry("Scalar")
	e.value = t.arena.get()
	t.ew.Fill(e.value, a)
	return t.varOf(e)
}

// Input returns a leaf holding x whose gradient Backward computes: after
// Backward, v.Grad() is ∂L/∂x. The tape keeps a reference to x, not a copy.
// In no-grad mode Input is Const.
func (t *Tape[T]) Input(x *tensor.Tensor[T]) Var[T] {
	v := t.Const(x)
	t.entryAt(int(v.i)).requires = !t.noGrad
	return v
}

// inputInto is Input with the gradient accumulated (+=) into g instead of a
// tape buffer.
func (t *Tape[T]) inputInto(x, g *tensor.Tensor[T]) Var[T] {
	v := t.Input(x)
	if e := t.entryAt(int(v.i)); e.requires {
		e.grad = g
	}
	return v
}

// Param returns a leaf standing for p: its value is p.Value (not copied), and
// Backward adds ∂L/∂p.Value into p.Grad (allocated if nil). Using the same
// parameter several times in a pass is fine: every use adds its share.
func (t *Tape[T]) Param(p *Param[T]) Var[T] {
	if p == nil || p.Value == nil {
		panic(usage("Param: nil parameter or parameter value"))
	}
	e := t.newEntry("Param")
	e.value = p.Value
	e.param = p
	if t.noGrad || t.constParams {
		return t.varOf(e)
	}
	e.requires = true
	if t.redirOn {
		e.grad = t.redirected(p)
		e.requires = !t.redirSkip
		return t.varOf(e)
	}
	if p.Grad == nil {
		p.Grad = tensor.New[T](p.Value.Shape()...)
	}
	if !p.Grad.SameShape(p.Value) {
		panic(&tensor.ShapeError{Op: "autograd.Param", Msg: fmt.Sprintf("parameter %q has value of shape %v but gradient of shape %v", p.Name, p.Value.Shape(), p.Grad.Shape())})
	}
	e.grad = p.Grad
	return t.varOf(e)
}

// RedirectParams sends the gradients of params, from now until the tape's
// next Reset, into grads (grads[i] shaped like params[i].Value, added to
// by Backward, never zeroed here) instead of Param.Grad, which is left
// alone; Param of a parameter not in params then panics with
// *UnlistedParamError. It is how a caller that records a function on a
// tape of its own (an ODE block's stage) returns the parameters' gradients
// through its own node instead of writing Param.Grad behind the outer
// tape's back. Call it on an empty tape, before recording.
func (t *Tape[T]) RedirectParams(params []*Param[T], grads []*tensor.Tensor[T]) {
	if t.n != 0 || t.running || t.spent {
		panic(usage("RedirectParams on a tape that has recorded: call it right after NewTape or Reset"))
	}
	if len(params) != len(grads) {
		panic(usage("RedirectParams: %d parameters, %d gradient buffers", len(params), len(grads)))
	}
	for i, p := range params {
		if p == nil || grads[i] == nil || !grads[i].SameShape(p.Value) {
			panic(usage("RedirectParams: parameter %d (%v) has no gradient buffer shaped like its value", i, paramName(p)))
		}
	}
	t.redirect(params, grads, false)
}

// redirect turns redirection on for params: their gradients go into grads,
// or nowhere with skip (they are read as constants).
func (t *Tape[T]) redirect(params []*Param[T], grads []*tensor.Tensor[T], skip bool) {
	t.redirOn, t.redirSkip = true, skip
	t.redirParams = append(t.redirParams[:0], params...)
	t.redirGrads = append(t.redirGrads[:0], grads...)
	t.redirNext = 0
}

// redirected returns where the gradient of p goes under redirection.
func (t *Tape[T]) redirected(p *Param[T]) *tensor.Tensor[T] {
	n := len(t.redirParams)
	for k := 0; k < n; k++ {
		i := (t.redirNext + k) % n
		if t.redirParams[i] == p {
			t.redirNext = i + 1
			if t.redirSkip {
				return nil
			}
			return t.redirGrads[i]
		}
	}
	panic(&UnlistedParamError{Name: p.Name})
}

// UnlistedParamError is the panic value of a Pullback VJP whose function
// reads a parameter that VJPDest.Params does not list: its gradient would
// have nowhere to go, and dropping it silently would be wrong. Callers
// that know better names for the list (such as an ODE block's dynamics'
// Params) recover it and return their own error.
type UnlistedParamError struct {
	Name string // the parameter's name
}

func (e *UnlistedParamError) Error() string {
	return fmt.Sprintf("autograd: parameter %q is used by the function but not listed in VJPDest.Params; list it with a destination for its gradient, or use Tape.Const(p.Value) to treat it as a constant", e.Name)
}

// Detach returns a leaf holding v's value that needs no gradient: gradients
// stop there.
func Detach[T tensor.Float](v Var[T]) Var[T] {
	t, x := use1("Detach", v)
	e := t.newEntry("Detach")
	e.value = x.value
	return t.varOf(e)
}

// use1 returns the tape and slot of the operand x of op, panicking unless x
// is live and its tape can record.
func use1[T tensor.Float](op string, x Var[T]) (*Tape[T], *entry[T]) {
	e := x.use(op)
	t := x.t
	if t.running || t.spent {
		t.newEntry(op) // panics with the reason
	}
	return t, e
}

// use2 is use1 for two operands on the same tape.
func use2[T tensor.Float](op string, x, y Var[T]) (*Tape[T], *entry[T], *entry[T]) {
	t, xe := use1(op, x)
	ye := y.use(op)
	if y.t != t {
		panic(usage("%s: operands recorded on different tapes", op))
	}
	return t, xe, ye
}

// useOpt returns the slot of an optional operand on t (nil for the zero Var).
func useOpt[T tensor.Float](op string, t *Tape[T], x Var[T]) *entry[T] {
	if x.IsZero() {
		return nil
	}
	e := x.use(op)
	if x.t != t {
		panic(usage("%s: operands recorded on different tapes", op))
	}
	return e
}

// record fills the slot of an op's result: the value, and, when gradients
// are on and one of the inputs a, b, c (nil when absent) requires a
// gradient, the rule and inputs for backward.
func (t *Tape[T]) record(op string, value *tensor.Tensor[T], r rule[T], a, b, c *entry[T]) *entry[T] {
	e := t.newEntry(op)
	t.setValue(e, value)
	if t.noGrad || !(needs(a) || needs(b) || needs(c)) {
		return e
	}
	e.requires = true
	e.rule = r
	e.in = [3]*entry[T]{a, b, c}
	t.ops++
	return e
}

// setValue sets the value of slot e, noting its arena size class when the
// value is the tensor the arena handed out last.
func (t *Tape[T]) setValue(e *entry[T], value *tensor.Tensor[T]) {
	e.value = value
	if value == t.arena.lastT {
		e.cls = int32(t.arena.lastC)
	}
}

func needs[T tensor.Float](e *entry[T]) bool { return e != nil && e.requires }

// gradDst returns the gradient accumulator of slot v and whether it already
// holds a contribution. When acc is false the caller must overwrite every
// element (the tensor is dirty); when true it must add. It returns nil when v
// needs no gradient.
func (t *Tape[T]) gradDst(v *entry[T]) (g *tensor.Tensor[T], acc bool) {
	if v == nil || !v.requires {
		return nil, false
	}
	if v.grad != nil {
		return v.grad, true
	}
	g, c := t.arena.likeClass(v.value, int(v.cls))
	v.grad, v.gcls = g, int32(c)
	return g, false
}

// accumulate adds g to the gradient of input i (slot v) of e. It is the one
// place that checks a gradient returned by a backward function: g must be
// shaped like the input (nil means no contribution).
func (t *Tape[T]) accumulate(e *entry[T], i int, v *entry[T], g *tensor.Tensor[T]) {
	if g == nil {
		return
	}
	if !g.SameShape(v.value) {
		panic(&tensor.ShapeError{Op: "autograd." + e.op, Msg: fmt.Sprintf("backward returned a gradient of shape %v for input %d of shape %v; a backward function must return, for each input, nil or a gradient shaped like that input", g.Shape(), i, v.value.Shape())})
	}
	dst, acc := t.gradDst(v)
	if dst == nil {
		return
	}
	t.ewScaled(dst, acc, 1, g)
}

// checkGrads panics unless every gradient the rule of e left for its
// inputs is shaped like that input. With accumulate (for gradients that
// rules return) it is the one place that checks what backward rules produce.
func (t *Tape[T]) checkGrads(e *entry[T]) {
	for i, v := range e.in {
		if v != nil && v.grad != nil && !v.grad.SameShape(v.value) {
			t.badGrad(e, i, v)
		}
	}
	for i, v := range e.ins {
		if v.grad != nil && !v.grad.SameShape(v.value) {
			t.badGrad(e, i, v)
		}
	}
}

func (t *Tape[T]) badGrad(e *entry[T], i int, v *entry[T]) {
	panic(&tensor.ShapeError{Op: "autograd." + e.op, Msg: fmt.Sprintf("backward left a gradient of shape %v for input %d of shape %v", v.grad.Shape(), i, v.value.Shape())})
}

// Backward computes the gradient of the scalar loss with respect to every
// Param and Input it depends on: it adds ∂loss/∂p into p.Grad for each
// parameter p (accumulating with what is there) and sets Input leaves'
// Grad. loss must have exactly one element. Backward then releases the
// recorded graph; the tape must be Reset before recording again.
//
// The error is the tape's error (Err: one that Check was given this pass),
// returned without running, or that of a custom node's backward (Custom)
// that failed, such as an adjoint ODE solve; Backward stops there, and the
// parameter gradients hold a partial sum that the caller should discard
// (ZeroGrads). Without Custom nodes and Check it is always nil.
//
// It panics in no-grad mode, when loss requires no gradient (built only from
// constants), and when called twice without Reset.
func (t *Tape[T]) Backward(loss Var[T]) error {
	if err := t.failedBackward(); err != nil {
		return err
	}
	e := t.startBackward("Backward", loss)
	if e.value.Len() != 1 {
		panic(&tensor.ShapeError{Op: "autograd.Backward", Msg: fmt.Sprintf("loss of shape %v is not a scalar; use BackwardWith to give the output gradient", e.value.Shape())})
	}
	return t.backward(e, nil)
}

// BackwardWith is Backward from a non-scalar output with a given output
// gradient g = ∂L/∂out (shaped like out): it pulls g back through the tape,
// computing the vector–Jacobian product gᵀ·∂out/∂θ for every Param and Input
// θ that out depends on. g is only read. Its error is as for Backward.
func (t *Tape[T]) BackwardWith(out Var[T], g *tensor.Tensor[T]) error {
	if err := t.failedBackward(); err != nil {
		return err
	}
	e := t.startBackward("BackwardWith", out)
	if g == nil || !g.SameShape(e.value) {
		var gs []int
		if g != nil {
			gs = g.Shape()
		}
		panic(&tensor.ShapeError{Op: "autograd.BackwardWith", Msg: fmt.Sprintf("output gradient of shape %v does not match output shape %v", gs, e.value.Shape())})
	}
	return t.backward(e, g)
}

func (t *Tape[T]) startBackward(op string, out Var[T]) *entry[T] {
	e := out.use(op)
	if out.t != t {
		panic(usage("%s: the output is recorded on another tape", op))
	}
	switch {
	case t.running:
		panic(usage("%s: the tape's Backward is already running", op))
	case t.spent:
		panic(usage("%s: the tape already ran Backward; record a new pass (Reset) first", op))
	case t.noGrad:
		panic(usage("%s: the tape is in no-grad mode and recorded nothing", op))
	case !e.requires:
		panic(usage("%s: the output requires no gradient: it depends on no Param or Input", op))
	}
	return e
}

// backward seeds out's gradient with g (ones when g is nil) and runs every
// recorded rule in reverse order, releasing the graph as it goes, until a
// custom backward fails. When out requires no gradient it only releases the
// graph.
func (t *Tape[T]) backward(out *entry[T], g *tensor.Tensor[T]) error {
	t.running, t.err = true, nil
	defer func() {
		// On a panic in a rule, still leave the tape released and spent.
		for i := 0; i < t.n; i++ {
			t.entryAt(i).clearGraph()
		}
		t.running, t.spent, t.ops = false, true, 0
	}()
	if t.poison != nil {
		return t.poison
	}
	dst, acc := t.gradDst(out)
	if dst != nil {
		t.ewSeed(dst, acc, g)
	}
	for i := t.n - 1; i >= 0; i-- {
		e := t.entryAt(i)
		if e.rule != nil && e.grad != nil && t.err == nil {
			e.rule.backward(t, e)
			t.checkGrads(e)
			// Nothing reads this gradient again: recycle it.
			t.arena.put(e.grad, int(e.gcls))
			e.grad = nil
			if e.aux != nil {
				t.arena.put(e.aux, -1)
			}
		}
		e.clearGraph()
	}
	err := t.err
	t.err = nil
	return err
}
