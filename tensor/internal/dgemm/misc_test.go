package dgemm

import (
	"testing"

	"gonum.org/v1/gonum/blas"
)

// TestDgemmNoAllocs checks that a product by the kernels, of either path,
// allocates nothing once the pack buffers exist.
func TestDgemmNoAllocs(t *testing.T) {
	forPaths(t, func(t *testing.T, gp gemmPath) {
		if gp.name == "Dgemm" && !Enabled() {
			t.Skip("gonum's Dgemm allocates")
		}
		a, b, c := make([]float64, 300*300), make([]float64, 300*300), make([]float64, 300*300)
		gp.gemm(blas.NoTrans, blas.Trans, 300, 300, 300, 1, a, 300, b, 300, 0, c, 300)
		if n := testing.AllocsPerRun(20, func() {
			gp.gemm(blas.NoTrans, blas.Trans, 300, 300, 300, 1, a, 300, b, 300, 0, c, 300)
		}); n > 0 {
			t.Errorf("%v allocations per call", n)
		}
	})
}

func TestDgemmPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"lda": func() {
			Dgemm(blas.NoTrans, blas.NoTrans, 2, 2, 3, 1, make([]float64, 6), 2, make([]float64, 6), 2, 0, make([]float64, 4), 2)
		},
		"short": func() {
			Dgemm(blas.NoTrans, blas.NoTrans, 2, 2, 2, 1, make([]float64, 3), 2, make([]float64, 4), 2, 0, make([]float64, 4), 2)
		},
		"m": func() { Dgemm(blas.NoTrans, blas.NoTrans, -1, 2, 2, 1, nil, 2, nil, 2, 0, nil, 2) },
		"bias": func() {
			DgemmBias(blas.NoTrans, blas.NoTrans, 2, 2, 2, 1, make([]float64, 4), 2, make([]float64, 4), 2, make([]float64, 1), make([]float64, 4), 2)
		},
		"transpose": func() {
			Dgemm('x', blas.NoTrans, 2, 2, 2, 1, make([]float64, 4), 2, make([]float64, 4), 2, 0, make([]float64, 4), 2)
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
