package sgemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adamnode/adamnode/tensor/internal/gemm"
	"github.com/adamnode/adamnode/tensor/internal/isa"
)

// avx2Kernel is one AVX2 micro-kernel and its shape: strided reads A by
// rows in place, nv vectors of 8 columns, rk rows computed.
type avx2Kernel struct {
	name    string
	kern    gemm.Kernel[float32]
	strided bool
	nv, rk  int
}

// avx2Kernels are every AVX2 kernel of ../gemm/gen_avx2.go.
var avx2Kernels = []avx2Kernel{
	{"avx2P16", avx2P16, false, 2, 6}, {"avx2P8", avx2P8, false, 1, 6},
	{"avx2S16", avx2S16, true, 2, 6}, {"avx2S8", avx2S8, true, 1, 6},
	{"avx2P16r2", avx2P16r2, false, 2, 2}, {"avx2P8r2", avx2P8r2, false, 1, 2},
	{"avx2P16r4", avx2P16r4, false, 2, 4}, {"avx2P8r4", avx2P8r4, false, 1, 4},
}

// kernelCase is one call of a kernel: rows rows and w columns stored,
// k steps, the scalars, with a bias or not, B's row stride (the panel's
// width when packed, wider in place) and A's (ka) and C's.
type kernelCase struct {
	rows, w, k  int
	alpha, beta float32
	bias        bool
	ldb, ka     int
	ldc         int
}

// runKernel calls kern on random operands for kc and checks the stored
// tile against float64 sums, and that nothing else of C changed. The
// operands' elements that the tile does not use (the rows past rows, the
// columns past w) are NaN, and so is C when beta is 0: none may reach a
// stored element.
func runKernel(t *testing.T, rng *rand.Rand, kn avx2Kernel, kc kernelCase) {
	t.Helper()
	nan := float32(math.NaN())
	// A: rk rows (all must lie in the slice), row i's step p at
	// a[p·ka + i], or a[i·ka + p] when strided.
	a := make([]float32, kc.ka*max(kc.k, kn.rk)+kc.k+kn.rk)
	at := func(i, p int) int {
		if kn.strided {
			return i*kc.ka + p
		}
		return p*kc.ka + i
	}
	for i := range a {
		a[i] = nan
	}
	for i := range kc.rows {
		for p := range kc.k {
			a[at(i, p)] = float32(rng.NormFloat64())
		}
	}
	b := make([]float32, kc.ldb*kc.k+16)
	for i := range b {
		b[i] = nan
	}
	for p := range kc.k {
		for j := range kc.w {
			b[p*kc.ldb+j] = float32(rng.NormFloat64())
		}
	}
	c := make([]float32, kc.ldc*kn.rk+16)
	for i := range c {
		c[i] = float32(rng.NormFloat64())
		if kc.beta == 0 && i%kc.ldc < kc.w {
			c[i] = nan
		}
	}
	c0 := append([]float32(nil), c...)
	var bias []float32
	var bp *float32
	if kc.bias {
		bias = make([]float32, 16)
		for j := range bias {
			bias[j] = nan
			if j < kc.w {
				bias[j] = float32(rng.NormFloat64())
			}
		}
		bp = &bias[0]
	}
	kn.kern(kc.k, &a[0], kc.ka, &b[0], kc.ldb, &c[0], kc.ldc, kc.alpha, kc.beta, kc.rows, gemm.Lanes(kc.w), bp)
	for idx := range c {
		i, j := idx/kc.ldc, idx%kc.ldc
		if i >= kc.rows || j >= kc.w {
			if math.Float32bits(c[idx]) != math.Float32bits(c0[idx]) {
				t.Fatalf("%s %+v: c[%d] (row %d, column %d) outside the tile changed: %v, was %v", kn.name, kc, idx, i, j, c[idx], c0[idx])
			}
			continue
		}
		var s, abs float64
		for p := range kc.k {
			x := float64(a[at(i, p)]) * float64(b[p*kc.ldb+j])
			s += x
			abs += math.Abs(x)
		}
		want := float64(kc.alpha) * s
		abs *= math.Abs(float64(kc.alpha))
		if kc.beta != 0 {
			want += float64(kc.beta) * float64(c0[idx])
			abs += math.Abs(float64(kc.beta) * float64(c0[idx]))
		}
		if kc.bias {
			want += float64(bias[j])
			abs += math.Abs(float64(bias[j]))
		}
		if got := float64(c[idx]); math.IsNaN(got) || math.Abs(got-want) > float64(kc.k+3)*0x1p-23*abs {
			t.Fatalf("%s %+v: C[%d,%d] = %v, want %v", kn.name, kc, i, j, got, want)
		}
	}
}

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
		width := 8 * kn.nv
		for rows := 1; rows <= kn.rk; rows++ {
			for w := width - 7; w <= width; w++ {
				for _, k := range []int{1, 2, 3, 4, 5, 7, 8, 9, 13} {
					for si, st := range stores {
						ldb := width // a packed panel
						if (rows+w+k+si)%2 == 1 {
							ldb = w + 3 // B in place
						}
						ka := mrAVX2
						if kn.strided {
							ka = k + 1
						} else if (rows+k)%3 == 0 {
							ka = 11 // a transposed A in place
						}
						runKernel(t, rng, kn, kernelCase{rows: rows, w: w, k: k, alpha: st.alpha, beta: st.beta, bias: st.bias, ldb: ldb, ka: ka, ldc: w + 2 + k%3})
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
		if fmt.Sprintf("%p", kn.kern) == p {
			return kn.name
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
	for _, perStep := range []bool{false, true} {
		for _, s := range []int{mrAVX2, 8, 12, nrAVX2} {
			for w := 1; w <= s; w++ {
				for _, kb := range []int{1, 2, 7, 8, 9, 15, 16, 17, 256} {
					ld := kb + 3
					if perStep {
						ld = w + 5
					}
					src := make([]float32, 7+ld*max(w, kb))
					for i := range src {
						src[i] = float32(i + 1)
					}
					got := make([]float32, kb*s+8)
					want := make([]float32, kb*s+8)
					for i := range got {
						got[i], want[i] = -1, -1
					}
					packPanelAVX2(got[:kb*s], s, w, kb, perStep, src, 7, ld)
					gemm.PackPanelGo(want[:kb*s], s, w, kb, perStep, src, 7, ld)
					for i := range got {
						if got[i] != want[i] {
							t.Fatalf("perStep %v s %d w %d kb %d: element %d is %g, want %g", perStep, s, w, kb, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
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
