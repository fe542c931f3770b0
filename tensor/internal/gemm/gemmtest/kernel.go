// Package gemmtest holds the test helpers that the micro-kernel tests of
// packages sgemm (float32) and dgemm (float64) share: a kernel's tile
// checked against float64 sums (RunKernel) and, on Linux, operands that
// end right before a page no access may reach (Guarded, Stores).
package gemmtest

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/adamnode/adamnode/tensor/internal/gemm"
)

// Kernel is one micro-kernel and its shape: Strided reads A by rows in
// place (a[i·lda + p]), else a[p·ka + i]; NV vectors of B of the
// package's width, RK rows computed.
type Kernel[T gemm.Float] struct {
	Name    string
	Kern    gemm.Kernel[T]
	Strided bool
	NV, RK  int
}

// Case is one call of a kernel: Rows rows and W columns stored, K steps,
// the scalars, with a bias or not, B's row stride (the panel's width when
// packed, wider in place) and A's (KA) and C's.
type Case[T gemm.Float] struct {
	Rows, W, K  int
	Alpha, Beta T
	Bias        bool
	LDB, KA     int
	LDC         int
}

// pad is the number of elements of 64 bytes: the slack past B, C and the
// bias, so that a vector load past the tile stays in the slice.
func pad[T gemm.Float]() int {
	var z T
	return 64 / int(unsafe.Sizeof(z))
}

// bits is x's bit pattern, to compare NaNs exactly.
func bits[T gemm.Float](x T) uint64 {
	if f, ok := any(x).(float32); ok {
		return uint64(math.Float32bits(f))
	}
	return math.Float64bits(float64(x))
}

// eps is the unit roundoff of T: 2⁻²³ for float32, 2⁻⁵² for float64.
func eps[T gemm.Float]() float64 {
	if unsafe.Sizeof(T(0)) == 4 {
		return 0x1p-23
	}
	return 0x1p-52
}

// RunKernel calls kn on random operands for kc and checks the stored tile
// against float64 sums, within (K+3)·eps of the sum of the terms'
// magnitudes, and that nothing else of C changed. The operands' elements
// that the tile does not use (the rows past Rows, the columns past W) are
// NaN, and so is C when Beta is 0: none may reach a stored element.
func RunKernel[T gemm.Float](t *testing.T, rng *rand.Rand, kn Kernel[T], kc Case[T]) {
	t.Helper()
	nan := T(math.NaN())
	// A: RK rows (all must lie in the slice), row i's step p at
	// a[p·KA + i], or a[i·KA + p] when strided.
	a := make([]T, kc.KA*max(kc.K, kn.RK)+kc.K+kn.RK)
	at := func(i, p int) int {
		if kn.Strided {
			return i*kc.KA + p
		}
		return p*kc.KA + i
	}
	for i := range a {
		a[i] = nan
	}
	for i := range kc.Rows {
		for p := range kc.K {
			a[at(i, p)] = T(rng.NormFloat64())
		}
	}
	b := make([]T, kc.LDB*kc.K+pad[T]())
	for i := range b {
		b[i] = nan
	}
	for p := range kc.K {
		for j := range kc.W {
			b[p*kc.LDB+j] = T(rng.NormFloat64())
		}
	}
	c := make([]T, kc.LDC*kn.RK+pad[T]())
	for i := range c {
		c[i] = T(rng.NormFloat64())
		if kc.Beta == 0 && i%kc.LDC < kc.W {
			c[i] = nan
		}
	}
	c0 := append([]T(nil), c...)
	var bias []T
	var bp *T
	if kc.Bias {
		bias = make([]T, pad[T]())
		for j := range bias {
			bias[j] = nan
			if j < kc.W {
				bias[j] = T(rng.NormFloat64())
			}
		}
		bp = &bias[0]
	}
	kn.Kern(kc.K, &a[0], kc.KA, &b[0], kc.LDB, &c[0], kc.LDC, kc.Alpha, kc.Beta, kc.Rows, gemm.Lanes(kc.W), bp)
	for idx := range c {
		i, j := idx/kc.LDC, idx%kc.LDC
		if i >= kc.Rows || j >= kc.W {
			if bits(c[idx]) != bits(c0[idx]) {
				t.Fatalf("%s %+v: c[%d] (row %d, column %d) outside the tile changed: %v, was %v", kn.Name, kc, idx, i, j, c[idx], c0[idx])
			}
			continue
		}
		var s, abs float64
		for p := range kc.K {
			x := float64(a[at(i, p)]) * float64(b[p*kc.LDB+j])
			s += x
			abs += math.Abs(x)
		}
		want := float64(kc.Alpha) * s
		abs *= math.Abs(float64(kc.Alpha))
		if kc.Beta != 0 {
			want += float64(kc.Beta) * float64(c0[idx])
			abs += math.Abs(float64(kc.Beta) * float64(c0[idx]))
		}
		if kc.Bias {
			want += float64(bias[j])
			abs += math.Abs(float64(bias[j]))
		}
		if got := float64(c[idx]); math.IsNaN(got) || math.Abs(got-want) > float64(kc.K+3)*eps[T]()*abs {
			t.Fatalf("%s %+v: C[%d,%d] = %v, want %v", kn.Name, kc, i, j, got, want)
		}
	}
}
