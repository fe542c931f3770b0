package integrate

import (
	"github.com/adamnode/adamnode/tensor"
)

// explicitRK is the method of every Tableau without a family: an explicit
// Runge–Kutta method with its embedded error estimate (E, and E3 for
// dop853), the step-size controller of Options (I or PI) and its dense
// output (Dense, Mid or the cubic Hermite). The other families reuse its
// error norm, controller and dense output over their own stages.
type explicitRK[T tensor.Float] struct {
	e env[T]
	w [16]float64 // the dense output's weights (an array here: handed to the vector operations, it would escape)
}

func (m *explicitRK[T]) bind(e env[T]) { m.e = e }

func (*explicitRK[T]) begin(stepBufs[T], float64) {}

func (m *explicitRK[T]) errorRatio(b stepBufs[T], h float64) float64 { return m.e.errorRatio(b, h) }

func (*explicitRK[T]) accept(stepBufs[T], stepGeom, float64) {}

// next is the controller's step; after a step rejected for NaN or Inf it
// is DFactor times the step (at least MinStep).
func (m *explicitRK[T]) next(h, ratio float64, accepted bool) float64 {
	return m.e.control(h, ratio, accepted)
}

func (*explicitRK[T]) endSlope() bool { return true }

func (m *explicitRK[T]) interpolate(b stepBufs[T], dst []T, g stepGeom, tq float64, f0, f1 []T) {
	interpolateStep(&m.w, m.e.tableau(), dst, b.y0, b.y1, b.kall, g.t, g.h, tq, f0, f1)
}

func (m *explicitRK[T]) log(b stepBufs[T], l *denseLog[T], g stepGeom, f0, f1 []T) {
	if d := m.e.device(); d != nil {
		l.addOn(d, m.e.tableau(), g, b.y0, b.y1, b.kall, f0, f1)
		return
	}
	l.add(m.e.tableau(), g, b.y0, b.y1, b.kall, f0, f1)
}

// step takes the step g: the stages (rkStages) and the solution
// (rkSolution) with the solve's vector operations.
func (m *explicitRK[T]) step(b stepBufs[T], eval evalFunc[T], g stepGeom) error {
	n, q := b.n, m.e.quadrature()
	tb, last := m.e.tableau(), len(b.k)-1
	// With quadratures, the stage inputs stop short of them but for an
	// FSAL method's last (the solution), and the stages nothing weights
	// leave them out of their derivative.
	in := func(i int) []T {
		if q > 0 && !(tb.FSAL && i == last) {
			return b.tmp[:n-q]
		}
		return b.tmp
	}
	ops := m.e.ops()
	err := rkStages[[]T](ops, tb, g, b.y0, b.k, 1, len(b.k), in, func(i int, t float64, y []T) error {
		dy := b.k[i]
		if q > 0 && tb.B[i] == 0 && (tb.E == nil || tb.E[i] == 0) && !(tb.FSAL && i == last) {
			dy = dy[:n-q]
		}
		return eval(evalStage, i, t, y, dy)
	})
	if err != nil {
		return err
	}
	rkSolution[[]T](ops, tb, g.h, b.y0, b.y1, b.tmp, b.k)
	return nil
}
