//go:build !amd64 || purego

package sgemm

// hasAVX2 is false: there are no AVX2 kernels to run.
const hasAVX2 = false

func avx2P16(k int, a *float32, ka int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32) {
	panic("sgemm: no AVX2 kernel")
}

func avx2P8(k int, a *float32, ka int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32) {
	panic("sgemm: no AVX2 kernel")
}

func avx2S16(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32) {
	panic("sgemm: no AVX2 kernel")
}

func avx2S8(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32) {
	panic("sgemm: no AVX2 kernel")
}

func avx2P16r2(k int, a *float32, ka int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32) {
	panic("sgemm: no AVX2 kernel")
}

func avx2P8r2(k int, a *float32, ka int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32) {
	panic("sgemm: no AVX2 kernel")
}

func avx2P16r4(k int, a *float32, ka int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32) {
	panic("sgemm: no AVX2 kernel")
}

func avx2P8r4(k int, a *float32, ka int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32) {
	panic("sgemm: no AVX2 kernel")
}

// fmaPeakAVX2 is the amd64 FMA loop; elsewhere there is none to measure.
func fmaPeakAVX2(n int) {}

func avx2Trans(d *float32, ds int, src *float32, ss int, rows, cols int, lmask, smask uint32) {
	panic("sgemm: no AVX2 kernel")
}

func avx2Rows(d *float32, s int, src *float32, ld int, kb int, lmask, smask uint32) {
	panic("sgemm: no AVX2 kernel")
}
