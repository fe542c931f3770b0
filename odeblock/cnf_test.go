package odeblock_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// torchTensor is a tensor of the PyTorch reference files.
type torchTensor struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

func (x torchTensor) tensor() *tensor.Tensor[float64] {
	return tensor.FromSlice(append([]float64(nil), x.Data...), x.Shape...)
}

// cnfCase is one trace of testdata/cnf_torch.json.
type cnfCase struct {
	Eps      *torchTensor           `json:"eps"`
	Z1       torchTensor            `json:"z1"`
	Delta1   torchTensor            `json:"delta1"`
	MeanLogP float64                `json:"mean_logp"`
	Grad     map[string]torchTensor `json:"grad"`
}

// cnfTorch is testdata/cnf_torch.json, written by testdata/gen_cnf.py.
type cnfTorch struct {
	GoMethod   string                 `json:"go_method"`
	Step       float64                `json:"step_size"`
	T0         float64                `json:"t0"`
	T1         float64                `json:"t1"`
	Params     map[string]torchTensor `json:"params"`
	X          torchTensor            `json:"x"`
	Exact      cnfCase                `json:"exact"`
	Hutchinson cnfCase                `json:"hutchinson"`
}

var cnfParamNames = []string{"W1", "b1", "W2", "b2"}

// cnfField is the reference's field f(t, z) = W2·tanh(W1·[z, t] + b1) + b2.
func cnfField(ps map[string]*autograd.Param[float64]) odeblock.Field[float64] {
	list := []*autograd.Param[float64]{ps["W1"], ps["b1"], ps["W2"], ps["b2"]}
	return odeblock.FieldFunc(list, func(tp *autograd.Tape[float64], t float64, z autograd.Var[float64]) autograd.Var[float64] {
		h := autograd.LinearTimeAct(z, t, tp.Param(ps["W1"]), tp.Param(ps["b1"]), autograd.TanhAct)
		return autograd.Linear(h, tp.Param(ps["W2"]), tp.Param(ps["b2"]))
	})
}

