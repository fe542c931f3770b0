package integrate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

// TestCombinerSplits checks that a combiner splits long stage sums over
// its engine's workers and that every element has the bits of the serial
// sum, with and without a base, at lengths around the threshold, in
// float32 and float64.
func TestCombinerSplits(t *testing.T) {
	testCombiner[float32](t)
	testCombiner[float64](t)
}

func testCombiner[T tensor.Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	cs := []float64{0.2, 0, -1.5, 3.25, 0.125, 0, 7}
	for _, n := range []int{0, 100, parallelCombine - 1, parallelCombine, 3*parallelCombine + 17} {
		ks := make([][]T, len(cs))
		for j := range ks {
			ks[j] = make([]T, n)
			for i := range ks[j] {
				ks[j][i] = T(rng.NormFloat64())
			}
		}
		base := make([]T, n)
		for i := range base {
			base[i] = T(rng.NormFloat64())
		}
		for _, b := range [][]T{base, nil} {
			want, got := make([]T, n), make([]T, n)
			linComb(want, b, 0.37, cs, ks)
			eng := &countingEngine[T]{Engine: tensor.EngineFor[T](tensor.Gonum(2))}
			var c combiner[T]
			c.use(eng)
			c.linComb(got, b, 0.37, cs, ks)
			if split := eng.calls > 0; split != (n >= parallelCombine) {
				t.Errorf("n=%d: split %v", n, split)
			}
			for i := range want {
				if math.Float64bits(float64(want[i])) != math.Float64bits(float64(got[i])) {
					t.Fatalf("n=%d base %v: element %d is %v, serial %v", n, b != nil, i, got[i], want[i])
				}
			}
		}
	}
	var serial combiner[T]
	serial.use(tensor.EngineFor[T](tensor.Gonum(1)))
	if serial.eng != nil {
		t.Error("a one-worker engine: the combiner would split")
	}
}

// countingEngine counts Parallel calls; it keeps the engine's workers.
type countingEngine[T tensor.Float] struct {
	tensor.Engine[T]
	calls int
}

func (e *countingEngine[T]) Parallel(n int, body func(lo, hi int)) {
	e.calls++
	e.Engine.Parallel(n, body)
}

func (e *countingEngine[T]) Workers() int { return tensor.Workers(e.Engine) }

// BenchmarkStageSum times a dopri5 stage input, y0 + h·Σ a_j·k_j over five
// stages, on 200 000 float32 values (the adjoint state of an AdamNODE of
// batch 2048), on the calling goroutine (split=false) and over 2 workers
// (split=true): `benchstat -col /split`.
func BenchmarkStageSum(b *testing.B) {
	const n = 200_000
	rng := rand.New(rand.NewPCG(1, 1))
	cs := []float64{44.0 / 45, -56.0 / 15, 32.0 / 9, 0, 0}
	ks := make([][]float32, 5)
	for j := range ks {
		ks[j] = make([]float32, n)
		for i := range ks[j] {
			ks[j][i] = float32(rng.NormFloat64())
		}
	}
	y0, y := make([]float32, n), make([]float32, n)
	for _, split := range []bool{false, true} {
		b.Run(fmt.Sprintf("split=%v", split), func(b *testing.B) {
			var c combiner[float32]
			if split {
				c.use(tensor.EngineFor[float32](tensor.Default()))
				if c.eng == nil {
					b.Skip("one worker")
				}
			}
			b.SetBytes(4 * n * 5) // the three sources with a coefficient, y0 and y
			for b.Loop() {
				c.linComb(y, y0, 0.01, cs, ks)
			}
		})
	}
}
