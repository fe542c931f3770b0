//go:build !openblas

package peer

// Build names the BLAS this binary was built with.
const Build = "gonum"
