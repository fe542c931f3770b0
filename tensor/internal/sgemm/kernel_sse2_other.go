//go:build !amd64 || purego

package sgemm

// hasSSE2 is false: there is no SSE2 kernel to run.
const hasSSE2 = false

func sse2Kernel(k int, a *float32, ka int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32) {
	panic("sgemm: no SSE2 kernel")
}

func sse2RowsA(d *float32, src *float32, ld int, kb int) { panic("sgemm: no SSE2 kernel") }

func sse2RowsB(d *float32, src *float32, ld int, kb int) { panic("sgemm: no SSE2 kernel") }

func sse2ColsA(d *float32, src *float32, ld int, groups int) { panic("sgemm: no SSE2 kernel") }

func sse2ColsB(d *float32, src *float32, ld int, groups int) { panic("sgemm: no SSE2 kernel") }
