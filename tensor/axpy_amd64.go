//go:build !purego

package tensor

import "github.com/adamnode/adamnode/tensor/internal/isa"

// axpyAVX reports whether the slice kernels of axpy_amd64.s,
// axpy64_amd64.s and relu64_amd64.s run: on the avx512 kernel path (they
// have no AVX2 versions; on avx2 the Go loops run).
var axpyAVX = isa.Current() >= isa.AVX512

// axpyAVX512 sets y[i] += a·x[i] for i < n.
//
//go:noescape
func axpyAVX512(a float32, x, y *float32, n int)

// colSumsAVX512 sets dst[j] += Σ_i x[i·cols+j] for j < cols, i < rows.
//
//go:noescape
func colSumsAVX512(dst, x *float32, rows, cols int)

// sumAVX512 returns Σ x[i] for i < n, summed in float64.
//
//go:noescape
func sumAVX512(x *float32, n int) float64

// linCombAVX512 sets dst[i] = base[i] + Σ_{j<m} coef[j]·src[j][i] for i < n
// (base nil: 0 + …), each product rounded, the terms added in order.
//
//go:noescape
func linCombAVX512(dst, base *float32, n int, coef *float32, src **float32, m int)

// axpy64AVX512 sets y[i] += a·x[i] for i < n, in float64.
//
//go:noescape
func axpy64AVX512(a float64, x, y *float64, n int)

// linComb64AVX512 is linCombAVX512 in float64.
//
//go:noescape
func linComb64AVX512(dst, base *float64, n int, coef *float64, src **float64, m int)
