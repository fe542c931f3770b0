package integrate

import (
	"fmt"
	"math"

	"github.com/adamnode/adamnode/tensor"

	"gonum.org/v1/gonum/blas"
	gonumlapack "gonum.org/v1/gonum/lapack/gonum"
)

// The implicit Runge–Kutta methods of torchdiffeq's fixed_grid_implicit.py,
// with a fixed Step: the stage increments Z_i = h·Σ_j a_ij·f(t + c_j·h,
// y + Z_j) are solved by simplified Newton iterations with the matrix
// I − h·(A ⊗ J), J = ∂f/∂y at the step's start by forward differences
// (n evaluations) and factorised once per step; the iteration stops when
// its change is a thousandth of the tolerance (RTol, ATol, largest
// element) or within four roundings of T of the stage's value, and ten
// iterations without that are an error. Stiffly accurate methods (the last row of A is B) take y1 = y + Z_s; the others
// y1 = y + h·Σ b_j·f(t + c_j·h, y + Z_j).
var (
	sq2, sq3, sq6, sq15 = math.Sqrt2, math.Sqrt(3), math.Sqrt(6), math.Sqrt(15)

	implicitEuler    = irkTableau("implicit_euler", 1, []float64{1}, [][]float64{{1}}, []float64{1})
	implicitMidpoint = irkTableau("implicit_midpoint", 2, []float64{0.5}, [][]float64{{0.5}}, []float64{1})
	trapezoid        = irkTableau("trapezoid", 2, []float64{0, 1}, [][]float64{{0, 0}, {0.5, 0.5}}, []float64{0.5, 0.5})
	radauIIA3        = irkTableau("radauIIA3", 3, []float64{1.0 / 3, 1}, [][]float64{{5.0 / 12, -1.0 / 12}, {3.0 / 4, 1.0 / 4}}, []float64{3.0 / 4, 1.0 / 4})
	radauIIA5        = irkTableau("radauIIA5", 5, []float64{2.0/5 - sq6/10, 2.0/5 + sq6/10, 1}, [][]float64{
		{11.0/45 - 7*sq6/360, 37.0/225 - 169*sq6/1800, -2.0/225 + sq6/75},
		{37.0/225 + 169*sq6/1800, 11.0/45 + 7*sq6/360, -2.0/225 - sq6/75},
		{4.0/9 - sq6/36, 4.0/9 + sq6/36, 1.0 / 9},
	}, []float64{4.0/9 - sq6/36, 4.0/9 + sq6/36, 1.0 / 9})
	gl4 = irkTableau("gl4", 4, []float64{0.5 - sq3/6, 0.5 + sq3/6}, [][]float64{
		{0.25, 0.25 - sq3/6}, {0.25 + sq3/6, 0.25},
	}, []float64{0.5, 0.5})
	gl6 = irkTableau("gl6", 6, []float64{0.5 - sq15/10, 0.5, 0.5 + sq15/10}, [][]float64{
		{5.0 / 36, 2.0/9 - sq15/15, 5.0/36 - sq15/30},
		{5.0/36 + sq15/24, 2.0 / 9, 5.0/36 - sq15/24},
		{5.0/36 + sq15/30, 2.0/9 + sq15/15, 5.0 / 36},
	}, []float64{5.0 / 18, 4.0 / 9, 5.0 / 18})
	sdirkGamma = (2 - sq2) / 2
	sdirk2     = irkTableau("sdirk2", 2, []float64{sdirkGamma, 1}, [][]float64{{sdirkGamma, 0}, {1 - sdirkGamma, sdirkGamma}}, []float64{1 - sdirkGamma, sdirkGamma})
	trbdf2     = irkTableau("trbdf2", 2, []float64{0, 2 - sq2, 1}, [][]float64{
		{0, 0, 0}, {1 - sq2/2, 1 - sq2/2, 0}, {sq2 / 4, sq2 / 4, 1 - sq2/2},
	}, []float64{sq2 / 4, sq2 / 4, 1 - sq2/2})
)

// irkTableau returns an implicit method's tableau (A: zero placeholders).
func irkTableau(name string, order int, c []float64, ia [][]float64, b []float64) *Tableau {
	a := make([][]float64, len(c))
	for i := range a {
		a[i] = make([]float64, i)
	}
	return &Tableau{Name: name, C: c, A: a, B: b, Order: order, family: irkFamily{ia: ia}}
}

// irkFamily is the family of the implicit Runge–Kutta methods: the
// tableau's C, B and Order, and the full s × s stage matrix ia (the
// tableau's A holds zero placeholders).
type irkFamily struct{ ia [][]float64 }

