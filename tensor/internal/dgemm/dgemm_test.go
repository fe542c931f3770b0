package dgemm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gonum.org/v1/gonum/blas"
)

// refGemm is C = alpha·op(A)·op(B) + beta·C by the naive triple loop, C not
// read when beta is 0, with the bound of each element's rounding error:
// (k+2)·eps·(|alpha|·Σ_p |A(i,p)|·|B(p,j)| + |beta·C[i,j]|), which bounds
// any summation order's error (Higham, §3.1), so twice it bounds the
// difference of two orders.
func refGemm(tA, tB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) (want, bound []float64) {
	want, bound = make([]float64, m*n), make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s, abs float64
			for p := range k {
				var av, bv float64
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
				s += av * bv
				abs += math.Abs(av * bv)
			}
			s *= alpha
			abs *= math.Abs(alpha)
			if beta != 0 {
				s += beta * c[i*ldc+j]
				abs += math.Abs(beta * c[i*ldc+j])
			}
			want[i*n+j] = s
			bound[i*n+j] = float64(k+2) * 0x1p-52 * abs
		}
	}
	return want, bound
}

func randSlice(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = rng.NormFloat64()
	}
	return s
}

func tr(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// gemmCase is one product: its shape, scalars, the padding of the leading
// dimensions, the offset into the slices, and with bias DgemmBias's product
// plus a random bias (beta ignored: C is not read).
type gemmCase struct {
	tA, tB      bool
	m, n, k     int
	alpha, beta float64
	pad, off    int
	bias        bool
}

// operands returns random A, B and C (C all NaN when beta is 0: not to be
// read) for tc and their leading dimensions.
func (tc gemmCase) operands(rng *rand.Rand) (a, b, c []float64, lda, ldb, ldc int) {
	ar, ac := tc.m, tc.k
	if tc.tA {
		ar, ac = tc.k, tc.m
	}
	br, bc := tc.k, tc.n
	if tc.tB {
		br, bc = tc.n, tc.k
	}
	lda, ldb, ldc = max(ac+tc.pad, 1), max(bc+tc.pad, 1), max(tc.n+tc.pad, 1)
	a = randSlice(rng, tc.off+ar*lda)
	b = randSlice(rng, tc.off+br*ldb)
	c = randSlice(rng, tc.off+tc.m*ldc+tc.pad)
	if tc.beta == 0 || tc.bias {
		for i := range c {
			c[i] = math.NaN()
		}
	}
	return a, b, c, lda, ldb, ldc
}

// gemmPath is a way the tests run the product: Dgemm and DgemmBias (on
// the path isa.Current chose), or a driver of another path this CPU runs.
type gemmPath struct {
	name string
	gemm func(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int)
	bias func(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, bias, c []float64, ldc int)
}

// gemmPaths are the ways the tests run: Dgemm, and the AVX2 and SSE2
// drivers where the CPU runs them and Dgemm does not (an AVX-512 CPU), so
// that a plain go test covers every amd64 kernel path, and the NEON driver
// where Dgemm does not run it (ADAMNODE_CPU=generic on arm64).
func gemmPaths() []gemmPath {
	ps := []gemmPath{{"Dgemm", Dgemm, DgemmBias}}
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

// check runs tc by gp and compares C with refGemm within twice its error
// bound, and the rest of c with its values before.
func check(t *testing.T, gp gemmPath, rng *rand.Rand, tc gemmCase) {
	t.Helper()
	if tc.bias {
		tc.beta = 0
	}
	a, b, c, lda, ldb, ldc := tc.operands(rng)
	off := tc.off
	c0 := append([]float64(nil), c...)
	want, bound := refGemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.alpha, a[off:], lda, b[off:], ldb, tc.beta, c[off:], ldc)
	if tc.bias {
		bias := randSlice(rng, tc.n+1) // one past n, not to be read as a column
		for i := range tc.m {
			for j := range tc.n {
				want[i*tc.n+j] += bias[j]
				bound[i*tc.n+j] += 0x1p-52 * math.Abs(want[i*tc.n+j])
			}
		}
		gp.bias(tr(tc.tA), tr(tc.tB), tc.m, tc.n, tc.k, tc.alpha, a[off:], lda, b[off:], ldb, bias, c[off:], ldc)
	} else {
		gp.gemm(tr(tc.tA), tr(tc.tB), tc.m, tc.n, tc.k, tc.alpha, a[off:], lda, b[off:], ldb, tc.beta, c[off:], ldc)
	}
	for i := range tc.m {
		for j := range tc.n {
			got, w := c[off+i*ldc+j], want[i*tc.n+j]
			if math.IsNaN(got) || math.Abs(got-w) > 2*bound[i*tc.n+j]+1e-300 {
				t.Fatalf("%+v: C[%d,%d] = %v, want %v (bound %.3g)", tc, i, j, got, w, bound[i*tc.n+j])
			}
		}
	}
	// Nothing outside C's m×n window changes.
	outside := func(c []float64) []uint64 {
		var o []uint64
		for idx, v := range c {
			i, j := (idx-off)/ldc, (idx-off)%ldc
			if idx < off || i >= tc.m || j >= tc.n {
				o = append(o, math.Float64bits(v))
			}
		}
		return o
	}
	if d := cmp.Diff(outside(c0), outside(c)); d != "" {
		t.Fatalf("%+v: c outside C changed (-before +after):\n%s", tc, d)
	}
}

// TestDgemmShapes covers every transpose combination over sizes around the
// register tiles (12×16, the 8- and 4-wide and 4- and 8-row edge kernels;
// the AVX2 path's 6×8, 6×4 and its 2- and 4-row edge kernels)
// and the cache blocks, k from 0 up, padded leading dimensions and offsets.
func TestDgemmShapes(t *testing.T) {
	forPaths(t, func(t *testing.T, gp gemmPath) {
		rng := rand.New(rand.NewPCG(1, 2))
		dims := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 15, 16, 17, 23, 24, 25, 31, 33, 47, 64, 97, 131, 193, 257}
		ks := []int{0, 1, 2, 3, 4, 5, 16, 37, 255, 256, 257, 300}
		if testing.Short() {
			dims, ks = []int{0, 1, 5, 8, 12, 13, 17, 33, 97}, []int{0, 1, 3, 37, 257}
		}
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for _, m := range dims {
					for _, n := range dims {
						for _, k := range ks {
							if m*n*k > 2e6 {
								continue
							}
							check(t, gp, rng, gemmCase{tA: tA, tB: tB, m: m, n: n, k: k, alpha: 1, pad: (m + n + k) % 3, off: (m * n) % 5})
						}
					}
				}
			}
		}
	})
}

