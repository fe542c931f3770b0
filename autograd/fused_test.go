package autograd_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// fusedActs pairs each fused activation with its unfused op.
var fusedActs = []struct {
	act     ag.Activation
	unfused func(x ag.Var[float64]) ag.Var[float64]
}{
	{ag.IdentityAct, func(x ag.Var[float64]) ag.Var[float64] { return x }},
	{ag.ReLUAct, ag.ReLU[float64]},
	{ag.LeakyReLUAct(0.3), func(x ag.Var[float64]) ag.Var[float64] { return ag.LeakyReLU(x, 0.3) }},
	{ag.TanhAct, ag.Tanh[float64]},
	{ag.SigmoidAct, ag.Sigmoid[float64]},
	{ag.SoftplusAct, ag.Softplus[float64]},
}

// fusedOps are the ops with a fused variant, on small inputs (large enough
// for the split across workers in one case), each as (fused, unfused).
var fusedOps = []struct {
	name   string
	shapes [][]int // x, w, b
	fused  func(x, w, b ag.Var[float64], act ag.Activation) ag.Var[float64]
	plain  func(x, w, b ag.Var[float64]) ag.Var[float64]
}{
	{"Linear", [][]int{{5, 3}, {4, 3}, {4}},
		ag.LinearAct[float64], ag.Linear[float64]},
	{"Linear/large", [][]int{{300, 8}, {70, 8}, {70}},
		ag.LinearAct[float64], ag.Linear[float64]},
	{"LinearTime", [][]int{{5, 3}, {4, 4}, {4}},
		func(x, w, b ag.Var[float64], act ag.Activation) ag.Var[float64] {
			return ag.LinearTimeAct(x, 0.6, w, b, act)
		},
		func(x, w, b ag.Var[float64]) ag.Var[float64] { return ag.LinearTime(x, 0.6, w, b) }},
	{"Conv2D", [][]int{{2, 2, 5, 5}, {3, 2, 3, 3}, {3}},
		func(x, w, b ag.Var[float64], act ag.Activation) ag.Var[float64] {
			return ag.Conv2DAct(x, w, b, tensor.ConvParams{Pad: 1}, act)
		},
		func(x, w, b ag.Var[float64]) ag.Var[float64] { return ag.Conv2D(x, w, b, tensor.ConvParams{Pad: 1}) }},
	{"Conv2DTime", [][]int{{2, 2, 5, 5}, {3, 3, 3, 3}, {3}},
		func(x, w, b ag.Var[float64], act ag.Activation) ag.Var[float64] {
			return ag.Conv2DTimeAct(x, 0.4, w, b, tensor.ConvParams{Pad: 1}, act)
		},
		func(x, w, b ag.Var[float64]) ag.Var[float64] {
			return ag.Conv2DTime(x, 0.4, w, b, tensor.ConvParams{Pad: 1})
		}},
}

// TestFusedActivationsMatch: each fused op equals the op followed by the
// activation, in value and in every gradient, including when the output is
// used twice and when gradients accumulate.
func TestFusedActivationsMatch(t *testing.T) {
	for _, op := range fusedOps {
		for _, a := range fusedActs {
			t.Run(fmt.Sprintf("%s/%v", op.name, a.act), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(1, 2))
				var params []*ag.Param[float64]
				for i, s := range op.shapes {
					params = append(params, ag.NewParam(fmt.Sprint(i), tensor.RandN[float64](rng, 0, 1, s...)))
				}
				run := func(fused bool) (*tensor.Tensor[float64], []*tensor.Tensor[float64]) {
					ag.ZeroGrads(params)
					tp := ag.NewTape(tensor.EngineFor[float64](tensor.Gonum(2)))
					x, w, b := tp.Param(params[0]), tp.Param(params[1]), tp.Param(params[2])
					var y ag.Var[float64]
					if fused {
						y = op.fused(x, w, b, a.act)
					} else {
						y = a.unfused(op.plain(x, w, b))
					}
					r := tensor.RandN[float64](rand.New(rand.NewPCG(3, 4)), 0, 1, y.Value().Shape()...)
					loss := ag.Add(ag.Sum(ag.Mul(y, tp.Const(r))), ag.Sum(ag.Square(y)))
					if err := tp.Backward(loss); err != nil {
						t.Fatal(err)
					}
					var g []*tensor.Tensor[float64]
					for _, p := range params {
						g = append(g, p.Grad.Clone())
					}
					return y.Value().Clone(), g
				}
				want, wantG := run(false)
				got, gotG := run(true)
				check := func(what string, a, b *tensor.Tensor[float64]) {
					t.Helper()
					for i, v := range a.Data() {
						u := b.Data()[i]
						if math.Abs(v-u) > 1e-12*math.Max(1, math.Abs(u)) {
							t.Fatalf("%s element %d: fused %v, unfused %v", what, i, v, u)
						}
					}
				}
				check("value", got, want)
				for i := range params {
					check(fmt.Sprintf("gradient %d", i), gotG[i], wantG[i])
				}
			})
		}
	}
}

