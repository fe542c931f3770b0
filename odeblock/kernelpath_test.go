package odeblock

import (
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

// TestAdamKernelsFollowKernelPath: the AVX-512 kernels of this package
// (the AdamNODE updates, norm2) run exactly on the avx512 kernel path,
// the one decision tensor.KernelPath reports, so that ADAMNODE_CPU=avx2
// or generic (make test's forced runs) takes them away as a CPU without
// AVX-512 would.
func TestAdamKernelsFollowKernelPath(t *testing.T) {
	if want := tensor.KernelPath() == "avx512"; avx512 != want {
		t.Errorf("kernel path %s: avx512 = %t, want %t", tensor.KernelPath(), avx512, want)
	}
}
