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
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	for _, rows := range []int{1, 3, 4} {
		for _, cols := range []int{1, 3, 4} {
			for _, lanes := range []int{1, 3, 4} {
				src, ss, freeSrc := guarded(t, rows, cols)
				d, ds, freeD := guarded(t, cols, lanes)
				for r := range rows {
					for c := range cols {
						src[r*ss+c] = float64(10*r + c + 1)
					}
				}
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("rows %d, cols %d, %d lanes: %v", rows, cols, lanes, r)
						}
					}()
					avx2Trans(&d[0], ds, &src[0], ss, rows, cols, gemm.Lanes(cols), gemm.Lanes(lanes))
				}()
				for c := range cols {
					for r := range lanes {
						want := float64(0)
						if r < rows {
							want = float64(10*r + c + 1)
						}
						if got := d[c*ds+r]; got != want {
							t.Fatalf("rows %d, cols %d, %d lanes: d[%d, %d] = %v, want %v", rows, cols, lanes, c, r, got, want)
						}
					}
				}
				freeSrc()
				freeD()
			}
		}
	}
}

// TestAVX2RowsStaysInside runs avx2Rows with every step of the source (w
// values) ending right before a page it may not touch, and the panel (kb
// steps of s) too.
func TestAVX2RowsStaysInside(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2 with FMA")
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	const kb = 3
	for _, s := range []int{mrAVX2, 4, nrAVX2} {
		for w := 1; w <= s; w++ {
			src, ld, freeSrc := guarded(t, kb, w)
			d, _, freeD := guarded(t, 1, kb*s)
			for p := range kb {
				for l := range w {
					src[p*ld+l] = float64(10*p + l + 1)
				}
			}
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("s %d, w %d: %v", s, w, r)
					}
				}()
				avx2Rows(&d[0], s, &src[0], ld, kb, gemm.Lanes(w), gemm.Lanes(s))
			}()
			for p := range kb {
				for l := range s {
					want := float64(0)
					if l < w {
						want = float64(10*p + l + 1)
					}
					if got := d[p*s+l]; got != want {
						t.Fatalf("s %d, w %d: d[%d, %d] = %v, want %v", s, w, p, l, got, want)
					}
				}
			}
			freeSrc()
			freeD()
		}
	}
}
