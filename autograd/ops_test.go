package autograd_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// Input kinds of an op case.
const (
	anyIn   = iota // magnitudes in [0.2, 1.2], random sign: away from kinks at 0
	posIn          // in [0.5, 2]: for log, sqrt and divisors
	constIn        // like anyIn, entered with Tape.Const (no gradient)
)

type inSpec struct {
	shape []int
	kind  int
}

func in(kind int, shape ...int) inSpec { return inSpec{shape: shape, kind: kind} }

type opCase struct {
	name string
	in   []inSpec
}

// ceLabels are the labels of the SoftmaxCrossEntropy cases (logits [4, 5]).
var ceLabels = []int{2, 0, 4, 2}

var conv3 = tensor.ConvParams{Pad: 1}
var conv2s = tensor.ConvParams{Stride: 2}

// build records the op of case name on the inputs.
func build[T tensor.Float](name string, x []ag.Var[T]) ag.Var[T] {
	switch name {
	case "Add":
		return ag.Add(x[0], x[1])
	case "Sub":
		return ag.Sub(x[0], x[1])
	case "Mul":
		return ag.Mul(x[0], x[1])
	case "Div":
		return ag.Div(x[0], x[1])
	case "AddSelf":
		return ag.Add(x[0], x[0])
	case "MulSelf":
		return ag.Mul(x[0], x[0])
	case "FanOut":
		return ag.Sub(ag.Mul(ag.Tanh(x[0]), x[0]), ag.Exp(x[0]))
	case "AddScalar":
		return ag.AddScalar(x[0], x[1])
	case "SubScalar":
		return ag.SubScalar(x[0], x[1])
	case "MulScalar":
		return ag.MulScalar(x[0], x[1])
	case "DivScalar":
		return ag.DivScalar(x[0], x[1])
	case "MulScalarConst":
		return ag.MulScalar(x[0], x[0].Tape().Scalar(-1.5))
	case "Scale":
		return ag.Scale(x[0], -2.5)
	case "AddConst":
		return ag.AddConst(x[0], 0.75)
	case "Neg":
		return ag.Neg(x[0])
	case "Exp":
		return ag.Exp(x[0])
	case "Log":
		return ag.Log(x[0])
	case "Sqrt":
		return ag.Sqrt(x[0])
	case "Square":
		return ag.Square(x[0])
	case "Tanh":
		return ag.Tanh(x[0])
	case "Sigmoid":
		return ag.Sigmoid(x[0])
	case "Softplus":
		return ag.Softplus(x[0])
	case "ReLU":
		return ag.ReLU(x[0])
	case "LeakyReLU":
		return ag.LeakyReLU(x[0], 0.3)
	case "Hardtanh":
		return ag.Hardtanh(x[0], -0.7, 0.7)
	case "AddBias":
		return ag.AddBias(x[0], x[1])
	case "MatMul":
		return ag.MatMul(x[0], x[1])
	case "MatMulSelf":
		return ag.MatMul(x[0], x[0])
	case "Linear":
		return ag.Linear(x[0], x[1], x[2])
	case "LinearNoBias":
		return ag.Linear(x[0], x[1], ag.Var[T]{})
	case "LinearTime":
		return ag.LinearTime(x[0], T(0.7), x[1], x[2])
	case "LinearTimeNoBias":
		return ag.LinearTime(x[0], T(-1.3), x[1], ag.Var[T]{})
	case "Conv3x3":
		return ag.Conv2D(x[0], x[1], x[2], conv3)
	case "Conv1x1":
		return ag.Conv2D(x[0], x[1], x[2], tensor.ConvParams{})
	case "ConvStride2":
		return ag.Conv2D(x[0], x[1], ag.Var[T]{}, conv2s)
	case "Sum":
		return ag.Sum(x[0])
	case "Mean":
		return ag.Mean(x[0])
	case "Reshape":
		return ag.Mul(ag.Reshape(x[0], 4, -1), x[1])
	case "Flatten":
		return ag.Flatten(x[0])
	case "Concat":
		return ag.Concat(1, x[0], x[1], x[2])
	case "ConcatAxis0":
		return ag.Concat(0, x[0], x[1])
	case "Narrow":
		return ag.Narrow(x[0], 1, 1, 2)
	case "Split":
		p := ag.Split(x[0], 1, 2, 3)
		return ag.Concat(1, ag.Square(p[1]), p[0])
	case "ConcatTime":
		return ag.ConcatTime(x[0], 0.25)
	case "SoftmaxCE":
		return ag.SoftmaxCrossEntropy(x[0], ceLabels)
	case "MSE":
		return ag.MSE(x[0], x[1])
	case "LinComb":
		return ag.LinComb([]T{0.5, -2, 1.25}, x[0], x[1], x[2])
	case "LinCombFan":
		return ag.LinComb([]T{0.5, -2, 1.25}, x[0], ag.Square(x[0]), x[0])

	case "AddBcast":
		return ag.Add(x[0], x[1])
	case "SubBcast":
		return ag.Sub(x[0], x[1])
	case "MulBcast":
		return ag.Mul(x[0], x[1])
	case "DivBcast":
		return ag.Div(x[0], x[1])
	case "BcastFan": // x and its per-row mean: x reached twice, once broadcast
		return ag.Mul(ag.Sub(x[0], ag.MeanAxis(x[0], 1, true)), ag.Add(x[0], ag.SumAxis(x[0], 0, false)))
	case "SumAxis0":
		return ag.SumAxis(x[0], 0, false)
	case "SumAxisLastKeep":
		return ag.SumAxis(x[0], -1, true)
	case "MeanAxis1":
		return ag.MeanAxis(x[0], 1, false)
	case "MaxAxis1":
		return ag.MaxAxis(x[0], 1, true)
	case "Abs":
		return ag.Abs(x[0])
	case "Pow":
		return ag.Pow(x[0], 1.7)
	case "PowInt":
		return ag.Pow(x[0], 3)
	case "Sin":
		return ag.Sin(x[0])
	case "Cos":
		return ag.Cos(x[0])
	case "Clamp":
		return ag.Clamp(x[0], -0.6, 0.7)
	case "AvgPool":
		return ag.AvgPool2D(x[0], 2, 2, 0)
	case "AvgPoolPad":
		return ag.AvgPool2D(x[0], 3, 2, 1)
	case "MaxPool":
		return ag.MaxPool2D(x[0], 2, 2, 0)
	case "MaxPoolPad":
		return ag.MaxPool2D(x[0], 3, 2, 1)
	case "AdaptiveAvgPool":
		return ag.AdaptiveAvgPool2D(x[0], 2, 3)

	// Fan-out: every rule's accumulating path (an input reached twice).
	case "ConvResidual":
		y := ag.Conv2D(x[0], x[1], ag.Var[T]{}, conv3)
		return ag.Add(ag.Conv2D(y, x[1], x[2], conv3), x[0])
	case "LinearTwice":
		return ag.Linear(ag.Tanh(ag.Linear(x[0], x[1], x[2])), x[1], x[2])
	case "ConcatSelf":
		return ag.Concat(1, x[0], x[0])
	case "ConcatTimeTwice":
		return ag.Mul(ag.ConcatTime(x[0], 1), ag.ConcatTime(x[0], -1))
	case "AddBiasTwice":
		return ag.AddBias(ag.Tanh(ag.AddBias(x[0], x[1])), x[1])
	case "ReduceFan":
		return ag.Add(ag.Add(ag.Sum(x[0]), ag.Mean(x[0])), ag.Add(ag.SoftmaxCrossEntropy(x[0], ceLabels), ag.MSE(x[0], ag.Square(x[0]))))
	case "ScalarFan":
		s := x[1]
		return ag.DivScalar(ag.SubScalar(ag.MulScalar(ag.AddScalar(x[0], s), s), s), ag.AddConst(s, 3))
	case "DivFan":
		// Mul's backward writes both gradients first: Div's accumulates
		// onto them, numerator and denominator.
		return ag.Add(ag.Div(x[0], x[1]), ag.Mul(x[0], x[1]))
	case "ActFan":
		a := ag.Add(ag.Add(ag.ReLU(x[0]), ag.LeakyReLU(x[0], 0.1)), ag.Hardtanh(x[0], -0.5, 0.5))
		b := ag.Add(ag.Add(ag.Sigmoid(x[0]), ag.Softplus(x[0])), ag.Sqrt(ag.Square(x[0])))
		c := ag.Add(ag.Log(ag.Exp(x[0])), ag.Div(ag.Exp(x[0]), ag.AddConst(ag.Square(x[0]), 1)))
		return ag.Add(ag.Add(a, b), ag.Add(c, ag.Neg(ag.Scale(ag.Reshape(ag.Reshape(ag.Flatten(x[0]), -1), 3, 4), 2))))
	}
	panic("no op case " + name)
}

