package integrate

import (
	"math"

	"github.com/adamnode/adamnode/tensor"
)

// stepGeom is where one Runge–Kutta step lies: from t, of signed size h,
// to end (t+h, or exactly the stop it lands on). Its first stage is
// evaluated at t0: t itself, or just past it when the step restarts after a
// jump. leftLimit says the step ends at a jump: its end stages are
// evaluated just before it (the left limit of the dynamics there).
type stepGeom struct {
	t, h, end, t0 float64
	leftLimit     bool
}

// stageTime returns the time of stage i of the step with tableau tb.
func (g stepGeom) StageTime(tb *Tableau, i int) float64 {
	if i == 0 {
		return g.t0
	}
	return stageTime(g.t, g.h, g.end, tb.C[i], g.leftLimit)
}

// stageTime returns the time of the stage with node c in the step of size h
// from t to end: t + c·h, never past end (t + h may round past the stop the
// step lands on); a node of 1 is end itself, or just before it when the step
// ends at a jump (leftLimit: the left limit of the dynamics there).
func stageTime(t, h, end, c float64, leftLimit bool) float64 {
	ti := t + c*h
	if c == 1 || (ti-end)*h >= 0 {
		ti = end
		if leftLimit {
			ti = math.Nextafter(end, t)
		}
	}
	return ti
}

// parallelCombine is the length from which a combiner splits a linear
// combination over its engine's workers: a dopri5 stage input over the
// adjoint state of an AdamNODE of batch 2048 (200 000 values) took 7% of
// a training iteration's time on one core while the other waited.
const parallelCombine = 1 << 16

// combiner forms a solver's stage sums (linComb), split over the workers
// of eng when they are long; with no engine or one worker, on the calling
// goroutine. The split changes no element's
// arithmetic: every path gives the same bits.
type combiner[T tensor.Float] struct {
	eng       tensor.Engine[T]
	dst, base []T
	coef      [16]T
	src       [16][]T
	n         int
	body      func(lo, hi int)
}

// use sets the engine whose workers c splits over.
func (c *combiner[T]) use(eng tensor.Engine[T]) {
	if tensor.Workers(eng) < 2 {
		eng = nil
	}
	c.eng = eng
	if c.body == nil {
		c.body = c.band
	}
}

// linComb is the package's linComb, split over c's workers when dst is
// long.
func (c *combiner[T]) linComb(dst, base []T, h float64, cs []float64, ks [][]T) {
	if c.eng == nil || len(dst) < parallelCombine {
		linComb(dst, base, h, cs, ks)
		return
	}
	c.n = terms(&c.coef, &c.src, h, cs, ks)
	c.dst, c.base = dst, base
	c.eng.Parallel(len(dst), c.body)
	c.dst, c.base = nil, nil
	clear(c.src[:c.n])
}

// band forms elements [lo, hi) of the combination set up by linComb.
func (c *combiner[T]) band(lo, hi int) {
	var src [16][]T
	for j := range c.n {
		src[j] = c.src[j][lo:hi]
	}
	var base []T
	if c.base != nil {
		base = c.base[lo:hi]
	}
	tensor.LinearCombination(c.dst[lo:hi], base, c.coef[:c.n], src[:c.n])
}

// linComb sets dst = base + h·Σ_j c[j]·ks[j] (base nil: zero), skipping zero
// coefficients, in one pass (tensor.LinearCombination): each operand is read
// from memory once, where a chain of axpys would stream dst through memory
// once per term. The sums are formed in the same order as the chain.
func linComb[T tensor.Float](dst, base []T, h float64, c []float64, ks [][]T) {
	var coef [16]T
	var src [16][]T
	n := terms(&coef, &src, h, c, ks)
	tensor.LinearCombination(dst, base, coef[:n], src[:n])
}

// terms gathers the terms of h·Σ_j c[j]·ks[j] with non-zero coefficients
// into coef and src, in order, and returns their number.
func terms[T tensor.Float](coef *[16]T, src *[16][]T, h float64, c []float64, ks [][]T) int {
	n := 0
	for j, cj := range c {
		if cj != 0 {
			if n == len(coef) {
				panic("odeblock: more than 16 stages")
			}
			coef[n], src[n] = T(h*cj), ks[j]
			n++
		}
	}
	return n
}

// denseStages evaluates the dense-output stages of the accepted step g
// (Tableau.DenseC), once per step.
func (r *solveRun[T]) denseStages(g stepGeom) error {
	s := r.s
	if s.kdAt == g.t && !math.IsNaN(s.kdAt) {
		return nil
	}
	ops := s.ops()
	for i, row := range s.tb.DenseA {
		ops.denseInput(s.tmp, s.y, g.h, row, s.kall[:len(row)])
		if err := r.eval(evalProbe, 0, g.t+s.tb.DenseC[i]*g.h, s.tmp, s.kd[i]); err != nil {
			return err
		}
	}
	s.kdAt = g.t
	return nil
}
