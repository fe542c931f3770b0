package autograd_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

type V = ag.Var[float64]

// higherOrderCase is an op under test: f of Vars of params shaped as
// given, wrapped in Sin so that the gradient reaching the op depends on
// the parameters too (a linear op's rule is then exercised in both of its
// operands).
type higherOrderCase struct {
	name     string
	shapes   [][]int
	positive bool // parameters drawn in [0.5, 1.5] (Log, Sqrt, Pow, Div)
	order    int  // 2 unless set
	f        func(tp *ag.Tape[float64], x []V) V
}

var conv1 = tensor.ConvParams{Stride: 1, Pad: 1}
var conv2 = tensor.ConvParams{Stride: 2, Pad: 0}

func higherOrderCases() []higherOrderCase {
	sq := [][]int{{3, 4}}
	pair := [][]int{{3, 4}, {3, 4}}
	withScalar := [][]int{{3, 4}, {1}}
	return []higherOrderCase{
		{name: "Add", shapes: pair, f: func(_ *ag.Tape[float64], x []V) V { return ag.Add(x[0], ag.Square(x[1])) }},
		{name: "Add/broadcast", shapes: [][]int{{3, 4}, {4}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.Add(x[0], ag.Square(x[1])) }},
		{name: "Sub/broadcast", shapes: [][]int{{3, 1}, {3, 4}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.Sub(ag.Square(x[0]), x[1]) }},
		{name: "Mul", shapes: pair, order: 3, f: func(_ *ag.Tape[float64], x []V) V { return ag.Mul(x[0], x[1]) }},
		{name: "Mul/broadcast", shapes: [][]int{{2, 3, 4}, {3, 1}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.Mul(x[0], x[1]) }},
		{name: "Div", shapes: pair, positive: true, order: 3, f: func(_ *ag.Tape[float64], x []V) V { return ag.Div(x[0], x[1]) }},
		{name: "Div/broadcast", shapes: [][]int{{3, 4}, {1, 4}}, positive: true, f: func(_ *ag.Tape[float64], x []V) V { return ag.Div(x[0], x[1]) }},
		{name: "LinComb", shapes: pair, f: func(_ *ag.Tape[float64], x []V) V { return ag.LinComb([]float64{0.5, -2}, x[0], ag.Square(x[1])) }},
		{name: "AddScalar", shapes: withScalar, f: func(_ *ag.Tape[float64], x []V) V { return ag.AddScalar(x[0], ag.Square(x[1])) }},
		{name: "SubScalar", shapes: withScalar, f: func(_ *ag.Tape[float64], x []V) V { return ag.SubScalar(ag.Square(x[0]), x[1]) }},
		{name: "MulScalar", shapes: withScalar, f: func(_ *ag.Tape[float64], x []V) V { return ag.MulScalar(x[0], x[1]) }},
		{name: "DivScalar", shapes: withScalar, positive: true, f: func(_ *ag.Tape[float64], x []V) V { return ag.DivScalar(x[0], x[1]) }},
		{name: "Scale", shapes: sq, f: func(_ *ag.Tape[float64], x []V) V { return ag.Scale(ag.Square(x[0]), 1.5) }},
		{name: "AddConst", shapes: sq, f: func(_ *ag.Tape[float64], x []V) V { return ag.AddConst(ag.Square(x[0]), 0.5) }},
		{name: "Neg", shapes: sq, f: func(_ *ag.Tape[float64], x []V) V { return ag.Neg(ag.Square(x[0])) }},
		{name: "Exp", shapes: sq, order: 3, f: func(_ *ag.Tape[float64], x []V) V { return ag.Exp(x[0]) }},
		{name: "Log", shapes: sq, positive: true, order: 3, f: func(_ *ag.Tape[float64], x []V) V { return ag.Log(x[0]) }},
		{name: "Sqrt", shapes: sq, positive: true, f: func(_ *ag.Tape[float64], x []V) V { return ag.Sqrt(x[0]) }},
		{name: "Square", shapes: sq, f: func(_ *ag.Tape[float64], x []V) V { return ag.Square(x[0]) }},
		{name: "Tanh", shapes: sq, order: 3, f: func(_ *ag.Tape[float64], x []V) V { return ag.Tanh(x[0]) }},
		{name: "Sigmoid", shapes: sq, order: 3, f: func(_ *ag.Tape[float64], x []V) V { return ag.Sigmoid(x[0]) }},
		{name: "Softplus", shapes: sq, order: 3, f: func(_ *ag.Tape[float64], x []V) V { return ag.Softplus(x[0]) }},
		{name: "ReLU", shapes: sq, f: func(_ *ag.Tape[float64], x []V) V { return ag.ReLU(x[0]) }},
		{name: "LeakyReLU", shapes: sq, f: func(_ *ag.Tape[float64], x []V) V { return ag.LeakyReLU(x[0], 0.3) }},
		{name: "Hardtanh", shapes: sq, f: func(_ *ag.Tape[float64], x []V) V { return ag.Hardtanh(ag.Scale(x[0], 2), -1, 1) }},
		{name: "Clamp", shapes: sq, f: func(_ *ag.Tape[float64], x []V) V { return ag.Clamp(ag.Scale(x[0], 2), -1, 1) }},
		{name: "Abs", shapes: sq, f: func(_ *ag.Tape[float64], x []V) V { return ag.Abs(x[0]) }},
		{name: "Pow", shapes: sq, positive: true, order: 3, f: func(_ *ag.Tape[float64], x []V) V { return ag.Pow(x[0], 2.5) }},
		{name: "ELU", shapes: sq, order: 3, f: func(_ *ag.Tape[float64], x []V) V { return ag.ELU(x[0], 0.7) }},
		{name: "Sin", shapes: sq, f: func(_ *ag.Tape[float64], x []V) V { return ag.Sin(x[0]) }},
		{name: "Cos", shapes: sq, f: func(_ *ag.Tape[float64], x []V) V { return ag.Cos(x[0]) }},
		{name: "Transpose", shapes: sq, f: func(_ *ag.Tape[float64], x []V) V { return ag.Transpose(x[0]) }},
		{name: "MatMul", shapes: [][]int{{3, 4}, {4, 2}}, order: 3, f: func(_ *ag.Tape[float64], x []V) V { return ag.MatMul(x[0], x[1]) }},
		{name: "Linear", shapes: [][]int{{3, 4}, {2, 4}, {2}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.Linear(x[0], x[1], x[2]) }},
		{name: "Linear/nobias", shapes: [][]int{{3, 4}, {2, 4}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.Linear(x[0], x[1], V{}) }},
		{name: "LinearAct/tanh", shapes: [][]int{{3, 4}, {2, 4}, {2}}, order: 3, f: func(_ *ag.Tape[float64], x []V) V { return ag.LinearAct(x[0], x[1], x[2], ag.TanhAct) }},
		{name: "LinearAct/sigmoid", shapes: [][]int{{3, 4}, {2, 4}, {2}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.LinearAct(x[0], x[1], x[2], ag.SigmoidAct) }},
		{name: "LinearAct/softplus", order: 3, shapes: [][]int{{3, 4}, {2, 4}, {2}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.LinearAct(x[0], x[1], x[2], ag.SoftplusAct) }},
		{name: "LinearAct/relu", shapes: [][]int{{3, 4}, {2, 4}, {2}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.LinearAct(x[0], x[1], x[2], ag.ReLUAct) }},
		{name: "LinearAct/leaky", shapes: [][]int{{3, 4}, {2, 4}, {2}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.LinearAct(x[0], x[1], x[2], ag.LeakyReLUAct(0.2)) }},
		{name: "LinearTime", shapes: [][]int{{3, 4}, {2, 5}, {2}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.LinearTime(x[0], 0.7, x[1], x[2]) }},
		{name: "LinearTimeAct", shapes: [][]int{{3, 4}, {2, 5}, {2}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.LinearTimeAct(x[0], 0.7, x[1], x[2], ag.TanhAct) }},
		{name: "AddBias/2d", shapes: [][]int{{3, 4}, {4}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.AddBias(ag.Square(x[0]), x[1]) }},
		{name: "AddBias/4d", shapes: [][]int{{2, 3, 2, 2}, {3}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.AddBias(ag.Square(x[0]), x[1]) }},
		{name: "Conv2D", shapes: [][]int{{2, 2, 4, 4}, {3, 2, 3, 3}, {3}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.Conv2D(x[0], x[1], x[2], conv1) }},
		{name: "Conv2D/stride", order: 3, shapes: [][]int{{1, 2, 5, 5}, {2, 2, 3, 3}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.Conv2D(x[0], x[1], V{}, conv2) }},
		{name: "Conv2DAct", shapes: [][]int{{1, 2, 4, 4}, {2, 2, 3, 3}, {2}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.Conv2DAct(x[0], x[1], x[2], conv1, ag.SoftplusAct) }},
		{name: "Conv2DTime", order: 3, shapes: [][]int{{2, 2, 4, 4}, {2, 3, 3, 3}, {2}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.Conv2DTime(x[0], 0.4, x[1], x[2], conv1) }},
		{name: "Conv2DTimeAct", shapes: [][]int{{1, 2, 4, 4}, {2, 3, 3, 3}, {2}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.Conv2DTimeAct(x[0], 0.4, x[1], x[2], conv1, ag.TanhAct) }},
		{name: "Sum", shapes: sq, f: func(_ *ag.Tape[float64], x []V) V { return ag.Sum(ag.Square(x[0])) }},
		{name: "Mean", shapes: sq, f: func(_ *ag.Tape[float64], x []V) V { return ag.Mean(ag.Square(x[0])) }},
		{name: "MSE", shapes: pair, f: func(_ *ag.Tape[float64], x []V) V { return ag.MSE(x[0], x[1]) }},
		{name: "SoftmaxCrossEntropy", shapes: sq, order: 3, f: func(_ *ag.Tape[float64], x []V) V { return ag.SoftmaxCrossEntropy(x[0], []int{1, 0, 3}) }},
		{name: "SumAxis", shapes: [][]int{{2, 3, 4}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.SumAxis(ag.Square(x[0]), 1, false) }},
		{name: "MeanAxis", shapes: [][]int{{2, 3, 4}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.MeanAxis(ag.Square(x[0]), -1, true) }},
		{name: "MaxAxis", shapes: [][]int{{2, 3, 4}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.MaxAxis(ag.Square(x[0]), 1, true) }},
		{name: "Reshape", shapes: sq, f: func(_ *ag.Tape[float64], x []V) V { return ag.Reshape(ag.Square(x[0]), 2, 6) }},
		{name: "Flatten", shapes: [][]int{{2, 3, 2}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.Flatten(ag.Square(x[0])) }},
		{name: "Concat", shapes: [][]int{{3, 2}, {3, 4}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.Concat(1, ag.Square(x[0]), x[1]) }},
		{name: "Narrow", shapes: [][]int{{3, 5}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.Narrow(ag.Square(x[0]), 1, 1, 3) }},
		{name: "Split", shapes: [][]int{{4, 3}}, f: func(_ *ag.Tape[float64], x []V) V {
			s := ag.Split(ag.Square(x[0]), 0, 1, 3)
			return ag.Mul(ag.Sum(s[0]), ag.Sum(s[1]))
		}},
		{name: "Chunk", shapes: [][]int{{2, 6}}, f: func(_ *ag.Tape[float64], x []V) V {
			c := ag.Chunk(ag.Square(x[0]), 3, -1)
			return ag.Add(ag.Mul(c[0], c[1]), c[2])
		}},
		{name: "Select", shapes: [][]int{{2, 3, 4}}, f: func(_ *ag.Tape[float64], x []V) V {
			return ag.Mul(ag.Select(ag.Square(x[0]), 1, 2), ag.Select(x[0], -2, 0))
		}},
		{name: "ConcatTime", shapes: [][]int{{2, 3, 2, 2}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.ConcatTime(ag.Square(x[0]), 0.3) }},
		{name: "AvgPool2D", order: 3, shapes: [][]int{{1, 2, 5, 5}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.AvgPool2D(ag.Square(x[0]), 3, 2, 1) }},
		{name: "MaxPool2D", order: 3, shapes: [][]int{{1, 2, 5, 5}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.MaxPool2D(ag.Square(x[0]), 3, 2, 1) }},
		{name: "Permute", shapes: [][]int{{2, 3, 4}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.Permute(ag.Square(x[0]), 2, 0, 1) }},
		{name: "Permute/4d", shapes: [][]int{{2, 1, 3, 2}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.Permute(ag.Square(x[0]), 1, 3, -4, 2) }},
		{name: "Stack", shapes: [][]int{{3, 2}, {3, 2}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.Stack(1, ag.Square(x[0]), x[1], x[0]) }},
		{name: "Stack/last", shapes: [][]int{{3, 2}, {3, 2}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.Stack(-1, x[0], ag.Square(x[1])) }},
		{name: "LogSumExp", shapes: [][]int{{2, 3, 4}}, order: 3, f: func(_ *ag.Tape[float64], x []V) V { return ag.LogSumExp(x[0], 1, false) }},
		{name: "LogSumExp/keep", shapes: [][]int{{3, 4}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.LogSumExp(ag.Square(x[0]), -1, true) }},
		{name: "Softmax", shapes: [][]int{{2, 3, 4}}, order: 3, f: func(_ *ag.Tape[float64], x []V) V { return ag.Softmax(x[0], 1) }},
		{name: "Softmax/last", shapes: sq, f: func(_ *ag.Tape[float64], x []V) V { return ag.Softmax(ag.Square(x[0]), -1) }},
		{name: "LogSoftmax", shapes: [][]int{{2, 3, 4}}, order: 3, f: func(_ *ag.Tape[float64], x []V) V { return ag.LogSoftmax(x[0], 0) }},
		{name: "IndexSelect", shapes: [][]int{{2, 3, 4}}, order: 3, f: func(_ *ag.Tape[float64], x []V) V {
			return ag.IndexSelect(ag.Square(x[0]), 1, []int{2, 0, 2, 2})
		}},
		{name: "Gather", shapes: [][]int{{3, 4}}, order: 3, f: func(_ *ag.Tape[float64], x []V) V {
			return ag.Mul(ag.Gather(ag.Square(x[0]), 1, []int{3, 0, 0, 1, 1, 1, 2, 3}, []int{2, 4}), ag.Gather(x[0], 0, []int{2, 0, 1, 2, 0, 0, 2, 1}, []int{2, 4}))
		}},
		{name: "Where", shapes: pair, f: func(_ *ag.Tape[float64], x []V) V {
			return ag.Where(tensor.FromSlice([]float64{1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0}, 3, 4), ag.Square(x[0]), ag.Mul(x[0], x[1]))
		}},
		{name: "Where/scalar", shapes: [][]int{{3, 4}, {1}}, f: func(_ *ag.Tape[float64], x []V) V {
			return ag.Where(tensor.FromSlice([]float64{1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0}, 3, 4), ag.Square(x[1]), ag.Mul(x[0], x[1]))
		}},
		{name: "MaskedSum", shapes: [][]int{{2, 3, 2}}, f: func(_ *ag.Tape[float64], x []V) V {
			return ag.MaskedSum(ag.Square(x[0]), tensor.FromSlice([]float64{1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0}, 2, 3, 2), 1, false)
		}},
		{name: "MaskedMean", shapes: [][]int{{2, 3, 2}}, f: func(_ *ag.Tape[float64], x []V) V {
			return ag.MaskedMean(ag.Square(x[0]), tensor.FromSlice([]float64{1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0}, 2, 3, 2), 1, true)
		}},
		{name: "Cumsum", shapes: [][]int{{2, 3, 4}}, order: 3, f: func(_ *ag.Tape[float64], x []V) V { return ag.Mul(ag.Cumsum(x[0], 1), x[0]) }},
		{name: "Cumsum/last", shapes: sq, f: func(_ *ag.Tape[float64], x []V) V { return ag.Cumsum(ag.Square(x[0]), -1) }},
		{name: "RSub", shapes: sq, f: func(_ *ag.Tape[float64], x []V) V { return ag.RSub(1.5, ag.Square(x[0])) }},
		{name: "RDiv", shapes: sq, positive: true, order: 3, f: func(_ *ag.Tape[float64], x []V) V { return ag.RDiv(2, x[0]) }},
		{name: "Linear/3d", shapes: [][]int{{2, 3, 4}, {2, 4}, {2}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.Linear(x[0], x[1], x[2]) }},
		{name: "Linear/1d", shapes: [][]int{{4}, {2, 4}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.Linear(x[0], x[1], V{}) }},
		{name: "LinearAct/3d", shapes: [][]int{{2, 3, 4}, {2, 4}, {2}}, order: 3, f: func(_ *ag.Tape[float64], x []V) V { return ag.LinearAct(x[0], x[1], x[2], ag.TanhAct) }},
		{name: "AdaptiveAvgPool2D", shapes: [][]int{{1, 2, 5, 5}}, f: func(_ *ag.Tape[float64], x []V) V { return ag.AdaptiveAvgPool2D(ag.Square(x[0]), 2, 3) }},
	}
}

