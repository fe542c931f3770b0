package sgemm

import (
	"testing"

	"github.com/adamnode/adamnode/tensor/internal/gemm/gemmtest"
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
	gemmtest.ComparePackPanel(t, packPanelAsm, []int{12, 16, 32}, []int{1, 2, 15, 16, 17, 33, 256})
}
