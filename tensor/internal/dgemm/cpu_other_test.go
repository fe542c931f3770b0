//go:build !amd64 || purego

package dgemm

// cpuHasAVX2FMA is false: without amd64 assembly there are no AVX2 kernels.
func cpuHasAVX2FMA() bool { return false }