var opCases = []opCase{
	{"Add", []inSpec{in(anyIn, 2, 3), in(anyIn, 2, 3)}},
	{"Sub", []inSpec{in(anyIn, 2, 3), in(anyIn, 2, 3)}},
	{"Mul", []inSpec{in(anyIn, 2, 3), in(anyIn, 2, 3)}},
	{"Div", []inSpec{in(anyIn, 2, 3), in(posIn, 2, 3)}},
	{"AddSelf", []inSpec{in(anyIn, 5)}},
	{"MulSelf", []inSpec{in(anyIn, 5)}},
	{"FanOut", []inSpec{in(anyIn, 2, 2)}},
	{"AddScalar", []inSpec{in(anyIn, 2, 3), in(anyIn)}},
	{"SubScalar", []inSpec{in(anyIn, 2, 3), in(anyIn, 1)}},
	{"MulScalar", []inSpec{in(anyIn, 2, 3), in(anyIn)}},
	{"DivScalar", []inSpec{in(anyIn, 2, 3), in(posIn)}},
	{"MulScalarConst", []inSpec{in(anyIn, 4)}},
	{"Scale", []inSpec{in(anyIn, 3, 2)}},
	{"AddConst", []inSpec{in(anyIn, 3, 2)}},
	{"Neg", []inSpec{in(anyIn, 3, 2)}},
	{"Exp", []inSpec{in(anyIn, 3, 2)}},
	{"Log", []inSpec{in(posIn, 3, 2)}},
	{"Sqrt", []inSpec{in(posIn, 3, 2)}},
	{"Square", []inSpec{in(anyIn, 3, 2)}},
	{"Tanh", []inSpec{in(anyIn, 3, 2)}},
	{"Sigmoid", []inSpec{in(anyIn, 3, 2)}},
	{"Softplus", []inSpec{in(anyIn, 3, 2)}},
	{"ReLU", []inSpec{in(anyIn, 4, 3)}},
	{"LeakyReLU", []inSpec{in(anyIn, 4, 3)}},
	{"Hardtanh", []inSpec{in(anyIn, 4, 3)}},
	{"AddBias", []inSpec{in(anyIn, 3, 4), in(anyIn, 4)}},
	{"AddBias", []inSpec{in(anyIn, 2, 3, 2, 2), in(anyIn, 3)}},
	{"AddBias", []inSpec{in(constIn, 2, 3, 2, 2), in(anyIn, 3)}},
	{"MatMul", []inSpec{in(anyIn, 3, 4), in(anyIn, 4, 5)}},
	{"MatMul", []inSpec{in(constIn, 3, 4), in(anyIn, 4, 5)}},
	{"MatMulSelf", []inSpec{in(anyIn, 3, 3)}},
	{"Linear", []inSpec{in(anyIn, 3, 4), in(anyIn, 5, 4), in(anyIn, 5)}},
	{"Linear", []inSpec{in(constIn, 3, 4), in(anyIn, 5, 4), in(anyIn, 5)}},
	{"LinearNoBias", []inSpec{in(anyIn, 2, 4), in(anyIn, 3, 4)}},
	{"LinearTime", []inSpec{in(anyIn, 3, 4), in(anyIn, 5, 5), in(anyIn, 5)}},
	{"LinearTime", []inSpec{in(constIn, 3, 4), in(anyIn, 5, 5), in(anyIn, 5)}},
	{"LinearTimeNoBias", []inSpec{in(anyIn, 2, 4), in(anyIn, 3, 5)}},
	{"Conv3x3", []inSpec{in(anyIn, 2, 3, 5, 4), in(anyIn, 4, 3, 3, 3), in(anyIn, 4)}},
	{"Conv1x1", []inSpec{in(anyIn, 2, 3, 3, 3), in(anyIn, 2, 3, 1, 1), in(anyIn, 2)}},
	{"ConvStride2", []inSpec{in(anyIn, 2, 2, 5, 5), in(anyIn, 3, 2, 3, 3)}},
	{"ConvStride2", []inSpec{in(constIn, 1, 2, 6, 5), in(anyIn, 2, 2, 2, 2)}},
	{"Sum", []inSpec{in(anyIn, 2, 3)}},
	{"Mean", []inSpec{in(anyIn, 2, 3)}},
	{"Reshape", []inSpec{in(anyIn, 2, 2, 3), in(anyIn, 4, 3)}},
	{"Flatten", []inSpec{in(anyIn, 2, 2, 2, 3)}},
	{"Concat", []inSpec{in(anyIn, 2, 1, 3), in(constIn, 2, 2, 3), in(anyIn, 2, 3, 3)}},
	{"ConcatAxis0", []inSpec{in(anyIn, 1, 3), in(anyIn, 2, 3)}},
	{"Narrow", []inSpec{in(anyIn, 2, 4, 2)}},
	{"Split", []inSpec{in(anyIn, 2, 5, 2)}},
	{"ConcatTime", []inSpec{in(anyIn, 2, 3, 2, 2)}},
	{"ConcatTime", []inSpec{in(anyIn, 3, 2)}},
	{"SoftmaxCE", []inSpec{in(anyIn, 4, 5)}},
	{"MSE", []inSpec{in(anyIn, 3, 2), in(anyIn, 3, 2)}},
	{"MSE", []inSpec{in(anyIn, 3, 2), in(constIn, 3, 2)}},
	{"LinComb", []inSpec{in(anyIn, 2, 3), in(constIn, 2, 3), in(anyIn, 2, 3)}},
	{"LinCombFan", []inSpec{in(anyIn, 3, 2)}},
	{"AddBcast", []inSpec{in(anyIn, 2, 3, 4), in(anyIn, 3, 1)}},
	{"SubBcast", []inSpec{in(anyIn, 4), in(anyIn, 2, 3, 4)}},
	{"MulBcast", []inSpec{in(anyIn, 2, 1, 4), in(anyIn, 3, 1)}},
	{"MulBcast", []inSpec{in(constIn, 2, 3, 4), in(anyIn, 3, 1)}},
	{"DivBcast", []inSpec{in(anyIn, 2, 3, 4), in(posIn, 1, 3, 1)}},
	{"DivBcast", []inSpec{in(posIn, 3), in(posIn, 2, 1)}},
	{"BcastFan", []inSpec{in(anyIn, 3, 4)}},
	{"SumAxis0", []inSpec{in(anyIn, 3, 2, 2)}},
	{"SumAxisLastKeep", []inSpec{in(anyIn, 2, 3, 4)}},
	{"MeanAxis1", []inSpec{in(anyIn, 2, 5, 3)}},
	{"MaxAxis1", []inSpec{in(anyIn, 2, 5, 3)}},
	{"Abs", []inSpec{in(anyIn, 3, 4)}},
	{"Pow", []inSpec{in(posIn, 3, 4)}},
	{"PowInt", []inSpec{in(anyIn, 3, 4)}},
	{"Sin", []inSpec{in(anyIn, 3, 4)}},
	{"Cos", []inSpec{in(anyIn, 3, 4)}},
	{"Clamp", []inSpec{in(anyIn, 4, 5)}},
	{"AvgPool", []inSpec{in(anyIn, 2, 2, 4, 5)}},
	{"AvgPoolPad", []inSpec{in(anyIn, 1, 2, 5, 5)}},
	{"MaxPool", []inSpec{in(anyIn, 2, 2, 4, 4)}},
	{"MaxPoolPad", []inSpec{in(anyIn, 1, 2, 5, 6)}},
	{"AdaptiveAvgPool", []inSpec{in(anyIn, 1, 2, 5, 7)}},
	{"ConvResidual", []inSpec{in(anyIn, 2, 2, 4, 3), in(anyIn, 2, 2, 3, 3), in(anyIn, 2)}},
	{"LinearTwice", []inSpec{in(anyIn, 2, 3), in(anyIn, 3, 3), in(anyIn, 3)}},
	{"ConcatSelf", []inSpec{in(anyIn, 2, 2, 2)}},
	{"ConcatTimeTwice", []inSpec{in(anyIn, 2, 2, 3)}},
	{"AddBiasTwice", []inSpec{in(anyIn, 2, 3, 2), in(anyIn, 3)}},
	{"ReduceFan", []inSpec{in(anyIn, 4, 5)}},
	{"ScalarFan", []inSpec{in(anyIn, 2, 3), in(posIn)}},
	{"ActFan", []inSpec{in(anyIn, 3, 4)}},
	{"DivFan", []inSpec{in(anyIn, 2, 3), in(posIn, 2, 3)}},
}

