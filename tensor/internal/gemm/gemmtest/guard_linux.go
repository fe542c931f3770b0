package gemmtest

import (
	"runtime/debug"
	"syscall"
	"testing"
	"unsafe"

	"github.com/adamnode/adamnode/tensor/internal/gemm"
)

// Guarded returns rows runs of n elements (n at most a page's), ld apart
// in the returned slice, each ending right before a page that no access
// is allowed to, and a function unmapping them.
func Guarded[T gemm.Float](t *testing.T, rows, n int) (s []T, ld int, free func()) {
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
	var z T
	size := int(unsafe.Sizeof(z))
	ld = 2 * page / size
	start := page - size*n
	s = unsafe.Slice((*T)(unsafe.Pointer(&mem[start])), (rows-1)*ld+n)
	return s, ld, func() { syscall.Munmap(mem) }
}

// Fill sets rows runs of n values, ld apart, to v.
func Fill[T gemm.Float](s []T, rows, n, ld int, v T) {
	for r := range rows {
		for j := range n {
			s[r*ld+j] = v
		}
	}
}

// CheckGuardedCall runs call, a kernel's call of k steps on guarded
// operands filled with A 1, B 2, the bias 3 and C 4 (with
// debug.SetPanicOnFault set, a fault panics), reporting a panic as an
// error under label; then it checks that the tile's first rows rows and w
// columns of c, ldc apart, hold 2k+3 when beta is 0 (the bias added) and
// 2k+4 otherwise (C added).
func CheckGuardedCall[T gemm.Float](t *testing.T, label string, call func(), c []T, rows, w, ldc, k int, beta T) {
	t.Helper()
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s: %v", label, r)
			}
		}()
		call()
	}()
	want := T(2*k + 3) // 1·2 summed k times, plus the bias
	if beta != 0 {
		want = T(2*k + 4) // plus C
	}
	for i := range rows {
		for j := range w {
			if v := c[i*ldc+j]; v != want {
				t.Fatalf("%s: C[%d,%d] = %v, want %v", label, i, j, v, want)
			}
		}
	}
}

// TransStaysInside runs trans (as an AVX2 transpose: d[c·ds + r] =
// src[r·ss + c] for rows rows of cols values, rows past rows written as
// 0, only the lanes in smask stored) for every count of rows, columns and
// lanes stored in the lists, with every row of the source (cols values)
// and of the destination (the lanes stored) ending right before a page it
// may not touch, and checks what it stored.
func TransStaysInside[T gemm.Float](t *testing.T, trans func(d *T, ds int, src *T, ss int, rows, cols int, lmask, smask uint32), rowsList, colsList, lanesList []int) {
	t.Helper()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	for _, rows := range rowsList {
		for _, cols := range colsList {
			for _, lanes := range lanesList {
				src, ss, freeSrc := Guarded[T](t, rows, cols)
				d, ds, freeD := Guarded[T](t, cols, lanes)
				for r := range rows {
					for c := range cols {
						src[r*ss+c] = T(10*r + c + 1)
					}
				}
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("rows %d, cols %d, %d lanes: %v", rows, cols, lanes, r)
						}
					}()
					trans(&d[0], ds, &src[0], ss, rows, cols, gemm.Lanes(cols), gemm.Lanes(lanes))
				}()
				for c := range cols {
					for r := range lanes {
						want := T(0)
						if r < rows {
							want = T(10*r + c + 1)
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

// RowsStaysInside runs copyRows (as an AVX2 row copy: kb steps of w
// values, ld apart in src, into d, s apart, lanes w..s−1 zero) for every
// panel width s in widths and every w from 1 to s, with every step of the
// source (w values) ending right before a page it may not touch and the
// panel (3 steps of s) too, and checks what it stored.
func RowsStaysInside[T gemm.Float](t *testing.T, copyRows func(d *T, s int, src *T, ld int, kb int, lmask, smask uint32), widths []int) {
	t.Helper()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	const kb = 3
	for _, s := range widths {
		for w := 1; w <= s; w++ {
			src, ld, freeSrc := Guarded[T](t, kb, w)
			d, _, freeD := Guarded[T](t, 1, kb*s)
			for p := range kb {
				for l := range w {
					src[p*ld+l] = T(10*p + l + 1)
				}
			}
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("s %d, w %d: %v", s, w, r)
					}
				}()
				copyRows(&d[0], s, &src[0], ld, kb, gemm.Lanes(w), gemm.Lanes(s))
			}()
			for p := range kb {
				for l := range s {
					want := T(0)
					if l < w {
						want = T(10*p + l + 1)
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
