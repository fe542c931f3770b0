package sgemm

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// refGemm is C = alpha·op(A)·op(B) + beta·C in float64, C not read when
// beta is 0.
func refGemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) []float64 {
	out := make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				var av, bv float32
				if tA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if tB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += float64(av) * float64(bv)
			}
			s *= float64(alpha)
			if beta != 0 {
				s += float64(beta) * float64(c[i*ldc+j])
			}
			out[i*n+j] = s
		}
	}
	return out
}

func randSlice(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(rng.NormFloat64())
	}
	return s
}

func tr(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// gemmPath is a way the tests run the product: Sgemm and SgemmBias (on
// the path isa.Current chose), or a driver of another path this CPU runs.
type gemmPath struct {
	name string
	gemm func(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
	bias func(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, bias, c []float32, ldc int)
}

// gemmPaths are the ways the tests run: Sgemm, and the AVX2 and SSE2
// drivers where the CPU runs them and Sgemm does not (an AVX-512 CPU), so
// that a plain go test covers every amd64 kernel path, and the NEON driver
// where Sgemm does not run it (ADAMNODE_CPU=generic on arm64).
func gemmPaths() []gemmPath {
	ps := []gemmPath{{"Sgemm", Sgemm, SgemmBias}}
	if hasAVX2 && active != driverAVX2 {
		ps = append(ps, gemmPath{"avx2", driverAVX2.Gemm, driverAVX2.GemmBias})
	}
	if hasSSE2 && active != driverSSE2 {
		ps = append(ps, gemmPath{"sse2", driverSSE2.Gemm, driverSSE2.GemmBias})
	}
	if hasNEON && active != driverNEON {
		ps = append(ps, gemmPath{"neon", driverNEON.Gemm, driverNEON.GemmBias})
	}
	return ps
}

// forPaths runs f as a subtest for each of gemmPaths.
func forPaths(t *testing.T, f func(t *testing.T, gp gemmPath)) {
	for _, gp := range gemmPaths() {
		t.Run(gp.name, func(t *testing.T) { f(t, gp) })
	}
}

// check runs one product by gp with the given padding of the leading
// dimensions and offset into the slices, and compares it with refGemm.
func check(t *testing.T, gp gemmPath, rng *rand.Rand, tA, tB bool, m, n, k int, alpha, beta float32, pad, off int) {
	t.Helper()
	checkBias(t, gp, rng, tA, tB, m, n, k, alpha, beta, pad, off, false)
}

// checkBias is check, or with withBias gp's bias product plus a random
// bias (beta ignored: C is not read).
func checkBias(t *testing.T, gp gemmPath, rng *rand.Rand, tA, tB bool, m, n, k int, alpha, beta float32, pad, off int, withBias bool) {
	t.Helper()
	if withBias {
		beta = 0
	}
	ar, ac := m, k
	if tA {
		ar, ac = k, m
	}
	br, bc := k, n
	if tB {
		br, bc = n, k
	}
	lda, ldb, ldc := ac+pad, bc+pad, n+pad
	lda, ldb, ldc = max(lda, 1), max(ldb, 1), max(ldc, 1)
	a := randSlice(rng, off+ar*lda)
	b := randSlice(rng, off+br*ldb)
	c := randSlice(rng, off+m*ldc+pad)
	if beta == 0 {
		for i := range c {
			c[i] = float32(math.NaN())
		}
	}
	c0 := append([]float32(nil), c...)
	want := refGemm(tA, tB, m, n, k, alpha, a[off:], lda, b[off:], ldb, beta, c[off:], ldc)
	if withBias {
		bias := randSlice(rng, n+1) // one past n, not to be read as a column
		for i := range m {
			for j := range n {
				want[i*n+j] += float64(bias[j])
			}
		}
		gp.bias(tr(tA), tr(tB), m, n, k, alpha, a[off:], lda, b[off:], ldb, bias, c[off:], ldc)
	} else {
		gp.gemm(tr(tA), tr(tB), m, n, k, alpha, a[off:], lda, b[off:], ldb, beta, c[off:], ldc)
	}
	tol := 1e-5 * float64(k+2)
	for i := range m {
		for j := range n {
			got := float64(c[off+i*ldc+j])
			w := want[i*n+j]
			if math.IsNaN(got) || math.Abs(got-w) > tol*(1+math.Abs(w)+math.Sqrt(float64(k))) {
				t.Fatalf("tA=%v tB=%v m=%d n=%d k=%d alpha=%v beta=%v pad=%d off=%d: C[%d,%d] = %v, want %v",
					tA, tB, m, n, k, alpha, beta, pad, off, i, j, got, w)
			}
		}
	}
	// Nothing outside C's m×n window changes.
	for idx := range c {
		i, j := (idx-off)/ldc, (idx-off)%ldc
		if idx >= off && i < m && j < n {
			continue
		}
		if math.Float32bits(c[idx]) != math.Float32bits(c0[idx]) {
			t.Fatalf("tA=%v tB=%v m=%d n=%d k=%d pad=%d off=%d: c[%d] outside C changed", tA, tB, m, n, k, pad, off, idx)
		}
	}
}

func TestSgemmShapes(t *testing.T) {
	forPaths(t, func(t *testing.T, gp gemmPath) {
		rng := rand.New(rand.NewPCG(1, 2))
		dims := []int{0, 1, 2, 5, 6, 8, 11, 12, 13, 16, 17, 24, 31, 32, 33, 47, 64, 97, 131, 257, 300}
		if testing.Short() {
			dims = []int{0, 1, 5, 12, 13, 17, 33, 97}
		}
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for _, m := range dims {
					for _, n := range dims {
						for _, k := range []int{0, 1, 3, 16, 37, 257, 300} {
							if m*n*k > 2e6 {
								continue
							}
							pad := (m + n + k) % 3
							check(t, gp, rng, tA, tB, m, n, k, 1, 0, pad, (m*n)%5)
						}
					}
				}
			}
		}
	})
}

