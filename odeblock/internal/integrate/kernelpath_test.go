package integrate

import (
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

// TestErrScaleFollowsKernelPath: the AVX-512 error scaling and finiteness
// check run exactly on the avx512 kernel path, the one decision
// tensor.KernelPath reports (make test forces the slower ones through
// ADAMNODE_CPU).
func TestErrScaleFollowsKernelPath(t *testing.T) {
	if want := tensor.KernelPath() == "avx512"; errScaleAVX != want {
		t.Errorf("kernel path %s: errScaleAVX = %t, want %t", tensor.KernelPath(), errScaleAVX, want)
	}
}
