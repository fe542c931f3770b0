package integrate

import (
	"fmt"
	"math"
)

// Tableau is the Butcher tableau of an explicit Runge–Kutta method, with an
// optional embedded error estimate. One RK engine runs every method from its
// tableau.
//
// Stage i evaluates k_i = f(t + C[i]·h, y + h·Σ_{j<i} A[i][j]·k_j); the step
// is y1 = y + h·Σ B[i]·k_i and, for embedded pairs, the error estimate is
// err = h·Σ E[i]·k_i with E = B − B̂ (B̂ the weights of the companion method).
type Tableau struct {
	Name  string
	C     []float64   // nodes, C[0] = 0
	A     [][]float64 // A[i] has i entries
	B     []float64   // weights of the propagated solution
	E     []float64   // error weights B − B̂; nil for a fixed-step method
	Order int         // order of the propagated solution; the step controller's exponent is 1/Order
	// EstimateOrder, if set, is the order of the error estimate when it is
	// not Order (a pair propagating its lower-order solution, as
	// rosenbrock23): the controller's exponent is then 1/EstimateOrder.
	EstimateOrder int
	// FSAL (first same as last): the last stage is f(t+h, y1), so it is
	// reused as the first stage of the next step.
	FSAL bool
	// Mid, if set, gives y(t + h/2) ≈ y + h·Σ Mid[i]·k_i, from which dense
	// output is a quartic through y0, y_mid, y1 with slopes f0 and f1. Without
	// it, dense output is the cubic Hermite interpolant of y0, y1, f0, f1.
	Mid []float64
	// Dense, if set, is the method's own continuous extension: it writes
	// into w the weights b_i(θ) with y(t + θh) ≈ y + h·Σ b_i(θ)·k_i
	// (b_i(1) = B[i]). It takes precedence over Mid.
	Dense func(theta float64, w []float64)
	// DenseC and DenseA, if set, are stages evaluated only for dense
	// output, after an accepted step that has an output or an event inside
	// it: stage s + i at t + DenseC[i]·h from y + h·Σ_j DenseA[i][j]·k_j
	// over the step's s stages and the dense stages before it. Dense then
	// gives weights for all of them.
	DenseC []float64
	DenseA [][]float64
	// E3, if set, is a second error estimate (a lower order's) combined
	// with E's as Hairer's DOP853 does: the error ratio is
	// |h|·‖e5‖² / √((‖e5‖² + 0.01·‖e3‖²)·n), e5 = Σ E_i·k_i / scale,
	// e3 = Σ E3_i·k_i / scale.
	E3 []float64

	// family, if set, makes this the tableau of a built-in method that is
	// not an explicit RK method (a Rosenbrock, implicit RK, Adams or BDF
	// method: see method.go), which only the adjoint differentiates.
	family family
}

// Stages returns the number of stages.
func (tb *Tableau) Stages() int { return len(tb.C) }

// Explicit reports whether the method is an explicit Runge–Kutta method,
// whose stages the discrete gradient modes can record (not a Rosenbrock,
// implicit RK, Adams or BDF method).
func (tb *Tableau) Explicit() bool { return tb.family == nil }

// estimateOrder returns the order of the error estimate.
func (tb *Tableau) estimateOrder() int {
	if tb.EstimateOrder > 0 {
		return tb.EstimateOrder
	}
	return tb.Order
}

// Stiff reports whether the method is one of the stiff solvers
// (rosenbrock23, rodas4, bdf), which form a dense Jacobian of the state by
// finite differences: methods for small systems.
func (tb *Tableau) Stiff() bool { return tb.family != nil && tb.family.stiff() }

// Adaptive reports whether the method has an embedded error estimate.
func (tb *Tableau) Adaptive() bool { return tb.E != nil }

// validate checks the tableau's internal consistency: its family's
// checks, or an explicit RK method's.
func (tb *Tableau) validate() error {
	if tb.family != nil {
		return tb.family.validate(tb)
	}
	return tb.validateExplicit()
}