// validate checks the stage matrix's shape, that its rows sum to the
// nodes (in [0, 1], f is never evaluated outside the solve's span) and B
// to 1, every sum a number, and that the method has no error estimate or
// FSAL.
func (f irkFamily) validate(tb *Tableau) error {
	s := len(tb.C)
	if s == 0 || s > 16 || len(f.ia) != s || len(tb.B) != s || tb.FSAL || tb.E != nil || tb.Order < 1 {
		return fmt.Errorf("odeblock: tableau %q: an implicit method takes 1 to 16 stages, an s × s matrix, s weights, an order, no FSAL and no error estimate", tb.Name)
	}
	near := func(x, want float64) bool { return math.Abs(x-want) <= 1e-12 } // false for NaN
	sumB := 0.0
	for i, row := range f.ia {
		sum := 0.0
		for _, a := range row {
			sum += a
		}
		if c := tb.C[i]; len(row) != s || !(c >= 0 && c <= 1) || !near(sum, c) {
			return fmt.Errorf("odeblock: tableau %q: row %d of the stage matrix: %d entries summing to %g, want %d summing to C[%d] = %g in [0, 1]", tb.Name, i, len(row), sum, s, i, c)
		}
		sumB += tb.B[i]
	}
	if !near(sumB, 1) {
		return fmt.Errorf("odeblock: tableau %q: B sums to %g, want 1", tb.Name, sumB)
	}
	return nil
}

func (irkFamily) stiff() bool                 { return false }
func (f irkFamily) method32() method[float32] { return &implicitRK[float32]{ia: f.ia} }
func (f irkFamily) method64() method[float64] { return &implicitRK[float64]{ia: f.ia} }

// implicitRK is an implicit Runge–Kutta method with a fixed step; its
// dense output is the cubic Hermite interpolant (explicitRK's for a
// tableau without Dense or Mid).
type implicitRK[T tensor.Float] struct {
	explicitRK[T]
	ia [][]float64
	w  irkWork
}

// irkWork is the Newton iteration's storage, in float64.
type irkWork struct {
	s, n    int
	jac, m  []float64 // n × n; (s·n) × (s·n)
	piv     []int
	z, g    []float64 // s·n
	f       [][]float64
	ytmp    []float64
	stiffly bool
}

func (w *irkWork) ensure(s, n int) {
	if w.s == s && w.n == n && w.jac != nil {
		return
	}
	*w = irkWork{s: s, n: n, jac: make([]float64, n*n), m: make([]float64, s*n*s*n), piv: make([]int, s*n),
		z: make([]float64, s*n), g: make([]float64, s*n), f: make([][]float64, s), ytmp: make([]float64, n)}
	for i := range w.f {
		w.f[i] = make([]float64, n)
	}
}

// step takes the fixed step g of an implicit method from b.y0 with
// b.k[0] = f(t, y).
func (m *implicitRK[T]) step(b stepBufs[T], eval evalFunc[T], g stepGeom) error {
	tb, n := m.e.tableau(), b.n
	st := tb.Stages()
	m.w.ensure(st, n)
	if err := m.jacobian(b, eval, g); err != nil {
		return err
	}
	if err := m.factor(b, g); err != nil {
		return err
	}
	if err := m.newton(b, eval, g); err != nil {
		return err
	}
	w, y := &m.w, b.y0
	if stifflyAccurate(tb, m.ia) {
		for i := range n {
			b.y1[i] = y[i] + T(w.z[(st-1)*n+i])
		}
		return nil
	}
	if err := m.stageF(b, eval, g); err != nil {
		return err
	}
	for i := range n {
		var v float64
		for j := range st {
			v += tb.B[j] * w.f[j][i]
		}
		b.y1[i] = y[i] + T(g.h*v)
	}
	return nil
}

// jacobian sets the Jacobian J of f by forward differences around
// (t, y), f(t, y) being in b.k[0].
func (m *implicitRK[T]) jacobian(b stepBufs[T], eval evalFunc[T], g stepGeom) error {
	copy(b.tmp, b.y0)
	if err := fdJacobian(eval, g.t0, b.tmp, b.y1, b.k[0], m.w.jac); err != nil { // y1 is free until the end
		return err
	}
	m.e.stats().Jacobians++
	return nil
}

// factor forms and factorises the Newton matrix M = I − h·(A ⊗ J).
func (m *implicitRK[T]) factor(b stepBufs[T], g stepGeom) error {
	tb, n, h, w := m.e.tableau(), b.n, g.h, &m.w
	st := tb.Stages()
	sn := st * n
	for bi := range st {
		for bj := range st {
			a := h * m.ia[bi][bj]
			for i := range n {
				for j := range n {
					v := -a * w.jac[i*n+j]
					if bi == bj && i == j {
						v++
					}
					w.m[(bi*n+i)*sn+bj*n+j] = v
				}
			}
		}
	}
	if err := luFactor(w.m, sn, w.piv); err != nil {
		return fmt.Errorf("%w: the Newton matrix of %s is singular at t=%g", ErrStepUnderflow, tb.Name, g.t)
	}
	m.e.stats().LUs++
	return nil
}

