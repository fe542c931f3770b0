package autograd_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// torchTensor is a tensor of testdata/higher_order_torch.json: its shape
// and its elements in row-major order.
type torchTensor struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

func (x torchTensor) tensor() *tensor.Tensor[float64] {
	return tensor.FromSlice(slices.Clone(x.Data), x.Shape...)
}

// torchRef is testdata/higher_order_torch.json, written by
// testdata/gen_higher_order.py with PyTorch in float64.
type torchRef struct {
	GradientPenalty struct {
		Params map[string]torchTensor `json:"params"`
		X      torchTensor            `json:"x"`
		D      torchTensor            `json:"D"`
		G      torchTensor            `json:"g"`
		GP     float64                `json:"gp"`
		Grad   map[string]torchTensor `json:"grad"`
	} `json:"gradient_penalty"`
	HVP struct {
		Params map[string]torchTensor `json:"params"`
		X      torchTensor            `json:"x"`
		Target torchTensor            `json:"target"`
		Y      torchTensor            `json:"y"`
		Loss   float64                `json:"loss"`
		Grad   map[string]torchTensor `json:"grad"`
		V      map[string]torchTensor `json:"v"`
		HV     map[string]torchTensor `json:"hv"`
		VX     torchTensor            `json:"vx"`
		HVX    torchTensor            `json:"hvx"`
	} `json:"hvp"`
	JVP struct {
		Params map[string]torchTensor `json:"params"`
		X      torchTensor            `json:"x"`
		TX     torchTensor            `json:"tx"`
		Y      torchTensor            `json:"y"`
		JTX    torchTensor            `json:"jtx"`
	} `json:"jvp"`
}

