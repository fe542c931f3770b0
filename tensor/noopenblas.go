//go:build !openblas

package tensor

import "gonum.org/v1/gonum/blas"

// openBLAS reports that OpenBLAS is not compiled in (build tag "openblas").
func openBLAS() (blas.Float32, blas.Float64, bool) { return nil, nil, false }
