package autograd_test

import (
	"math/rand/v2"
	"testing"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// TestLargeOpsSplit runs elementwise ops on tensors large enough to be split
// across the engine's workers and compares values and gradients with the
// same ops computed by the tensor kernels in one piece.
func TestLargeOpsSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const n = 3*(1<<16) + 17 // above the split threshold, not a multiple of the workers
	for _, b := range tensor.Backends(3) {
		eng := tensor.EngineFor[float64](b)
		x := tensor.RandU[float64](rng, 0.1, 2, 5, n/5+1)
		y := tensor.RandU[float64](rng, 0.1, 2, x.Shape()...)
		for _, c := range []struct {
			name string
			op   func(x, y ag.Var[float64]) ag.Var[float64]
			ref  func(z, x, y *tensor.Tensor[float64])
			dx   func(g, x, y *tensor.Tensor[float64]) *tensor.Tensor[float64] // ∂L/∂x for the cotangent g
		}{
			{"Tanh", func(x, _ ag.Var[float64]) ag.Var[float64] { return ag.Tanh(x) },
				func(z, x, _ *tensor.Tensor[float64]) { z.Tanh(x) },
				func(g, x, _ *tensor.Tensor[float64]) *tensor.Tensor[float64] {
					th := tensor.New[float64](x.Shape()...).Tanh(x)
					return tensor.Mul(g, tensor.New[float64](x.Shape()...).Map(th, func(v float64) float64 { return 1 - v*v }))
				}},
			{"ReLU", func(x, y ag.Var[float64]) ag.Var[float64] { return ag.ReLU(ag.Sub(x, y)) },
				func(z, x, y *tensor.Tensor[float64]) { z.ReLU(tensor.Sub(x, y)) },
				func(g, x, y *tensor.Tensor[float64]) *tensor.Tensor[float64] {
					r := tensor.New[float64](x.Shape()...).ReLU(tensor.Sub(x, y))
					return tensor.New[float64](x.Shape()...).ReLUBackward(g, r, false)
				}},
			{"Mul", func(x, y ag.Var[float64]) ag.Var[float64] { return ag.Mul(x, y) },
				func(z, x, y *tensor.Tensor[float64]) { z.Mul(x, y) },
				func(g, _, y *tensor.Tensor[float64]) *tensor.Tensor[float64] { return tensor.Mul(g, y) }},
			{"Div", func(x, y ag.Var[float64]) ag.Var[float64] { return ag.Div(x, y) },
				func(z, x, y *tensor.Tensor[float64]) { z.Div(x, y) },
				func(g, _, y *tensor.Tensor[float64]) *tensor.Tensor[float64] { return tensor.Div(g, y) }},
		} {
			tp := ag.NewTape(eng)
			xv := tp.Input(x)
			z := c.op(xv, tp.Const(y))
			want := tensor.New[float64](x.Shape()...)
			c.ref(want, x, y)
			for i, v := range want.Data() {
				if z.Value().Data()[i] != v {
					t.Fatalf("%s %s: value %d = %v, want %v", b.Name(), c.name, i, z.Value().Data()[i], v)
				}
			}
			g := tensor.RandN[float64](rng, 0, 1, x.Shape()...)
			if err := tp.BackwardWith(z, g); err != nil {
				t.Fatal(err)
			}
			wantDx := c.dx(g, x, y)
			for i, v := range wantDx.Data() {
				if d := xv.Grad().Data()[i] - v; d > 1e-12 || d < -1e-12 {
					t.Fatalf("%s %s: gradient %d = %v, want %v", b.Name(), c.name, i, xv.Grad().Data()[i], v)
				}
			}
		}
	}
}

// TestLargeConcatTimeSplit checks ConcatTime and its gradient on a tensor
// large enough to be split across workers.
func TestLargeConcatTimeSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, b := range tensor.Backends(3) {
		x := tensor.RandN[float64](rng, 0, 1, 5, 3, 120, 121)
		tp := ag.NewTape(tensor.EngineFor[float64](b))
		xv := tp.Input(x)
		z := ag.ConcatTime(xv, 0.7)
		for n := 0; n < 5; n++ {
			for c := 0; c < 4; c++ {
				for _, pos := range [][2]int{{0, 0}, {119, 120}, {57, 3}} {
					want := 0.7
					if c < 3 {
						want = x.At(n, c, pos[0], pos[1])
					}
					if got := z.Value().At(n, c, pos[0], pos[1]); got != want {
						t.Fatalf("%s: z[%d,%d,%v] = %v, want %v", b.Name(), n, c, pos, got, want)
					}
				}
			}
		}
		g := tensor.RandN[float64](rng, 0, 1, z.Shape()...)
		if err := tp.BackwardWith(z, g); err != nil {
			t.Fatal(err)
		}
		for n := 0; n < 5; n++ {
			for c := 0; c < 3; c++ {
				if got, want := xv.Grad().At(n, c, 7, 9), g.At(n, c, 7, 9); got != want {
					t.Fatalf("%s: grad[%d,%d] = %v, want %v", b.Name(), n, c, got, want)
				}
			}
		}
	}
}