// TestHigherOrderOps checks every op's second derivatives (third for some)
// against central differences of its first, through CheckHigherOrder.
func TestHigherOrderOps(t *testing.T) {
	for _, c := range higherOrderCases() {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(len(c.name))))
			var ps []*ag.Param[float64]
			for i, s := range c.shapes {
				x := tensor.RandN[float64](rng, 0, 1, s...)
				if c.positive {
					for k, v := range x.Data() {
						x.Data()[k] = 1 + 0.5*math.Tanh(v)
					}
				}
				ps = append(ps, ag.NewParam(fmt.Sprintf("x%d", i), x))
			}
			f := func(tp *ag.Tape[float64]) V {
				xs := make([]V, len(ps))
				for i, p := range ps {
					xs[i] = tp.Param(p)
				}
				return ag.Sin(c.f(tp, xs))
			}
			order := c.order
			if order == 0 {
				order = 2
			}
			reps, err := ag.CheckHigherOrder(f, ps, order, ag.GradCheckOptions{AbsTol: 1e-7, RelTol: 1e-5, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			if len(reps) != order || reps[order-1].Checked == 0 {
				t.Fatalf("reports %v", reps)
			}
		})
	}
}

// TestGradMatchesBackward: Grad's values, with and without CreateGraph,
// are Backward's gradients, for inputs and parameters, with a given
// cotangent; Param.Grad is left alone.
func TestGradMatchesBackward(t *testing.T) {
	eng := tensor.EngineFor[float64](tensor.Default())
	rng := rand.New(rand.NewPCG(1, 2))
	w := ag.NewParam("w", tensor.RandN[float64](rng, 0, 1, 3, 4))
	x := tensor.RandN[float64](rng, 0, 1, 5, 4)
	cot := tensor.RandN[float64](rng, 0, 1, 5, 3)
	model := func(tp *ag.Tape[float64]) (V, V) {
		xv := tp.Input(x)
		pw := tp.Param(w)
		return xv, ag.Mul(ag.Tanh(ag.Linear(xv, pw, V{})), ag.Linear(xv, pw, V{}))
	}
	tp := ag.NewTape(eng)
	xv, y := model(tp)
	if err := tp.BackwardWith(y, cot); err != nil {
		t.Fatal(err)
	}
	wantX, wantW := xv.Grad().Clone(), w.Grad.Clone()
	for _, create := range []bool{false, true} {
		w.ZeroGrad()
		tp := ag.NewTape(eng)
		xv, y := model(tp)
		gs, err := ag.Grad([]V{y}, []V{xv}, ag.GradOptions[float64]{Cotangents: []V{tp.Const(cot)}, Params: []*ag.Param[float64]{w}, CreateGraph: create})
		if err != nil {
			t.Fatal(err)
		}
		opt := cmpopts.EquateApprox(0, 1e-12)
		if d := cmp.Diff(wantX.Data(), gs.Inputs[0].Value().Data(), opt); d != "" {
			t.Errorf("create %v: input gradient (-Backward +Grad):\n%s", create, d)
		}
		if d := cmp.Diff(wantW.Data(), gs.Params[0].Value().Data(), opt); d != "" {
			t.Errorf("create %v: parameter gradient (-Backward +Grad):\n%s", create, d)
		}
		if got := gs.Inputs[0].RequiresGrad(); got != create {
			t.Errorf("create %v: gradient requires grad %v", create, got)
		}
		for _, v := range w.Grad.Data() {
			if v != 0 {
				t.Fatalf("create %v: Grad wrote Param.Grad", create)
			}
		}
	}
}

