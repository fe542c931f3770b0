package layers

import (
	"math"
	"strconv"
	"strings"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// Module is a differentiable function of one input with parameters: a
// layer, or a network of layers.
type Module[T tensor.Float] interface {
	// Forward records the module's output for input x on tp, reading its
	// parameters through tp.Param.
	Forward(tp *autograd.Tape[T], x autograd.Var[T]) autograd.Var[T]
	// Params returns the module's parameters in a fixed order, each named by
	// its path in the module tree (weight, conv2.bias, f.conv2.weight, ...).
	Params() []*autograd.Param[T]
}

// TimeModule is a module whose output also depends on a time t: the
// right-hand side f(h, t) of an ODE. A container passes t on to its
// children (see ForwardT); a module that ignores t is a plain Module.
//
// A TimeModule need not be a Module: one that cannot run without a time
// (TimeConcat) has ForwardT only. One that can (Sequential) is both.
//
// A TimeModule is an odeblock.Field as it is: the right-hand side of an
// ODE block, its parameters listed once.
type TimeModule[T tensor.Float] interface {
	// ForwardT records the module's output for input x at time t on tp.
	ForwardT(tp *autograd.Tape[T], t float64, x autograd.Var[T]) autograd.Var[T]
	// Params returns the module's parameters, as Module's.
	Params() []*autograd.Param[T]
}

// Layer is what a Sequential holds: a Module, a TimeModule, or both. Its
// method set is HasParams's; Sequential.Add and ForwardT panic on a Layer
// that is neither a Module nor a TimeModule.
type Layer[T tensor.Float] = HasParams[T]

// ForwardT records m at time t: m.ForwardT(tp, t, x) if m is a TimeModule,
// else m.Forward(tp, x). It panics if m is neither.
func ForwardT[T tensor.Float](m Layer[T], tp *autograd.Tape[T], t float64, x autograd.Var[T]) autograd.Var[T] {
	switch m := m.(type) {
	case TimeModule[T]:
		return m.ForwardT(tp, t, x)
	case Module[T]:
		return m.Forward(tp, x)
	}
	panic(usage("ForwardT", "%T is neither a Module nor a TimeModule", m))
}

// forward records m on tp without a time: m.Forward(tp, x). It panics if m
// is not a Module (a TimeConcat, which needs a time).
func forward[T tensor.Float](m Layer[T], tp *autograd.Tape[T], x autograd.Var[T]) autograd.Var[T] {
	if mod, ok := m.(Module[T]); ok {
		return mod.Forward(tp, x)
	}
	panic(usage("Sequential.Forward", "child %T needs a time t; call ForwardT instead of Forward", m))
}

// Trainable is implemented by modules that behave differently in training
// and in evaluation (Dropout), and by containers, which pass the mode on to
// their children. Modules start in training mode, as PyTorch's do.
type Trainable interface {
	SetTraining(training bool)
}

// SetTraining puts m in training mode (true) or evaluation mode (false), if
// m is Trainable; other modules behave the same in both.
func SetTraining[T tensor.Float](m Layer[T], training bool) {
	if tm, ok := m.(Trainable); ok {
		tm.SetTraining(training)
	}
}

// Buffered is implemented by modules with state that checkpoints save but
// training does not change through gradients (BatchNorm's running
// statistics), and by containers, which collect their children's.
type Buffered[T tensor.Float] interface {
	Buffers() []*autograd.Param[T]
}

// HasParams is anything that lists parameters: a Module, and odeblock's
// fields and dynamics (the families' own scalars included).
type HasParams[T tensor.Float] interface {
	Params() []*autograd.Param[T]
}

// Buffers returns m's buffers (nil if it has none).
func Buffers[T tensor.Float](m HasParams[T]) []*autograd.Param[T] {
	if b, ok := m.(Buffered[T]); ok {
		return b.Buffers()
	}
	return nil
}

// State returns m's parameters, then its buffers: what a checkpoint of m
// saves and loads (an optimizer takes Params only).
func State[T tensor.Float](m HasParams[T]) []*autograd.Param[T] {
	return append(m.Params(), Buffers(m)...)
}

// Prefix prepends prefix and a dot to the name of every parameter and
// buffer of m: weight becomes prefix.weight. Containers call it when a
// child is added; call it on the root of a model to give its paths a first
// component (the paper's vector field is "f": f.conv2.weight), or on an
// odeblock family to name its field's parameters and its own scalars
// together (ode.f.conv2.weight, ode.gamma), so that two blocks' do not
// collide.
func Prefix[T tensor.Float](prefix string, m HasParams[T]) {
	for _, p := range State(m) {
		if p.Name == "" {
			p.Name = prefix
		} else {
			p.Name = prefix + "." + p.Name
		}
	}
}

// Sequential applies its children in order, y = mₙ(…m₂(m₁(x))), as
// PyTorch's nn.Sequential. Each child has a name, which prefixes the paths
// of its parameters: a Linear added as "fc" has parameters fc.weight and
// fc.bias.
//
// Its children are Layers: Modules, TimeModules or both. Sequential is a
// Module and a TimeModule: ForwardT passes t to every child that is a
// TimeModule (a TimeConcat, a nested Sequential) and calls Forward on the
// others; Forward calls each child's Forward, so it panics when a child
// needs a time (a TimeConcat, which has no Forward, or a Sequential
// holding one). An ODE's right-hand side with TimeConcat children is run
// with ForwardT.
type Sequential[T tensor.Float] struct {
	names []string
	mods  []Layer[T]
}

// NewSequential returns a Sequential of mods, named "0", "1", ... by their
// positions, as PyTorch names the children of an nn.Sequential.
func NewSequential[T tensor.Float](mods ...Layer[T]) *Sequential[T] {
	s := &Sequential[T]{}
	for _, m := range mods {
		s.Add("", m)
	}
	return s
}

// Add appends m as a child called name (its position when name is ""),
// prefixing the names of m's parameters with it, and returns s. A module
// belongs to one container: adding it twice prefixes its names twice. It
// panics if name is already taken or contains a dot, or if m is neither a
// Module nor a TimeModule.
func (s *Sequential[T]) Add(name string, m Layer[T]) *Sequential[T] {
	if name == "" {
		name = strconv.Itoa(len(s.mods))
	}
	if strings.Contains(name, ".") {
		panic(usage("Sequential.Add", "child name %q contains a dot", name))
	}
	for _, n := range s.names {
		if n == name {
			panic(usage("Sequential.Add", "a child is already called %q", name))
		}
	}
	if m == nil {
		panic(usage("Sequential.Add", "nil module %q", name))
	}
	_, isMod := m.(Module[T])
	_, isTime := m.(TimeModule[T])
	if !isMod && !isTime {
		panic(usage("Sequential.Add", "child %q (%T) is neither a Module nor a TimeModule", name, m))
	}
	Prefix(name, m)
	s.names = append(s.names, name)
	s.mods = append(s.mods, m)
	return s
}

// Len returns the number of children.
func (s *Sequential[T]) Len() int { return len(s.mods) }

// Child returns child i and its name.
func (s *Sequential[T]) Child(i int) (string, Layer[T]) { return s.names[i], s.mods[i] }

// Forward records mₙ(…m₁(x)) with each child's Forward. A Linear or Conv2D
// followed by an activation (ReLU, LeakyReLU with a positive slope, Tanh,
// Sigmoid, Softplus) is recorded as one fused op (autograd.LinearAct,
// autograd.Conv2DAct): the same values and gradients with one tensor kept
// instead of two.
func (s *Sequential[T]) Forward(tp *autograd.Tape[T], x autograd.Var[T]) autograd.Var[T] {
	return s.record(tp, 0, false, x)
}

// ForwardT records mₙ(…m₁(x)) at time t: each child that is a TimeModule
// gets t. A TimeConcat followed by a Conv2D is recorded as one
// autograd.Conv2DTime, and followed by a Linear (on [B, C]) as one
// autograd.LinearTime, which give the same result without building the
// concatenated input; activations are fused as in Forward.
func (s *Sequential[T]) ForwardT(tp *autograd.Tape[T], t float64, x autograd.Var[T]) autograd.Var[T] {
	return s.record(tp, t, true, x)
}

// record runs the children, fusing the pairs and triples that have a fused
// op.
func (s *Sequential[T]) record(tp *autograd.Tape[T], t float64, timed bool, x autograd.Var[T]) autograd.Var[T] {
	for i := 0; i < len(s.mods); i++ {
		// The activation after child j, if any, is fused into it.
		act := func(j int) autograd.Activation {
			if j+1 < len(s.mods) {
				if a, ok := activationOf(s.mods[j+1]); ok {
					i = j + 1
					return a
				}
			}
			i = j
			return autograd.IdentityAct
		}
		switch m := s.mods[i].(type) {
		case TimeConcat[T]:
			if c, ok := s.next(i).(*Conv2D[T]); ok && timed {
				x = autograd.Conv2DTimeAct(x, T(t), tp.Param(c.Weight), optParam(tp, c.Bias), c.Conv, act(i+1))
				continue
			}
			if l, ok := s.next(i).(*Linear[T]); ok && timed && len(x.Shape()) == 2 {
				x = autograd.LinearTimeAct(x, T(t), tp.Param(l.Weight), optParam(tp, l.Bias), act(i+1))
				continue
			}
		case *Conv2D[T]:
			x = autograd.Conv2DAct(x, tp.Param(m.Weight), optParam(tp, m.Bias), m.Conv, act(i))
			continue
		case *Linear[T]:
			x = autograd.LinearAct(x, tp.Param(m.Weight), optParam(tp, m.Bias), act(i))
			continue
		}
		if timed {
			x = ForwardT(s.mods[i], tp, t, x)
		} else {
			x = forward(s.mods[i], tp, x)
		}
	}
	return x
}

// next returns child i+1, or nil.
func (s *Sequential[T]) next(i int) Layer[T] {
	if i+1 < len(s.mods) {
		return s.mods[i+1]
	}
	return nil
}

// activationOf returns the fusable activation m computes, if it is one.
func activationOf[T tensor.Float](m Layer[T]) (autograd.Activation, bool) {
	switch a := m.(type) {
	case ReLU[T]:
		return autograd.ReLUAct, true
	case LeakyReLU[T]:
		if s := float64(a.Slope); s > 0 && !math.IsInf(s, 1) {
			return autograd.LeakyReLUAct(s), true
		}
	case Tanh[T]:
		return autograd.TanhAct, true
	case Sigmoid[T]:
		return autograd.SigmoidAct, true
	case Softplus[T]:
		return autograd.SoftplusAct, true
	}
	return autograd.Activation{}, false
}

// Params returns the parameters of the children, in order.
func (s *Sequential[T]) Params() []*autograd.Param[T] {
	var ps []*autograd.Param[T]
	for _, m := range s.mods {
		ps = append(ps, m.Params()...)
	}
	return ps
}

// Buffers returns the buffers of the children, in order.
func (s *Sequential[T]) Buffers() []*autograd.Param[T] {
	var bs []*autograd.Param[T]
	for _, m := range s.mods {
		bs = append(bs, Buffers(m)...)
	}
	return bs
}

// SetTraining sets the mode of every Trainable child.
func (s *Sequential[T]) SetTraining(training bool) {
	for _, m := range s.mods {
		SetTraining(m, training)
	}
}

// ParamsOf returns the parameters of ms in order, each once (a parameter
// shared by two modules is listed where it first appears), as PyTorch's
// Module.parameters() lists a model's: what an optimizer of a model made
// of several parts takes, optim.NewAdam(layers.ParamsOf[T](enc, block,
// dec), cfg).
func ParamsOf[T tensor.Float](ms ...HasParams[T]) []*autograd.Param[T] {
	var out []*autograd.Param[T]
	seen := make(map[*autograd.Param[T]]bool)
	for _, m := range ms {
		for _, p := range m.Params() {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}
