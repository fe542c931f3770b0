package sde

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// TestAdaptiveConverges: with step doubling, tightening RTol tenfold takes
// more steps and shrinks the error against the exact solution of geometric
// Brownian motion on the same path (200 paths in one state, one shared
// step size), for a method of each order and calculus (Euler–Maruyama, of
// strong order ½, at tolerances ten times looser).
func TestAdaptiveConverges(t *testing.T) {
	const n = 200
	g := gbmDiag
	b := mustBrownian[float64](t, 0, 1, []int{n}, BrownianOptions{Seed: 8})
	for _, method := range []string{EulerMaruyama, SRK, SRI2, Heun, ReversibleHeun} {
		t.Run(method, func(t *testing.T) {
			calc, _ := MethodCalculus(method)
			exact := g.exact(t, b, n, calc)
			var errs []float64
			var steps []int
			rtols := []float64{1e-2, 1e-3, 1e-4}
			if method == EulerMaruyama {
				rtols = []float64{1e-1, 1e-2, 1e-3}
			}
			for _, rtol := range rtols {
				tp := autograd.NewTape(engine64())
				tp.SetNoGrad(true)
				ys, st, err := Solve[float64](tp, g.sde(), tp.Const(tensor.Full(1.0, n)), []float64{0, 0.3, 1}, b,
					Options{Method: method, Adaptive: true, Step: 0.5, RTol: rtol, ATol: rtol / 10})
				if err != nil {
					t.Fatal(err)
				}
				var e float64
				for i, v := range ys[2].Value().ReadData() {
					e += math.Abs(v-exact[i]) / n
				}
				errs = append(errs, e)
				steps = append(steps, st.Steps)
				if st.Steps != 2*st.Accepted || (rtol == rtols[2] && st.Rejected == 0) {
					t.Errorf("rtol %g: %d steps, %d accepted, %d rejected attempts; want steps = 2·accepted, and at the tightest rtol some rejected (the first step is 0.5)", rtol, st.Steps, st.Accepted, st.Rejected)
				}
			}
			t.Logf("rtol %g: errors %.3g, steps %v", rtols, errs, steps)
			for i := 1; i < len(errs); i++ {
				if !(errs[i] < errs[i-1]/1.5) || !(steps[i] > steps[i-1]) {
					t.Errorf("tighter rtol: errors %.3g, steps %v; want each error below 2/3 of the last and more steps", errs, steps)
				}
			}
		})
	}
}

// TestAdaptiveReversibleMatchesBackprop: the adaptive solve takes the same
// steps in both gradient modes, and reversible Heun's backward over them
// gives backprop's gradients (the rejected attempts, recorded by Backprop,
// do not reach the loss).
func TestAdaptiveReversibleMatchesBackprop(t *testing.T) {
	m := newNeural(Diagonal, 3)
	b := mustBrownian[float64](t, 0, 1, m.pathShape(), BrownianOptions{Seed: 5})
	opt := Options{Method: ReversibleHeun, Adaptive: true, Step: 0.5, RTol: 1e-3, ATol: 1e-4}
	lb, gb := grads(t, m, m.loss(b, opt))
	opt.Mode = Reversible{}
	lr, gr := grads(t, m, m.loss(b, opt))
	if lb != lr {
		t.Errorf("loss %.17g with Backprop, %.17g with Reversible", lb, lr)
	}
	if d := cmp.Diff(gb, gr, cmpopts.EquateApprox(1e-10, 1e-13)); d != "" {
		t.Errorf("gradients (-backprop +reversible):\n%s", d)
	}
}

func TestAdaptiveErrors(t *testing.T) {
	g := gbmDiag
	b := mustBrownian[float64](t, 0, 1, []int{4}, BrownianOptions{Seed: 1})
	for _, tc := range []struct {
		name string
		opt  Options
		want error
	}{
		{"max steps", Options{Adaptive: true, Step: 0.1, RTol: 1e-9, ATol: 1e-12, MaxSteps: 20}, ErrMaxSteps},
		{"underflow", Options{Adaptive: true, Step: 0.1, RTol: 1e-9, ATol: 1e-12, MinStep: 0.01}, ErrStepUnderflow},
		{"negative rtol", Options{Adaptive: true, Step: 0.1, RTol: -1}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp := autograd.NewTape(engine64())
			_, _, err := Solve[float64](tp, g.sde(), tp.Const(tensor.Full(1.0, 4)), []float64{0, 1}, b, tc.opt)
			if err == nil {
				t.Fatal("no error")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("error %q, want %v", err, tc.want)
			}
		})
	}
}

// TestNoGradMemory: a solve in no-grad mode keeps only its outputs on the
// caller's tape, whatever the number of steps, and gives the values of the
// recorded solve bit for bit.
func TestNoGradMemory(t *testing.T) {
	m := newNeural(Diagonal, 3)
	b := mustBrownian[float64](t, 0, 1, m.pathShape(), BrownianOptions{Seed: 5})
	for _, method := range MethodNames() {
		t.Run(method, func(t *testing.T) {
			solve := func(steps int, noGrad bool) (int, []float64) {
				tp := autograd.NewTape(engine64())
				tp.SetNoGrad(noGrad)
				ys, _, err := Solve[float64](tp, m, tp.Const(m.y0p.Value), []float64{0, 0.5, 1}, b, Options{Method: method, Noise: Diagonal, Step: 1 / float64(steps)})
				if err != nil {
					t.Fatal(err)
				}
				return tp.Len(), ys[2].Value().Clone().Data()
			}
			n8, y8 := solve(8, true)
			n64, _ := solve(64, true)
			_, rec := solve(8, false)
			if n8 != n64 {
				t.Errorf("no-grad tape length %d after 8 steps, %d after 64; want the same", n8, n64)
			}
			if d := cmp.Diff(rec, y8); d != "" {
				t.Errorf("no-grad y(1) differs from the recorded solve's (-recorded +no-grad):\n%s", d)
			}
		})
	}
}
