package dgemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDgemmNaN checks that a NaN or infinity in A or B reaches exactly the
// elements of C whose sums include it (with beta 0, C itself all NaN
// before and not read): a row of C for one in A, a column for one in B,
// also in the zero-padded edge tiles and the in-place paths.
func TestDgemmNaN(t *testing.T) {
	forPaths(t, testNaN)
}

// testNaN is TestDgemmNaN on one path.
func testNaN(t *testing.T, gp gemmPath) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, tc := range []struct {
		tA, tB  bool
		m, n, k int
	}{
		{false, false, 13, 17, 5}, {true, false, 13, 17, 5}, {false, true, 13, 17, 5}, {true, true, 13, 17, 5},
		{false, false, 512, 64, 17}, {true, false, 64, 17, 512}, {false, true, 512, 16, 64},
		{false, false, 1, 1, 1}, {false, false, 30, 9, 300}, {true, true, 7, 600, 3},
	} {
		for _, bad := range []float64{math.NaN(), math.Inf(1)} {
			gc := gemmCase{tA: tc.tA, tB: tc.tB, m: tc.m, n: tc.n, k: tc.k, alpha: 1}
			a, b, c, lda, ldb, ldc := gc.operands(rng)
			ia, pa := rng.IntN(tc.m), rng.IntN(tc.k)
			pb, jb := rng.IntN(tc.k), rng.IntN(tc.n)
			if tc.tA {
				a[pa*lda+ia] = bad
			} else {
				a[ia*lda+pa] = bad
			}
			if tc.tB {
				b[jb*ldb+pb] = bad
			} else {
				b[pb*ldb+jb] = bad
			}
			gp.gemm(tr(tc.tA), tr(tc.tB), tc.m, tc.n, tc.k, 1, a, lda, b, ldb, 0, c, ldc)
			for i := range tc.m {
				for j := range tc.n {
					v := c[i*ldc+j]
					// An infinity times a random normal value is an infinity;
					// in row ia and column jb both may meet (Inf − Inf).
					nonFinite := math.IsNaN(v) || math.IsInf(v, 0)
					hit := i == ia || j == jb
					if nonFinite != hit || (bad != bad && hit && !math.IsNaN(v)) {
						t.Fatalf("%+v bad=%v at A(%d,%d), B(%d,%d): C[%d,%d] = %v", tc, bad, ia, pa, pb, jb, i, j, v)
					}
				}
			}
		}
	}
}
