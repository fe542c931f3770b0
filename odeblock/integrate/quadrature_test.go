package integrate

import (
	"math"
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

// TestAllFinite: every length and position of a NaN or an infinity, for
// each kernel the CPU runs (forEachErrScale).
func TestAllFinite(t *testing.T) {
	forEachErrScale(t, func(t *testing.T) {
		testAllFinite[float32](t, 1e30)
		testAllFinite[float64](t, 1e300)
	})
}

func testAllFinite[T tensor.Float](t *testing.T, big T) {
	ns := []int{1023, 1024, 1025, 3000}
	for n := range 71 { // whole steps of 32, 16 and 8, and masked tails
		ns = append(ns, n)
	}
	for _, n := range ns {
		buf := make([]T, n+17)
		for i := n; i < len(buf); i++ {
			buf[i] = T(math.NaN()) // past the end: must not be read
		}
		x := buf[:n]
		for i := range x {
			x[i] = T(i%7) * big
		}
		if !allFinite(x) {
			t.Fatalf("%T n=%d: finite values reported non-finite", big, n)
		}
		for _, bad := range []T{T(math.NaN()), T(math.Inf(1)), T(math.Inf(-1))} {
			for _, at := range []int{0, n / 2, n - 1} {
				if n == 0 {
					continue
				}
				old := x[at]
				x[at] = bad
				if allFinite(x) {
					t.Fatalf("%T n=%d: %v at %d not found", big, n, bad, at)
				}
				x[at] = old
			}
		}
	}
}

// TestQuadratureShortensStages: with Options.Quadrature, a dopri5 solve
// over two times hands f stage inputs without the quadratures; a solve
// with output times inside the span, with an Event or with dop853 (its
// second estimate reads every stage) hands f whole states.
func TestQuadratureShortensStages(t *testing.T) {
	const n, q = 5, 2
	never := &Event[float64]{G: func(float64, []float64) float64 { return 1 }}
	dense := *dop853 // dense-output stages without the second estimate
	dense.Name, dense.E3 = "dop853 without E3", nil
	for _, c := range []struct {
		name    string
		tb      *Tableau
		ts      []float64
		event   *Event[float64]
		shorter bool // some evaluation gets a y of n − q elements
	}{
		{"dopri5, two times", dopri5, []float64{0, 1}, nil, true},
		{"dopri5, an output inside", dopri5, []float64{0, 0.5, 1}, nil, false},
		{"dopri5, an event", dopri5, []float64{0, 1}, never, false},
		{"dop853", dop853, []float64{0, 1}, nil, false},
		{"dense stages", &dense, []float64{0, 1}, nil, false},
	} {
		s, err := NewSolver[float64](Options{Tableau: c.tb, RTol: 1e-6, ATol: 1e-8, Quadrature: q})
		if err != nil {
			t.Fatal(err)
		}
		s.Event = c.event
		lens := map[int]int{} // the lengths of y f got, counted
		f := func(_ float64, y, dy []float64) error {
			lens[len(y)]++
			for i := range dy {
				dy[i] = -float64(i%3) * y[i%(n-q)]
			}
			return nil
		}
		y0 := []float64{1, 2, 3, 0, 0}
		out := make([][]float64, len(c.ts))
		for i := range out {
			out[i] = make([]float64, n)
		}
		if _, err := s.Solve(f, y0, c.ts, out); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := lens[n-q] > 0; got != c.shorter || lens[n] == 0 {
			t.Errorf("%s: f got y of these lengths (length: calls) %v; want shortened ones %v", c.name, lens, c.shorter)
		}
	}
}
