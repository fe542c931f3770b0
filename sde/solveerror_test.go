package sde

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock/integrate"
	"github.com/adamnode/adamnode/tensor"
)

// failingPath answers its first ok increments from a Brownian path and
// fails every later one: a path that breaks in the backward pass.
type failingPath struct {
	*Brownian[float64]
	ok, n int
}

var errPathGone = errors.New("path gone")

func (p *failingPath) Increment(dst *tensor.Tensor[float64], s, t float64) error {
	if p.n++; p.n > p.ok {
		return errPathGone
	}
	return p.Brownian.Increment(dst, s, t)
}

// TestSolveErrorIsTheIntegrators: an SDE solve's failure is the
// integrator's *integrate.SolveError (as an ODE solve's) with the method
// named: errors.As finds both, with the phase, the start and size of the
// step that failed, and errors.Is the cause; the message names them all.
func TestSolveErrorIsTheIntegrators(t *testing.T) {
	nanAfter := func(t0 float64) Funcs[float64] {
		return Funcs[float64]{
			F: func(tp *autograd.Tape[float64], t float64, y autograd.Var[float64]) autograd.Var[float64] {
				if t >= t0 {
					return autograd.Scale(y, math.NaN())
				}
				return autograd.Scale(y, -0.5)
			},
			G: func(tp *autograd.Tape[float64], t float64, y autograd.Var[float64]) autograd.Var[float64] {
				return autograd.Scale(y, 0.2)
			},
		}
	}
	for _, tc := range []struct {
		name  string
		s     Funcs[float64]
		opt   Options
		okInc int // increments the path answers (0: all)
		want  integrate.SolveError
		cause error
	}{
		// Heun's second drift at t + h = 0.5 fails the step from 0.25.
		{"forward, fixed steps", nanAfter(0.5), Options{Method: Heun, Step: 0.25}, 0,
			integrate.SolveError{Phase: "forward", T: 0.25, H: 0.25}, ErrNonFinite},
		{"forward, adaptive", nanAfter(0), Options{Method: EulerMaruyama, Step: 0.5, Adaptive: true}, 0,
			integrate.SolveError{Phase: "forward", T: 0, H: 0.5}, ErrNonFinite},
		{"backward, reversible", nanAfter(10), Options{Method: ReversibleHeun, Step: 0.25, Mode: Reversible{}}, 4,
			integrate.SolveError{Phase: "backward", T: 0.75, H: 0.25}, errPathGone},
		{"backward, adjoint", nanAfter(10), Options{Method: Heun, Step: 0.5, Mode: Adjoint{}}, 2,
			integrate.SolveError{Phase: "backward", T: 0.5, H: 0.5}, errPathGone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := mustBrownian[float64](t, 0, 1, []int{3}, BrownianOptions{Seed: 2})
			var path Path[float64] = b
			if tc.okInc > 0 {
				path = &failingPath{Brownian: b, ok: tc.okInc}
			}
			tp := autograd.NewTape(engine64())
			defer tp.Release()
			opt := tc.opt
			ys, _, err := Solve[float64](tp, tc.s, tp.Input(tensor.Full(1.0, 3)), []float64{0, 1}, path, opt)
			if err == nil {
				err = tp.Backward(autograd.Sum(ys[1]))
			}
			var ise *integrate.SolveError
			var se *SolveError
			if !errors.As(err, &ise) || !errors.As(err, &se) || !errors.Is(err, tc.cause) {
				t.Fatalf("error %v (%T): want a *SolveError, a *integrate.SolveError and %v in it", err, err, tc.cause)
			}
			if d := cmp.Diff(tc.want, *ise, cmpopts.IgnoreFields(integrate.SolveError{}, "Err")); d != "" {
				t.Errorf("integrate.SolveError (-want +got):\n%s", d)
			}
			if se.Method != opt.Method || ise != &se.SolveError {
				t.Errorf("method %q, want %q; the integrator's error is not the one inside the *SolveError", se.Method, opt.Method)
			}
			for _, w := range []string{"sde: " + opt.Method, tc.want.Phase, fmt.Sprintf("at t=%g", tc.want.T), fmt.Sprintf("(step %g)", tc.want.H), tc.cause.Error()} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestStatsAsTheIntegrators: a solve's Stats embeds the integrator's, with
// NFE the drift's evaluations of the forward pass and Accepted every fixed
// step (as an ODE solve counts them), and the SDE's own counts beside.
func TestStatsAsTheIntegrators(t *testing.T) {
	b := mustBrownian[float64](t, 0, 1, []int{4}, BrownianOptions{Seed: 3})
	for _, tc := range []struct {
		method string
		want   Stats
	}{
		{EulerMaruyama, Stats{Stats: integrate.Stats{NFE: 8, Accepted: 8}, Steps: 8, DiffusionEvals: 8}},
		{Heun, Stats{Stats: integrate.Stats{NFE: 16, Accepted: 8}, Steps: 8, DiffusionEvals: 16}},
		{SRK, Stats{Stats: integrate.Stats{NFE: 16, Accepted: 8}, Steps: 8, DiffusionEvals: 24}},
	} {
		tp := autograd.NewTape(engine64())
		_, st, err := Solve[float64](tp, gbmDiag.sde(), tp.Input(tensor.Full(1.0, 4)), []float64{0, 0.5, 1}, b, Options{Method: tc.method, Step: 0.125})
		tp.Release()
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tc.want, *st); d != "" {
			t.Errorf("%s: stats (-want +got):\n%s", tc.method, d)
		}
	}
}
