//go:build !amd64 || purego

package tensor

// axpyAVX is false: AxpySlice goes through gonum.
const axpyAVX = false

func axpyAVX512(a float32, x, y *float32, n int) { panic("tensor: no assembly in this build") }

func colSumsAVX512(dst, x *float32, rows, cols int) { panic("tensor: no assembly in this build") }

func sumAVX512(x *float32, n int) float64 { panic("tensor: no assembly in this build") }

func linCombAVX512(dst, base *float32, n int, coef *float32, src **float32, m int) {
	panic("tensor: no assembly in this build")
}

func axpy64AVX512(a float64, x, y *float64, n int) { panic("tensor: no assembly in this build") }

func linComb64AVX512(dst, base *float64, n int, coef *float64, src **float64, m int) {
	panic("tensor: no assembly in this build")
}
