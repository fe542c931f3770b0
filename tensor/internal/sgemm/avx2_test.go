package sgemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adamnode/adamnode/tensor/internal/gemm"
	"github.com/adamnode/adamnode/tensor/internal/gemm/gemmtest"
	"github.com/adamnode/adamnode/tensor/internal/isa"
)

// avx2Kernel is one micro-kernel and its shape (nv counting vectors of
// the kernels' own width), as gemmtest.RunKernel takes it.
type avx2Kernel = gemmtest.Kernel[float32]

// avx2Kernels are every AVX2 kernel of ../gemm/gen_avx2.go.
var avx2Kernels = []avx2Kernel{
	{Name: "avx2P16", Kern: avx2P16, NV: 2, RK: 6}, {Name: "avx2P8", Kern: avx2P8, NV: 1, RK: 6},
	{Name: "avx2S16", Kern: avx2S16, Strided: true, NV: 2, RK: 6}, {Name: "avx2S8", Kern: avx2S8, Strided: true, NV: 1, RK: 6},
	{Name: "avx2P16r2", Kern: avx2P16r2, NV: 2, RK: 2}, {Name: "avx2P8r2", Kern: avx2P8r2, NV: 1, RK: 2},
	{Name: "avx2P16r4", Kern: avx2P16r4, NV: 2, RK: 4}, {Name: "avx2P8r4", Kern: avx2P8r4, NV: 1, RK: 4},
}

// kernelCase is one call of a kernel, as gemmtest.RunKernel takes it.
type kernelCase = gemmtest.Case[float32]

// TestAVX2Kernels runs every AVX2 kernel directly, on any CPU with AVX2
// and FMA (whatever path isa.Current chose): every row count 1..its rows,
// every column count of its vectors (whole and through the mask), k from
// 1 (the unrolled loop's remainders, one and several rounds of 4), B
// packed and in place, A's panel packed and wider, each way of storing
// (beta 0, -0 and not, a bias).
func TestAVX2Kernels(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2 with FMA")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	negZero := float32(math.Copysign(0, -1))
	type store struct {
		alpha, beta float32
		bias        bool
	}
	stores := []store{{1, 0, false}, {-1.5, 0, true}, {0.5, 1, false}, {2, -0.75, false}, {1, negZero, false}}
	for _, kn := range avx2Kernels {
		width := 8 * kn.NV
		for rows := 1; rows <= kn.RK; rows++ {
			for w := width - 7; w <= width; w++ {
				for _, k := range []int{1, 2, 3, 4, 5, 7, 8, 9, 13} {
					for si, st := range stores {
						ldb := width // a packed panel
						if (rows+w+k+si)%2 == 1 {
							ldb = w + 3 // B in place
						}
						ka := mrAVX2
						if kn.Strided {
							ka = k + 1
						} else if (rows+k)%3 == 0 {
							ka = 11 // a transposed A in place
						}
						gemmtest.RunKernel(t, rng, kn, kernelCase{Rows: rows, W: w, K: k, Alpha: st.alpha, Beta: st.beta, Bias: st.bias, LDB: ldb, KA: ka, LDC: w + 2 + k%3})
					}
				}
			}
		}
	}
}

// TestAVX2Edge checks the AVX2 driver's choice of kernel: the fewest rows
// (2, 4, 6) and vectors (1, 2) covering a panel.
func TestAVX2Edge(t *testing.T) {
	for _, c := range []struct {
		rows, w int
		want    string
	}{
		{1, 1, "avx2P8r2"}, {2, 8, "avx2P8r2"}, {2, 9, "avx2P16r2"}, {1, 16, "avx2P16r2"},
		{3, 8, "avx2P8r4"}, {4, 1, "avx2P8r4"}, {3, 9, "avx2P16r4"}, {4, 16, "avx2P16r4"},
		{5, 8, "avx2P8"}, {6, 2, "avx2P8"}, {5, 9, "avx2P16"}, {6, 16, "avx2P16"},
	} {
		got := edgeKernelAVX2(c.rows, c.w)
		if name := kernelName(got); name != c.want {
			t.Errorf("edgeKernelAVX2(%d, %d) = %s, want %s", c.rows, c.w, name, c.want)
		}
	}
	for w, want := range map[int]int{1: 8, 7: 8, 8: 8, 9: 16, 15: 16, 16: 16} {
		if got := panelWidthAVX2(w); got != want {
			t.Errorf("panelWidthAVX2(%d) = %d, want %d", w, got, want)
		}
	}
}

// kernelName names an AVX2 kernel by its code pointer.
func kernelName(k gemm.Kernel[float32]) string {
	p := fmt.Sprintf("%p", k)
	for _, kn := range avx2Kernels {
		if fmt.Sprintf("%p", kn.Kern) == p {
			return kn.Name
		}
	}
	return "unknown kernel " + p
}

// TestDriverFor checks that each kernel path takes its driver, and Sgemm
// that of isa.Current.
func TestDriverFor(t *testing.T) {
	if driverFor(isa.AVX512) != driver || driverFor(isa.AVX2) != driverAVX2 || driverFor(isa.SSE2) != driverSSE2 || driverFor(isa.NEON) != driverNEON || driverFor(isa.Generic) != driverGonum {
		t.Error("driverFor does not map the paths to their drivers")
	}
	if driverGonum.Enabled {
		t.Error("the generic path runs kernels")
	}
	if active != driverFor(isa.Current()) {
		t.Errorf("Sgemm runs another driver than that of %v", isa.Current())
	}
	// Every path but generic has kernels: sse2, avx2 and avx512 on amd64,
	// neon on arm64.
	if want := isa.Current() != isa.Generic; Enabled() != want {
		t.Errorf("Enabled() = %v on the %v path", Enabled(), isa.Current())
	}
}

// TestAVX2PackPanel compares the AVX2 driver's packing with the portable
// loops over every lane count of its panel widths (6: a panel of A; 8 and
// 16: of B; 12, whose second block of lanes is partial, as the contract
// allows), step counts around the 8×8 blocks, and both layouts.
func TestAVX2PackPanel(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2 with FMA")
	}
	gemmtest.ComparePackPanel(t, packPanelAVX2, []int{mrAVX2, 8, 12, nrAVX2}, []int{1, 2, 7, 8, 9, 15, 16, 17, 256})
}

// TestAVX2PackPanelBounds checks that the AVX2 packing refuses a source
// one element short, in either layout, before its assembly reads past it.
func TestAVX2PackPanelBounds(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2 with FMA")
	}
	const s, w, kb, base = nrAVX2, nrAVX2 - 1, 9, 2
	for _, c := range []struct {
		perStep bool
		ld      int
	}{{true, w + 3}, {false, kb + 3}} {
		need := base + (kb-1)*c.ld + w // the last step's last lane, one past
		if !c.perStep {
			need = base + (w-1)*c.ld + kb
		}
		d := make([]float32, kb*s)
		packPanelAVX2(d, s, w, kb, c.perStep, make([]float32, need), base, c.ld) // fits
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("perStep %v: a source of %d elements, one short, packed without a panic", c.perStep, need-1)
				}
			}()
			packPanelAVX2(d, s, w, kb, c.perStep, make([]float32, need-1), base, c.ld)
		}()
	}
}

// TestHasAVX2 checks hasAVX2 against the CPU's features.
func TestHasAVX2(t *testing.T) {
	if want := cpuHasAVX2FMA(); hasAVX2 != want {
		t.Errorf("hasAVX2 = %v on a CPU with AVX2 and FMA %v", hasAVX2, want)
	}
}
