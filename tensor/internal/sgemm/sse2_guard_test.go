//go:build linux

package sgemm

import (
	"runtime/debug"
	"testing"

	"github.com/adamnode/adamnode/tensor/internal/gemm"
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
		if kn.name == "sse2Narrow" {
			ws = []int{1, 7}
		}
		for _, w := range ws {
			for _, beta := range []float32{0, 1} {
				const k = 5
				a, _, freeA := guarded(t, 1, k*mrSSE2)
				b, _, freeB := guarded(t, 1, k*nrSSE2)
				c, ldc, freeC := guarded(t, mrSSE2, w)
				bias, _, freeBias := guarded(t, 1, w)
				fill(a, 1, k*mrSSE2, 0, 1)
				fill(b, 1, k*nrSSE2, 0, 2)
				fill(bias, 1, w, 0, 3)
				fill(c, mrSSE2, w, ldc, 4)
				var bp *float32
				if beta == 0 {
					bp = &bias[0]
				}
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("%s, %d columns, beta %v: %v", kn.name, w, beta, r)
						}
					}()
					kn.kern(k, &a[0], mrSSE2, &b[0], nrSSE2, &c[0], ldc, 1, beta, mrSSE2, gemm.Lanes(w), bp)
				}()
				want := float32(2*k + 3) // 1·2 summed k times, plus the bias
				if beta != 0 {
					want = 2*k + 4 // plus C
				}
				for i := range mrSSE2 {
					for j := range w {
						if v := c[i*ldc+j]; v != want {
							t.Fatalf("%s, %d columns, beta %v: C[%d,%d] = %v, want %v", kn.name, w, beta, i, j, v, want)
						}
					}
				}
				freeA()
				freeB()
				freeC()
				freeBias()
			}
		}
	}
}
