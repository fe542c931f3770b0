package integrate

import (
	"fmt"
	"math"

	"github.com/adamnode/adamnode/tensor"
)

// Event is an event of a solve: a time t* where G(t, y(t)) crosses zero in
// the given Direction (−1: from above, +1: from below, 0: either). The
// crossing is found after each accepted step by root-finding on the
// step's dense output (no extra evaluations of f): the state at t* is the
// interpolant's there. G's own zeros at the start do not count.
//
// An event is terminal by default: the solve ends at the first crossing
// (EventTime). With NonTerminal the solve goes on to its end and records
// every crossing (Events), as SciPy's events with terminal=False; a step
// that G crosses zero twice within shows no sign change and is missed
// (bound MaxStep to resolve events closer than a step).
type Event[T tensor.Float] struct {
	G           func(t float64, y []T) float64
	Direction   int
	NonTerminal bool
}

// at returns G(t, y), an error if it is not a number.
func (e *Event[T]) at(t float64, y []T) (float64, error) {
	g := e.G(t, y)
	if math.IsNaN(g) {
		return 0, fmt.Errorf("%w: the event function is NaN at t=%g", ErrNonFinite, t)
	}
	return g, nil
}

// crosses reports whether the event function went from a to b across
// zero in the event's direction.
func (e *Event[T]) crosses(a, b float64) bool {
	switch {
	case a == 0:
		return false
	case e.Direction < 0:
		return a > 0 && b <= 0
	case e.Direction > 0:
		return a < 0 && b >= 0
	}
	return a > 0 && b <= 0 || a < 0 && b >= 0
}

// EventTime returns where the last solve's terminal event happened, and
// whether it did (false: the solve reached its end first).
func (s *Solver[T]) EventTime() (float64, bool) { return s.run.eventT, s.run.hit }

// Events returns the times and states of the last solve's crossings of a
// NonTerminal event, in order (the slices are the caller's).
func (s *Solver[T]) Events() ([]float64, [][]T) { return s.run.eventTs, s.run.eventYs }

// event checks the accepted step g for the event; on a crossing it finds
// the time by the Illinois variant of regula falsi on the dense output,
// writes the state there into the last output and ends the solve.
func (r *solveRun[T]) event(g stepGeom, f0, f1 []T) error {
	return r.eventIn(g, func(dst []T, tq float64) { r.s.m.interpolate(r.s.bufs(), dst, g, tq, f0, f1) })
}

// eventIn is event for the accepted step g whose dense output interp
// writes the state at a time inside it.
func (r *solveRun[T]) eventIn(g stepGeom, interp func(dst []T, tq float64)) error {
	s := r.s
	ev := s.Event
	g1, err := ev.at(g.end, s.y1)
	if err != nil {
		return r.fail(g.end, g.h, err)
	}
	if !ev.crosses(r.gPrev, g1) {
		r.gPrev = g1
		return nil
	}
	out := r.out[len(r.out)-1]
	if ev.NonTerminal {
		out = make([]T, s.n) // this crossing's state, kept
	}
	phi := func(x float64) (float64, error) {
		if x == 1 {
			return g1, nil
		}
		tq := g.t + x*g.h
		interp(out, tq)
		return ev.at(tq, out)
	}
	// The bracket [lo, hi] in step fractions, the function's sign at lo
	// that of the start.
	lo, hi, flo, fhi := 0.0, 1.0, r.gPrev, g1
	x, side := 1.0, 0
	tol := 4 * eps * math.Max(math.Abs(g.t), math.Abs(g.end)) / math.Abs(g.h)
	for it := 0; it < 200 && hi-lo > tol && fhi != 0; it++ {
		x = (lo*fhi - hi*flo) / (fhi - flo)
		if !(x > lo && x < hi) {
			x = (lo + hi) / 2
		}
		fx, err := phi(x)
		if err != nil {
			return r.fail(g.t, g.h, err)
		}
		if fx == 0 {
			lo, hi = x, x
			break
		}
		if (fx > 0) == (flo > 0) {
			lo, flo = x, fx
			if side == -1 {
				fhi /= 2
			}
			side = -1
		} else {
			hi, fhi = x, fx
			if side == 1 {
				flo /= 2
			}
			side = 1
		}
	}
	x = hi // the first point at or past the crossing
	te := g.t + x*g.h
	if x == 1 {
		te = g.end
		copy(out, s.y1)
	} else {
		interp(out, te)
	}
	if ev.NonTerminal {
		r.eventTs, r.eventYs = append(r.eventTs, te), append(r.eventYs, out)
		r.gPrev = g1
		return nil
	}
	r.eventT = te
	r.hit, r.done = true, true
	return nil
}
