package odeblock

import (
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// kernelVariants returns the kernels of this package that the tests run:
// the kernel path's (adamKernels), and every assembly version this CPU
// runs whatever the path ("avx2" where it has AVX2 and FMA, "avx512" where
// it has the AVX-512 of the avx512 path).
func kernelVariants() []string {
	vs := []string{adamKernels}
	x := &cpu.X86
	if asmBuilt && x.HasAVX2 && x.HasFMA && adamKernels != "avx2" {
		vs = append(vs, "avx2")
	}
	if asmBuilt && x.HasAVX2 && x.HasFMA && x.HasAVX512F && x.HasAVX512CD && x.HasAVX512BW && x.HasAVX512DQ && x.HasAVX512VL && adamKernels != "avx512" {
		vs = append(vs, "avx512")
	}
	return vs
}

// forEachKernels runs f once for each of kernelVariants, with adamKernels
// set to it.
func forEachKernels(t *testing.T, f func(t *testing.T)) {
	for _, v := range kernelVariants() {
		t.Run(v, func(t *testing.T) {
			old := adamKernels
			adamKernels = v
			defer func() { adamKernels = old }()
			f(t)
		})
	}
}

// TestNorm2AVX2: norm2AVX2 and norm2F64AVX2 equal norm2AVX512 and
// norm2F64AVX512 bit for bit, at every length 0–40 and some long ones,
// where the CPU runs both.
func TestNorm2AVX2(t *testing.T) {
	vs := kernelVariants()
	if len(vs) < 3 && !(len(vs) == 2 && vs[0] != "go") {
		t.Skip("this CPU does not run both the AVX2 and the AVX-512 kernels")
	}
	rng := rand.New(rand.NewPCG(52, 1))
	for n := 1; n <= 1030; n++ {
		if n > 40 && n != 63 && n != 64 && n != 65 && n != 1000 && n != 1030 {
			continue
		}
		x32, x64 := make([]float32, n+17), make([]float64, n+17)
		for i := range x32 {
			x32[i] = float32(rng.NormFloat64() * math.Pow(2, float64(rng.IntN(30)-15)))
			x64[i] = rng.NormFloat64() * math.Pow(2, float64(rng.IntN(30)-15))
			if i >= n {
				x32[i], x64[i] = float32(math.NaN()), math.NaN()
			}
		}
		if a, b := norm2AVX2(&x32[0], n), norm2AVX512(&x32[0], n); math.Float64bits(a) != math.Float64bits(b) {
			t.Fatalf("float32 n=%d: norm2AVX2 = %v, norm2AVX512 = %v", n, a, b)
		}
		if a, b := norm2F64AVX2(&x64[0], n), norm2F64AVX512(&x64[0], n); math.Float64bits(a) != math.Float64bits(b) {
			t.Fatalf("float64 n=%d: norm2F64AVX2 = %v, norm2F64AVX512 = %v", n, a, b)
		}
	}
}
