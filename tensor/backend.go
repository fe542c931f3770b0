package tensor

import (
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/adamnode/adamnode/tensor/internal/dgemm"
	"github.com/adamnode/adamnode/tensor/internal/sgemm"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Engine runs the compute-heavy kernels of one element type: GEMM and the
// three passes of 2-D convolution. The CPU engines of this package implement
// it over a BLAS; a GPU backend can implement it over cuBLAS/cuDNN.
//
// All matrices are row-major. Destinations must not overlap inputs.
type Engine[T Float] interface {
	// Name names the backend, e.g. "gonum" or "openblas".
	Name() string

	// Gemm computes C = alpha·op(A)·op(B) + beta·C where op(A) is m×k, op(B)
	// is k×n and C is m×n; op transposes when the flag is set. lda, ldb and
	// ldc are the row strides of A, B and C as stored.
	Gemm(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

	// Conv2D computes the cross-correlation y = w ⋆ x + b for
	// x [B, C, H, W], w [Co, C, KH, KW], the bias b [Co] (nil for none) and
	// y [B, Co, OH, OW] with OH = (H + 2·pad − KH)/stride + 1 (likewise OW):
	//
	//	y[b,o,p,q] = Σ_{c,i,j} w[o,c,i,j] · x[b, c, p·s−pad+i, q·s−pad+j] + b[o]
	//
	// with x read as zero outside its bounds.
	Conv2D(y, x, w, b *Tensor[T], p ConvParams)

	// Conv2DBackwardData computes dx = ∂L/∂x from dy = ∂L/∂y of Conv2D. With
	// accumulate, dx += ∂L/∂x instead.
	Conv2DBackwardData(dx, dy, w *Tensor[T], p ConvParams, accumulate bool)

	// Parallel runs body over [0, n) cut into one band per worker, the bands
	// in parallel, and returns when all are done. body must only touch its
	// band. It is how elementwise work on large tensors uses the workers.
	Parallel(n int, body func(lo, hi int))

	// Conv2DBackwardFilter computes dw = ∂L/∂w = Σ_b dy_b · im2col(x_b)ᵀ
	// and, unless db is nil, db = ∂L/∂b = Σ_{b,p,q} dy[b,·,p,q] from
	// dy = ∂L/∂y of Conv2D. With accumulate, both are added instead.
	Conv2DBackwardFilter(dw, db, dy, x *Tensor[T], p ConvParams, accumulate bool)
}

// Backend is a compute backend: an Engine for each element type and the
// number of workers its kernels use. It is a value any package can
// provide — package cuda's GPU backend is one — and is used wherever
// Gonum, OpenBLAS or Default are. A Backend is safe for concurrent use.
//
// The engines hold the compute-heavy kernels (GEMM, the convolution
// passes) and the parallel split of elementwise work; elementwise maps,
// reductions and shape operations run on the tensors' host memory in this
// package, for every backend.
type Backend interface {
	// Name names the backend: "gonum", "openblas", "cuda".
	Name() string
	// Workers returns the number of goroutines the backend's kernels use.
	Workers() int
	// Float32 and Float64 return the backend's engines.
	Float32() Engine[float32]
	Float64() Engine[float64]
}

// cpuBackend is the CPU backends of this package: a BLAS and a number of
// worker goroutines.
type cpuBackend struct {
	name    string
	workers int
	f32     *cpuEngine[float32]
	f64     *cpuEngine[float64]
}

// Name names the backend's BLAS: "gonum" or "openblas".
func (b *cpuBackend) Name() string { return b.name }

// Workers returns the number of goroutines the backend's kernels use.
func (b *cpuBackend) Workers() int { return b.workers }

// String returns the name and the worker count.
func (b *cpuBackend) String() string { return fmt.Sprintf("%s(%d workers)", b.name, b.workers) }

// Float32 returns the float32 engine.
func (b *cpuBackend) Float32() Engine[float32] { return b.f32 }

// Float64 returns the float64 engine.
func (b *cpuBackend) Float64() Engine[float64] { return b.f64 }

// EngineFor returns b's engine for element type T.
func EngineFor[T Float](b Backend) Engine[T] {
	var z T
	switch any(z).(type) {
	case float32:
		return any(b.Float32()).(Engine[T])
	default:
		return any(b.Float64()).(Engine[T])
	}
}

// gonumBLAS is gonum's pure-Go BLAS (with its assembly kernels), used for
// level-1 operations in every build.
var gonumBLAS gonum.Implementation

// Gonum returns a backend over gonum's pure-Go BLAS using the given number
// of worker goroutines (GOMAXPROCS when workers ≤ 0). It needs no C library.
func Gonum(workers int) Backend {
	return newBackend("gonum", workers, gonum.Implementation{}, gonum.Implementation{})
}

// OpenBLAS returns a backend over OpenBLAS (through gonum.org/v1/netlib) using
// the given number of worker goroutines (GOMAXPROCS when workers ≤ 0). It
// returns an error unless the program was built with the tag "openblas".
//
// The backend does its own parallelism: it sets OpenBLAS to one thread (a
// process-wide OpenBLAS setting) and splits large products and batches over
// its worker goroutines, so that concurrent kernels never oversubscribe the
// cores.
func OpenBLAS(workers int) (Backend, error) {
	s, d, ok := openBLAS()
	if !ok {
		return nil, fmt.Errorf("tensor: OpenBLAS backend not compiled in: build with -tags openblas (needs libopenblas-dev)")
	}
	return newBackend("openblas", workers, s, d), nil
}

// Backends returns every backend compiled into this program, pure-Go first,
// each with the given number of workers. Conformance tests run over it.
func Backends(workers int) []Backend {
	out := []Backend{Gonum(workers)}
	if b, err := OpenBLAS(workers); err == nil {
		out = append(out, b)
	}
	return out
}

var defaultBackend = sync.OnceValue(func() Backend {
	if b, err := OpenBLAS(0); err == nil {
		return b
	}
	return Gonum(0)
})

// Default returns the fastest compiled-in backend (OpenBLAS when built with
// the tag "openblas", else gonum) with GOMAXPROCS workers. It is chosen once,
// at first use, and never changes.
func Default() Backend { return defaultBackend() }

func newBackend(name string, workers int, s blas.Float32, d blas.Float64) *cpuBackend {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// gonum's gemm parallelises internally; the netlib one is set to one
	// thread and parallelised here, as is package sgemm's.
	splitGemm := name != "gonum"
	f32, split32 := s.Sgemm, splitGemm
	bias32 := broadcastGemm(f32)
	if sgemm.Enabled() {
		// The AVX-512 SGEMM is faster than gonum's everywhere and than
		// OpenBLAS's at most of this package's shapes (see the package
		// documentation); the OpenBLAS backend keeps OpenBLAS for the rest.
		f32, bias32, split32 = sgemm.Sgemm, sgemm.SgemmBias, true
		if name != "gonum" && vectorCore(OpenBLASCore()) {
			f32, bias32 = hybridSgemm(s.Sgemm), hybridSgemmBias(s.Sgemm)
		}
	}
	f64, bias64, split64 := float64Gemm(d, splitGemm)
	return &cpuBackend{
		name:    name,
		workers: workers,
		f32:     newCPUEngine(name, workers, split32, f32, bias32),
		f64:     newCPUEngine(name, workers, split64, f64, bias64),
	}
}

// float64Gemm chooses the float64 GEMM of a backend over the BLAS d:
// package dgemm's AVX-512 DGEMM (split over the workers) where the CPU runs
// it, else d's Dgemm, split over the workers when split is set. On one core
// of a Zen 4 (float64 FMA peak 57 GFLOP/s) at the MLP shapes of batch 512
// (BenchmarkDgemm in tensor/internal/dgemm, medians of 9), dgemm runs 34–50
// GFLOP/s, gonum's Dgemm 4–9, OpenBLAS 0.3.21's (SkylakeX kernels) 31–46:
// faster than dgemm where C is 17 columns wide (43–46 against 34–39) or k
// is 16, slower at the rest. Routing those shapes to OpenBLAS, as
// hybridSgemm does for float32, did not show end to end (an AdamNODE of
// width 64: 35.5 against 34.0 ms an iteration, medians of 6), while dgemm
// for all of them trains it 12% faster than OpenBLAS alone (medians of 9
// alternations): both backends take dgemm.
func float64Gemm(d blas.Float64, split bool) (gemmFunc[float64], biasGemmFunc[float64], bool) {
	if dgemm.Enabled() {
		return dgemm.Dgemm, dgemm.DgemmBias, true
	}
	return d.Dgemm, broadcastGemm(d.Dgemm), split
}

// genericCores are the CPUs, as OpenBLAS names them, whose kernels are
// older than AVX2 with FMA: what a build of OpenBLAS for several CPUs runs
// on a CPU newer than itself (Debian's 0.3.21 runs Prescott's SSE3 kernels
// on an Intel Xeon of 2023, family 6 model 207, at 13–28 GFLOP/s where
// package sgemm runs 40–120).
var genericCores = []string{
	"Prescott", "Katmai", "Coppermine", "Northwood", "Banias", "Core2", "Penryn",
	"Dunnington", "Nehalem", "Atom", "Sandybridge", "Nano", "Athlon", "Opteron",
	"Opteron_SSE3", "Barcelona", "Bobcat", "Bulldozer", "Piledriver", "Steamroller",
	"Excavator", "Generic", "unknown",
}

// vectorCore reports whether OpenBLAS, running the named CPU's kernels, is
// one that hybridSgemm's table was measured against (AVX2 with FMA or
// AVX-512). If not, package sgemm takes every float32 shape: its AVX-512
// kernels beat OpenBLAS's generic ones at all of them.
func vectorCore(name string) bool {
	if name == "" {
		return false
	}
	for _, g := range genericCores {
		if strings.EqualFold(name, g) {
			return false
		}
	}
	return true
}

// broadcastGemm is a biasGemmFunc from a gemm: the bias copied into each
// row of C, then the product added.
func broadcastGemm[T Float](gemm gemmFunc[T]) biasGemmFunc[T] {
	return func(tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, bias, c []T, ldc int) {
		copyRows(m, n, bias, c, ldc)
		gemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, 1, c, ldc)
	}
}

// hybridSgemm is package sgemm's Sgemm but for the shapes where blas's was
// measured faster on one core (BenchmarkSgemm in tensor/internal/sgemm, with
// OpenBLAS 0.3.21): C between 17 and 31 columns wide (sgemm computes 32),
// fewer than 24 rows (it computes 12 at a time; but see blasFaster), a transposed B with few
// rows of C to reuse its packing, and products of at most 128 rows and
// under 2²⁰ multiply-adds.
func hybridSgemm(blasGemm gemmFunc[float32]) gemmFunc[float32] {
	return func(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
		if blasFaster(tA, tB, m, n, k) {
			blasGemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
			return
		}
		sgemm.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}
}

// hybridSgemmBias is hybridSgemm's choice for sgemm.SgemmBias.
func hybridSgemmBias(blasGemm gemmFunc[float32]) biasGemmFunc[float32] {
	viaBLAS := broadcastGemm(blasGemm)
	return func(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, bias, c []float32, ldc int) {
		if blasFaster(tA, tB, m, n, k) {
			viaBLAS(tA, tB, m, n, k, alpha, a, lda, b, ldb, bias, c, ldc)
			return
		}
		sgemm.SgemmBias(tA, tB, m, n, k, alpha, a, lda, b, ldb, bias, c, ldc)
	}
}

// blasFaster reports whether OpenBLAS's Sgemm was measured faster than
// package sgemm's at this shape (see hybridSgemm). Of the products with
// fewer than 24 rows, those with A transposed, at least 8 rows and 112
// columns stay here: the weight gradient of a 16-wide output layer (m = 16,
// n = 128–256, k = 512: 75 against OpenBLAS's 59–73 GFLOP/s; at n = 96
// OpenBLAS's 102 against 73).
func blasFaster(tA, tB blas.Transpose, m, n, k int) bool {
	if m < 24 && tA != blas.NoTrans && m >= 8 && n >= 112 {
		return false
	}
	return (n > 16 && n < 32) || m < 24 || (tB != blas.NoTrans && m <= 96) || (m <= 128 && m*n*k < 1<<20)
}
