package integrate

import (
	"fmt"
	"math"

	"github.com/adamnode/adamnode/tensor"
)

// rosenbrock23 is the Rosenbrock 2(3) pair of Shampine and Reichelt (1997,
// MATLAB's ode23s): L-stable, for stiff problems. With d = 1/(2 + √2),
// e32 = 6 + √2, J = ∂f/∂y and T = ∂f/∂t at the step's start and
// W = I − h·d·J, a step from (t, y) of size h is
//
//	k1 = W⁻¹(f(t, y) + h·d·T)
//	k2 = W⁻¹(f(t + h/2, y + h/2·k1) − k1) + k1
//	y1 = y + h·k2
//	k3 = W⁻¹(f(t + h, y1) − e32·(k2 − F1) − 2·(k1 − F0) + h·d·T)
//	err = h/6·(k1 − 2·k2 + k3)
//
// with dense output y + h·(θ(1−θ)·k1 + θ(θ−2d)·k2)/(1 − 2d). J and T come
// from forward differences (n + 1 evaluations of f, kept for the retries of
// a rejected step), W is factorised by Gaussian elimination with partial
// pivoting: a method for small stiff systems. Its stages are stored as
// [f(t, y), k1, k2, k3, f(t + h, y1)], so that the RK engine's error norm,
// FSAL reuse and dense output apply.
var rosenbrock23 = &Tableau{
	Name:          "rosenbrock23",
	C:             []float64{0, 0, 0, 0, 1},
	A:             [][]float64{{}, {0}, {0, 0}, {0, 0, 0}, {0, 0, 1, 0}},
	B:             []float64{0, 0, 1, 0, 0},
	E:             []float64{0, 1.0 / 6, -2.0 / 6, 1.0 / 6, 0},
	Order:         2,
	EstimateOrder: 3,
	FSAL:          true,
	family:        rosenbrockFamily{},
	Dense: func(x float64, w []float64) {
		c := 1 / (1 - 2*ros23d)
		clear(w)
		w[1] = x * (1 - x) * c
		w[2] = x * (x - 2*ros23d) * c
	},
}

var (
	ros23d   = 1 / (2 + math.Sqrt2)
	ros23e32 = 6 + math.Sqrt2
)

// rosenbrockFamily is the family of the Rosenbrock methods: rosenbrock23,
// and the Rodas methods with their coefficients.
type rosenbrockFamily struct{ rodas *rodasCoeffs }

// validate checks the stage layout: rosenbrock23's as an explicit
// tableau's (its nodes, weights, error weights and dense output), a Rodas
// method's sizes (its weights are a Rosenbrock method's: rodas.go).
func (f rosenbrockFamily) validate(tb *Tableau) error {
	if f.rodas != nil {
		return tb.validateShape()
	}
	return tb.validateExplicit()
}

func (rosenbrockFamily) stiff() bool { return true }
func (f rosenbrockFamily) method32() method[float32] {
	return &rosenbrock[float32]{rodas: f.rodas}
}
func (f rosenbrockFamily) method64() method[float64] {
	return &rosenbrock[float64]{rodas: f.rodas}
}

// rosenbrock is a Rosenbrock method: its stages are stored as an RK
// method's would be, so that the explicit RK error norm, controller
// (which lets an accepted step shrink the next, as Hairer and Wanner's
// codes do) and dense output apply.
type rosenbrock[T tensor.Float] struct {
	explicitRK[T]
	w     rosenbrockWork
	rodas *rodasCoeffs // a Rodas method's coefficients; nil for rosenbrock23
}

// begin forgets the Jacobian: the solve starts, or restarts after a jump.
func (m *rosenbrock[T]) begin(stepBufs[T], float64) { m.w.jacValid = false }

// accept forgets the Jacobian: the next step starts elsewhere.
func (m *rosenbrock[T]) accept(stepBufs[T], stepGeom, float64) { m.w.jacValid = false }

// rosenbrockWork holds a Rosenbrock step's Jacobian, its time derivative,
// the factorised W and scratch, in float64.
type rosenbrockWork struct {
	n        int
	jac, lu  []float64 // n × n, row-major
	dt       []float64 // ∂f/∂t
	piv      []int
	rhs, sol []float64
	jacAt    float64 // the time J was formed at
	jacValid bool    // J is of the current step start
}

func (w *rosenbrockWork) ensure(n int) {
	if w.n == n && w.jac != nil {
		return
	}
	*w = rosenbrockWork{n: n, jac: make([]float64, n*n), lu: make([]float64, n*n), dt: make([]float64, n),
		piv: make([]int, n), rhs: make([]float64, n), sol: make([]float64, n)}
}

