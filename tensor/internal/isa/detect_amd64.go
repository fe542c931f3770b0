//go:build amd64 && !purego

package isa

import "golang.org/x/sys/cpu"

// detect returns the fastest path of this CPU, from the features that
// golang.org/x/sys/cpu reads (with the operating system's support for the
// registers; GODEBUG=cpu.avx512f=off and the like take a feature away).
func detect() (Path, string) {
	x := &cpu.X86
	return fastest(features{
		avx2: x.HasAVX2, fma: x.HasFMA,
		avx512f: x.HasAVX512F, avx512cd: x.HasAVX512CD, avx512bw: x.HasAVX512BW,
		avx512dq: x.HasAVX512DQ, avx512vl: x.HasAVX512VL,
	}), "this CPU"
}
