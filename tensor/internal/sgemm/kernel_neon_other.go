//go:build !arm64 || purego

package sgemm

// hasNEON is false: there are no NEON kernels to run.
const hasNEON = false

func neonP8(k int, a *float32, ka int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32) {
	panic("sgemm: no NEON kernel")
}

func neonP4(k int, a *float32, ka int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32) {
	panic("sgemm: no NEON kernel")
}

func neonP8r4(k int, a *float32, ka int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32) {
	panic("sgemm: no NEON kernel")
}

func neonP8r8(k int, a *float32, ka int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32) {
	panic("sgemm: no NEON kernel")
}

func neonP4r4(k int, a *float32, ka int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32) {
	panic("sgemm: no NEON kernel")
}

func neonP4r8(k int, a *float32, ka int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32) {
	panic("sgemm: no NEON kernel")
}

// neonPeak is the arm64 FMA loop; elsewhere there is none to measure.
func neonPeak(n int) {}
