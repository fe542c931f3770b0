package integrate

import (
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

// TestErrScaleFollowsKernelPath: the error scaling and finiteness check
// follow the one decision tensor.KernelPath reports: the AVX-512 kernels
// on avx512, the AVX2 ones on avx2, the Go loops on generic and neon (make
// test forces the slower ones through ADAMNODE_CPU).
func TestErrScaleFollowsKernelPath(t *testing.T) {
	want := map[string]string{"avx512": "avx512", "avx2": "avx2"}[tensor.KernelPath()]
	if want == "" {
		want = "go"
	}
	if errScaleKernels != want {
		t.Errorf("kernel path %s: errScaleKernels = %q, want %q", tensor.KernelPath(), errScaleKernels, want)
	}
}
