package gemmtest

import (
	"testing"

	"github.com/adamnode/adamnode/tensor/internal/gemm"
)

// ComparePackPanel compares pack, a driver's gemm.Driver.PackPanel, with
// gemm.PackPanelGo in both layouts, for every panel width s in widths,
// every lane count w from 1 to s and every step count in kbs, the source
// starting 7 elements in, and checks that pack leaves the 8 elements past
// the panel alone.
func ComparePackPanel[T gemm.Float](t *testing.T, pack func(d []T, s, w, kb int, perStep bool, src []T, base, ld int), widths, kbs []int) {
	t.Helper()
	for _, perStep := range []bool{false, true} {
		for _, s := range widths {
			for w := 1; w <= s; w++ {
				for _, kb := range kbs {
					ld := kb + 3
					if perStep {
						ld = w + 5
					}
					src := make([]T, 7+ld*max(w, kb))
					for i := range src {
						src[i] = T(i + 1)
					}
					got := make([]T, kb*s+8)
					want := make([]T, kb*s+8)
					for i := range got {
						got[i], want[i] = -1, -1
					}
					pack(got[:kb*s], s, w, kb, perStep, src, 7, ld)
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