// TestGradUnusedAndPartial: an input nothing reached gets zeros; the
// gradient with respect to an intermediate holds what it came from fixed;
// an input recorded after the output gets zeros.
func TestGradUnusedAndPartial(t *testing.T) {
	tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
	a := tp.Input(tensor.FromSlice([]float64{2}, 1))
	b := tp.Input(tensor.FromSlice([]float64{3}, 1))
	h := ag.Square(a)                                   // 4
	y := ag.Mul(h, a)                                   // a³ = 8
	late := tp.Input(tensor.FromSlice([]float64{1}, 1)) // recorded after y
	gs, err := ag.Grad([]V{y}, []V{h, a, b, late}, ag.GradOptions[float64]{})
	if err != nil {
		t.Fatal(err)
	}
	got := []float64{gs.Inputs[0].Item(), gs.Inputs[1].Item(), gs.Inputs[2].Item(), gs.Inputs[3].Item()}
	if d := cmp.Diff([]float64{2, 12, 0, 0}, got); d != "" {
		t.Errorf("∂y/∂(h, a, b) (-want +got):\n%s", d)
	}
}

// TestGradPenaltyBackward: a penalty on ‖∂D/∂x‖ trains through Backward,
// adding into Param.Grad what CheckGradients confirms.
func TestGradPenaltyBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	w1 := ag.NewParam("w1", tensor.RandN[float64](rng, 0, 1, 6, 3))
	w2 := ag.NewParam("w2", tensor.RandN[float64](rng, 0, 1, 1, 6))
	x := tensor.RandN[float64](rng, 0, 1, 4, 3)
	f := func(tp *ag.Tape[float64]) (V, error) {
		xv := tp.Input(x)
		d := ag.Linear(ag.Tanh(ag.Linear(xv, tp.Param(w1), V{})), tp.Param(w2), V{})
		gs, err := ag.Grad([]V{ag.Sum(d)}, []V{xv}, ag.GradOptions[float64]{CreateGraph: true})
		if err != nil {
			return V{}, err
		}
		norm := ag.Sqrt(ag.SumAxis(ag.Square(gs.Inputs[0]), 1, false))
		return ag.Mean(ag.Square(ag.AddConst(norm, -1))), nil
	}
	if _, err := ag.CheckGradients(f, []*ag.Param[float64]{w1, w2}, ag.GradCheckOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestGradThroughCustom: a CustomDiff node is differentiated through its
// backward in ops; a plain Custom node is a *CreateGraphError naming it.
func TestGradThroughCustom(t *testing.T) {
	cube := func(tp *ag.Tape[float64], x V, diff bool) V {
		y := tensor.New[float64](x.Shape()...)
		for i, v := range x.Value().Data() {
			y.Data()[i] = v * v * v
		}
		xv := x.Value()
		back := func(gy *tensor.Tensor[float64]) ([]*tensor.Tensor[float64], error) {
			g := tensor.New[float64](gy.Shape()...)
			for i, v := range xv.Data() {
				g.Data()[i] = 3 * v * v * gy.Data()[i]
			}
			return []*tensor.Tensor[float64]{g}, nil
		}
		if !diff {
			return ag.Custom("cube", y, back, x)
		}
		return ag.CustomDiff("cube", y, back, func(gy V, in []V) ([]V, error) {
			return []V{ag.Mul(gy, ag.Scale(ag.Square(in[0]), 3))}, nil
		}, x)
	}
	p := ag.NewParam("x", tensor.FromSlice([]float64{0.3, -0.7, 1.1}, 3))
	f := func(tp *ag.Tape[float64]) V { return ag.Sin(cube(tp, tp.Param(p), true)) }
	if _, err := ag.CheckHigherOrder(f, []*ag.Param[float64]{p}, 3, ag.GradCheckOptions{AbsTol: 1e-7, RelTol: 1e-5}); err != nil {
		t.Fatal(err)
	}

	tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
	x := tp.Input(tensor.FromSlice([]float64{0.5}, 1))
	_, err := ag.Grad([]V{ag.Sum(cube(tp, x, false))}, []V{x}, ag.GradOptions[float64]{CreateGraph: true})
	var cge *ag.CreateGraphError
	if !errors.As(err, &cge) || cge.Op != "Custom(cube)" || !strings.Contains(err.Error(), "Custom(cube)") {
		t.Fatalf("Grad through a plain Custom node: %v, want a *CreateGraphError naming Custom(cube)", err)
	}
}

// TestGradMisuse: wrong cotangent shapes name both shapes; a constant input
// panics with a message naming it.
func TestGradMisuse(t *testing.T) {
	tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
	x := tp.Input(tensor.New[float64](2, 3))
	y := ag.Tanh(x)
	for _, c := range []struct {
		name string
		call func()
		want string
	}{
		{"cotangent shape", func() {
			ag.Grad([]V{y}, []V{x}, ag.GradOptions[float64]{Cotangents: []V{tp.Const(tensor.New[float64](3, 2))}})
		}, "[3 2] does not match output 0 of shape [2 3]"},
		{"constant input", func() { ag.Grad([]V{y}, []V{tp.Const(tensor.New[float64](2))}, ag.GradOptions[float64]{}) }, "requires no gradient"},
		{"cotangent count", func() { ag.Grad([]V{y}, []V{x}, ag.GradOptions[float64]{Cotangents: []V{}}) }, "0 cotangents for 1 outputs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(fmt.Sprint(r), c.want) {
					t.Fatalf("panic %v, want one containing %q", r, c.want)
				}
			}()
			c.call()
		})
	}
}

