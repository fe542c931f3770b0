//go:build linux

package sgemm

import (
	"fmt"
	"runtime/debug"
	"testing"

	"github.com/adamnode/adamnode/tensor/internal/gemm"
	"github.com/adamnode/adamnode/tensor/internal/gemm/gemmtest"
)

// TestSSE2KernelsStayInside runs both SSE2 kernels with every row of C,
// the bias and the packed panels ending right before a page it may not
// touch: sse2Kernel on whole tiles, sse2Narrow on 1 and 7 columns (a
// fault fails the test), for k that runs the unrolled loop and its
// remainder.
func TestSSE2KernelsStayInside(t *testing.T) {
	if !hasSSE2 {
		t.Skip("no SSE2 kernel in this build")
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	for _, kn := range sse2Kernels {
		ws := []int{nrSSE2}
		if kn.Name == "sse2Narrow" {
			ws = []int{1, 7}
		}
		for _, w := range ws {
			for _, beta := range []float32{0, 1} {
				const k = 5
				a, _, freeA := guarded(t, 1, k*mrSSE2)
				b, _, freeB := guarded(t, 1, k*nrSSE2)
				c, ldc, freeC := guarded(t, mrSSE2, w)
				bias, _, freeBias := guarded(t, 1, w)
				gemmtest.Fill(a, 1, k*mrSSE2, 0, 1)
				gemmtest.Fill(b, 1, k*nrSSE2, 0, 2)
				gemmtest.Fill(bias, 1, w, 0, 3)
				gemmtest.Fill(c, mrSSE2, w, ldc, 4)
				var bp *float32
				if beta == 0 {
					bp = &bias[0]
				}
				label := fmt.Sprintf("%s, %d columns, beta %v", kn.Name, w, beta)
				gemmtest.CheckGuardedCall(t, label, func() { kn.Kern(k, &a[0], mrSSE2, &b[0], nrSSE2, &c[0], ldc, 1, beta, mrSSE2, gemm.Lanes(w), bp) }, c, mrSSE2, w, ldc, k, beta)
				freeA()
				freeB()
				freeC()
				freeBias()
			}
		}
	}
}
