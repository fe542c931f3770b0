package odeblock

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// rhsInputs returns a state z of 3 (or 2) parts [4, 3], g [4, 3] and two
// scalars as parameters; v (the third part) is kept positive for ScaleSqrt.
func rhsInputs(rng *rand.Rand, parts int) (z, g, a, b *autograd.Param[float64]) {
	zt := tensor.RandN[float64](rng, 0, 1, parts*4, 3)
	if parts == 3 {
		for i, x := range zt.Data()[24:] {
			zt.Data()[24+i] = math.Abs(x) + 0.1
		}
	}
	return autograd.NewParam("z", zt), autograd.NewParam("g", tensor.RandN[float64](rng, 0, 1, 4, 3)),
		autograd.NewParam("a", tensor.FromSlice([]float64{rng.NormFloat64()}, 1)),
		autograd.NewParam("b", tensor.FromSlice([]float64{rng.NormFloat64()}, 1))
}

// TestFusedRHS checks the fused right-hand sides of AdamNODE (both scales)
// and HBNODE against the op-by-op recording — values and gradients to
// rounding — and their gradients against central differences.
func TestFusedRHS(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	type build func(tp *autograd.Tape[float64], z, g, a, b autograd.Var[float64]) autograd.Var[float64]
	for _, c := range []struct {
		name         string
		parts        int
		fused, byOps build
	}{
		{"AdamNODE/softplus", 3,
			func(tp *autograd.Tape[float64], z, g, a, b autograd.Var[float64]) autograd.Var[float64] {
				return (&AdamNODE[float64]{S: ScaleSoftplus}).adamRHS(tp, z, g, a, b)
			},
			func(tp *autograd.Tape[float64], z, g, a, b autograd.Var[float64]) autograd.Var[float64] {
				return adamRHSByOps(&AdamNODE[float64]{S: ScaleSoftplus}, z, g, a, b)
			}},
		{"AdamNODE/sqrt", 3,
			func(tp *autograd.Tape[float64], z, g, a, b autograd.Var[float64]) autograd.Var[float64] {
				return (&AdamNODE[float64]{S: ScaleSqrt, Eps: 1e-3}).adamRHS(tp, z, g, a, b)
			},
			func(tp *autograd.Tape[float64], z, g, a, b autograd.Var[float64]) autograd.Var[float64] {
				return adamRHSByOps(&AdamNODE[float64]{S: ScaleSqrt, Eps: 1e-3}, z, g, a, b)
			}},
		{"HBNODE", 2,
			func(tp *autograd.Tape[float64], z, g, a, _ autograd.Var[float64]) autograd.Var[float64] {
				return hbRHS(tp, z, g, a, hbRHSOpsVJP[float64])
			},
			func(tp *autograd.Tape[float64], z, g, a, _ autograd.Var[float64]) autograd.Var[float64] {
				return hbRHSByOps(z, g, a)
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			z, g, a, b := rhsInputs(rng, c.parts)
			params := []*autograd.Param[float64]{z, g, a, b}
			cot := tensor.RandN[float64](rng, 0, 1, c.parts*4, 3)
			run := func(f build) (*tensor.Tensor[float64], [][]float64) {
				autograd.ZeroGrads(params)
				tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
				y := f(tp, tp.Param(z), tp.Param(g), tp.Param(a), tp.Param(b))
				val := y.Value().Clone()
				if err := tp.Backward(autograd.Sum(autograd.Mul(y, tp.Const(cot)))); err != nil {
					t.Fatal(err)
				}
				var grads [][]float64
				for _, p := range params {
					grads = append(grads, append([]float64(nil), p.Grad.Data()...))
				}
				return val, grads
			}
			fv, fg := run(c.fused)
			ov, og := run(c.byOps)
			for i, x := range fv.Data() {
				if d := math.Abs(x - ov.Data()[i]); d > 1e-14*max(1, math.Abs(x)) {
					t.Fatalf("value[%d] = %v, op by op %v", i, x, ov.Data()[i])
				}
			}
			for k := range fg {
				for i, x := range fg[k] {
					if d := math.Abs(x - og[k][i]); d > 1e-13*max(1, math.Abs(x)) {
						t.Fatalf("∂/∂%s[%d] = %v, op by op %v", params[k].Name, i, x, og[k][i])
					}
				}
			}
			if _, err := autograd.CheckGradients(func(tp *autograd.Tape[float64]) autograd.Var[float64] {
				return c.fused(tp, tp.Param(z), tp.Param(g), tp.Param(a), tp.Param(b))
			}, params, autograd.GradCheckOptions{}); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestFusedRHSFloat32Edges evaluates AdamNODE's fused right-hand side in
// float32 where softplus(v) underflows (v = −200) or v is huge: every value
// and gradient stays finite, and s'(v) is 0 where softplus(v) is 0.
func TestFusedRHSFloat32Edges(t *testing.T) {
	d := &AdamNODE[float32]{S: ScaleSoftplus}
	tp := autograd.NewTape(tensor.EngineFor[float32](tensor.Default()))
	z := autograd.NewParam("z", tensor.FromSlice([]float32{1, 2, 3, 0.5, -0.5, 1, -200, 1e30, 0}, 9))
	g := autograd.NewParam("g", tensor.FromSlice([]float32{0.1, -0.2, 0.3}, 3))
	r1 := autograd.NewParam("r1", tensor.FromSlice([]float32{-5}, 1))
	r2 := autograd.NewParam("r2", tensor.FromSlice([]float32{5}, 1))
	y := d.adamRHS(tp, tp.Param(z), tp.Param(g), tp.Param(r1), tp.Param(r2))
	if err := tp.Backward(autograd.Sum(y)); err != nil {
		t.Fatal(err)
	}
	for _, x := range y.Value().Data() {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			t.Fatalf("value %v", y.Value().Data())
		}
	}
	for _, p := range []*autograd.Param[float32]{z, g, r1, r2} {
		for _, x := range p.Grad.Data() {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("∂/∂%s = %v", p.Name, p.Grad.Data())
			}
		}
	}
}