// TestGradAtKinks: where an op's derivative jumps (ReLU at 0, Hardtanh and
// Clamp at their bounds, Abs at 0, the fused activations at 0), Grad's
// values are Backward's: the same one-sided choices.
func TestGradAtKinks(t *testing.T) {
	eng := tensor.EngineFor[float64](tensor.Default())
	xs := []float64{-1, -0.5, 0, 0.5, 1, 2}
	for _, c := range []struct {
		name string
		f    func(x V) V
	}{
		{"ReLU", func(x V) V { return ag.ReLU(x) }},
		{"LeakyReLU", func(x V) V { return ag.LeakyReLU(x, 0.1) }},
		{"Hardtanh", func(x V) V { return ag.Hardtanh(x, -0.5, 0.5) }},
		{"Clamp", func(x V) V { return ag.Clamp(x, -0.5, 0.5) }},
		{"Abs", func(x V) V { return ag.Abs(x) }},
		{"ELU", func(x V) V { return ag.ELU(x, 0.5) }},
		{"LinearAct/relu", func(x V) V {
			return ag.LinearAct(x, x.Tape().Const(tensor.FromSlice([]float64{1}, 1, 1)), V{}, ag.ReLUAct)
		}},
		{"LinearAct/leaky", func(x V) V {
			return ag.LinearAct(x, x.Tape().Const(tensor.FromSlice([]float64{1}, 1, 1)), V{}, ag.LeakyReLUAct(0.1))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tp := ag.NewTape(eng)
			x := tp.Input(tensor.FromSlice(append([]float64(nil), xs...), len(xs), 1))
			if err := tp.Backward(ag.Sum(c.f(x))); err != nil {
				t.Fatal(err)
			}
			want := x.Grad().Clone().Data()
			tp2 := ag.NewTape(eng)
			x2 := tp2.Input(tensor.FromSlice(append([]float64(nil), xs...), len(xs), 1))
			gs, err := ag.Grad([]V{ag.Sum(c.f(x2))}, []V{x2}, ag.GradOptions[float64]{CreateGraph: true})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, gs.Inputs[0].Value().Data()); d != "" {
				t.Errorf("at %v (-Backward +Grad):\n%s", xs, d)
			}
		})
	}
}

