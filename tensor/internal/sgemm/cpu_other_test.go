//go:build !amd64 || purego

package sgemm

// cpuHasAVX2FMA is false: without amd64 assembly there are no AVX2 kernels.
func cpuHasAVX2FMA() bool { return false }
