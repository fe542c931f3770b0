//go:build !amd64 || purego

package sgemm

// hasKernel is false: without the AVX-512 kernels Sgemm is gonum's.
const hasKernel = false

func kernP32(k int, a *float32, ka int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32) {
	panic("sgemm: no kernel")
}

func kernP16(k int, a *float32, ka int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32) {
	panic("sgemm: no kernel")
}

func kernS32(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32) {
	panic("sgemm: no kernel")
}

func kernS16(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32) {
	panic("sgemm: no kernel")
}

func kernP32r4(k int, a *float32, ka int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32) {
	panic("sgemm: no kernel")
}

func kernP16r4(k int, a *float32, ka int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32) {
	panic("sgemm: no kernel")
}

func kernP32r8(k int, a *float32, ka int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32) {
	panic("sgemm: no kernel")
}

func kernP16r8(k int, a *float32, ka int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32) {
	panic("sgemm: no kernel")
}

// fmaPeak is the amd64 FMA loop; elsewhere there is none to measure.
func fmaPeak(n int) {}

func packRows(d *float32, s int, src *float32, ld int, kb int, lmask, smask uint32) {
	panic("sgemm: no kernel")
}

func trans16(d *float32, ds int, src *float32, ss int, rows, cols int, lmask, smask uint32) {
	panic("sgemm: no kernel")
}