// validateExplicit checks an explicit RK tableau: its shape, dense
// stages, coefficients and dense output.
func (tb *Tableau) validateExplicit() error {
	if err := tb.validateShape(); err != nil {
		return err
	}
	if err := tb.validateDenseStages(); err != nil {
		return err
	}
	if err := tb.validateCoefficients(); err != nil {
		return err
	}
	return tb.validateDense()
}

// validateShape checks the sizes of the coefficients, the rows of A,
// FSAL's conditions and the order.
func (tb *Tableau) validateShape() error {
	s := len(tb.C)
	if s > 16 {
		return fmt.Errorf("odeblock: tableau %q: %d stages, at most 16 are supported", tb.Name, s)
	}
	if s == 0 || len(tb.A) != s || len(tb.B) != s || (tb.E != nil && len(tb.E) != s) || (tb.Mid != nil && len(tb.Mid) != s) {
		return fmt.Errorf("odeblock: tableau %q: inconsistent sizes", tb.Name)
	}
	for i, row := range tb.A {
		if len(row) != i {
			return fmt.Errorf("odeblock: tableau %q: row %d of A has %d entries, want %d", tb.Name, i, len(row), i)
		}
	}
	if tb.FSAL {
		last := tb.A[s-1]
		for j, a := range last {
			if a != tb.B[j] {
				return fmt.Errorf("odeblock: tableau %q: FSAL needs the last row of A to equal B", tb.Name)
			}
		}
		if tb.B[s-1] != 0 || tb.C[s-1] != 1 {
			return fmt.Errorf("odeblock: tableau %q: FSAL needs B[last] = 0 and C[last] = 1", tb.Name)
		}
	}
	if tb.Order < 1 {
		return fmt.Errorf("odeblock: tableau %q: order %d", tb.Name, tb.Order)
	}
	return nil
}

// validateDenseStages checks the dense-output stages (DenseC, DenseA) and
// E3's size.
func (tb *Tableau) validateDenseStages() error {
	s := len(tb.C)
	if len(tb.DenseA) != len(tb.DenseC) || (len(tb.DenseC) > 0 && tb.Dense == nil) || s+len(tb.DenseC) > 16 {
		return fmt.Errorf("odeblock: tableau %q: DenseC and DenseA need as many entries, a Dense function, and at most 16 stages in all", tb.Name)
	}
	for i, row := range tb.DenseA {
		if len(row) != s+i {
			return fmt.Errorf("odeblock: tableau %q: row %d of DenseA has %d entries, want %d", tb.Name, i, len(row), s+i)
		}
		sum := 0.0
		for _, a := range row {
			sum += a
		}
		if c := tb.DenseC[i]; !(c >= 0 && c <= 1) || math.Abs(sum-c) > 1e-12 {
			return fmt.Errorf("odeblock: tableau %q: dense stage %d: node %g, row sum %g", tb.Name, i, c, sum)
		}
	}
	if tb.E3 != nil && (len(tb.E3) != s || tb.E == nil) {
		return fmt.Errorf("odeblock: tableau %q: E3 needs E and %d entries", tb.Name, s)
	}
	return nil
}

