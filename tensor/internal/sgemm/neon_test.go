package sgemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adamnode/adamnode/tensor/internal/gemm"
	"github.com/adamnode/adamnode/tensor/internal/gemm/gemmtest"
)

// neonKernels are every NEON kernel of ../gemm/gen_neon.go, as runKernel takes
// them (nv counting vectors of 4 columns here; none reads A by rows).
var neonKernels = []avx2Kernel{
	{Name: "neonP8", Kern: neonP8, NV: 2, RK: 12}, {Name: "neonP4", Kern: neonP4, NV: 1, RK: 12},
	{Name: "neonP8r4", Kern: neonP8r4, NV: 2, RK: 4}, {Name: "neonP4r4", Kern: neonP4r4, NV: 1, RK: 4},
	{Name: "neonP8r8", Kern: neonP8r8, NV: 2, RK: 8}, {Name: "neonP4r8", Kern: neonP4r8, NV: 1, RK: 8},
}

// TestNEONKernels runs every NEON kernel directly, on any arm64 CPU
// (whatever path isa.Current chose): every row count 1..its rows, every
// column count 1..its width (the whole tile stored by vectors, a partial
// one element by element), k from 1, B a packed panel and rows of a wider
// matrix, A's panel packed and wider, each way of storing (beta 0, -0 and
// not, a bias, alpha 0). The operands' unused rows and columns are NaN:
// the kernels compute them, but none may reach a stored element.
func TestNEONKernels(t *testing.T) {
	if !hasNEON {
		t.Skip("no NEON kernels")
	}
	rng := rand.New(rand.NewPCG(21, 22))
	negZero := float32(math.Copysign(0, -1))
	type store struct {
		alpha, beta float32
		bias        bool
	}
	stores := []store{{1, 0, false}, {-1.5, 0, true}, {0.5, 1, false}, {2, -0.75, false}, {1, negZero, false}, {0, 0.5, false}}
	for _, kn := range neonKernels {
		width := 4 * kn.NV
		for rows := 1; rows <= kn.RK; rows++ {
			for w := 1; w <= width; w++ {
				for _, k := range []int{1, 2, 3, 4, 5, 7, 8, 9, 13, 64} {
					for si, st := range stores {
						ldb := width // a packed panel
						if (rows+w+k+si)%2 == 1 {
							ldb = width + 3 // B in place
						}
						ka := mrNEON
						if (rows+k)%3 == 0 {
							ka = 17 // a transposed A in place
						}
						gemmtest.RunKernel(t, rng, kn, kernelCase{Rows: rows, W: w, K: k, Alpha: st.alpha, Beta: st.beta, Bias: st.bias, LDB: ldb, KA: ka, LDC: w + 2 + k%3})
					}
				}
			}
		}
	}
}

// TestNEONEdge checks the NEON driver's choice of kernel: the fewest rows
// (4, 8, 12) and vectors (1, 2) covering a panel, and its panel widths.
func TestNEONEdge(t *testing.T) {
	for _, c := range []struct {
		rows, w int
		want    string
	}{
		{1, 1, "neonP4r4"}, {4, 4, "neonP4r4"}, {1, 5, "neonP8r4"}, {4, 8, "neonP8r4"},
		{5, 4, "neonP4r8"}, {8, 1, "neonP4r8"}, {5, 5, "neonP8r8"}, {8, 8, "neonP8r8"},
		{9, 4, "neonP4"}, {12, 2, "neonP4"}, {9, 5, "neonP8"}, {12, 8, "neonP8"},
	} {
		got := edgeKernelNEON(c.rows, c.w)
		if name := neonKernelName(got); name != c.want {
			t.Errorf("edgeKernelNEON(%d, %d) = %s, want %s", c.rows, c.w, name, c.want)
		}
	}
	for w, want := range map[int]int{1: 4, 3: 4, 4: 4, 5: 8, 7: 8, 8: 8} {
		if got := panelWidthNEON(w); got != want {
			t.Errorf("panelWidthNEON(%d) = %d, want %d", w, got, want)
		}
	}
	if driverNEON.PackAMinN != 0 || driverNEON.DirectBMaxM != 0 {
		t.Error("the NEON driver reads a panel in place: its kernels read whole vectors past the matrices' edges")
	}
}

// neonKernelName names a NEON kernel by its code pointer.
func neonKernelName(k gemm.Kernel[float32]) string {
	p := fmt.Sprintf("%p", k)
	for _, kn := range neonKernels {
		if fmt.Sprintf("%p", kn.Kern) == p {
			return kn.Name
		}
	}
	return "unknown kernel " + p
}