// TestFusedActivationsGradients checks the fused ops against central
// differences.
func TestFusedActivationsGradients(t *testing.T) {
	for _, op := range fusedOps[:1] {
		for _, a := range fusedActs {
			t.Run(fmt.Sprintf("%s/%v", op.name, a.act), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(5, 6))
				var params []*ag.Param[float64]
				for i, s := range op.shapes {
					params = append(params, ag.NewParam(fmt.Sprint(i), tensor.RandN[float64](rng, 0, 1, s...)))
				}
				f := func(tp *ag.Tape[float64]) ag.Var[float64] {
					return op.fused(tp.Param(params[0]), tp.Param(params[1]), tp.Param(params[2]), a.act)
				}
				if rep, err := ag.CheckGradients(f, params, ag.GradCheckOptions{}); err != nil {
					t.Fatalf("%v\n%v", err, rep)
				}
			})
		}
	}
	for _, op := range fusedOps[2:] {
		t.Run(op.name+"/Softplus", func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 8))
			var params []*ag.Param[float64]
			for i, s := range op.shapes {
				params = append(params, ag.NewParam(fmt.Sprint(i), tensor.RandN[float64](rng, 0, 1, s...)))
			}
			f := func(tp *ag.Tape[float64]) ag.Var[float64] {
				return op.fused(tp.Param(params[0]), tp.Param(params[1]), tp.Param(params[2]), ag.SoftplusAct)
			}
			if rep, err := ag.CheckGradients(f, params, ag.GradCheckOptions{RelTol: 1e-5}); err != nil {
				t.Fatalf("%v\n%v", err, rep)
			}
		})
	}
}

// TestFusedNoGrad: in no-grad mode the fused op computes the same value.
func TestFusedNoGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	x, w, b := tensor.RandN[float64](rng, 0, 1, 4, 3), tensor.RandN[float64](rng, 0, 1, 2, 3), tensor.RandN[float64](rng, 0, 1, 2)
	tp := ag.NewTape(tensor.EngineFor[float64](tensor.Gonum(1)))
	tp.SetNoGrad(true)
	got := ag.LinearAct(tp.Const(x), tp.Const(w), tp.Const(b), ag.TanhAct).Value()
	want := ag.Tanh(ag.Linear(tp.Const(x), tp.Const(w), tp.Const(b))).Value()
	for i, v := range got.Data() {
		if v != want.Data()[i] {
			t.Fatalf("element %d: %v, want %v", i, v, want.Data()[i])
		}
	}
}

// TestLeakyReLUActSlope: a slope that is not positive is refused (the sign
// of the output would not tell the input's).
func TestLeakyReLUActSlope(t *testing.T) {
	for _, s := range []float64{0, -0.1, math.NaN(), math.Inf(1)} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("LeakyReLUAct(%g) did not panic", s)
				}
			}()
			ag.LeakyReLUAct(s)
		}()
	}
}

func ExampleLinearAct() {
	tp := ag.NewTape(tensor.EngineFor[float64](tensor.Gonum(1)))
	x := tp.Const(tensor.FromSlice([]float64{1, -2}, 1, 2))
	w := tp.Const(tensor.FromSlice([]float64{1, 1, 2, 1}, 2, 2))
	b := tp.Const(tensor.FromSlice([]float64{0.5, 0}, 2))
	// ReLU(x·wᵀ + b) = ReLU([−0.5, 0]) in one op.
	fmt.Println(ag.LinearAct(x, w, b, ag.ReLUAct).Value().Data())
	// Output: [0 0]
}
