package odeblock

import (
	"math"
	"testing"
)

// ball is a ball thrown up at v0 from height h0 under gravity 9.81:
// h' = v, v' = −9.81.
func ball(_ float64, y, dy []float64) error {
	dy[0], dy[1] = y[1], -9.81
	return nil
}

// impact returns the exact time the ball of h0, v0 reaches the ground.
func impact(h0, v0 float64) float64 { return (v0 + math.Sqrt(v0*v0+2*9.81*h0)) / 9.81 }

// TestEventBouncingBall: the solve stops where the height first falls
// through zero, found on the dense output to 1e-8 of the exact time, for
// every adaptive method; the state there has height 0; a rising crossing
// is not the falling event; no crossing before the end leaves EventTime
// false.
func TestEventBouncingBall(t *testing.T) {
	for _, name := range MethodNames() {
		tb, _ := Method(name)
		if !tb.Adaptive() || tb.Order < 3 || tb.bdf { // bdf refuses events
			continue
		}
		for _, c := range []struct{ h0, v0 float64 }{{10, 0}, {1, 5}, {0.5, -2}} {
			s, err := NewSolver[float64](Options{Tableau: tb, RTol: 1e-10, ATol: 1e-10})
			if err != nil {
				t.Fatal(err)
			}
			s.Event = &Event[float64]{G: func(_ float64, y []float64) float64 { return y[0] }, Direction: -1}
			out := [][]float64{make([]float64, 2), make([]float64, 2)}
			if _, err := s.Solve(ball, []float64{c.h0, c.v0}, []float64{0, 100}, out); err != nil {
				t.Fatal(err)
			}
			te, hit := s.EventTime()
			want := impact(c.h0, c.v0)
			if !hit || math.Abs(te-want) > 1e-8 || math.Abs(out[1][0]) > 1e-8 {
				t.Errorf("%s, h0 %g v0 %g: event at %v (hit %v), exact %v; height there %g", name, c.h0, c.v0, te, hit, want, out[1][0])
			}
		}
	}
	// A rising crossing (h from −1 upwards) is not a falling event, and
	// the solve reaches its end.
	s, _ := NewSolver[float64](Options{RTol: 1e-8, ATol: 1e-8})
	s.Event = &Event[float64]{G: func(_ float64, y []float64) float64 { return y[0] }, Direction: -1}
	out := [][]float64{make([]float64, 2), make([]float64, 2)}
	if _, err := s.Solve(ball, []float64{-1, 10}, []float64{0, 1}, out); err != nil {
		t.Fatal(err)
	}
	if _, hit := s.EventTime(); hit {
		t.Error("a rising crossing ended a falling-event solve")
	}
	if _, err := s.Solve(ball, []float64{1, 0}, []float64{0, 0.5, 1}, [][]float64{{0, 0}, {0, 0}, {0, 0}}); err == nil {
		t.Error("an event solve with three times did not fail")
	}
}
