package odeblock_test

import (
	"fmt"
	"testing"

	"github.com/adamnode/adamnode/odeblock"
)

// TestRecursiveEqualsBackprop: recursive checkpointing gives Backprop's
// gradients (the states it recomputes are the forward's to the bit) for
// every family, with jumps and output times inside the span, whatever the
// budget; it keeps at most Budget states, and recomputes fewer steps the
// larger the budget.
func TestRecursiveEqualsBackprop(t *testing.T) {
	for _, f := range families(4) {
		times := []float64{0, 0.7, 1.5}
		solver := odeblock.Options{RTol: 1e-12, ATol: 1e-12, Stops: odeblock.Stops{Jumps: []float64{0.4}}}
		bp, bst := gradients(t, f, &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: odeblock.Backprop{}})
		steps := bst.Forward.Accepted
		if steps < 20 {
			t.Fatalf("%s: only %d steps; the test needs more than the budgets", f.name, steps)
		}
		prevNFE := -1
		for _, budget := range []int{1, 2, 3, 8, steps} {
			t.Run(fmt.Sprintf("%s/budget=%d", f.name, budget), func(t *testing.T) {
				rc, st := gradients(t, f, &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: odeblock.Recursive{Budget: budget}})
				if d := maxRelDiff(rc, bp); d > 1e-12 {
					t.Errorf("recursive vs backprop: relative difference %.3g", d)
				}
				if st.Stored > budget || st.Stored < min(budget, 2) {
					t.Errorf("kept at most %d states, budget %d", st.Stored, budget)
				}
				if prevNFE >= 0 && st.Backward.NFE > prevNFE {
					t.Errorf("backward NFE %d with budget %d, more than %d with a smaller one", st.Backward.NFE, budget, prevNFE)
				}
				prevNFE = st.Backward.NFE
			})
		}
	}
}
