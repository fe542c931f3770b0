package tensor_test

import (
	"math/rand/v2"
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

// BenchmarkSliceKernels times the slice kernels on 4096 elements (in the
// first-level cache): AxpySlice, AddColumnSums (64 rows of 64), SumSlice
// and the float64 ReLU and LeakyReLU.
func BenchmarkSliceKernels(b *testing.B) {
	const n = 4096
	rng := rand.New(rand.NewPCG(8, 8))
	x32, y32 := tensor.RandN[float32](rng, 0, 1, n).Data(), tensor.RandN[float32](rng, 0, 1, n).Data()
	x64, y64 := tensor.RandN[float64](rng, 0, 1, n), tensor.RandN[float64](rng, 0, 1, n)
	b.Run("axpy/float32", func(b *testing.B) {
		for b.Loop() {
			tensor.AxpySlice(0.5, x32, y32)
		}
		b.SetBytes(8 * n)
	})
	b.Run("axpy/float64", func(b *testing.B) {
		for b.Loop() {
			tensor.AxpySlice(0.5, x64.Data(), y64.Data())
		}
		b.SetBytes(16 * n)
	})
	b.Run("colsums/float32", func(b *testing.B) {
		for b.Loop() {
			tensor.AddColumnSums(y32[:64], x32)
		}
		b.SetBytes(4 * n)
	})
	b.Run("sum/float32", func(b *testing.B) {
		var s float64
		for b.Loop() {
			s += tensor.SumSlice(x32)
		}
		b.SetBytes(4 * n)
	})
	z64 := tensor.New[float64](n)
	b.Run("relu/float64", func(b *testing.B) {
		for b.Loop() {
			z64.ReLU(x64)
		}
		b.SetBytes(16 * n)
	})
	b.Run("leakyrelu/float64", func(b *testing.B) {
		for b.Loop() {
			z64.LeakyReLU(x64, 0.1)
		}
		b.SetBytes(16 * n)
	})
}