// validateCoefficients checks that the coefficients are finite numbers,
// the nodes inside the step (f is never evaluated outside the span of a
// solve), and the consistency conditions every method of order ≥ 1 meets:
// Σ_j A[i][j] = C[i], Σ B = 1, Σ E = 0 (both weights sum to 1), Σ Mid = ½.
func (tb *Tableau) validateCoefficients() error {
	const tol = 1e-12
	near := func(x, want float64) bool { return math.Abs(x-want) <= tol*math.Max(1, math.Abs(want)) }
	// sum returns Σ xs, or the index of an entry that is not finite.
	sum := func(xs []float64) (float64, int) {
		var t float64
		for j, x := range xs {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return 0, j
			}
			t += x
		}
		return t, -1
	}
	notFinite := func(name string, j int, x float64) error {
		return fmt.Errorf("odeblock: tableau %q: %s[%d] = %g is not finite", tb.Name, name, j, x)
	}
	rows := tb.A
	for i, c := range tb.C {
		if !(c >= 0 && c <= 1) || (i == 0 && c != 0) {
			return fmt.Errorf("odeblock: tableau %q: node C[%d] = %g outside [0, 1] (C[0] must be 0)", tb.Name, i, c)
		}
		row, bad := sum(rows[i])
		if bad >= 0 {
			return notFinite(fmt.Sprintf("A[%d]", i), bad, rows[i][bad])
		}
		if !near(row, c) {
			return fmt.Errorf("odeblock: tableau %q: row %d of A sums to %g, not C[%d] = %g", tb.Name, i, row, i, c)
		}
	}
	for _, w := range []struct {
		name string
		xs   []float64
		want float64
	}{{"B", tb.B, 1}, {"E", tb.E, 0}, {"Mid", tb.Mid, 0.5}} {
		if w.xs == nil {
			continue
		}
		t, bad := sum(w.xs)
		if bad >= 0 {
			return notFinite(w.name, bad, w.xs[bad])
		}
		if !near(t, w.want) {
			return fmt.Errorf("odeblock: tableau %q: %s sums to %g, want %g", tb.Name, w.name, t, w.want)
		}
	}
	return nil
}

// validateDense checks the dense output's weights at the step's ends: 0 at
// θ = 0, B at θ = 1 (and 0 on the dense-only stages).
func (tb *Tableau) validateDense() error {
	if tb.Dense == nil {
		return nil
	}
	s := len(tb.C)
	w := make([]float64, s+len(tb.DenseC))
	for _, th := range []float64{0, 1} {
		tb.Dense(th, w)
		for i, v := range w {
			want := 0.0
			if th == 1 && i < s {
				want = tb.B[i]
			}
			if math.IsNaN(v) || math.Abs(v-want) > 1e-12 {
				return fmt.Errorf("odeblock: tableau %q: dense weight %d at θ = %g is %g, want %g", tb.Name, i, th, v, want)
			}
		}
	}
	return nil
}

