//go:build linux

package dgemm

import (
	"fmt"
	"runtime/debug"
	"testing"

	"github.com/adamnode/adamnode/tensor/internal/gemm"
	"github.com/adamnode/adamnode/tensor/internal/gemm/gemmtest"
)

// guarded is gemmtest.Guarded for float64.
func guarded(t *testing.T, rows, n int) (s []float64, ld int, free func()) {
	t.Helper()
	return gemmtest.Guarded[float64](t, rows, n)
}

// TestAVX2KernelsStayInside runs each AVX2 kernel on a partial last
// vector with every row of B (in place), of C, of A (a step of a packed
// panel, or a row of A in place) and the bias ending right before a page
// it may not touch: no load or store may reach past the tile's last
// column or A's last value (a fault fails the test), for k that runs the
// unrolled loop's every step and its remainder.
func TestAVX2KernelsStayInside(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2 with FMA")
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	for _, kn := range avx2Kernels {
		width := 4 * kn.NV
		for _, w := range []int{width - 3, width - 1} {
			for _, beta := range []float64{0, 1} {
				const k = 5
				var a []float64
				var ka int
				var freeA func()
				if kn.Strided {
					a, ka, freeA = guarded(t, kn.RK, k)
				} else {
					a, ka, freeA = guarded(t, k, kn.RK)
				}
				b, ldb, freeB := guarded(t, k, w)
				c, ldc, freeC := guarded(t, kn.RK, w)
				bias, _, freeBias := guarded(t, 1, w)
				if kn.Strided {
					gemmtest.Fill(a, kn.RK, k, ka, 1)
				} else {
					gemmtest.Fill(a, k, kn.RK, ka, 1)
				}
				gemmtest.Fill(b, k, w, ldb, 2)
				gemmtest.Fill(bias, 1, w, 0, 3)
				gemmtest.Fill(c, kn.RK, w, ldc, 4)
				var bp *float64
				if beta == 0 {
					bp = &bias[0]
				}
				label := fmt.Sprintf("%s, %d columns, beta %v", kn.Name, w, beta)
				gemmtest.CheckGuardedCall(t, label, func() { kn.Kern(k, &a[0], ka, &b[0], ldb, &c[0], ldc, 1, beta, kn.RK, gemm.Lanes(w), bp) }, c, kn.RK, w, ldc, k, beta)
				freeA()
				freeB()
				freeC()
				freeBias()
			}
		}
	}
}

// TestAVX2TransStaysInside runs avx2Trans with every row of the source
// (cols values) and of the destination (the lanes in smask) ending right
// before a page it may not touch.
func TestAVX2TransStaysInside(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2 with FMA")
	}
	gemmtest.TransStaysInside(t, avx2Trans, []int{1, 3, 4}, []int{1, 3, 4}, []int{1, 3, 4})
}

// TestAVX2RowsStaysInside runs avx2Rows with every step of the source (w
// values) ending right before a page it may not touch, and the panel (kb
// steps of s) too.
func TestAVX2RowsStaysInside(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2 with FMA")
	}
	gemmtest.RowsStaysInside(t, avx2Rows, []int{mrAVX2, 4, nrAVX2})
}
