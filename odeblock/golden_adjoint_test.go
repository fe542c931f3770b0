package odeblock_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// adjointGolden is one problem of testdata/torchdiffeq_adjoint_nfe.json:
// torchdiffeq's odeint_adjoint (dopri5) on f(h) = tanh(h·W1ᵀ + b1)·W2ᵀ,
// loss Σ weights·z(times), with its evaluation counts and gradients.
type adjointGolden struct {
	Name    string
	Times   []float64
	Tol     float64
	W1, W2  [][]float64
	B1      []float64
	Y0      [][]float64
	Weights [][][]float64
	FwdNFE  int         `json:"fwd_nfe"`
	BwdNFE  int         `json:"bwd_nfe"`
	GradY0  [][]float64 `json:"grad_y0"`
	GradW1  [][]float64 `json:"grad_w1"`
	GradB1  []float64   `json:"grad_b1"`
	GradW2  [][]float64 `json:"grad_w2"`
}

func flat2(x [][]float64) ([]float64, int, int) {
	var out []float64
	for _, r := range x {
		out = append(out, r...)
	}
	return out, len(x), len(x[0])
}

// TestAdjointNFEGolden: with the default mixed norm, the adjoint's
// backward solve takes exactly as many evaluations as torchdiffeq's
// odeint_adjoint on the same problems (computed with torchdiffeq's own
// code: testdata/gen_adjoint_nfe.py), and the gradients agree to the
// tolerance. (TestAdjointNorm checks that the flat norm and the seminorm
// take other numbers of steps.)
func TestAdjointNFEGolden(t *testing.T) {
	raw, err := os.ReadFile("testdata/torchdiffeq_adjoint_nfe.json")
	if err != nil {
		t.Fatal(err)
	}
	var probs []adjointGolden
	if err := json.Unmarshal(raw, &probs); err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		t.Run(p.Name, func(t *testing.T) {
			param := func(name string, x [][]float64) *autograd.Param[float64] {
				d, r, c := flat2(x)
				return autograd.NewParam(name, tensor.FromSlice(d, r, c))
			}
			w1, w2 := param("w1", p.W1), param("w2", p.W2)
			b1 := autograd.NewParam("b1", tensor.FromSlice(p.B1, len(p.B1)))
			params := []*autograd.Param[float64]{w1, b1, w2}
			f := odeblock.FieldFunc(params, func(tp *autograd.Tape[float64], _ float64, h autograd.Var[float64]) autograd.Var[float64] {
				return autograd.Linear(autograd.Tanh(autograd.Linear(h, tp.Param(w1), tp.Param(b1))), tp.Param(w2), autograd.Var[float64]{})
			})
			run := func(mode odeblock.GradMode) (odeblock.BlockStats, []float64) {
				autograd.ZeroGrads(params)
				b := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: f}, Times: p.Times, Mode: mode,
					Solver: odeblock.Options{Method: "dopri5", RTol: p.Tol, ATol: p.Tol}}
				if mode == (odeblock.Checkpoint{}) {
					b.Solver.RTol, b.Solver.ATol = 1e-11, 1e-11
				}
				tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
				y0, r, c := flat2(p.Y0)
				z0 := autograd.NewParam("z0", tensor.FromSlice(y0, r, c))
				z, err := b.Trajectory(tp, tp.Param(z0))
				if err != nil {
					t.Fatal(err)
				}
				var w []float64
				for _, m := range p.Weights {
					d, _, _ := flat2(m)
					w = append(w, d...)
				}
				if err := tp.BackwardWith(z, tensor.FromSlice(w, z.Shape()...)); err != nil {
					t.Fatal(err)
				}
				g := append([]float64(nil), z0.Grad.Data()...)
				for _, prm := range params {
					g = append(g, prm.Grad.Data()...)
				}
				return b.Stats(), g
			}
			// The drift bound fixed at 1e-2, as it was: torchdiffeq checks
			// none, and the default (10 × RTol) recovers "wide" and "long"
			// (their reconstructions drift by more than their tolerance).
			st, got := run(odeblock.Adjoint{MaxDrift: 1e-2})
			if st.Backward.NFE != p.BwdNFE {
				t.Errorf("backward NFE %d, torchdiffeq's %d", st.Backward.NFE, p.BwdNFE)
			}
			var want []float64
			for _, x := range [][][]float64{p.GradY0, p.GradW1} {
				d, _, _ := flat2(x)
				want = append(want, d...)
			}
			want = append(want, p.GradB1...)
			d, _, _ := flat2(p.GradW2)
			want = append(want, d...)
			// Two solves at the tolerance, with different forward steps:
			// they agree to about the tolerance, amplified over the span.
			if diff := maxRelDiff(got, want); diff > 1e-3 {
				t.Errorf("gradients differ from torchdiffeq's by %.3g (relative)", diff)
			}
			// The forward NFE differ: torchdiffeq's last step may end past
			// the last time (and interpolates back); ours lands on it.
			t.Logf("forward NFE %d (torchdiffeq %d), backward %d (%d)", st.Forward.NFE, p.FwdNFE, st.Backward.NFE, p.BwdNFE)
		})
	}
}
