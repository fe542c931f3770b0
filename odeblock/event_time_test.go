package odeblock_test

import (
	"math"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// TestForwardEventTimeDependent: TestForwardEvent's ball (h' = v,
// v' = −γ, γ learnable) stopped where it falls through a rising floor,
// g = h − (0.5 + 0.8t), an event function of time as well as of the state
// (so the event time's ∂g/∂t term counts): the event time equals the
// exact one, the root of γt²/2 + (0.8 − v0)t + 0.5 − h0, to 1e-8, and the
// gradients of a loss of t*, h(t*) and v(t*) with respect to h0, v0 and γ
// match central differences in every mode. (Planted bug: ∂g/∂t's central
// difference divided by d instead of 2d in blockevent.go.)
func TestForwardEventTimeDependent(t *testing.T) {
	z0, gamma, field := thrownBall()
	const floor0, rise = 0.5, 0.8
	aboveFloor := func(tp *autograd.Tape[float64], tt float64, z autograd.Var[float64]) autograd.Var[float64] {
		return autograd.AddConst(autograd.Narrow(autograd.Reshape(z, 2), 0, 0, 1), -(floor0 + rise*tt))
	}
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			b := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Times: []float64{0, 10}, Mode: mode,
				Solver: odeblock.Options{RTol: 1e-10, ATol: 1e-10}}
			loss := func(tp *autograd.Tape[float64]) (autograd.Var[float64], error) {
				te, ze, err := b.ForwardEvent(tp, tp.Param(z0), aboveFloor, -1)
				if err != nil {
					return autograd.Var[float64]{}, err
				}
				hv := autograd.Reshape(ze, 2)
				h, v := autograd.Narrow(hv, 0, 0, 1), autograd.Narrow(hv, 0, 1, 1)
				return autograd.Add(te, autograd.Add(autograd.Scale(h, 0.3), autograd.Scale(v, 0.1))), nil
			}
			tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
			te, _, err := b.ForwardEvent(tp, tp.Param(z0), aboveFloor, -1)
			if err != nil {
				t.Fatal(err)
			}
			h0, v0, g := 2.0, 1.5, 9.81
			p := rise - v0
			if want := (-p + math.Sqrt(p*p-2*g*(floor0-h0))) / g; math.Abs(te.Item()-want) > 1e-8 {
				t.Errorf("event time %v, exact %v", te.Item(), want)
			}
			opt := autograd.GradCheckOptions{Step: 1e-5, AbsTol: 1e-6, RelTol: 1e-5}
			if rep, err := autograd.CheckGradients(loss, []*autograd.Param[float64]{z0, gamma}, opt); err != nil {
				t.Fatalf("%v\n%v", err, rep)
			}
		})
	}
}
