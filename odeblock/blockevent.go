package odeblock

import (
	"errors"
	"fmt"
	"math"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// EventFunc is an event function g(t, z) of a block's state, recorded with
// autograd ops, with one element. It may not read parameters.
type EventFunc[T tensor.Float] func(tp *autograd.Tape[T], t float64, z autograd.Var[T]) autograd.Var[T]

// ErrNoEvent is the error of ForwardEvent when the event function does not
// cross zero before the last of Times.
var ErrNoEvent = errors.New("odeblock: no event before the end of the span")

// ForwardEvent solves the dynamics from z0 at the first of Times until the
// event function g crosses zero in the direction dir (−1 from above, +1
// from below, 0 either; at the latest the last of Times, else ErrNoEvent),
// and returns the event time t* (a one-element Var) and the state z(t*).
// Both are differentiable with respect to z0 and the dynamics' parameters
// in every gradient mode, by the implicit function theorem (torchdiffeq's
// odeint_event): with z(t*) from the block's solve over [t0, t*] at fixed
// t*, g(t*, z(t*)) = 0 gives
//
//	dt* = −(∂g/∂z · dz) / (∂g/∂t + ∂g/∂z · f(t*, z*)),   dz* = dz + f(t*, z*)·dt*
//
// (∂g/∂t by central differences). It solves twice: once to find t* (the
// crossing located on the dense output), once over [t0, t*] as the mode
// records it. A crossing where ∂g/∂t + ∂g/∂z·f = 0 (tangential) has no
// derivative: an error.
func (b *Block[T]) ForwardEvent(tp *autograd.Tape[T], z0 autograd.Var[T], g EventFunc[T], dir int) (tstar, zstar autograd.Var[T], err error) {
	if !b.busy.enter() {
		return tstar, zstar, errConcurrentUse
	}
	defer b.busy.exit()
	defer recoverEval(&err)
	_, ts, err := b.checkRecord()
	if err != nil {
		return tstar, zstar, err
	}
	if g, err = oneElement(tp.Engine(), g, ts[0], z0); err != nil {
		return tstar, zstar, err
	}
	te, err := b.findEvent(tp.Engine(), z0, g, dir, ts[0], ts[len(ts)-1])
	if err != nil {
		return tstar, zstar, err
	}
	zfix, err := func() (autograd.Var[T], error) {
		saved := b.Times
		defer func() { b.Times = saved }()
		b.Times = []float64{ts[0], te}
		return b.recordHeld(tp, z0, false)
	}()
	if err != nil {
		return tstar, zstar, err
	}
	return b.eventNode(tp, zfix, g, te)
}

// oneElement returns g with its value reshaped to [1], after checking that
// g(t0, z0) has one element (of any shape: [1], [1, 1], ...).
func oneElement[T tensor.Float](eng tensor.Engine[T], g EventFunc[T], t0 float64, z0 autograd.Var[T]) (EventFunc[T], error) {
	v := autograd.NewPullback(eng).Value(func(tp *autograd.Tape[T], in []autograd.Var[T]) autograd.Var[T] {
		return g(tp, t0, in[0])
	}, []*tensor.Tensor[T]{z0.Value()})
	if v.Len() != 1 {
		return nil, fmt.Errorf("odeblock: the event function returned shape %v at t=%g: it must have one element", v.Shape(), t0)
	}
	return func(tp *autograd.Tape[T], t float64, z autograd.Var[T]) autograd.Var[T] {
		return autograd.Reshape(g(tp, t, z), 1)
	}, nil
}

// findEvent solves without gradients from z0 and returns the event time.
func (b *Block[T]) findEvent(eng tensor.Engine[T], z0 autograd.Var[T], g EventFunc[T], dir int, t0, t1 float64) (float64, error) {
	shape, n := z0.Shape(), z0.Len()
	p := &pass[T]{b: b, eng: eng, shape: shape, n: n}
	s, err := NewSolver[T](b.Solver)
	if err != nil {
		return 0, err
	}
	gpb := autograd.NewPullback(eng)
	at := make([]*tensor.Tensor[T], 1)
	s.Event = &Event[T]{Direction: dir, G: func(t float64, y []T) float64 {
		at[0] = tensor.FromSlice(y, shape...)
		v := gpb.Value(func(tp *autograd.Tape[T], in []autograd.Var[T]) autograd.Var[T] { return g(tp, t, in[0]) }, at)
		return float64(v.Data()[0])
	}}
	out := []*tensor.Tensor[T]{tensor.New[T](n), tensor.New[T](n)}
	if _, err := hk[T]().SolveTensorsEval(s, p.tensorEvaluator(), z0.Value(), []float64{t0, t1}, out); err != nil {
		return 0, err
	}
	te, hit := s.EventTime()
	if !hit {
		return 0, fmt.Errorf("%w [%g, %g]", ErrNoEvent, t0, t1)
	}
	return te, nil
}

// eventNode records (t*, z*) from z(t*) at fixed t* (zfix), with the
// implicit-function-theorem backward.
func (b *Block[T]) eventNode(tp *autograd.Tape[T], zfix autograd.Var[T], g EventFunc[T], te float64) (tstar, zstar autograd.Var[T], err error) {
	eng, shape, n := tp.Engine(), zfix.Shape(), zfix.Len()
	// A copy: the VJP below is this node's own derivative, not one the
	// tape must record (autograd.ErrVJPOfRecorded).
	zv := zfix.Value().Clone()
	// ∂g/∂z at (t*, z*), f(t*, z*) and ∂g/∂t.
	gz := tensor.New[T](shape...)
	pb := autograd.NewPullback(eng)
	gf := func(tp *autograd.Tape[T], in []autograd.Var[T]) autograd.Var[T] { return g(tp, te, in[0]) }
	if _, err := pb.VJP(gf, []*tensor.Tensor[T]{zv}, tensor.Full[T](1, 1), autograd.VJPDest[T]{Inputs: []*tensor.Tensor[T]{gz}, Params: []*autograd.Param[T]{}}); err != nil {
		return tstar, zstar, fmt.Errorf("odeblock: the event function's gradient: %w", err)
	}
	fs := pb.Value(func(tp *autograd.Tape[T], in []autograd.Var[T]) autograd.Var[T] {
		return b.Dynamics.Eval(tp, te, in[0])
	}, []*tensor.Tensor[T]{zv})
	fstar := fs.Clone()
	gAt := func(t float64) float64 {
		v := pb.Value(func(tp *autograd.Tape[T], in []autograd.Var[T]) autograd.Var[T] { return g(tp, t, in[0]) }, []*tensor.Tensor[T]{zv})
		return float64(v.Data()[0])
	}
	d := 1e-6 * math.Max(1, math.Abs(te))
	gt := (gAt(te+d) - gAt(te-d)) / (2 * d)
	den := gt
	for i, v := range gz.Data() {
		den += float64(v) * float64(fstar.Data()[i])
	}
	if den == 0 || math.IsNaN(den) {
		return tstar, zstar, fmt.Errorf("odeblock: the event at t=%g is tangential (∂g/∂t + ∂g/∂z·f = %g): its time has no derivative", te, den)
	}
	value := tensor.New[T](1 + n)
	value.Data()[0] = T(te)
	copy(value.Data()[1:], zv.Data())
	backward := func(gy *tensor.Tensor[T]) ([]*tensor.Tensor[T], error) {
		gyd := gy.Data()
		tbar, zbar := float64(gyd[0]), gyd[1:]
		s := tbar
		for i, v := range zbar {
			s += float64(v) * float64(fstar.Data()[i])
		}
		// z̄fix = z̄ + (t̄ + z̄·f*)·(−∂g/∂z / den)
		out := tensor.New[T](shape...)
		for i, v := range zbar {
			out.Data()[i] = v - T(s/den)*gz.Data()[i]
		}
		return []*tensor.Tensor[T]{out}, nil
	}
	both := autograd.Custom("ODEEvent", value, backward, zfix)
	tstar = autograd.Narrow(both, 0, 0, 1)
	zstar = autograd.Reshape(autograd.Narrow(both, 0, 1, n), shape...)
	return tstar, zstar, nil
}
