package sgemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"

	"github.com/adamnode/adamnode/tensor/internal/gemm/gemmtest"
)

// sse2Kernels are the SSE2 kernel (every column) and its narrow form
// (sse2Narrow, fewer columns through a copy), as runKernel takes them.
var sse2Kernels = []avx2Kernel{
	{Name: "sse2Kernel", Kern: sse2Kernel, NV: 2, RK: mrSSE2}, {Name: "sse2Narrow", Kern: sse2Narrow, NV: 2, RK: mrSSE2},
}

// TestSSE2Kernels runs the SSE2 kernel directly (every amd64 CPU runs it,
// whatever path isa.Current chose) against float64 sums: every row count
// 1..6, every column count (8 by sse2Kernel, 1–8 by sse2Narrow), k from 1
// (the unrolled loop's remainders, one and several rounds of 4), A's
// panel packed and wider, each way of storing (beta 0, -0 and not, a
// bias). B's columns past w and A's rows past rows are NaN, and so is C
// when beta is 0: none may reach a stored element. The bound is
// runKernel's, (k+3)·2⁻²³ of the sum of the terms' magnitudes, which the
// products and sums rounded apart stay within as FMA's do.
func TestSSE2Kernels(t *testing.T) {
	if !hasSSE2 {
		t.Skip("no SSE2 kernel in this build")
	}
	rng := rand.New(rand.NewPCG(21, 22))
	negZero := float32(math.Copysign(0, -1))
	stores := []struct {
		alpha, beta float32
		bias        bool
	}{{1, 0, false}, {-1.5, 0, true}, {0.5, 1, false}, {2, -0.75, false}, {1, negZero, false}, {3, 0.25, false}}
	for _, kn := range sse2Kernels {
		ws := []int{nrSSE2}
		if kn.Name == "sse2Narrow" {
			ws = []int{1, 2, 3, 4, 5, 6, 7, 8}
		}
		for rows := 1; rows <= mrSSE2; rows++ {
			for _, w := range ws {
				for _, k := range []int{1, 2, 3, 4, 5, 7, 8, 9, 13, 64} {
					for si, st := range stores {
						ka := mrSSE2
						if (rows+k+si)%3 == 0 {
							ka = 11 // a transposed A in place
						}
						gemmtest.RunKernel(t, rng, kn, kernelCase{Rows: rows, W: w, K: k, Alpha: st.alpha, Beta: st.beta, Bias: st.bias, LDB: nrSSE2, KA: ka, LDC: w + 2 + k%3})
					}
				}
			}
		}
	}
}

// TestSSE2Edge checks the SSE2 driver's choice of kernel and panel width:
// sse2Kernel for a whole tile's width, sse2Narrow for fewer columns,
// whatever the rows; every panel of B 8 wide.
func TestSSE2Edge(t *testing.T) {
	for _, c := range []struct {
		rows, w int
		want    string
	}{
		{1, 1, "sse2Narrow"}, {6, 7, "sse2Narrow"}, {3, 4, "sse2Narrow"},
		{1, 8, "sse2Kernel"}, {6, 8, "sse2Kernel"}, {4, 8, "sse2Kernel"},
	} {
		p := edgeKernelSSE2(c.rows, c.w)
		name := "unknown kernel"
		for _, kn := range sse2Kernels {
			if fmt.Sprintf("%p", kn.Kern) == fmt.Sprintf("%p", p) {
				name = kn.Name
			}
		}
		if name != c.want {
			t.Errorf("edgeKernelSSE2(%d, %d) = %s, want %s", c.rows, c.w, name, c.want)
		}
	}
	for _, w := range []int{1, 4, 7, 8} {
		if got := driverSSE2.PanelWidth(w); got != nrSSE2 {
			t.Errorf("the SSE2 panel width of %d columns is %d, want %d", w, got, nrSSE2)
		}
	}
	if driverSSE2.DirectBMaxM != 0 || driverSSE2.PackAMinN != 0 {
		t.Errorf("the SSE2 driver reads operands in place (DirectBMaxM %d, PackAMinN %d): its kernel reads whole vectors", driverSSE2.DirectBMaxM, driverSSE2.PackAMinN)
	}
	if driverSSE2.InPlaceTiles != nil {
		t.Error("the SSE2 driver has an InPlaceTiles: it packs every panel of A")
	}
}