// step takes the step g from b.y0 with b.k[0] = f(t, y).
func (m *rosenbrock[T]) step(b stepBufs[T], eval evalFunc[T], g stepGeom) error {
	if m.rodas != nil {
		return m.rodasStep(b, eval, g)
	}
	n, h, d := b.n, g.h, ros23d
	w := &m.w
	if ok, err := m.matrix(b, eval, g, h*d); !ok || err != nil {
		return err
	}
	f0, k1, k2, k3, f2 := b.k[0], b.k[1], b.k[2], b.k[3], b.k[4]
	// k1 = W⁻¹(F0 + h·d·T)
	for i := range n {
		w.rhs[i] = float64(f0[i]) + h*d*w.dt[i]
	}
	rosSolve(w, k1)
	// F1 = f(t + h/2, y + h/2·k1), into k3 for now.
	for i := range n {
		b.tmp[i] = b.y0[i] + T(h/2)*k1[i]
	}
	if err := eval(evalStage, 1, stageTime(g.t, h, g.end, 0.5, g.leftLimit), b.tmp, k3); err != nil {
		return err
	}
	// k2 = W⁻¹(F1 − k1) + k1
	for i := range n {
		w.rhs[i] = float64(k3[i]) - float64(k1[i])
	}
	rosSolve(w, k2)
	for i := range n {
		k2[i] += k1[i]
		b.tmp[i] = b.y0[i] + T(h)*k2[i] // y1
	}
	if err := eval(evalStage, 4, g.StageTime(m.e.tableau(), 4), b.tmp, f2); err != nil {
		return err
	}
	// k3 = W⁻¹(F2 − e32·(k2 − F1) − 2·(k1 − F0) + h·d·T)
	for i := range n {
		f1 := float64(k3[i])
		w.rhs[i] = float64(f2[i]) - ros23e32*(float64(k2[i])-f1) - 2*(float64(k1[i])-float64(f0[i])) + h*d*w.dt[i]
	}
	rosSolve(w, k3)
	copy(b.y1, b.tmp)
	return nil
}

// matrix forms (or reuses) J and T at the step's start and factorises
// I − c·J. ok is false, with no error, when J or T is not finite: the
// step is then one the loop rejects (rejectNonFinite).
func (m *rosenbrock[T]) matrix(b stepBufs[T], eval evalFunc[T], g stepGeom, c float64) (ok bool, err error) {
	w := &m.w
	w.ensure(b.n)
	if !w.jacValid || w.jacAt != g.t0 {
		if err := m.jacobian(b, eval, g); err != nil {
			return false, err
		}
	}
	if !allFiniteF(w.jac) || !allFiniteF(w.dt) {
		m.rejectNonFinite(b) // f is NaN or Inf near y: a smaller step
		return false, nil
	}
	if err := w.factor(c); err != nil {
		return false, fmt.Errorf("%w: the Rosenbrock matrix I − c·J is singular at t=%g", ErrStepUnderflow, g.t)
	}
	m.e.stats().LUs++
	return true, nil
}

// jacobian forms J = ∂f/∂y and T = ∂f/∂t at the step's start by forward
// differences (the time difference taken inside the step, so that f is
// never evaluated outside the solve's span).
func (m *rosenbrock[T]) jacobian(b stepBufs[T], eval evalFunc[T], g stepGeom) error {
	n, w := b.n, &m.w
	f0, col := b.k[0], b.k[3] // b.k[3] is free until k3
	copy(b.tmp, b.y0)
	if err := fdJacobian(eval, g.t0, b.tmp, col, f0, w.jac); err != nil {
		return err
	}
	dt := math.Copysign(math.Min(math.Sqrt(eps)*math.Max(math.Abs(g.t0), 1), math.Abs(g.h)/2), g.h)
	if err := eval(evalProbe, 0, g.t0+dt, b.y0, col); err != nil {
		return err
	}
	for i := range n {
		w.dt[i] = (float64(col[i]) - float64(f0[i])) / dt
	}
	w.jacAt, w.jacValid = g.t0, true
	m.e.stats().Jacobians++
	return nil
}

// factor forms and factorises W = I − c·J (LU with partial pivoting); an
// error for a singular W.
func (w *rosenbrockWork) factor(c float64) error {
	n, a := w.n, w.lu
	for i := range n {
		for j := range n {
			a[i*n+j] = -c * w.jac[i*n+j]
		}
		a[i*n+i]++
	}
	return luFactor(a, n, w.piv)
}

// rosSolve sets x = W⁻¹·rhs (rhs is w.rhs, overwritten).
func rosSolve[T tensor.Float](w *rosenbrockWork, x []T) {
	luSolve(w.lu, w.n, w.piv, w.rhs)
	for i := range w.n {
		x[i] = T(w.rhs[i])
	}
}
