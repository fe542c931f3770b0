//go:build !amd64 || purego

package dgemm

// hasKernel is false: without the AVX-512 kernels Dgemm is gonum's.
const hasKernel = false

func kernP16(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no kernel")
}

func kernP8(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no kernel")
}

func kernS16(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no kernel")
}

func kernS8(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no kernel")
}

func kernP16r4(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no kernel")
}

func kernP8r4(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no kernel")
}

func kernP16r8(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no kernel")
}

func kernP8r8(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no kernel")
}

func kernP4(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no kernel")
}

func kernS4(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no kernel")
}

func kernP4r4(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no kernel")
}

func kernP4r8(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no kernel")
}

// fmaPeak is the amd64 FMA loop; elsewhere there is none to measure.
func fmaPeak(n int) {}
