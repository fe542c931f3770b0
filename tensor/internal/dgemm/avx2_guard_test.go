//go:build linux

package dgemm

import (
	"runtime/debug"
	"syscall"
	"testing"
	"unsafe"

	"github.com/adamnode/adamnode/tensor/internal/gemm"
)

// guarded returns rows runs of n float64s (n at most a page's), ld apart
// in the returned slice, each ending right before a page that no access
// is allowed to, and a function unmapping them.
func guarded(t *testing.T, rows, n int) (s []float64, ld int, free func()) {
	t.Helper()
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 2*rows*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	for r := range rows {
		if err := syscall.Mprotect(mem[(2*r+1)*page:(2*r+2)*page], syscall.PROT_NONE); err != nil {
			t.Fatal(err)
		}
	}
	ld = 2 * page / 8
	start := page - 8*n
	s = unsafe.Slice((*float64)(unsafe.Pointer(&mem[start])), (rows-1)*ld+n)
	return s, ld, func() { syscall.Munmap(mem) }
}

// fill sets rows runs of n values, ld apart, to v.
func fill(s []float64, rows, n, ld int, v float64) {
	for r := range rows {
		for j := range n {
			s[r*ld+j] = v
		}
	}
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
		width := 4 * kn.nv
		for _, w := range []int{width - 3, width - 1} {
			for _, beta := range []float64{0, 1} {
				const k = 5
				var a []float64
				var ka int
				var freeA func()
				if kn.strided {
					a, ka, freeA = guarded(t, kn.rk, k)
				} else {
					a, ka, freeA = guarded(t, k, kn.rk)
				}
				b, ldb, freeB := guarded(t, k, w)
				c, ldc, freeC := guarded(t, kn.rk, w)
				bias, _, freeBias := guarded(t, 1, w)
				if kn.strided {
					fill(a, kn.rk, k, ka, 1)
				} else {
					fill(a, k, kn.rk, ka, 1)
				}
				fill(b, k, w, ldb, 2)
				fill(bias, 1, w, 0, 3)
				fill(c, kn.rk, w, ldc, 4)
				var bp *float64
				if beta == 0 {
					bp = &bias[0]
				}
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("%s, %d columns, beta %v: %v", kn.name, w, beta, r)
						}
					}()
					kn.kern(k, &a[0], ka, &b[0], ldb, &c[0], ldc, 1, beta, kn.rk, gemm.Lanes(w), bp)
				}()
				want := float64(2*k + 3) // 1·2 summed k times, plus the bias
				if beta != 0 {
					want = 2*k + 4 // plus C
				}
				for i := range kn.rk {
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
