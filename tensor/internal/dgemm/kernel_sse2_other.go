//go:build !amd64 || purego

package dgemm

// hasSSE2 is false: there is no SSE2 kernel to run.
const hasSSE2 = false

func sse2Kernel(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	panic("dgemm: no SSE2 kernel")
}

func sse2RowsA(d *float64, src *float64, ld int, kb int) { panic("dgemm: no SSE2 kernel") }

func sse2RowsB(d *float64, src *float64, ld int, kb int) { panic("dgemm: no SSE2 kernel") }

func sse2ColsA(d *float64, src *float64, ld int, groups int) { panic("dgemm: no SSE2 kernel") }

func sse2ColsB(d *float64, src *float64, ld int, groups int) { panic("dgemm: no SSE2 kernel") }
