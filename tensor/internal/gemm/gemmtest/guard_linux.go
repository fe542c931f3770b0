package gemmtest

import (
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
