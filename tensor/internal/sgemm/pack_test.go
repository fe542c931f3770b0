package sgemm

import (
	"testing"

	"github.com/adamnode/adamnode/tensor/internal/gemm"
)

// BenchmarkPackB packs a k×n B into panels of nr columns as gemm.Driver
// does, through packPanel.
func BenchmarkPackB(b *testing.B) {
	for _, c := range []struct {
		name  string
		trans bool
		k, n  int
	}{{"trans256", true, 256, 256}, {"plain256", false, 256, 256}, {"trans159", true, 159, 159}, {"plain512x256", false, 256, 256}} {
		b.Run(c.name, func(b *testing.B) {
			src := make([]float32, c.k*c.n)
			dst := make([]float32, (c.n+nr-1)/nr*nr*c.k)
			ld := c.n
			if c.trans {
				ld = c.k
			}
			b.SetBytes(int64(4 * c.k * c.n))
			for b.Loop() {
				for j0 := 0; j0 < c.n; j0 += nr {
					w := min(nr, c.n-j0)
					s := driver.PanelWidth(w)
					base := j0
					if c.trans {
						base = j0 * ld
					}
					packPanel(dst[j0*c.k:j0*c.k+c.k*s], s, w, c.k, !c.trans, src, base, ld)
				}
			}
		})
	}
}

// TestPackPanel compares packPanel's assembly with its portable loops over
// every lane count, panel width, step count and stride shape near the edges.
func TestPackPanel(t *testing.T) {
	if !hasKernel {
		t.Skip("no AVX-512 kernels")
	}
	for _, perStep := range []bool{false, true} {
		for _, s := range []int{12, 16, 32} {
			for w := 1; w <= s; w++ {
				for _, kb := range []int{1, 2, 15, 16, 17, 33, 256} {
					ld := kb + 3
					if perStep {
						ld = w + 5
					}
					n := ld * max(w, kb)
					src := make([]float32, 7+n)
					for i := range src {
						src[i] = float32(i + 1)
					}
					got := make([]float32, kb*s+8)
					want := make([]float32, kb*s+8)
					for i := range got {
						got[i], want[i] = -1, -1
					}
					packPanelAsm(got[:kb*s], s, w, kb, perStep, src, 7, ld)
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
