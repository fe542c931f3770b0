//go:build amd64 && !purego

package sgemm

import "golang.org/x/sys/cpu"

// The micro-kernels of kernel_amd64.s. a and b point to packed panels of
// k steps (12 values of A, nr of B each); c to the tile's first element,
// with row stride ldc. Only the first rows rows and the columns set in mask
// are stored; C is not read when beta is 0. k must be at least 1.

//go:noescape
func kern12x32(k int, a, b, c *float32, ldc int, alpha, beta float32, rows int, mask uint32)

//go:noescape
func kern12x16(k int, a, b, c *float32, ldc int, alpha, beta float32, rows int, mask uint32)

// hasKernel reports whether this CPU runs the AVX-512 kernels
// (GODEBUG=cpu.avx512f=off takes them away).
var hasKernel = cpu.X86.HasAVX512F