// stageF evaluates f at every stage, y + Z_j at t + C_j·h, into w.f.
func (m *implicitRK[T]) stageF(b stepBufs[T], eval evalFunc[T], g stepGeom) error {
	tb, n, w := m.e.tableau(), b.n, &m.w
	y, tmp, fbuf := b.y0, b.tmp, b.y1
	for j := range tb.Stages() {
		for i := range n {
			tmp[i] = y[i] + T(w.z[j*n+i])
		}
		tj := g.t + tb.C[j]*g.h
		if tb.C[j] == 1 {
			tj = g.end
		}
		if err := eval(evalStage, j, tj, tmp, fbuf); err != nil {
			return err
		}
		for i := range n {
			w.f[j][i] = float64(fbuf[i])
		}
	}
	return nil
}

// newton solves the stage equations Z = h·(A ⊗ I)·F(y + Z) for the
// stage increments Z by simplified Newton iterations with the factorised
// M, from Z = 0, at most 10 of them.
func (m *implicitRK[T]) newton(b stepBufs[T], eval evalFunc[T], g stepGeom) error {
	tb, n, h, w, y := m.e.tableau(), b.n, g.h, &m.w, b.y0
	st := tb.Stages()
	sn := st * n
	// A change of a few roundings of T in the stage's value counts as
	// converged too: F is evaluated in T, so a float32 iteration stalls
	// there, above a thousandth of tight tolerances.
	roundoff := 4e3 * epsOf[T]()
	clear(w.z)
	converged := false
	for iter := 0; iter < 10 && !converged; iter++ {
		if err := m.stageF(b, eval, g); err != nil {
			return err
		}
		// G = Z − h·(A ⊗ I)·F; ΔZ = −M⁻¹·G.
		for bi := range st {
			for i := range n {
				v := w.z[bi*n+i]
				for bj := range st {
					v -= h * m.ia[bi][bj] * w.f[bj][i]
				}
				w.g[bi*n+i] = -v
			}
		}
		luSolve(w.m, sn, w.piv, w.g)
		worst := 0.0
		for bi := range st {
			for i := range n {
				k := bi*n + i
				d := w.g[k]
				w.z[k] += d
				sc := newtonScale(m.e.opts().ATol, m.e.opts().RTol, roundoff, float64(y[i]), w.z[k])
				worst = math.Max(worst, math.Abs(d)/sc)
			}
		}
		converged = worst < 1e-3
		if math.IsNaN(worst) {
			break
		}
	}
	if !converged {
		return fmt.Errorf("%w: %s's Newton iteration did not converge in 10 iterations at t=%g: take a smaller Step", ErrStepUnderflow, tb.Name, g.t)
	}
	return nil
}

// stifflyAccurate reports whether B is the last row of the stage matrix ia.
func stifflyAccurate(tb *Tableau, ia [][]float64) bool {
	last := ia[len(ia)-1]
	for j, b := range tb.B {
		if last[j] != b {
			return false
		}
	}
	return true
}

// luFactor factorises the n × n row-major a in place (LU with partial
// pivoting by gonum's LAPACK, Dgetrf; the pivots in piv); an error for a
// singular matrix or one with NaN in it.
func luFactor(a []float64, n int, piv []int) error {
	if n == 0 {
		return nil
	}
	if !lapackImpl.Dgetrf(n, n, a[:n*n], n, piv[:n]) {
		return fmt.Errorf("singular")
	}
	for i := range n {
		if d := a[i*n+i]; math.IsNaN(d) || math.IsInf(d, 0) {
			return fmt.Errorf("singular")
		}
	}
	return nil
}

// luSolve solves a·x = b in place in b, a factorised by luFactor
// (Dgetrs).
func luSolve(a []float64, n int, piv []int, b []float64) {
	if n == 0 {
		return
	}
	lapackImpl.Dgetrs(blas.NoTrans, n, 1, a[:n*n], n, piv[:n], b[:n], 1)
}

// lapackImpl is gonum's pure-Go LAPACK (row-major).
var lapackImpl gonumlapack.Implementation

// newtonScale returns the scale of a Newton change at the element y of
// the step's start whose stage increment is z: ATol + RTol·|y|, or
// roundoff·(|y| + |z|) where that is larger (the stage's value y + z is
// where f is evaluated in T).
func newtonScale(atol, rtol, roundoff, y, z float64) float64 {
	ay := math.Abs(y)
	return math.Max(atol+rtol*ay, roundoff*(ay+math.Abs(z)))
}
