package integrate

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
		if !tb.Adaptive() || tb.Order < 3 {
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
	s, err := NewSolver[float64](Options{RTol: 1e-8, ATol: 1e-8})
	if err != nil {
		t.Fatal(err)
	}
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

// TestNonTerminalEvents: a NonTerminal event on the oscillator y” = −y
// from (1, 0) records every zero of y over [0, 20] — those where y falls
// (π/2 + 2kπ) with Direction −1, all of them (π/2 + kπ) with 0 — each
// within 1e-8 of the exact time with y there within 1e-8 of 0, and the
// solve still writes its outputs to the end.
func TestNonTerminalEvents(t *testing.T) {
	osc := func(_ float64, y, dy []float64) error { dy[0], dy[1] = y[1], -y[0]; return nil }
	for _, c := range []struct {
		dir   int
		first float64
		every float64
	}{{-1, math.Pi / 2, 2 * math.Pi}, {0, math.Pi / 2, math.Pi}, {1, 3 * math.Pi / 2, 2 * math.Pi}} {
		for _, method := range []string{"dopri5", "tsit5", "rodas4", "bdf"} {
			s, err := NewSolver[float64](Options{Method: method, RTol: 1e-10, ATol: 1e-10})
			if err != nil {
				t.Fatal(err)
			}
			s.Event = &Event[float64]{G: func(_ float64, y []float64) float64 { return y[0] }, Direction: c.dir, NonTerminal: true}
			ts := []float64{0, 10, 20}
			out := [][]float64{make([]float64, 2), make([]float64, 2), make([]float64, 2)}
			if _, err := s.Solve(osc, []float64{1, 0}, ts, out); err != nil {
				t.Fatal(err)
			}
			times, states := s.Events()
			var want []float64
			for x := c.first; x < 20; x += c.every {
				want = append(want, x)
			}
			if len(times) != len(want) {
				t.Fatalf("%s, direction %d: %d events %v, want %d at %v", method, c.dir, len(times), times, len(want), want)
			}
			for i, w := range want {
				if math.Abs(times[i]-w) > 1e-8 || math.Abs(states[i][0]) > 1e-8 {
					t.Errorf("%s, direction %d: event %d at %.12g (y %.3g), exact %.12g", method, c.dir, i, times[i], states[i][0], w)
				}
			}
			if math.Abs(out[2][0]-math.Cos(20)) > 1e-6 {
				t.Errorf("%s: y(20) = %g, want cos(20) = %g: the events stopped the solve", method, out[2][0], math.Cos(20))
			}
			if _, hit := s.EventTime(); hit {
				t.Errorf("%s: a non-terminal event reported a terminal hit", method)
			}
		}
	}
}
