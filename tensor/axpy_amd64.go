//go:build !purego

package tensor

import "github.com/adamnode/adamnode/tensor/internal/isa"

// axpyKernels names the slice kernels that run (AxpySlice, AddColumnSums,
// SumSlice, LinearCombination and the float64 ReLU and LeakyReLU):
// "avx512" (axpy_amd64.s, axpy64_amd64.s, relu64_amd64.s) on the avx512
// kernel path, "avx2" (axpy_avx2_amd64.s: the same operations, rounded
// alike) on avx2, "go" on generic.
var axpyKernels = func() string {
	switch isa.Current() {
	case isa.AVX512:
		return "avx512"
	case isa.AVX2:
		return "avx2"
	}
	return "go"
}()

// axpyAVX reports whether the slice kernels run in assembly (AVX-512 or
// AVX2); axpy512 whether in AVX-512.
var (
	axpyAVX = axpyKernels != "go"
	axpy512 = axpyKernels == "avx512"
)

// axpyAsm sets y[i] += a·x[i] for i < n.
func axpyAsm(a float32, x, y *float32, n int) {
	if axpy512 {
		axpyAVX512(a, x, y, n)
	} else {
		axpyAVX2(a, x, y, n)
	}
}

// colSumsAsm sets dst[j] += Σ_i x[i·cols+j] for j < cols, i < rows.
func colSumsAsm(dst, x *float32, rows, cols int) {
	if axpy512 {
		colSumsAVX512(dst, x, rows, cols)
	} else {
		colSumsAVX2(dst, x, rows, cols)
	}
}

// sumAsm returns Σ x[i] for i < n, summed in float64.
func sumAsm(x *float32, n int) float64 {
	if axpy512 {
		return sumAVX512(x, n)
	}
	return sumAVX2(x, n)
}

// linCombAsm is linCombAVX512 or linCombAVX2.
func linCombAsm(dst, base *float32, n int, coef *float32, src **float32, m int) {
	if axpy512 {
		linCombAVX512(dst, base, n, coef, src, m)
	} else {
		linCombAVX2(dst, base, n, coef, src, m)
	}
}

// axpy64Asm sets y[i] += a·x[i] for i < n, in float64.
func axpy64Asm(a float64, x, y *float64, n int) {
	if axpy512 {
		axpy64AVX512(a, x, y, n)
	} else {
		axpy64AVX2(a, x, y, n)
	}
}

// linComb64Asm is linComb64AVX512 or linComb64AVX2.
func linComb64Asm(dst, base *float64, n int, coef *float64, src **float64, m int) {
	if axpy512 {
		linComb64AVX512(dst, base, n, coef, src, m)
	} else {
		linComb64AVX2(dst, base, n, coef, src, m)
	}
}

// relu64Asm is relu64AVX512 or relu64AVX2.
func relu64Asm(z, x []float64) {
	if axpy512 {
		relu64AVX512(z, x)
	} else {
		relu64AVX2(z, x)
	}
}

// leaky64Asm is leaky64AVX512 or leaky64AVX2.
func leaky64Asm(z, x []float64, slope float64) {
	if axpy512 {
		leaky64AVX512(z, x, slope)
	} else {
		leaky64AVX2(z, x, slope)
	}
}

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

// The AVX2 versions (axpy_avx2_amd64.s), each equal to its AVX-512 kernel
// bit for bit: the same operations in the same order (sumAVX2 and
// colSumsAVX2 their lanes' sums too), on 256-bit registers.

//go:noescape
func axpyAVX2(a float32, x, y *float32, n int)

//go:noescape
func colSumsAVX2(dst, x *float32, rows, cols int)

//go:noescape
func sumAVX2(x *float32, n int) float64

//go:noescape
func linCombAVX2(dst, base *float32, n int, coef *float32, src **float32, m int)

//go:noescape
func axpy64AVX2(a float64, x, y *float64, n int)

//go:noescape
func linComb64AVX2(dst, base *float64, n int, coef *float64, src **float64, m int)

//go:noescape
func relu64AVX2(z, x []float64)

//go:noescape
func leaky64AVX2(z, x []float64, slope float64)