// inputs draws the case's input values.
func inputs(c opCase, seed uint64) []*tensor.Tensor[float64] {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([]*tensor.Tensor[float64], len(c.in))
	for i, s := range c.in {
		x := tensor.New[float64](s.shape...)
		for k := range x.Data() {
			if s.kind == posIn {
				x.Data()[k] = 0.5 + 1.5*rng.Float64()
				continue
			}
			v := 0.2 + rng.Float64()
			if rng.IntN(2) == 0 {
				v = -v
			}
			x.Data()[k] = v
		}
		out[i] = x
	}
	return out
}

func convert[U, T tensor.Float](x *tensor.Tensor[T]) *tensor.Tensor[U] {
	y := tensor.New[U](x.Shape()...)
	for i, v := range x.Data() {
		y.Data()[i] = U(v)
	}
	return y
}

// params wraps the non-constant inputs of c as parameters x0, x1, ...
func params[T tensor.Float](c opCase, vals []*tensor.Tensor[T]) []*ag.Param[T] {
	ps := make([]*ag.Param[T], len(vals))
	for i, v := range vals {
		ps[i] = ag.NewParam(fmt.Sprintf("x%d", i), v)
	}
	return ps
}

// forward records case c on tp.
func forward[T tensor.Float](tp *ag.Tape[T], c opCase, ps []*ag.Param[T]) ag.Var[T] {
	xs := make([]ag.Var[T], len(ps))
	for i, p := range ps {
		if c.in[i].kind == constIn {
			xs[i] = tp.Const(p.Value)
		} else {
			xs[i] = tp.Param(p)
		}
	}
	return build(c.name, xs)
}

