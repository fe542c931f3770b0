//go:build !amd64 || purego

package sgemm

// hasKernel is false: without the AVX-512 kernels Sgemm is gonum's.
const hasKernel = false

func kern12x32(k int, a, b, c *float32, ldc int, alpha, beta float32, rows int, mask uint32) {
	panic("sgemm: no kernel")
}

func kern12x16(k int, a, b, c *float32, ldc int, alpha, beta float32, rows int, mask uint32) {
	panic("sgemm: no kernel")
}
