//go:build openblas

package tensor

import (
	"github.com/adamnode/adamnode/tensor/internal/openblas"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/netlib/blas/netlib"
)

// openBLAS returns the OpenBLAS implementations, after setting OpenBLAS to a
// single thread: the backend parallelises over its own workers.
func openBLAS() (blas.Float32, blas.Float64, bool) {
	openblas.SingleThreaded()
	return netlib.Implementation{}, netlib.Implementation{}, true
}

// OpenBLASCore names the CPU whose kernels the compiled-in OpenBLAS runs
// ("SkylakeX", "Haswell", "Zen", "Prescott", …; set by the library when it
// loads, or by the environment variable OPENBLAS_CORETYPE), or is "" in a
// build without OpenBLAS.
func OpenBLASCore() string { return openblas.CoreName() }
