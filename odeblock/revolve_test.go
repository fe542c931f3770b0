package odeblock

import "testing"

// TestRevolveSplitOptimal: the split revolveSplit picks takes the fewest
// re-advanced steps any schedule does (a dynamic programme over every
// split), and that number is Griewank's r·l − β(free+2, r−1).
func TestRevolveSplitOptimal(t *testing.T) {
	const maxL, maxFree = 160, 6
	// best[c][l]: fewest steps re-advanced to pull back l steps from a kept
	// state with c more states allowed.
	best := make([][]int, maxFree+1)
	for c := range best {
		best[c] = make([]int, maxL+1)
		for l := 2; l <= maxL; l++ {
			if c == 0 {
				best[c][l] = l * (l - 1) / 2
				continue
			}
			best[c][l] = -1
			for m := 1; m < l; m++ {
				if v := m + best[c-1][l-m] + best[c][m]; best[c][l] < 0 || v < best[c][l] {
					best[c][l] = v
				}
			}
		}
	}
	var cost func(l, c int) int
	cost = func(l, c int) int {
		if l <= 1 {
			return 0
		}
		if c == 0 {
			return l * (l - 1) / 2
		}
		m := revolveSplit(l, c)
		if m < 1 || m >= l {
			t.Fatalf("revolveSplit(%d, %d) = %d, outside [1, %d)", l, c, m, l)
		}
		return m + cost(l-m, c-1) + cost(m, c)
	}
	for c := 1; c <= maxFree; c++ {
		for l := 2; l <= maxL; l++ {
			got := cost(l, c)
			if got != best[c][l] {
				t.Errorf("l=%d free=%d: %d steps re-advanced, the best schedule takes %d", l, c, got, best[c][l])
			}
			r := 0
			for binom(c+1, r) < l {
				r++
			}
			if want := r*l - binom(c+2, r-1); got != want {
				t.Errorf("l=%d free=%d: %d steps re-advanced, Griewank's bound is %d", l, c, got, want)
			}
		}
	}
}