// The built-in tableaus. The coefficients are the published ones
// (Dormand–Prince 1980 with Shampine's 1986 error estimate and midpoint for
// dense output; Bogacki–Shampine 1989; Tsitouras 2011).
var (
	// euler is the explicit Euler method, order 1.
	euler = &Tableau{Name: "euler", C: []float64{0}, A: [][]float64{{}}, B: []float64{1}, Order: 1}

	// midpoint is the explicit midpoint method, order 2.
	midpoint = &Tableau{Name: "midpoint", C: []float64{0, 0.5}, A: [][]float64{{}, {0.5}}, B: []float64{0, 1}, Order: 2}

	// rk4 is the classic fourth-order Runge–Kutta method.
	rk4 = &Tableau{
		Name:  "rk4",
		C:     []float64{0, 0.5, 0.5, 1},
		A:     [][]float64{{}, {0.5}, {0, 0.5}, {0, 0, 1}},
		B:     []float64{1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6},
		Order: 4,
	}

	// rk38 is Kutta's 3/8 rule, the fixed-step "rk4" of torchdiffeq, order 4.
	rk38 = &Tableau{
		Name:  "rk38",
		C:     []float64{0, 1.0 / 3, 2.0 / 3, 1},
		A:     [][]float64{{}, {1.0 / 3}, {-1.0 / 3, 1}, {1, -1, 1}},
		B:     []float64{1.0 / 8, 3.0 / 8, 3.0 / 8, 1.0 / 8},
		Order: 4,
	}

	// heunEuler is Heun's method with an embedded Euler error estimate,
	// order 2.
	heunEuler = &Tableau{
		Name:  "heun-euler",
		C:     []float64{0, 1},
		A:     [][]float64{{}, {1}},
		B:     []float64{0.5, 0.5},
		E:     []float64{0.5 - 1, 0.5},
		Order: 2,
	}

	// heun2 is Heun's method (the explicit trapezoid), order 2, fixed step:
	// torchdiffeq's "heun2".
	heun2 = &Tableau{Name: "heun2", C: []float64{0, 1}, A: [][]float64{{}, {1}}, B: []float64{0.5, 0.5}, Order: 2}

	// heun3 is Heun's third-order method, fixed step: torchdiffeq's "heun3".
	heun3 = &Tableau{
		Name:  "heun3",
		C:     []float64{0, 1.0 / 3, 2.0 / 3},
		A:     [][]float64{{}, {1.0 / 3}, {0, 2.0 / 3}},
		B:     []float64{1.0 / 4, 0, 3.0 / 4},
		Order: 3,
	}

	// adaptiveHeun is torchdiffeq's "adaptive_heun": Heun's method with an
	// Euler error estimate (heun-euler) and torchdiffeq's midpoint for
	// dense output.
	adaptiveHeun = &Tableau{
		Name:  "adaptive_heun",
		C:     []float64{0, 1},
		A:     [][]float64{{}, {1}},
		B:     []float64{0.5, 0.5},
		E:     []float64{0.5, -0.5},
		Order: 2,
		Mid:   []float64{0.5, 0},
	}

	// fehlberg2 is Fehlberg's 2(1) pair, propagating the second-order
	// solution, as torchdiffeq's "fehlberg2". Its last stage is evaluated
	// at the first-order solution, not at y1, so it is not reused as the
	// next step's first (torchdiffeq reuses it: its next f0 is then not
	// f(t, y)); the solver evaluates f at y1 instead, one more evaluation
	// per step.
	fehlberg2 = &Tableau{
		Name:  "fehlberg2",
		C:     []float64{0, 0.5, 1},
		A:     [][]float64{{}, {0.5}, {1.0 / 256, 255.0 / 256}},
		B:     []float64{1.0 / 512, 255.0 / 256, 1.0 / 512},
		E:     []float64{-1.0 / 512, 0, 1.0 / 512},
		Order: 2,
		Mid:   []float64{0, 0.5, 0},
	}

	// bosh3 is the Bogacki–Shampine 3(2) pair, FSAL.
	bosh3 = &Tableau{
		Name:  "bosh3",
		C:     []float64{0, 0.5, 0.75, 1},
		A:     [][]float64{{}, {0.5}, {0, 0.75}, {2.0 / 9, 1.0 / 3, 4.0 / 9}},
		B:     []float64{2.0 / 9, 1.0 / 3, 4.0 / 9, 0},
		E:     []float64{2.0/9 - 7.0/24, 1.0/3 - 1.0/4, 4.0/9 - 1.0/3, -1.0 / 8},
		Order: 3,
		FSAL:  true,
	}

	// dopri5 is the Dormand–Prince 5(4) pair, FSAL, with Shampine's dense
	// output. It is the default method.
	dopri5 = &Tableau{
		Name: "dopri5",
		C:    []float64{0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1, 1},
		A: [][]float64{
			{},
			{1.0 / 5},
			{3.0 / 40, 9.0 / 40},
			{44.0 / 45, -56.0 / 15, 32.0 / 9},
			{19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729},
			{9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656},
			{35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84},
		},
		B: []float64{35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84, 0},
		// The error estimate of Shampine's embedded pair, as in torchdiffeq,
		// JAX and diffrax (not Dormand–Prince's 5179/57600, …): the same
		// estimate gives the same accepted steps.
		E: []float64{
			35.0/384 - 1951.0/21600, 0, 500.0/1113 - 22642.0/50085, 125.0/192 - 451.0/720,
			-2187.0/6784 + 12231.0/42400, 11.0/84 - 649.0/6300, -1.0 / 60,
		},
		Order: 5,
		FSAL:  true,
		Mid: []float64{
			6025192743.0 / 30085553152 / 2, 0, 51252292925.0 / 65400821598 / 2,
			-2691868925.0 / 45128329728 / 2, 187940372067.0 / 1594534317056 / 2,
			-1776094331.0 / 19743644256 / 2, 11237099.0 / 235043384 / 2,
		},
	}

	// tsit5 is Tsitouras' 5(4) pair, FSAL.
	tsit5 = &Tableau{
		Name: "tsit5",
		C:    []float64{0, 0.161, 0.327, 0.9, 0.9800255409045097, 1, 1},
		A: [][]float64{
			{},
			{0.161},
			{-0.008480655492356989, 0.335480655492357},
			{2.897153057105493, -6.359448489975075, 4.3622954328695815},
			{5.325864828439257, -11.748883564062828, 7.4955393428898365, -0.09249506636175525},
			{5.86145544294642, -12.92096931784711, 8.159367898576159, -0.071584973281401, -0.028269050394068383},
			{0.09646076681806523, 0.01, 0.4798896504144996, 1.379008574103742, -3.290069515436081, 2.324710524099774},
		},
		B: []float64{0.09646076681806523, 0.01, 0.4798896504144996, 1.379008574103742, -3.290069515436081, 2.324710524099774, 0},
		E: []float64{
			0.001780011052226, 0.000816434459657, -0.007880878010262, 0.144711007173263,
			-0.582357165452555, 0.458082105929187, -1.0 / 66,
		},
		Order: 5,
		FSAL:  true,
		Dense: tsit5Dense,
	}
)

