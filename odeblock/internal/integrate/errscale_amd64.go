//go:build !purego

package integrate

import "github.com/adamnode/adamnode/tensor"

// errScaleAVX reports whether errScaleAVX512 and allFiniteAVX512 run: on
// the avx512 kernel path (tensor.KernelPath; on avx2 and generic the Go
// loops run).
var errScaleAVX = tensor.KernelPath() == "avx512"

// errScaleAVX512 is errorRatioRange's scaling loop on n float32 elements.
//
//go:noescape
func errScaleAVX512(e, y0, y1 *float32, n int, atol, rtol float32)

// allFiniteAVX512 reports whether x[:n] has no NaN or ±Inf.
//
//go:noescape
func allFiniteAVX512(x *float32, n int) bool

// errScale64AVX512 is errScaleAVX512 on n float64 elements.
//
//go:noescape
func errScale64AVX512(e, y0, y1 *float64, n int, atol, rtol float64)

// allFinite64AVX512 reports whether x[:n] has no NaN or ±Inf.
//
//go:noescape
func allFinite64AVX512(x *float64, n int) bool
