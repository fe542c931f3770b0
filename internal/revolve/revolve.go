// Package revolve is the binomial checkpoint schedule (Griewank and
// Walther 2000, "Revolve") that the ODE and SDE solves' memory-bounded
// gradient modes share: odeblock's Recursive mode and sde's Checkpoint
// with a budget pull a solve's steps back with at most a given number of
// stored states, recomputing the fewest steps.
package revolve

// Split returns where to keep the next state when l steps, from a kept
// state, are to be pulled back with free more states allowed: the offset
// of the first step of the part pulled back first, chosen so that the
// recomputed steps are fewest. With r the least number of sweeps with
// Binomial(free+1, r) ≥ l, the split is the least m ≥ Binomial(free+1,
// r−2) with l − m ≤ Binomial(free, r), and 1 ≤ m < l for l ≥ 2. Pulling
// back the part from m first, then the first m steps, the whole takes
// r·l − Binomial(free+2, r−1) recomputed steps, the fewest any schedule
// takes.
func Split(l, free int) int {
	free = min(free, l) // more never helps
	r := 0
	for Binomial(free+1, r) < l {
		r++
	}
	m := max(1, Binomial(free+1, r-2), l-Binomial(free, r))
	return min(m, l-1)
}

// Binomial returns β(s, r) = C(s+r, s), the steps that s states and r
// sweeps can pull back (0 for r < 0), saturating at 2⁴⁰, far above any
// step count.
func Binomial(s, r int) int {
	if r < 0 {
		return 0
	}
	const limit = 1 << 40
	b := 1
	for i := 1; i <= r; i++ { // C(s+i, i) = C(s+i−1, i−1)·(s+i)/i
		b = b * (s + i) / i
		if b > limit {
			return limit
		}
	}
	return b
}