func loadTorchRef(t *testing.T) *torchRef {
	t.Helper()
	raw, err := os.ReadFile("testdata/higher_order_torch.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref torchRef
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	return &ref
}

// torchParams returns the named parameters of a reference model, in the
// order given.
func torchParams(t *testing.T, m map[string]torchTensor, names ...string) []*ag.Param[float64] {
	t.Helper()
	ps := make([]*ag.Param[float64], len(names))
	for i, n := range names {
		x, ok := m[n]
		if !ok {
			t.Fatalf("reference parameter %s missing", n)
		}
		ps[i] = ag.NewParam(n, x.tensor())
	}
	return ps
}

// torchTol compares with PyTorch's float64 values: 1e-10 relative, with a
// tiny absolute margin for elements that are zero up to rounding.
var torchTol = cmpopts.EquateApprox(1e-10, 1e-13)

// checkTorch compares got with PyTorch's want, shape and elements.
func checkTorch(t *testing.T, what string, want torchTensor, got *tensor.Tensor[float64]) {
	t.Helper()
	if !slices.Equal(want.Shape, got.Shape()) {
		t.Errorf("%s: shape %v, PyTorch %v", what, got.Shape(), want.Shape)
		return
	}
	if d := cmp.Diff(want.Data, got.Data(), torchTol); d != "" {
		t.Errorf("%s (-PyTorch +got):\n%s", what, d)
	}
}

// torchMLP is gen_higher_order.py's mlp: L2(tanh(L1(x))).
func torchMLP(x V, p []V) V {
	return ag.Linear(ag.Tanh(ag.Linear(x, p[0], p[1])), p[2], p[3])
}

func paramVars(tp *ag.Tape[float64], ps []*ag.Param[float64]) []V {
	vs := make([]V, len(ps))
	for i, p := range ps {
		vs[i] = tp.Param(p)
	}
	return vs
}

func constVars(tp *ag.Tape[float64], ps []*ag.Param[float64]) []V {
	vs := make([]V, len(ps))
	for i, p := range ps {
		vs[i] = tp.Const(p.Value)
	}
	return vs
}

var mlpNames = []string{"W1", "b1", "W2", "b2"}

// TestTorchGradientPenalty: a WGAN-GP critic's input gradient g (recorded
// with CreateGraph), its penalty meanₙ(‖gₙ‖ − 1)², and the penalty's
// parameter gradients from Backward through g, against PyTorch. ∂GP/∂b3 is
// zero: g does not depend on b3, so b3's gradient stays exactly zero.
func TestTorchGradientPenalty(t *testing.T) {
	ref := loadTorchRef(t).GradientPenalty
	names := []string{"W1", "b1", "W2", "b2", "W3", "b3"}
	ps := torchParams(t, ref.Params, names...)
	tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
	p := paramVars(tp, ps)
	x := tp.Input(ref.X.tensor())
	d := ag.Linear(ag.Softplus(ag.Linear(ag.Tanh(ag.Linear(x, p[0], p[1])), p[2], p[3])), p[4], p[5])
	checkTorch(t, "D", ref.D, d.Value())

	gs, err := ag.Grad([]V{ag.Sum(d)}, []V{x}, ag.GradOptions[float64]{CreateGraph: true})
	if err != nil {
		t.Fatal(err)
	}
	g := gs.Inputs[0]
	checkTorch(t, "g = ∂ΣD/∂x", ref.G, g.Value())
	if !g.RequiresGrad() {
		t.Fatal("g recorded with CreateGraph requires no gradient")
	}
	norm := ag.Sqrt(ag.SumAxis(ag.Square(g), 1, false))
	gp := ag.Mean(ag.Square(ag.AddConst(norm, -1)))
	if d := cmp.Diff(ref.GP, gp.Item(), torchTol); d != "" {
		t.Errorf("GP (-PyTorch +got):\n%s", d)
	}
	for _, q := range ps {
		if slices.ContainsFunc(q.Grad.Data(), func(v float64) bool { return v != 0 }) {
			t.Fatalf("Grad wrote %s.Grad", q.Name)
		}
	}

	if err := tp.Backward(gp); err != nil {
		t.Fatal(err)
	}
	for _, q := range ps {
		checkTorch(t, "∂GP/∂"+q.Name, ref.Grad[q.Name], q.Grad)
	}
	if b3 := ps[5].Grad.Data(); slices.ContainsFunc(b3, func(v float64) bool { return v != 0 }) {
		t.Errorf("∂GP/∂b3 = %v, want exactly zero", b3)
	}
}

// TestTorchHVPParams: ∇L and H·v over the parameters of an MLP's MSE loss
// (Grad with Params and CreateGraph, then Σⱼ⟨gⱼ, vⱼ⟩ differentiated again by
// Grad or by Backward), against PyTorch.
func TestTorchHVPParams(t *testing.T) {
	ref := loadTorchRef(t).HVP
	for _, second := range []string{"Grad", "Backward"} {
		t.Run(second, func(t *testing.T) {
			ps := torchParams(t, ref.Params, mlpNames...)
			tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
			y := torchMLP(tp.Const(ref.X.tensor()), paramVars(tp, ps))
			checkTorch(t, "y", ref.Y, y.Value())
			loss := ag.MSE(y, tp.Const(ref.Target.tensor()))
			if d := cmp.Diff(ref.Loss, loss.Item(), torchTol); d != "" {
				t.Errorf("loss (-PyTorch +got):\n%s", d)
			}
			gs, err := ag.Grad([]V{loss}, nil, ag.GradOptions[float64]{Params: ps, CreateGraph: true})
			if err != nil {
				t.Fatal(err)
			}
			var gv V
			for j, g := range gs.Params {
				checkTorch(t, "∇L "+ps[j].Name, ref.Grad[ps[j].Name], g.Value())
				term := ag.Sum(ag.Mul(g, tp.Const(ref.V[ps[j].Name].tensor())))
				if gv.IsZero() {
					gv = term
				} else {
					gv = ag.Add(gv, term)
				}
			}

			hv := make([]*tensor.Tensor[float64], len(ps))
			switch second {
			case "Grad":
				hs, err := ag.Grad([]V{gv}, nil, ag.GradOptions[float64]{Params: ps})
				if err != nil {
					t.Fatal(err)
				}
				for j, h := range hs.Params {
					hv[j] = h.Value()
				}
			case "Backward":
				if err := tp.Backward(gv); err != nil {
					t.Fatal(err)
				}
				for j, p := range ps {
					hv[j] = p.Grad
				}
			}
			for j, p := range ps {
				checkTorch(t, "H·v "+p.Name, ref.HV[p.Name], hv[j])
			}
		})
	}
}

// TestTorchHVPInput: (∇²ₓL)·vx with the parameters fixed, by HVP, against
// PyTorch: with the parameters read as constants or as Params, x a
// constant or an Input, in grad mode and in no-grad mode.
func TestTorchHVPInput(t *testing.T) {
	ref := loadTorchRef(t).HVP
	for _, c := range []struct {
		name                  string
		params, input, noGrad bool
	}{
		{name: "const"},
		{name: "params", params: true},
		{name: "params/input", params: true, input: true},
		{name: "nograd", noGrad: true},
		{name: "nograd/params", params: true, noGrad: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ps := torchParams(t, ref.Params, mlpNames...)
			tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
			tp.SetNoGrad(c.noGrad)
			read := constVars
			if c.params {
				read = paramVars
			}
			f := func(x V) V { return ag.MSE(torchMLP(x, read(tp, ps)), tp.Const(ref.Target.tensor())) }
			x := tp.Const(ref.X.tensor())
			if c.input {
				x = tp.Input(ref.X.tensor())
			}
			_, hv, err := ag.HVP(f, x, tp.Const(ref.VX.tensor()))
			if err != nil {
				t.Fatal(err)
			}
			checkTorch(t, "∇²ₓL·vx", ref.HVX, hv.Value())
		})
	}
}

// TestTorchJVP: J·tx of x ↦ mlp(x), by JVP, against
// torch.autograd.functional.jvp, in grad and no-grad mode.
func TestTorchJVP(t *testing.T) {
	ref := loadTorchRef(t).JVP
	for _, noGrad := range []bool{false, true} {
		t.Run(fmt.Sprintf("nograd=%v", noGrad), func(t *testing.T) {
			ps := torchParams(t, ref.Params, mlpNames...)
			tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
			tp.SetNoGrad(noGrad)
			f := func(x V) V { return torchMLP(x, paramVars(tp, ps)) }
			y, jv, err := ag.JVP(f, tp.Const(ref.X.tensor()), tp.Const(ref.TX.tensor()))
			if err != nil {
				t.Fatal(err)
			}
			checkTorch(t, "y", ref.Y, y.Value())
			checkTorch(t, "J·tx", ref.JTX, jv.Value())
		})
	}
}