// runCase records case c on tp, pulls back cot (the loss itself when cot is
// nil) and returns the output value and the parameter gradients, copied.
func runCase[T tensor.Float](tp *ag.Tape[T], c opCase, ps []*ag.Param[T], cot *tensor.Tensor[T]) (*tensor.Tensor[T], []*tensor.Tensor[T]) {
	ag.ZeroGrads(ps)
	y := forward(tp, c, ps)
	if cot == nil {
		tp.Backward(y)
	} else {
		tp.BackwardWith(y, cot)
	}
	gs := make([]*tensor.Tensor[T], len(ps))
	for i, p := range ps {
		gs[i] = p.Grad.Clone()
	}
	return y.Value().Clone(), gs
}

// maxAbsDiff returns max |a − b| and max |b|.
func maxAbsDiff[T, U tensor.Float](a *tensor.Tensor[T], b *tensor.Tensor[U]) (diff, scale float64) {
	if !slices.Equal(a.Shape(), b.Shape()) {
		return math.Inf(1), 0
	}
	for i, v := range a.Data() {
		w := float64(b.Data()[i])
		diff = max(diff, math.Abs(float64(v)-w))
		scale = max(scale, math.Abs(w))
	}
	return diff, scale
}

func caseName(i int, c opCase) string { return fmt.Sprintf("%02d-%s", i, c.name) }

