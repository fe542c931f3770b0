//go:build !purego

package integrate

import "github.com/adamnode/adamnode/tensor"

// errScaleKernels names the kernels of this file that run: "avx512"
// (errscale_amd64.s) on the avx512 kernel path (tensor.KernelPath), "avx2"
// (errscale_avx2_amd64.s, the same operations rounded alike) on avx2, "go"
// (the Go loops) on generic. Tests set it to run each kernel the CPU has.
var errScaleKernels = func() string {
	switch p := tensor.KernelPath(); p {
	case "avx512", "avx2":
		return p
	}
	return "go"
}()

// asmBuilt is true: this build has the assembly kernels.
const asmBuilt = true

// errScaleAsm runs errScaleAVX512 or errScaleAVX2.
func errScaleAsm(e, y0, y1 *float32, n int, atol, rtol float32) {
	if errScaleKernels == "avx512" {
		errScaleAVX512(e, y0, y1, n, atol, rtol)
	} else {
		errScaleAVX2(e, y0, y1, n, atol, rtol)
	}
}

// errScale64Asm runs errScale64AVX512 or errScale64AVX2.
func errScale64Asm(e, y0, y1 *float64, n int, atol, rtol float64) {
	if errScaleKernels == "avx512" {
		errScale64AVX512(e, y0, y1, n, atol, rtol)
	} else {
		errScale64AVX2(e, y0, y1, n, atol, rtol)
	}
}

// allFiniteAsm runs allFiniteAVX512 or allFiniteAVX2.
func allFiniteAsm(x *float32, n int) bool {
	if errScaleKernels == "avx512" {
		return allFiniteAVX512(x, n)
	}
	return allFiniteAVX2(x, n)
}

// allFinite64Asm runs allFinite64AVX512 or allFinite64AVX2.
func allFinite64Asm(x *float64, n int) bool {
	if errScaleKernels == "avx512" {
		return allFinite64AVX512(x, n)
	}
	return allFinite64AVX2(x, n)
}

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

// The AVX2 versions (errscale_avx2_amd64.s).

//go:noescape
func errScaleAVX2(e, y0, y1 *float32, n int, atol, rtol float32)

//go:noescape
func allFiniteAVX2(x *float32, n int) bool

//go:noescape
func errScale64AVX2(e, y0, y1 *float64, n int, atol, rtol float64)

//go:noescape
func allFinite64AVX2(x *float64, n int) bool
