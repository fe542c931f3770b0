package autograd_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// TestLinearTimeMatchesConcat: LinearTime equals Linear of ConcatTime, in
// value and in every gradient, in float64 and float32, on every backend
// (the fused bias of the CPU engines and the copy-then-GEMM of others), with
// and without a bias, tv zero or not, and at MLP sizes split over workers.
func TestLinearTimeMatchesConcat(t *testing.T) {
	for _, be := range tensor.Backends(2) {
		for _, s := range []struct{ batch, c, out int }{{3, 4, 5}, {1, 1, 1}, {512, 16, 64}, {300, 16, 17}} {
			for _, tv := range []float64{0.37, 0} {
				for _, bias := range []bool{true, false} {
					name := fmt.Sprintf("%s/%dx%dto%d/tv%g/bias%v", be.Name(), s.batch, s.c, s.out, tv, bias)
					t.Run(name+"/float64", func(t *testing.T) { linearTimeCase[float64](t, be, s.batch, s.c, s.out, tv, bias, 1e-12) })
					t.Run(name+"/float32", func(t *testing.T) { linearTimeCase[float32](t, be, s.batch, s.c, s.out, tv, bias, 2e-5) })
				}
			}
		}
	}
}

func linearTimeCase[T tensor.Float](t *testing.T, be tensor.Backend, batch, c, out int, tv float64, withBias bool, tol float64) {
	rng := rand.New(rand.NewPCG(uint64(batch), uint64(out)))
	x := ag.NewParam("x", tensor.RandN[T](rng, 0, 1, batch, c))
	w := ag.NewParam("w", tensor.RandN[T](rng, 0, 1, out, c+1))
	b := ag.NewParam("b", tensor.RandN[T](rng, 0, 1, out))
	cot := tensor.RandN[T](rng, 0, 1, batch, out)
	run := func(fused bool) [][]T {
		for _, p := range []*ag.Param[T]{x, w, b} {
			p.ZeroGrad()
		}
		tp := ag.NewTape(tensor.EngineFor[T](be))
		bv := ag.Var[T]{}
		if withBias {
			bv = tp.Param(b)
		}
		var z ag.Var[T]
		if fused {
			z = ag.LinearTime(tp.Param(x), T(tv), tp.Param(w), bv)
		} else {
			z = ag.Linear(ag.ConcatTime(tp.Param(x), T(tv)), tp.Param(w), bv)
		}
		// Accumulation: the output used twice.
		y := ag.Add(ag.Mul(z, tp.Const(cot)), ag.Square(z))
		val := append([]T(nil), z.Value().Data()...)
		if err := tp.Backward(ag.Sum(y)); err != nil {
			t.Fatal(err)
		}
		out := [][]T{val, append([]T(nil), x.Grad.Data()...), append([]T(nil), w.Grad.Data()...)}
		if withBias {
			out = append(out, append([]T(nil), b.Grad.Data()...))
		}
		return out
	}
	got, want := run(true), run(false)
	for i := range want {
		for j, v := range want[i] {
			if d := math.Abs(float64(got[i][j] - v)); d > tol*(1+math.Abs(float64(v)))*math.Sqrt(float64(batch+c)) {
				t.Fatalf("result %d (value, dx, dw, db) element %d: %v fused, %v unfused", i, j, got[i][j], v)
			}
		}
	}
}

// TestLinearTimeShapes: a weight without the extra time column is a
// shape error naming both shapes.
func TestLinearTimeShapes(t *testing.T) {
	tp := ag.NewTape(eng64())
	x, w := tp.Const(tensor.New[float64](2, 3)), tp.Const(tensor.New[float64](4, 3))
	msg := mustPanic(t, func() { ag.LinearTime(x, 0.5, w, ag.Var[float64]{}) })
	if !strings.Contains(msg, "[2 3]") || !strings.Contains(msg, "[4 3]") {
		t.Fatalf("panic %q does not name both shapes", msg)
	}
}