// TestGradStop: with Stop at z = x·w, the gradient of y = z·w² with
// respect to w is the partial one, z held fixed (2zw); without it, the
// total one (3xw²).
func TestGradStop(t *testing.T) {
	w := ag.NewParam("w", tensor.FromSlice([]float64{2}, 1))
	for _, stop := range []bool{false, true} {
		tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
		x := tp.Input(tensor.FromSlice([]float64{3}, 1))
		z := ag.Mul(x, tp.Param(w))
		y := ag.Mul(z, ag.Square(tp.Param(w)))
		opt := ag.GradOptions[float64]{Params: []*ag.Param[float64]{w}, CreateGraph: true}
		want := 3 * 3 * 2 * 2.0 // d(x w³)/dw
		if stop {
			opt.Stop = []V{z}
			want = 2 * 6 * 2.0 // 2·z·w with z = 6
		}
		gs, err := ag.Grad([]V{y}, []V{z}, opt)
		if err != nil {
			t.Fatal(err)
		}
		if got := gs.Params[0].Item(); got != want {
			t.Errorf("stop %v: ∂y/∂w = %v, want %v", stop, got, want)
		}
		if got := gs.Inputs[0].Item(); got != 4 {
			t.Errorf("stop %v: ∂y/∂z = %v, want 4", stop, got)
		}
	}
}

