package integrate

import (
	"testing"

	"golang.org/x/sys/cpu"
)

// forEachErrScale runs f once with errScaleKernels set to each of: the
// kernel path's, and every assembly version this CPU runs whatever the
// path ("avx2" where it has AVX2 and FMA, "avx512" where it has the
// AVX-512 of the avx512 path).
func forEachErrScale(t *testing.T, f func(t *testing.T)) {
	vs := []string{errScaleKernels}
	x := &cpu.X86
	if asmBuilt && x.HasAVX2 && x.HasFMA && errScaleKernels != "avx2" {
		vs = append(vs, "avx2")
	}
	if asmBuilt && x.HasAVX2 && x.HasFMA && x.HasAVX512F && x.HasAVX512CD && x.HasAVX512BW && x.HasAVX512DQ && x.HasAVX512VL && errScaleKernels != "avx512" {
		vs = append(vs, "avx512")
	}
	for _, v := range vs {
		t.Run(v, func(t *testing.T) {
			old := errScaleKernels
			errScaleKernels = v
			defer func() { errScaleKernels = old }()
			f(t)
		})
	}
}
