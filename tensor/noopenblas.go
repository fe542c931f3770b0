//go:build !openblas

package tensor

import "gonum.org/v1/gonum/blas"

// openBLAS reports that OpenBLAS is not compiled in (build tag "openblas").
func openBLAS() (blas.Float32, blas.Float64, bool) { return nil, nil, false }

// OpenBLASCore names the CPU whose kernels the compiled-in OpenBLAS runs
// ("SkylakeX", "Haswell", "Zen", "Prescott", …; set by the library when it
// loads, or by the environment variable OPENBLAS_CORETYPE), or is "" in a
// build without OpenBLAS.
func OpenBLASCore() string { return "" }