// TestSgemmNaN checks, on every path, that a NaN or an infinity in A or B
// reaches exactly the elements of C whose sums include it (with beta 0,
// C all NaN before and not read): a row of C for one in A, a column for
// one in B, also in the zero-padded edge tiles.
func TestSgemmNaN(t *testing.T) {
	forPaths(t, func(t *testing.T, gp gemmPath) {
		rng := rand.New(rand.NewPCG(9, 10))
		for _, tc := range []struct {
			tA, tB  bool
			m, n, k int
		}{
			{false, false, 13, 17, 5}, {true, false, 13, 17, 5}, {false, true, 13, 17, 5}, {true, true, 13, 17, 5},
			{false, false, 512, 64, 17}, {true, false, 64, 17, 512}, {false, true, 512, 16, 64},
			{false, false, 1, 1, 1}, {false, false, 30, 9, 300}, {true, true, 7, 600, 3},
		} {
			for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1))} {
				lda, ldb, ldc := tc.k, tc.n, tc.n
				if tc.tA {
					lda = tc.m
				}
				if tc.tB {
					ldb = tc.k
				}
				a, b := randSlice(rng, tc.m*tc.k), randSlice(rng, tc.k*tc.n)
				c := make([]float32, tc.m*tc.n)
				for i := range c {
					c[i] = float32(math.NaN())
				}
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
						v := float64(c[i*ldc+j])
						nonFinite := math.IsNaN(v) || math.IsInf(v, 0)
						hit := i == ia || j == jb
						if nonFinite != hit || (bad != bad && hit && !math.IsNaN(v)) {
							t.Fatalf("%+v bad=%v at A(%d,%d), B(%d,%d): C[%d,%d] = %v", tc, bad, ia, pa, pb, jb, i, j, v)
						}
					}
				}
			}
		}
	})
}

// TestSSE2Bias checks the SSE2 driver's bias product against the one
// without a bias plus the bias, bit for bit: the kernel adds the bias as
// C's first block of k is stored, alpha·acc + bias rounded as alpha·acc +
// 1·C is, on whole and narrow tiles.
func TestSSE2Bias(t *testing.T) {
	if !hasSSE2 {
		t.Skip("no SSE2 kernel in this build")
	}
	rng := rand.New(rand.NewPCG(13, 14))
	for _, s := range [][3]int{{13, 17, 5}, {6, 8, 300}, {1, 3, 1}, {50, 64, 64}} {
		m, n, k := s[0], s[1], s[2]
		a, b, bias := randSlice(rng, m*k), randSlice(rng, k*n), randSlice(rng, n)
		got, want := make([]float32, m*n), make([]float32, m*n)
		driverSSE2.GemmBias(blas.NoTrans, blas.NoTrans, m, n, k, 0.5, a, k, b, n, bias, got, n)
		for i := range m {
			copy(want[i*n:], bias)
		}
		driverSSE2.Gemm(blas.NoTrans, blas.NoTrans, m, n, k, 0.5, a, k, b, n, 1, want, n)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%v: C[%d] = %v with the bias, %v with C = bias", s, i, got[i], want[i])
			}
		}
	}
}

// TestSSE2PackPanel compares the SSE2 driver's packing with the portable
// loops over every lane count of its panel widths (6: a panel of A; 8: of
// B; 5, which no panel has), step counts around the groups of 4 steps and
// 256, both layouts, and checks that it leaves the elements past the panel
// alone.
func TestSSE2PackPanel(t *testing.T) {
	gemmtest.ComparePackPanel(t, packPanelSSE2, []int{mrSSE2, nrSSE2, 5}, []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 19, 256})
}

// TestSSE2PackPanelBounds checks that the SSE2 packing refuses a source or
// a panel one element short before its assembly reads or writes past it.
func TestSSE2PackPanelBounds(t *testing.T) {
	if !hasSSE2 {
		t.Skip("no SSE2 kernel in this build")
	}
	for _, s := range []int{mrSSE2, nrSSE2} {
		const kb, base = 9, 2
		ld := s + 3
		// The last step's last lane, one past, with the steps in rows
		// (need) and with the lanes in rows, ldT apart (needT).
		need := base + (kb-1)*ld + s
		const ldT = kb + 3
		needT := base + (s-1)*ldT + kb
		packPanelSSE2(make([]float32, kb*s), s, s, kb, true, make([]float32, need), base, ld) // fits
		packPanelSSE2(make([]float32, kb*s), s, s, kb, false, make([]float32, needT), base, ldT)
		for name, f := range map[string]func(){
			"source": func() { packPanelSSE2(make([]float32, kb*s), s, s, kb, true, make([]float32, need-1), base, ld) },
			"panel":  func() { packPanelSSE2(make([]float32, kb*s-1), s, s, kb, true, make([]float32, need), base, ld) },
			"transposed source": func() {
				packPanelSSE2(make([]float32, kb*s), s, s, kb, false, make([]float32, needT-1), base, ldT)
			},
			"transposed panel": func() {
				packPanelSSE2(make([]float32, kb*s-1), s, s, kb, false, make([]float32, needT), base, ldT)
			},
		} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("s %d: a %s one element short packed without a panic", s, name)
					}
				}()
				f()
			}()
		}
	}
}
