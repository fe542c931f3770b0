//go:build !amd64 || purego

package tensor

// axpyKernels is "go" and axpyAVX false: the slice kernels run their Go
// loops (AxpySlice goes through gonum on amd64, through axpyGo elsewhere).
const (
	axpyKernels = "go"
	axpyAVX     = false
	axpy512     = false
)

func noSliceAsm() { panic("tensor: no assembly in this build") }

func axpyAsm(a float32, x, y *float32, n int)    { noSliceAsm() }
func colSumsAsm(dst, x *float32, rows, cols int) { noSliceAsm() }
func sumAsm(x *float32, n int) float64           { noSliceAsm(); return 0 }
func axpy64Asm(a float64, x, y *float64, n int)  { noSliceAsm() }
func relu64Asm(z, x []float64)                   { noSliceAsm() }
func leaky64Asm(z, x []float64, slope float64)   { noSliceAsm() }
func reluBwd64Asm(z, g, y []float64, acc bool)   { noSliceAsm() }
func leakyBwd64Asm(z, g, y []float64, slope float64, acc bool) {
	noSliceAsm()
}
func linCombAsm(dst, base *float32, n int, coef *float32, src **float32, m int) {
	noSliceAsm()
}
func linComb64Asm(dst, base *float64, n int, coef *float64, src **float64, m int) {
	noSliceAsm()
}
