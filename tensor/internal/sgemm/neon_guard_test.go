//go:build linux

package sgemm

import (
	"fmt"
	"runtime/debug"
	"testing"

	"github.com/adamnode/adamnode/tensor/internal/gemm"
	"github.com/adamnode/adamnode/tensor/internal/gemm/gemmtest"
)

// TestNEONKernelsStayInside runs each NEON kernel with every row of C and
// the bias ending right before a page it may not touch, on a whole tile
// (stored by vectors) and partial ones (stored element by element), and
// every step of A (the kernel's rows) and of B (its width: the kernels
// read whole vectors of packed panels) ending so too: no load or store
// may reach past them (a fault fails the test).
func TestNEONKernelsStayInside(t *testing.T) {
	if !hasNEON {
		t.Skip("no NEON kernels")
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	for _, kn := range neonKernels {
		width := 4 * kn.NV
		for _, w := range []int{1, width - 1, width} {
			for _, rows := range []int{kn.RK, kn.RK - 1} {
				for _, beta := range []float32{0, 1} {
					const k = 5
					a, ka, freeA := guarded(t, k, kn.RK)
					b, ldb, freeB := guarded(t, k, width)
					c, ldc, freeC := guarded(t, rows, w)
					bias, _, freeBias := guarded(t, 1, w)
					gemmtest.Fill(a, k, kn.RK, ka, 1)
					gemmtest.Fill(b, k, width, ldb, 2)
					gemmtest.Fill(bias, 1, w, 0, 3)
					gemmtest.Fill(c, rows, w, ldc, 4)
					var bp *float32
					if beta == 0 {
						bp = &bias[0]
					}
					label := fmt.Sprintf("%s, %d rows, %d columns, beta %v", kn.Name, rows, w, beta)
					gemmtest.CheckGuardedCall(t, label, func() { kn.Kern(k, &a[0], ka, &b[0], ldb, &c[0], ldc, 1, beta, rows, gemm.Lanes(w), bp) }, c, rows, w, ldc, k, beta)
					freeA()
					freeB()
					freeC()
					freeBias()
				}
			}
		}
	}
}