func loadCNF(t *testing.T) cnfTorch {
	t.Helper()
	b, err := os.ReadFile("testdata/cnf_torch.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref cnfTorch
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	return ref
}

// cnfLoss records the mean log-likelihood of x under the flow.
func cnfLoss(tp *autograd.Tape[float64], c *odeblock.CNF[float64], b *odeblock.Block[float64], x *tensor.Tensor[float64]) (autograd.Var[float64], autograd.Var[float64], error) {
	out, err := b.Forward(tp, c.Augment(tp.Const(x)))
	if err != nil {
		return autograd.Var[float64]{}, autograd.Var[float64]{}, err
	}
	return autograd.Mean(c.LogProb(out)), out, nil
}

// TestCNFTorch: the exact-trace and Hutchinson flows of the reference, on
// torchdiffeq's fixed-step rk4 (our rk38), give PyTorch's final state,
// log-density change, mean log-likelihood and parameter gradients, in
// every gradient mode.
func TestCNFTorch(t *testing.T) {
	ref := loadCNF(t)
	for _, trace := range []string{"exact", "hutchinson"} {
		want := ref.Exact
		if trace == "hutchinson" {
			want = ref.Hutchinson
		}
		for _, mode := range modes {
			ps := map[string]*autograd.Param[float64]{}
			var list []*autograd.Param[float64]
			for _, n := range cnfParamNames {
				ps[n] = autograd.NewParam(n, ref.Params[n].tensor())
				list = append(list, ps[n])
			}
			c := &odeblock.CNF[float64]{F: cnfField(ps)}
			if want.Eps != nil {
				c.Probe = want.Eps.tensor()
			}
			b := &odeblock.Block[float64]{Dynamics: c, Times: []float64{ref.T0, ref.T1}, Mode: mode, Solver: odeblock.Options{Method: ref.GoMethod, Step: ref.Step}}
			tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
			loss, out, err := cnfLoss(tp, c, b, ref.X.tensor())
			if err != nil {
				t.Fatalf("%s, %v: %v", trace, mode, err)
			}
			opt := cmpopts.EquateApprox(1e-9, 1e-12)
			o := out.Value()
			z1 := autograd.Narrow(tp.Const(o), 1, 0, 2).Value().Data()
			d1 := autograd.Narrow(tp.Const(o), 1, 2, 1).Value().Data()
			if d := cmp.Diff(want.Z1.Data, z1, opt); d != "" {
				t.Errorf("%s, %v: z(1) (-torch +ours):\n%s", trace, mode, d)
			}
			if d := cmp.Diff(want.Delta1.Data, d1, opt); d != "" {
				t.Errorf("%s, %v: Δ(1) (-torch +ours):\n%s", trace, mode, d)
			}
			if d := cmp.Diff(want.MeanLogP, loss.Item(), opt); d != "" {
				t.Errorf("%s, %v: mean log-likelihood (-torch +ours):\n%s", trace, mode, d)
			}
			if err := tp.Backward(loss); err != nil {
				t.Fatalf("%s, %v: backward: %v", trace, mode, err)
			}
			// Backprop through the steps (also checkpointed) is PyTorch's
			// computation. The adjoint solves the adjoint equation with the
			// same fixed steps instead: its gradient is as exact as that
			// solve, O(h⁴) here (TestCNFGradients checks it at a tight
			// tolerance).
			gopt := cmpopts.EquateApprox(1e-9, 1e-9)
			switch mode.(type) {
			case odeblock.Adjoint, odeblock.Interpolated:
				gopt = cmpopts.EquateApprox(1e-2, 1e-3)
			}
			for _, n := range cnfParamNames {
				if d := cmp.Diff(want.Grad[n].Data, ps[n].Grad.Data(), gopt); d != "" {
					t.Errorf("%s, %v: ∂/∂%s (-torch +ours):\n%s", trace, mode, n, d)
				}
			}
		}
	}
}

// TestCNFGradients: the exact-trace flow's parameter gradients with the
// adaptive adjoint, against central differences in float64 (the adjoint's
// backward solve differentiates the trace: second derivatives of f).
func TestCNFGradients(t *testing.T) {
	ref := loadCNF(t)
	ps := map[string]*autograd.Param[float64]{}
	var list []*autograd.Param[float64]
	for _, n := range cnfParamNames {
		ps[n] = autograd.NewParam(n, ref.Params[n].tensor())
		list = append(list, ps[n])
	}
	x := ref.X.tensor()
	var grads [][]float64 // per mode, every parameter's gradient in turn
	for _, mode := range []odeblock.GradMode{odeblock.Adjoint{}, odeblock.Backprop{}} {
		c := &odeblock.CNF[float64]{F: cnfField(ps)}
		b := &odeblock.Block[float64]{Dynamics: c, Times: []float64{0, 1}, Mode: mode, Solver: odeblock.Options{RTol: 1e-10, ATol: 1e-10}}
		f := func(tp *autograd.Tape[float64]) (autograd.Var[float64], error) {
			l, _, err := cnfLoss(tp, c, b, x)
			return l, err
		}
		if _, err := autograd.CheckGradients(f, list, autograd.GradCheckOptions{AbsTol: 1e-6, RelTol: 1e-5, MaxElems: 8}); err != nil {
			t.Errorf("%v: %v", mode, err)
		}
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
		autograd.ZeroGrads(list)
		l, err := f(tp)
		if err != nil {
			t.Fatal(err)
		}
		if err := tp.Backward(l); err != nil {
			t.Fatal(err)
		}
		var all []float64
		for _, p := range list {
			all = append(all, p.Grad.Data()...)
		}
		grads = append(grads, all)
	}
	// The adjoint against backprop through the same tolerance's solve.
	if d := cmp.Diff(grads[1], grads[0], cmpopts.EquateApprox(1e-6, 1e-8)); d != "" {
		t.Errorf("adjoint against backprop (-backprop +adjoint):\n%s", d)
	}
}

// TestCNFShapes: a one-dimensional flow ([B, 2] states) evaluates; states
// without a sample column or of another rank panic naming their shape;
// Integrals marks Δ, the last column, and nothing for other ranks.
func TestCNFShapes(t *testing.T) {
	w := autograd.NewParam("w", tensor.FromSlice([]float64{0.7}, 1, 1))
	c := &odeblock.CNF[float64]{F: odeblock.FieldFunc([]*autograd.Param[float64]{w}, func(tp *autograd.Tape[float64], _ float64, z autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Tanh(autograd.Linear(z, tp.Param(w), autograd.Var[float64]{}))
	})}
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	// z' = tanh(0.7z), so tr ∂f/∂z = 0.7(1 − tanh²(0.7z)); at z = 0: 0.7.
	out := c.Eval(tp, 0, tp.Const(tensor.FromSlice([]float64{0, 0, 1, 0}, 2, 2)))
	want := []float64{0, -0.7, math.Tanh(0.7), -0.7 * (1 - math.Pow(math.Tanh(0.7), 2))}
	if d := cmp.Diff(want, out.Value().Data(), cmpopts.EquateApprox(1e-12, 0)); d != "" {
		t.Errorf("1-D flow (-want +got):\n%s", d)
	}
	for _, s := range [][]int{{2, 1}, {4}} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), fmt.Sprint(s)) {
					t.Errorf("state of shape %v: panic %v, want one naming the shape", s, r)
				}
			}()
			c.Eval(tp, 0, tp.Const(tensor.New[float64](s...)))
		}()
	}
	if m := c.Integrals([]int{2, 3}); !slices.Equal(m, []bool{false, false, true, false, false, true}) {
		t.Errorf("Integrals([2 3]) = %v", m)
	}
	for _, s := range [][]int{{4}, {3, 1}} {
		if m := c.Integrals(s); m != nil {
			t.Errorf("Integrals(%v) = %v, want nil", s, m)
		}
	}
}