// TestCheckHigherOrderCatches: CheckHigherOrder fails, naming order 2, on a
// backward in ops that is 0.1% off (whose first order, Backward's own
// rule, is right); passes on derivatives in the thousands, measured
// relatively; and returns the error of an evaluation along its direction.
func TestCheckHigherOrderCatches(t *testing.T) {
	p := ag.NewParam("x", tensor.FromSlice([]float64{0.3, -0.7, 1.1}, 3))
	square := func(tp *ag.Tape[float64], x V, off float64) V {
		y := tensor.New[float64](3)
		xv := x.Value()
		for i, v := range xv.Data() {
			y.Data()[i] = v * v
		}
		back := func(gy *tensor.Tensor[float64]) ([]*tensor.Tensor[float64], error) {
			g := tensor.New[float64](3)
			for i, v := range xv.Data() {
				g.Data()[i] = 2 * v * gy.Data()[i]
			}
			return []*tensor.Tensor[float64]{g}, nil
		}
		return ag.CustomDiff("square", y, back, func(gy V, in []V) ([]V, error) { return []V{ag.Mul(gy, ag.Scale(in[0], 2*off))}, nil }, x)
	}
	opt := ag.GradCheckOptions{AbsTol: 1e-8, RelTol: 1e-6}
	wrong := func(tp *ag.Tape[float64]) V { return ag.Sin(square(tp, tp.Param(p), 1.001)) }
	if _, err := ag.CheckHigherOrder(wrong, []*ag.Param[float64]{p}, 2, opt); err == nil || !strings.Contains(err.Error(), "order 2") {
		t.Errorf("a backward in ops 0.1%% off: %v, want a failure at order 2", err)
	}
	big := func(tp *ag.Tape[float64]) V { return ag.Sum(ag.Scale(ag.Exp(ag.Scale(tp.Param(p), 3)), 1000)) }
	if _, err := ag.CheckHigherOrder(big, []*ag.Param[float64]{p}, 3, opt); err != nil {
		t.Errorf("derivatives in the thousands: %v", err)
	}
	orig := p.Value.Clone()
	moved := errors.New("moved along a direction")
	fails := func(tp *ag.Tape[float64]) (V, error) {
		n := 0
		for i, v := range p.Value.Data() {
			if v != orig.Data()[i] {
				n++
			}
		}
		if n > 1 {
			return V{}, moved
		}
		return ag.Sin(ag.Sum(ag.Square(tp.Param(p)))), nil
	}
	if _, err := ag.CheckHigherOrder(fails, []*ag.Param[float64]{p}, 2, opt); !errors.Is(err, moved) {
		t.Errorf("an evaluation that fails along the direction: %v, want its error", err)
	}
}

