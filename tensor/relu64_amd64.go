//go:build !purego

package tensor

// relu64AVX512 sets z[i] = max(x[i], 0) for i < len(z) (NaN stays NaN, −0
// gives +0); x is at least as long as z.
//
//go:noescape
func relu64AVX512(z, x []float64)

// leaky64AVX512 sets z[i] = x[i] where x[i] > 0 (or NaN), slope·x[i]
// elsewhere, for i < len(z).
//
//go:noescape
func leaky64AVX512(z, x []float64, slope float64)
