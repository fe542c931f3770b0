//go:build !amd64 || purego

package dgemm

// hasAVX2 is false: there are no AVX2 kernels to run.
const hasAVX2 = false

func avx2P8(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no AVX2 kernel")
}

func avx2P4(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no AVX2 kernel")
}

func avx2S8(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no AVX2 kernel")
}

func avx2S4(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no AVX2 kernel")
}

func avx2P8r2(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no AVX2 kernel")
}

func avx2P4r2(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no AVX2 kernel")
}

func avx2P8r4(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no AVX2 kernel")
}

func avx2P4r4(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no AVX2 kernel")
}

// fmaPeakAVX2 is the amd64 FMA loop; elsewhere there is none to measure.
func fmaPeakAVX2(n int) {}

func avx2Rows(d *float64, s int, src *float64, ld int, kb int, lmask, smask uint32) {
	panic("dgemm: no AVX2 kernel")
}

func avx2Trans(d *float64, ds int, src *float64, ss int, rows, cols int, lmask, smask uint32) {
	panic("dgemm: no AVX2 kernel")
}