// TestOpGradients checks every op's backward rule against central
// differences in float64 at random points.
func TestOpGradients(t *testing.T) {
	for i, c := range opCases {
		t.Run(caseName(i, c), func(t *testing.T) {
			vals := inputs(c, uint64(i+1))
			ps := params(c, vals)
			var checked []*ag.Param[float64]
			for k, p := range ps {
				if c.in[k].kind != constIn {
					checked = append(checked, p)
				}
			}
			rep, err := ag.CheckGradients(func(tp *ag.Tape[float64]) ag.Var[float64] { return forward(tp, c, ps) },
				checked, ag.GradCheckOptions{RelTol: 1e-6, AbsTol: 1e-9, Seed: uint64(i)})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Checked == 0 {
				t.Fatal("no element checked")
			}
			t.Log(rep)
		})
	}
}

// TestOpFloat32 checks that float32 values and gradients agree with float64
// within float32 precision, on every backend, and that a tape reused after
// Reset (with dirty buffers) gives bit-identical results.
func TestOpFloat32(t *testing.T) {
	for _, b := range tensor.Backends(0) {
		e32, e64 := tensor.EngineFor[float32](b), tensor.EngineFor[float64](b)
		for i, c := range opCases {
			t.Run(b.Name()+"/"+caseName(i, c), func(t *testing.T) {
				vals := inputs(c, uint64(i+1))
				p64 := params(c, vals)
				tp64 := ag.NewTape(e64)
				y64 := forward(tp64, c, p64)
				var cot64 *tensor.Tensor[float64]
				if y64.Len() != 1 {
					cot64 = tensor.RandN[float64](rand.New(rand.NewPCG(3, 4)), 0, 1, y64.Shape()...)
				}
				tp64.Reset()
				v64, g64 := runCase(tp64, c, p64, cot64)

				vals32 := make([]*tensor.Tensor[float32], len(vals))
				for k, v := range vals {
					vals32[k] = convert[float32](v)
				}
				p32 := params(c, vals32)
				var cot32 *tensor.Tensor[float32]
				if cot64 != nil {
					cot32 = convert[float32](cot64)
				}
				tp32 := ag.NewTape(e32)
				v32, g32 := runCase(tp32, c, p32, cot32)
				const tol = 1e-5
				if d, s := maxAbsDiff(v32, v64); d > tol*max(1, s) {
					t.Errorf("float32 value differs from float64 by %.3g (scale %.3g)", d, s)
				}
				for k := range g32 {
					if c.in[k].kind == constIn {
						continue
					}
					if d, s := maxAbsDiff(g32[k], g64[k]); d > tol*max(1, s) {
						t.Errorf("float32 gradient of x%d differs from float64 by %.3g (scale %.3g)", k, d, s)
					}
				}

				// A second pass on the reset tape reuses dirty buffers.
				tp32.Reset()
				w32, h32 := runCase(tp32, c, p32, cot32)
				if d, _ := maxAbsDiff(w32, v32); d != 0 {
					t.Errorf("value after Reset differs by %.3g", d)
				}
				for k := range h32 {
					if d, _ := maxAbsDiff(h32[k], g32[k]); d != 0 {
						t.Errorf("gradient of x%d after Reset differs by %.3g", k, d)
					}
				}
			})
		}
	}
}
