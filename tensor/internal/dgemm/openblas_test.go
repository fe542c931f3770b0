//go:build openblas

package dgemm

import (
	"github.com/adamnode/adamnode/tensor/internal/openblas"
	"gonum.org/v1/netlib/blas/netlib"
)

// others are the Dgemms the benchmarks compare with.
func init() {
	openblas.SingleThreaded()
	others = append(others, impl{"openblas", netlib.Implementation{}.Dgemm})
}
