package odeblock_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// adamTanhField returns f(h, t) = tanh(0.7·h) + t in T.
func adamTanhField[T tensor.Float]() odeblock.Field[T] {
	w := autograd.NewParam("w", tensor.FromSlice([]T{0.7}, 1))
	return odeblock.FieldFunc([]*autograd.Param[T]{w}, func(tp *autograd.Tape[T], tt float64, h autograd.Var[T]) autograd.Var[T] {
		return autograd.AddConst(autograd.Tanh(autograd.MulScalar(h, tp.Param(w))), T(tt))
	})
}

// adamAdjoint returns dz, da and dg of AdamNODE's EvalAdjoint in T at z, a.
func adamAdjoint[T tensor.Float](s odeblock.Scale, z64, a64 []float64, shape []int) (dz, da, dg []float64) {
	dyn := odeblock.NewAdamNODE[T](adamTanhField[T](), -0.5, 0.8, s)
	conv := func(x []float64) *tensor.Tensor[T] {
		t := tensor.New[T](shape...)
		for i, v := range x {
			t.Data()[i] = T(v)
		}
		return t
	}
	z, a := conv(z64), conv(a64)
	eng := tensor.EngineFor[T](tensor.Backends(3)[len(tensor.Backends(3))-1])
	dzt, dat := tensor.New[T](shape...), tensor.New[T](shape...)
	dgt := []*tensor.Tensor[T]{tensor.New[T](1), tensor.New[T](1), tensor.New[T](1)}
	if err := dyn.EvalAdjoint(autograd.NewPullback(eng), 0.3, z, a, dzt, dat, dgt); err != nil {
		panic(err)
	}
	back := func(t *tensor.Tensor[T]) []float64 {
		x := make([]float64, t.Len())
		for i, v := range t.Data() {
			x[i] = float64(v)
		}
		return x
	}
	for _, g := range dgt {
		dg = append(dg, float64(g.Data()[0]))
	}
	return back(dzt), back(dat), dg
}

// TestAdamAdjointFloat32 compares AdamNODE's adjoint evaluation in float32,
// whose s(v) and s'(v) come from the vector maps, with float64 at the same
// (float32) point, for a state split across workers or not, with v near 0,
// negative and below softplus's float32 underflow.
func TestAdamAdjointFloat32(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, rows := range []int{3, 40} {
		const width = 2000
		shape := []int{3 * rows, width}
		n := rows * width
		z, a := make([]float64, 3*n), make([]float64, 3*n)
		for i := range z {
			z[i] = float64(float32(rng.NormFloat64()))
			a[i] = float64(float32(rng.NormFloat64()))
		}
		v := z[2*n:]
		for i := range v {
			v[i] = float64(float32(v[i]*v[i] + 0.1))
		}
		copy(v, []float64{0, 1e-30, -1e-3, -1, -20, -90, -110, -200, 1e-6, 50})
		for _, s := range []odeblock.Scale{odeblock.ScaleSqrt, odeblock.ScaleSoftplus} {
			dz32, da32, dg32 := adamAdjoint[float32](s, z, a, shape)
			dz64, da64, dg64 := adamAdjoint[float64](s, z, a, shape)
			check := func(what string, got, want []float64, tol float64) {
				for i, w := range want {
					if math.IsNaN(w) && math.IsNaN(got[i]) {
						continue
					}
					if !(math.Abs(got[i]-w) <= tol*math.Max(1, math.Abs(w))) {
						t.Fatalf("rows %d, %v: %s[%d] = %v in float32, %v in float64", rows, s, what, i, got[i], w)
					}
				}
			}
			check("dz", dz32, dz64, 1e-5)
			check("da", da32, da64, 1e-5)
			check("dg", dg32, dg64, 1e-4)
		}
	}
}