func TestSgemmAlphaBeta(t *testing.T) {
	forPaths(t, func(t *testing.T, gp gemmPath) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, ab := range [][2]float32{{1, 0}, {1, 1}, {0, 0}, {0, 1}, {0, -2}, {2.5, 0}, {-1, 1}, {0.5, -0.75}} {
			for _, tA := range []bool{false, true} {
				for _, tB := range []bool{false, true} {
					for _, s := range [][3]int{{13, 37, 19}, {50, 45, 259}, {7, 3, 530}, {120, 70, 4}, {29, 16, 0}, {389, 17, 23}} {
						check(t, gp, rng, tA, tB, s[0], s[1], s[2], ab[0], ab[1], 3, 2)
					}
				}
			}
		}
	})
}

// TestSgemmBias checks the bias added as the kernels store C: every edge
// of the register tile, the packed and in-place paths, more than one block
// of k (the bias added once), alpha 0 and k 0 (C is the bias).
func TestSgemmBias(t *testing.T) {
	forPaths(t, func(t *testing.T, gp gemmPath) {
		rng := rand.New(rand.NewPCG(7, 8))
		dims := []int{0, 1, 12, 13, 16, 17, 31, 33, 97, 131}
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for _, m := range dims {
					for _, n := range append(dims, 600) {
						for _, k := range []int{0, 1, 37, 300} {
							if m*n*k > 2e6 {
								continue
							}
							alpha := float32(1)
							if (m+n)%7 == 3 {
								alpha = -0.5
							}
							checkBias(t, gp, rng, tA, tB, m, n, k, alpha, 0, (m+n+k)%3, (m*n)%5, true)
						}
					}
				}
			}
		}
		checkBias(t, gp, rng, false, true, 7, 9, 5, 0, 0, 1, 0, true)
		if !testing.Short() {
			checkBias(t, gp, rng, false, true, 397, nc+45, kc+13, 1, 0, 1, 1, true)
		}
	})
}

// TestSgemmLarge crosses every cache block: m > mc, n > nc, k > kc.
func TestSgemmLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large")
	}
	forPaths(t, func(t *testing.T, gp gemmPath) {
		rng := rand.New(rand.NewPCG(5, 6))
		check(t, gp, rng, false, true, 397, nc+45, 2*kc+13, 1, 0.5, 1, 1)
		check(t, gp, rng, true, false, 2*mc+29, 61, 531, -1, 1, 0, 0)
	})
}

// TestSgemmNoAllocs checks that a product by the kernels, of either path,
// allocates nothing once the pack buffers exist.
func TestSgemmNoAllocs(t *testing.T) {
	forPaths(t, func(t *testing.T, gp gemmPath) {
		if gp.name == "Sgemm" && !Enabled() {
			t.Skip("gonum's Sgemm allocates")
		}
		a, b, c := make([]float32, 300*300), make([]float32, 300*300), make([]float32, 300*300)
		gp.gemm(blas.NoTrans, blas.Trans, 300, 300, 300, 1, a, 300, b, 300, 0, c, 300)
		if n := testing.AllocsPerRun(20, func() {
			gp.gemm(blas.NoTrans, blas.Trans, 300, 300, 300, 1, a, 300, b, 300, 0, c, 300)
		}); n > 0 {
			t.Errorf("%v allocations per call", n)
		}
	})
}

func TestSgemmPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"lda": func() {
			Sgemm(blas.NoTrans, blas.NoTrans, 2, 2, 3, 1, make([]float32, 6), 2, make([]float32, 6), 2, 0, make([]float32, 4), 2)
		},
		"short": func() {
			Sgemm(blas.NoTrans, blas.NoTrans, 2, 2, 2, 1, make([]float32, 3), 2, make([]float32, 4), 2, 0, make([]float32, 4), 2)
		},
		"m": func() { Sgemm(blas.NoTrans, blas.NoTrans, -1, 2, 2, 1, nil, 2, nil, 2, 0, nil, 2) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