// TestGradMaxAxisNaN: MaxAxis's gradient in ops goes where Backward's does,
// to a NaN that wins its row.
func TestGradMaxAxisNaN(t *testing.T) {
	eng := tensor.EngineFor[float64](tensor.Default())
	xs := []float64{1, math.NaN(), 3, 4, 2, 0}
	tp := ag.NewTape(eng)
	x := tp.Input(tensor.FromSlice(append([]float64(nil), xs...), 2, 3))
	if err := tp.Backward(ag.Sum(ag.MaxAxis(x, 1, false))); err != nil {
		t.Fatal(err)
	}
	tp2 := ag.NewTape(eng)
	x2 := tp2.Input(tensor.FromSlice(append([]float64(nil), xs...), 2, 3))
	gs, err := ag.Grad([]V{ag.Sum(ag.MaxAxis(x2, 1, false))}, []V{x2}, ag.GradOptions[float64]{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(x.Grad().Data(), gs.Inputs[0].Value().Data()); d != "" || gs.Inputs[0].Value().Data()[1] != 1 {
		t.Errorf("(-Backward +Grad):\n%s", d)
	}
}

// TestGradThroughRowShards: a RowShards node has no backward in ops: the
// error names it and says what to do instead.
func TestGradThroughRowShards(t *testing.T) {
	rs := ag.NewRowShards[float64](2, nil)
	tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
	x := tp.Input(tensor.FromSlice([]float64{1, 2, 3, 4}, 4, 1))
	y := rs.Apply(x, 0, func(tp *ag.Tape[float64], _ float64, x V) V { return ag.Tanh(x) })
	_, err := ag.Grad([]V{ag.Sum(y)}, []V{x}, ag.GradOptions[float64]{CreateGraph: true})
	var cge *ag.CreateGraphError
	if !errors.As(err, &cge) || cge.Op != "Custom(RowShards)" || !strings.Contains(err.Error(), "batch whole") {
		t.Fatalf("Grad through RowShards: %v", err)
	}
}

// TestELUValues: ELU's values and first derivatives at hand-worked points
// (torch.nn.functional.elu with α = 0.5): x > 0 passes, x ≤ 0 gives
// α(eˣ − 1) with slope αeˣ.
func TestELUValues(t *testing.T) {
	tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
	x := tp.Input(tensor.FromSlice([]float64{-2, -0.5, 0, 1.5}, 4))
	y := ag.ELU(x, 0.5)
	if err := tp.Backward(ag.Sum(y)); err != nil {
		t.Fatal(err)
	}
	wantY := []float64{0.5 * (math.Exp(-2) - 1), 0.5 * (math.Exp(-0.5) - 1), 0, 1.5}
	wantG := []float64{0.5 * math.Exp(-2), 0.5 * math.Exp(-0.5), 0.5, 1}
	opt := cmpopts.EquateApprox(0, 1e-15)
	if d := cmp.Diff(wantY, y.Value().Data(), opt); d != "" {
		t.Errorf("values (-want +got):\n%s", d)
	}
	if d := cmp.Diff(wantG, x.Grad().Data(), opt); d != "" {
		t.Errorf("derivatives (-want +got):\n%s", d)
	}
}

// TestChunkSelect: Chunk's pieces and Select's slab are the right elements
// and shapes; uneven chunks and out-of-range indices panic naming the shape.
func TestChunkSelect(t *testing.T) {
	tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
	x := tp.Const(tensor.FromSlice([]float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 2, 3, 2))
	c := ag.Chunk(x, 2, 0)
	if d := cmp.Diff([]float64{6, 7, 8, 9, 10, 11}, c[1].Value().Data()); d != "" || len(c) != 2 || !slices.Equal(c[1].Shape(), []int{1, 3, 2}) {
		t.Errorf("Chunk(x, 2, 0)[1]: %v %v", c[1].Shape(), d)
	}
	if one := ag.Chunk(x, 1, 2); len(one) != 1 || !slices.Equal(one[0].Shape(), []int{2, 3, 2}) {
		t.Errorf("Chunk(x, 1, 2): %d pieces", len(one))
	}
	s := ag.Select(x, 1, 2)
	if d := cmp.Diff([]float64{4, 5, 10, 11}, s.Value().Data()); d != "" || !slices.Equal(s.Shape(), []int{2, 2}) {
		t.Errorf("Select(x, 1, 2): %v %v", s.Shape(), d)
	}
	if s := ag.Select(x, -1, 1); !slices.Equal(s.Value().Data(), []float64{1, 3, 5, 7, 9, 11}) || !slices.Equal(s.Shape(), []int{2, 3}) {
		t.Errorf("Select(x, -1, 1) = %v of shape %v", s.Value().Data(), s.Shape())
	}
	for _, c := range []struct {
		name, op string
		call     func()
	}{
		{"uneven chunks", "Chunk", func() { ag.Chunk(x, 2, 1) }},
		{"no chunks", "Chunk", func() { ag.Chunk(x, 0, 1) }},
		{"index past the end", "Select", func() { ag.Select(x, 1, 3) }},
		{"negative index", "Select", func() { ag.Select(x, 1, -1) }},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "[2 3 2]") || !strings.Contains(fmt.Sprint(r), "autograd."+c.op) {
					t.Errorf("%s: panic %v, want one from autograd.%s naming shape [2 3 2]", c.name, r, c.op)
				}
			}()
			c.call()
		}()
	}
}
