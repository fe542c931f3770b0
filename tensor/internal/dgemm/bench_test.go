package dgemm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/adamnode/adamnode/tensor/internal/isa"
)

type impl struct {
	name string
	gemm func(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int)
}

// others are the Dgemms the benchmarks compare with (OpenBLAS is added in
// the build with the tag openblas).
var others = []impl{{"gonum", gonum.Implementation{}.Dgemm}}

type shape struct {
	name    string
	tA, tB  bool
	m, n, k int
}

// benchShapes are the MLP shapes of package sgemm's benchmark (batch ×
// in → out, the passes fwd = x·Wᵀ, dx = g·W, dw = gᵀ·x) that an AdamNODE
// of state 16 and width 64 runs, with a few larger ones.
func benchShapes() []shape {
	var out []shape
	for _, s := range []struct{ batch, in, out int }{
		{512, 17, 64}, {512, 64, 64}, {512, 64, 16}, {256, 64, 64}, {512, 256, 256},
	} {
		name := fmt.Sprintf("%dx%dto%d", s.batch, s.in, s.out)
		out = append(out,
			shape{name + "/fwd", false, true, s.batch, s.out, s.in},
			shape{name + "/dx", false, false, s.batch, s.in, s.out},
			shape{name + "/dw", true, false, s.out, s.in, s.batch})
	}
	return append(out, shape{"square256", false, false, 256, 256, 256})
}

// lds returns the leading dimensions of A and B for s, stored densely.
func (s shape) lds() (lda, ldb int) {
	lda, ldb = s.k, s.n
	if s.tA {
		lda = s.m
	}
	if s.tB {
		ldb = s.k
	}
	return lda, ldb
}

// benchImpls are the Dgemms the benchmarks run: this package's Dgemm
// (asm: the path isa.Current chose, ADAMNODE_CPU=avx2 forcing the AVX2
// kernels), the AVX2 and SSE2 drivers where the CPU runs them and Dgemm
// does not (avx2, sse2), the NEON driver likewise (neon: under ADAMNODE_CPU=generic on
// arm64), and the others. It prints the kernel path that asm runs as a
// configuration line of the benchmark format ("kernelpath: neon"), which
// benchstat keeps with the results (a parent benchmark's b.Log is not
// printed).
func benchImpls() []impl {
	fmt.Printf("kernelpath: %v\n", isa.Current())
	impls := []impl{{"asm", Dgemm}}
	if hasAVX2 && active != driverAVX2 {
		impls = append(impls, impl{"avx2", driverAVX2.Gemm})
	}
	if hasSSE2 && active != driverSSE2 {
		impls = append(impls, impl{"sse2", driverSSE2.Gemm})
	}
	if hasNEON && active != driverNEON {
		impls = append(impls, impl{"neon", driverNEON.Gemm})
	}
	return append(impls, others...)
}

// BenchmarkDgemm runs each shape by each of benchImpls, in GFLOP/s.
func BenchmarkDgemm(b *testing.B) {
	impls := benchImpls()
	for _, s := range benchShapes() {
		rng := rand.New(rand.NewPCG(1, 1))
		lda, ldb := s.lds()
		a, bb, c := randSlice(rng, s.m*s.k), randSlice(rng, s.k*s.n), make([]float64, s.m*s.n)
		for _, im := range impls {
			b.Run(s.name+"/"+im.name, func(b *testing.B) {
				for b.Loop() {
					im.gemm(tr(s.tA), tr(s.tB), s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n)
				}
				b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkDgemmAlternating runs each shape by every implementation of
// BenchmarkDgemm in turn, 41 rounds of one call each (or as many calls as
// make 6·10⁷ flops), and reports each one's median GFLOP/s as the metric
// <name>-GFLOP/s. On a shared machine whose speed moves from second to
// second, the ratios of these medians are steadier than those of
// BenchmarkDgemm's runs one after another. Run it once a shape:
// -benchtime 1x.
func BenchmarkDgemmAlternating(b *testing.B) {
	impls := benchImpls()
	const rounds = 41
	for _, s := range benchShapes() {
		b.Run(s.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			lda, ldb := s.lds()
			a, bb, c := randSlice(rng, s.m*s.k), randSlice(rng, s.k*s.n), make([]float64, s.m*s.n)
			flops := 2 * float64(s.m*s.n*s.k)
			calls := max(1, int(6e7/flops))
			rates := make([][]float64, len(impls))
			for b.Loop() {
				for i := range rates {
					rates[i] = rates[i][:0]
				}
				for range rounds {
					for i, im := range impls {
						t0 := time.Now()
						for range calls {
							im.gemm(tr(s.tA), tr(s.tB), s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n)
						}
						rates[i] = append(rates[i], flops*float64(calls)/time.Since(t0).Seconds()/1e9)
					}
				}
			}
			for i, im := range impls {
				slices.Sort(rates[i])
				b.ReportMetric(rates[i][rounds/2], im.name+"-GFLOP/s")
			}
		})
	}
}

// BenchmarkFMAPeak measures the core's float64 FMA throughput on registers
// (no loads): the ceiling of any DGEMM here, on ZMM registers (avx512) and
// on YMM ones (avx2, the AVX2 kernels' ceiling), on arm64's V registers
// (neon, the NEON kernels' ceiling). On a shared 2-core AMD EPYC
// Zen 4 of 2026-11: 57.0 GFLOP/s on one core (median of 9; package sgemm's
// float32 peak 108.3, half of it 54), the kernels 47–50 at the 64-wide MLP
// shapes, 34–39 where C is 17 wide.
func BenchmarkFMAPeak(b *testing.B) {
	const rounds = 1 << 16
	for _, p := range []struct {
		name  string
		ok    bool
		peak  func(int)
		flops float64 // a round's
	}{{"avx512", hasKernel, fmaPeak, 192}, {"avx2", hasAVX2, fmaPeakAVX2, 96}, {"neon", hasNEON, neonPeak, 96}} {
		b.Run(p.name, func(b *testing.B) {
			if !p.ok {
				b.Skip("not on this path")
			}
			for b.Loop() {
				p.peak(rounds)
			}
			b.ReportMetric(p.flops*rounds*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