// tsit5Dense is Tsitouras' fourth-order continuous extension of tsit5
// (Tsitouras 2011; the polynomials of OrdinaryDiffEq.jl and diffrax).
func tsit5Dense(x float64, w []float64) {
	w[0] = -1.0530884977290216 * x * (x - 1.329989018975412) * (x*x - 1.4364028541716351*x + 0.7139816917074209)
	w[1] = 0.1017 * x * x * (x*x - 2.1966568338249754*x + 1.2949852507374631)
	w[2] = 2.490627285651252793 * x * x * (x*x - 2.38535645472061657*x + 1.57803468208092486)
	w[3] = -16.54810288924490272 * (x - 1.21712927295533244) * (x - 0.61620406037800089) * x * x
	w[4] = 47.37952196281928122 * (x - 1.203071208372362603) * (x - 0.658047292653547382) * x * x
	w[5] = -34.87065786149660974 * (x - 1.2) * (x - 2.0/3) * x * x
	w[6] = 2.5 * (x - 1) * (x - 0.6) * x * x
}

// methods holds the built-in tableaus by name. They are never modified.
var methods = map[string]*Tableau{
	"euler": euler, "midpoint": midpoint, "rk4": rk4, "rk38": rk38, "heun2": heun2, "heun3": heun3,
	"heun-euler": heunEuler, "adaptive_heun": adaptiveHeun, "fehlberg2": fehlberg2,
	"bosh3": bosh3, "dopri5": dopri5, "tsit5": tsit5, "dopri8": dopri8,
	"rosenbrock23":   rosenbrock23,
	"rodas4":         rodas4,
	"dop853":         dop853,
	"bdf":            bdf,
	"explicit_adams": explicitAdams, "implicit_adams": implicitAdams, "fixed_adams": fixedAdams,
	"implicit_euler": implicitEuler, "implicit_midpoint": implicitMidpoint, "trapezoid": trapezoid,
	"radauIIA3": radauIIA3, "radauIIA5": radauIIA5, "gl4": gl4, "gl6": gl6, "sdirk2": sdirk2, "trbdf2": trbdf2,
}

// MethodNames returns the names Method accepts.
func MethodNames() []string {
	return []string{"euler", "midpoint", "rk4", "rk38", "heun2", "heun3", "heun-euler", "adaptive_heun", "fehlberg2", "bosh3", "dopri5", "tsit5", "dopri8", "dop853", "rosenbrock23", "rodas4", "bdf", "explicit_adams", "implicit_adams", "fixed_adams",
		"implicit_euler", "implicit_midpoint", "trapezoid", "radauIIA3", "radauIIA5", "gl4", "gl6", "sdirk2", "trbdf2"}
}

// Method returns the tableau of the named built-in method, or an error
// naming the known methods. The tableau is shared: do not modify it.
func Method(name string) (*Tableau, error) {
	if tb, ok := methods[name]; ok {
		return tb, nil
	}
	return nil, fmt.Errorf("odeblock: unknown method %q (known: %v)", name, MethodNames())
}
