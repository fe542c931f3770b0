package odeblock

import (
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

// TestAdamKernelsFollowKernelPath: the kernels of this package (the
// AdamNODE updates, norm2) follow the one decision tensor.KernelPath
// reports: the AVX-512 ones on avx512, the AVX2 ones on avx2, the Go loops
// on generic and neon, so that ADAMNODE_CPU=avx2 or generic (make test's
// forced runs) takes them away as a CPU without them would.
func TestAdamKernelsFollowKernelPath(t *testing.T) {
	want := map[string]string{"avx512": "avx512", "avx2": "avx2"}[tensor.KernelPath()]
	if want == "" {
		want = "go"
	}
	if adamKernels != want {
		t.Errorf("kernel path %s: adamKernels = %q, want %q", tensor.KernelPath(), adamKernels, want)
	}
}
