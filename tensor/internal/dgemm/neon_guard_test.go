//go:build linux

package dgemm

import (
	"runtime/debug"
	"testing"

	"github.com/adamnode/adamnode/tensor/internal/gemm"
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
		width := 2 * kn.nv
		for _, w := range []int{1, width - 1, width} {
			for _, rows := range []int{kn.rk, kn.rk - 1} {
				for _, beta := range []float64{0, 1} {
					const k = 5
					a, ka, freeA := guarded(t, k, kn.rk)
					b, ldb, freeB := guarded(t, k, width)
					c, ldc, freeC := guarded(t, rows, w)
					bias, _, freeBias := guarded(t, 1, w)
					fill(a, k, kn.rk, ka, 1)
					fill(b, k, width, ldb, 2)
					fill(bias, 1, w, 0, 3)
					fill(c, rows, w, ldc, 4)
					var bp *float64
					if beta == 0 {
						bp = &bias[0]
					}
					func() {
						defer func() {
							if r := recover(); r != nil {
								t.Errorf("%s, %d rows, %d columns, beta %v: %v", kn.name, rows, w, beta, r)
							}
						}()
						kn.kern(k, &a[0], ka, &b[0], ldb, &c[0], ldc, 1, beta, rows, gemm.Lanes(w), bp)
					}()
					want := float64(2*k + 3) // 1·2 summed k times, plus the bias
					if beta != 0 {
						want = 2*k + 4 // plus C
					}
					for i := range rows {
						for j := range w {
							if v := c[i*ldc+j]; v != want {
								t.Fatalf("%s, %d rows, %d columns, beta %v: C[%d,%d] = %v, want %v", kn.name, rows, w, beta, i, j, v, want)
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
}
