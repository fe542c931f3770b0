//go:build amd64 && !purego

package dgemm

import "golang.org/x/sys/cpu"

// cpuHasAVX2FMA reports whether the CPU (and the operating system) runs
// AVX2 and FMA, as golang.org/x/sys/cpu reads them.
func cpuHasAVX2FMA() bool { return cpu.X86.HasAVX2 && cpu.X86.HasFMA }