// TestDgemmAlphaBeta covers the scalars' special cases (0, 1, −1, −0) and
// others, on shapes that take every path (packed and in-place A and B,
// edge tiles, several blocks of k).
func TestDgemmAlphaBeta(t *testing.T) {
	forPaths(t, func(t *testing.T, gp gemmPath) {
		rng := rand.New(rand.NewPCG(3, 4))
		negZero := math.Copysign(0, -1)
		for _, ab := range [][2]float64{{1, 0}, {1, 1}, {0, 0}, {0, 1}, {0, -2}, {2.5, 0}, {-1, 1}, {0.5, -0.75}, {1, negZero}, {-3, 1e-3}} {
			for _, tA := range []bool{false, true} {
				for _, tB := range []bool{false, true} {
					for _, s := range [][3]int{{13, 37, 19}, {50, 45, 259}, {7, 3, 530}, {120, 70, 4}, {29, 16, 0}, {389, 17, 23}, {100, 600, 9}, {512, 64, 17}} {
						check(t, gp, rng, gemmCase{tA: tA, tB: tB, m: s[0], n: s[1], k: s[2], alpha: ab[0], beta: ab[1], pad: 3, off: 2})
					}
				}
			}
		}
	})
}

// TestDgemmBias checks the bias added as the kernels store C: every edge
// of the register tile, the packed and in-place paths, more than one block
// of k (the bias added once), alpha 0 and k 0 (C is the bias).
func TestDgemmBias(t *testing.T) {
	forPaths(t, func(t *testing.T, gp gemmPath) {
		rng := rand.New(rand.NewPCG(7, 8))
		dims := []int{0, 1, 4, 8, 12, 13, 16, 17, 31, 33, 97, 131}
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for _, m := range dims {
					for _, n := range append(dims, 600) {
						for _, k := range []int{0, 1, 37, 300} {
							if m*n*k > 2e6 {
								continue
							}
							alpha := 1.0
							if (m+n)%7 == 3 {
								alpha = -0.5
							}
							check(t, gp, rng, gemmCase{tA: tA, tB: tB, m: m, n: n, k: k, alpha: alpha, pad: (m + n + k) % 3, off: (m * n) % 5, bias: true})
						}
					}
				}
			}
		}
		check(t, gp, rng, gemmCase{tB: true, m: 7, n: 9, k: 5, pad: 1, bias: true})
	})
}

// TestDgemmLarge crosses every cache block: m > mc, n > nc, k > kc.
func TestDgemmLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large")
	}
	forPaths(t, func(t *testing.T, gp gemmPath) {
		rng := rand.New(rand.NewPCG(5, 6))
		check(t, gp, rng, gemmCase{tB: true, m: 397, n: nc + 45, k: 2*kc + 13, alpha: 1, beta: 0.5, pad: 1, off: 1})
		check(t, gp, rng, gemmCase{tA: true, m: 2*mc + 29, n: 61, k: 531, alpha: -1, beta: 1})
		check(t, gp, rng, gemmCase{m: 2*mc + 29, n: 600, k: 70, alpha: 1})
	})
}
