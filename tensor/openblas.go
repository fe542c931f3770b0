//go:build openblas

package tensor

/*
#cgo LDFLAGS: -lopenblas
void openblas_set_num_threads(int);
*/
import "C"

import (
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/netlib/blas/netlib"
)

var singleThreaded sync.Once

// openBLAS returns the OpenBLAS implementations, after setting OpenBLAS to a
// single thread: the backend parallelises over its own workers.
func openBLAS() (blas.Float32, blas.Float64, bool) {
	singleThreaded.Do(func() { C.openblas_set_num_threads(1) })
	return netlib.Implementation{}, netlib.Implementation{}, true
}
