package sgemm

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
	gemm func(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
}

// others are the Sgemms the benchmarks compare with (OpenBLAS is added in
// the build with the tag openblas).
var others = []impl{{"gonum", gonum.Implementation{}.Sgemm}}

type shape struct {
	name    string
	tA, tB  bool
	m, n, k int
}

// benchShapes are BenchmarkGemmMLP's (tensor/bench_test.go: batch × in → out,
// the passes fwd = x·Wᵀ, dx = g·W, dw = gᵀ·x), the layers of a 2-D state's
// field (FFJORD's toy flow: 512×2→64, 512×64→2), and the MNIST model's
// convolution as GEMM (Co = 50, C·KH·KW = 459, OH·OW = 784): the forward
// W·col, the data gradient Wᵀ·dy and the filter gradient dy·colᵀ.
func benchShapes() []shape {
	var out []shape
	for _, s := range []struct{ batch, in, out int }{
		{512, 17, 64}, {512, 64, 64}, {512, 64, 16}, {512, 256, 256}, {512, 17, 256}, {512, 256, 16}, {211, 127, 127}, {256, 256, 256}, {589, 159, 16}, {589, 16, 159}, {589, 159, 159}, {645, 118, 16}, {645, 16, 118}, {645, 118, 118}, {2048, 64, 64}, {128, 64, 64}, {256, 64, 64}, {256, 16, 64}, {256, 64, 16}, {512, 2, 64}, {512, 64, 2},
	} {
		name := fmt.Sprintf("%dx%dto%d", s.batch, s.in, s.out)
		out = append(out,
			shape{name + "/fwd", false, true, s.batch, s.out, s.in},
			shape{name + "/dx", false, false, s.batch, s.in, s.out},
			shape{name + "/dw", true, false, s.out, s.in, s.batch})
	}
	return append(out,
		shape{"conv50x459x784/fwd", false, false, 50, 784, 459},
		shape{"conv50x459x784/dx", true, false, 459, 784, 50},
		shape{"conv50x459x784/dw", false, true, 50, 459, 784},
		shape{"wino50x50x210/fwd", false, false, 50, 210, 50},
		shape{"wino50x50x210/dw", false, true, 50, 50, 210},
		shape{"pw5to50x784/fwd", false, false, 50, 784, 5},
		shape{"pw5to50x784/dx", true, false, 5, 784, 50},
		shape{"pw5to50x784/dw", false, true, 50, 5, 784},
		shape{"pw50to5x784/fwd", false, false, 5, 784, 50},
		shape{"pw50to5x784/dx", true, false, 50, 784, 5},
		shape{"pw50to5x784/dw", false, true, 5, 50, 784},
		shape{"square256", false, false, 256, 256, 256},
		shape{"square1024", false, false, 1024, 1024, 1024},
	)
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

// benchImpls are the Sgemms the benchmarks run: this package's Sgemm
// (asm: the path isa.Current chose, ADAMNODE_CPU=avx2 forcing the AVX2
// kernels), the AVX2 and SSE2 drivers where the CPU runs them and Sgemm
// does not (avx2, sse2), the NEON driver likewise (neon: under ADAMNODE_CPU=generic on
// arm64), and the others. It prints the kernel path that asm runs as a
// configuration line of the benchmark format ("kernelpath: neon"), which
// benchstat keeps with the results (a parent benchmark's b.Log is not
// printed).
func benchImpls() []impl {
	fmt.Printf("kernelpath: %v\n", isa.Current())
	impls := []impl{{"asm", Sgemm}}
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

// BenchmarkSgemm runs each shape by each of benchImpls, in GFLOP/s.
func BenchmarkSgemm(b *testing.B) {
	impls := benchImpls()
	for _, s := range benchShapes() {
		rng := rand.New(rand.NewPCG(1, 1))
		lda, ldb := s.lds()
		a, bb, c := randSlice(rng, s.m*s.k), randSlice(rng, s.k*s.n), make([]float32, s.m*s.n)
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

// BenchmarkSgemmAlternating runs each shape by every implementation of
// BenchmarkSgemm in turn, 41 rounds of one call each (or as many calls as
// make 6·10⁷ flops), and reports each one's median GFLOP/s as the metric
// <name>-GFLOP/s. On a shared machine whose speed moves from second to
// second, the ratios of these medians are steadier than those of
// BenchmarkSgemm's runs one after another. Run it once a shape:
// -benchtime 1x.
func BenchmarkSgemmAlternating(b *testing.B) {
	impls := benchImpls()
	const rounds = 41
	for _, s := range benchShapes() {
		b.Run(s.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			lda, ldb := s.lds()
			a, bb, c := randSlice(rng, s.m*s.k), randSlice(rng, s.k*s.n), make([]float32, s.m*s.n)
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

// BenchmarkFMAPeak measures the core's float32 FMA throughput on registers
// (no loads): the ceiling of any GEMM here, on ZMM registers (avx512) and
// on YMM ones (avx2, the AVX2 kernels' ceiling), on arm64's V registers
// (neon, the NEON kernels' ceiling). Set BenchmarkSgemm's
// GFLOP/s against it, measured in the same run (AMD EPYC Zen 5 of
// 2026-11: 116.6 GFLOP/s on one core, the kernels 100–110 at the MLP
// shapes).
func BenchmarkFMAPeak(b *testing.B) {
	const rounds = 1 << 16
	for _, p := range []struct {
		name  string
		ok    bool
		peak  func(int)
		flops float64 // a round's
	}{{"avx512", hasKernel, fmaPeak, 384}, {"avx2", hasAVX2, fmaPeakAVX2, 192}, {"neon", hasNEON, neonPeak, 192}} {
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

// BenchmarkSgemmFreshC runs the MLP shapes with C in memory that no cache
// holds: each call writes the next of a ring of outputs 64 MiB long in
// all, as a recorded solve writes every stage's activations into buffers
// of their own (A and B stay warm). BenchmarkSgemm has the same shapes
// with everything in cache.
func BenchmarkSgemmFreshC(b *testing.B) {
	for _, s := range benchShapes() {
		if s.name[:4] != "589x" && s.name[:4] != "645x" && s.name[:4] != "512x" {
			continue
		}
		rng := rand.New(rand.NewPCG(1, 1))
		lda, ldb := s.lds()
		a, bb := randSlice(rng, s.m*s.k), randSlice(rng, s.k*s.n)
		cs := make([][]float32, max(2, (64<<20)/(4*s.m*s.n)))
		for i := range cs {
			cs[i] = make([]float32, s.m*s.n)
		}
		b.Run(s.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				Sgemm(tr(s.tA), tr(s.tB), s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, cs[i], s.n)
				i = (i + 1) % len(cs)
			}
			b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
