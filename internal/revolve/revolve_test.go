package revolve

import "testing"

// TestSplitOptimal: the split Split picks takes the fewest
// re-advanced steps any schedule does (a dynamic programme over every
// split), and that number is Griewank's r·l − β(free+2, r−1).
func TestSplitOptimal(t *testing.T) {
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
		m := Split(l, c)
		if m < 1 || m >= l {
			t.Fatalf("Split(%d, %d) = %d, outside [1, %d)", l, c, m, l)
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
			for Binomial(c+1, r) < l {
				r++
			}
			if want := r*l - Binomial(c+2, r-1); got != want {
				t.Errorf("l=%d free=%d: %d steps re-advanced, Griewank's bound is %d", l, c, got, want)
			}
		}
	}
}

// TestBinomial: C(s+r, s), 0 for r < 0, saturating at 2⁴⁰.
func TestBinomial(t *testing.T) {
	for _, c := range []struct{ s, r, want int }{
		{3, -1, 0}, {0, 0, 1}, {5, 0, 1}, {1, 1, 2}, {2, 3, 10}, {4, 4, 70}, {10, 10, 184756},
		{60, 60, 1 << 40}, {30, 1 << 20, 1 << 40},
	} {
		if got := Binomial(c.s, c.r); got != c.want {
			t.Errorf("Binomial(%d, %d) = %d, want %d", c.s, c.r, got, c.want)
		}
	}
}
