//go:build !arm64 || purego

package dgemm

// hasNEON is false: there are no NEON kernels to run.
const hasNEON = false

func neonP8(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no NEON kernel")
}

func neonP4(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no NEON kernel")
}

func neonP2(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no NEON kernel")
}

func neonP8r2(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no NEON kernel")
}

func neonP8r4(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no NEON kernel")
}

func neonP4r2(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no NEON kernel")
}

func neonP4r4(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no NEON kernel")
}

func neonP2r2(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no NEON kernel")
}

func neonP2r4(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no NEON kernel")
}

// neonPeak is the arm64 FMA loop; elsewhere there is none to measure.
func neonPeak(n int) {}
