package integrate

import (
	"errors"
	"fmt"
	"math"

	"github.com/adamnode/adamnode/tensor"
)

// bdf is the variable-order, quasi-constant step size backward
// differentiation method of Shampine and Reichelt's ode15s (MATLAB) and
// SciPy's BDF: orders 1 to 5, the numerical differentiation formulas
// (NDF: BDF with the κ corrections, better stability per cost) of Klopfenstein
// and Shampine, the history kept as backward differences, which a change
// of step size rescales. Each step predicts from the differences and
// corrects by simplified Newton iterations with I − c·J (c = h/α_k), the
// Jacobian J by finite differences formed only when the iteration fails to
// converge, the LU only when h or the order changes. The order moves by
// one up or down after k + 1 steps of equal size, to the neighbour whose
// error estimate allows the largest next step. Dense output interpolates
// the differences. A method for small stiff systems (the Jacobian is dense).
var bdf = &Tableau{
	Name:          "bdf",
	C:             []float64{0},
	A:             [][]float64{{}},
	B:             []float64{1},
	E:             []float64{0}, // adaptive; the error is the method's own (below)
	Order:         5,            // the highest it uses
	EstimateOrder: 2,            // the first step: Hairer's rule with the exponent ½ of an order-1 method (SciPy's)
	family:        bdfFamily{},
}

// bdfFamily is the family of the bdf method.
type bdfFamily struct{}

// validate checks the one-stage layout the loop sees.
func (bdfFamily) validate(tb *Tableau) error { return tb.validateExplicit() }
func (bdfFamily) stiff() bool                { return true }
func (bdfFamily) method32() method[float32]  { return &bdfMethod[float32]{} }
func (bdfFamily) method64() method[float64]  { return &bdfMethod[float64]{} }

// bdfMethod is the bdf method in the solver's loop. The loop picks each
// step's end as for every method (stops, jumps, MaxStep); a step of
// another size than the one the differences are scaled to rescales them
// first. With a fixed Step it keeps the step and still moves its order
// (to the neighbour with the smallest error estimate after k + 1 steps);
// a Newton iteration that does not converge is then an error. At a jump
// it starts again at order 1 from f just after it.
type bdfMethod[T tensor.Float] struct {
	e      env[T]
	w      bdfWork
	la     rosenbrockWork // J and the LU of I − c·J
	h      float64        // the step the differences are scaled to
	ntol   float64        // the Newton iteration's tolerance
	nEqual int            // steps of size h accepted in a row
	k      int            // the order of the step attempted last
	ratio  float64        // its error ratio (+Inf: Newton did not converge, NaN: not finite)
	failed bool           // its Newton iteration did not converge
	safety float64        // the step-size safety factor its iterations allow
	factor float64        // the next step's factor, chosen when a step is accepted
}

// begin sets the state at the start or after a jump: order 1, the
// differences of y and h·f.
func (m *bdfMethod[T]) begin(b stepBufs[T], h float64) {
	w := &m.w
	w.ensure(b.n)
	w.order, w.luValid, w.jacCurrent, w.jacSet = 1, false, false, false
	for i := range w.D {
		clear(w.D[i])
	}
	for i := range b.n {
		w.D[0][i] = float64(b.y0[i])
		w.D[1][i] = h * float64(b.k[0][i])
	}
	m.h, m.nEqual = h, 0
	m.ntol = math.Max(10*eps/m.e.opts().RTol, math.Min(0.03, math.Sqrt(m.e.opts().RTol)))
}

// step predicts from the differences (rescaled to g.h first when the loop
// chose another step) and corrects by Newton's method; b.y1 gets the
// corrected state.
func (m *bdfMethod[T]) step(b stepBufs[T], eval evalFunc[T], g stepGeom) error {
	w := &m.w
	if g.h != m.h {
		w.rescale(g.h / m.h)
		m.h, m.nEqual = g.h, 0
	}
	k := w.order
	m.k = k
	m.predict(b, k)
	// f is evaluated at the step's end, or just before it when the step
	// ends at a jump (the left limit of the dynamics).
	tEnd := stageTime(g.t, g.h, g.end, 1, g.leftLimit)
	converged, iters, bad, err := m.correct(b, eval, tEnd, g.h/bdfAlpha[k])
	if err != nil {
		return err
	}
	for i := range b.n {
		b.y1[i] = T(w.y[i])
	}
	m.failed = !converged
	if !converged {
		m.ratio = math.Inf(1) // a smaller step
		if bad || w.nonFinite {
			m.ratio = math.NaN()
		}
		if m.e.opts().Step != 0 {
			return fmt.Errorf("%w: bdf's Newton iteration did not converge at the fixed step %g: take a smaller Step", ErrStepUnderflow, g.h)
		}
		return nil
	}
	m.safety = 0.9 * (2*bdfNewtonMax + 1) / float64(2*bdfNewtonMax+iters)
	for i := range b.n {
		w.scale[i] = m.e.opts().ATol + m.e.opts().RTol*math.Abs(w.y[i])
	}
	m.ratio = m.norm(b, w.d, bdfErrConst[k])
	return nil
}

func (m *bdfMethod[T]) errorRatio(stepBufs[T], float64) float64 { return m.ratio }

// accept updates the differences with the accepted step's correction and,
// after k + 1 steps of equal size, chooses the next order: of k − 1, k and
// k + 1 the one allowing the largest step (the factor next applies).
func (m *bdfMethod[T]) accept(b stepBufs[T], _ stepGeom, _ float64) {
	w, k := &m.w, m.k
	w.jacCurrent = false
	for i := range b.n {
		w.D[k+2][i] = w.d[i] - w.D[k+1][i]
		w.D[k+1][i] = w.d[i]
	}
	for j := k; j >= 0; j-- {
		for i := range b.n {
			w.D[j][i] += w.D[j+1][i]
		}
	}
	for i := range b.n {
		b.y1[i] = T(w.D[0][i])
	}
	m.factor = 1
	if m.nEqual++; m.nEqual < k+1 {
		return
	}
	m.nEqual = 0
	errM, errP := math.Inf(1), math.Inf(1)
	if k > 1 {
		errM = m.norm(b, w.D[k], bdfErrConst[k-1])
	}
	if k < bdfMaxOrder {
		errP = m.norm(b, w.D[k+2], bdfErrConst[k+1])
	}
	factors := [3]float64{math.Pow(errM, -1/float64(k)), math.Pow(m.ratio, -1/float64(k+1)), math.Pow(errP, -1/float64(k+2))}
	best := 1
	for i, f := range factors {
		if f > factors[best] || math.IsNaN(factors[best]) {
			best = i
		}
	}
	if w.order = k + best - 1; w.order != k {
		w.luValid = false // c = h/α_k changes with the order
	}
	m.factor = math.Min(10, m.safety*factors[best])
	if math.IsNaN(m.factor) || math.IsInf(m.factor, 1) {
		m.factor = 10
	}
}

// next returns the next step, the differences rescaled to it: after an
// accepted step the factor accept chose (at most MaxStep); after a
// rejected one half the step when Newton's iteration failed, else the
// error estimate's factor (at least 0.2, and MinStep).
func (m *bdfMethod[T]) next(h, ratio float64, accepted bool) float64 {
	factor := m.factor
	switch {
	case accepted && factor == 1:
		return h
	case accepted:
		if mx := m.e.opts().MaxStep; mx > 0 && math.Abs(h*factor) > mx {
			factor = mx / math.Abs(h)
		}
	case m.failed:
		factor = 0.5
	case math.IsNaN(ratio):
		factor = 0.2
	default:
		factor = math.Max(0.2, m.safety*math.Pow(ratio, -1/float64(m.k+1)))
	}
	if mn := m.e.opts().MinStep; !accepted && mn > 0 && math.Abs(h*factor) < mn {
		factor = mn / math.Abs(h)
	}
	m.w.rescale(factor)
	m.h, m.nEqual = h*factor, 0
	return m.h
}

func (m *bdfMethod[T]) bind(e env[T]) { m.e = e }

func (m *bdfMethod[T]) endSlope() bool { return false }

func (m *bdfMethod[T]) interpolate(_ stepBufs[T], dst []T, g stepGeom, tq float64, _, _ []T) {
	bdfInterpolate(dst, m.w.D, m.k, g.end, g.h, tq)
}

func (m *bdfMethod[T]) log(b stepBufs[T], l *denseLog[T], g stepGeom, _, _ []T) {
	l.addBDF(m.e.tableau(), g.t, g.h, g.end, m.k, m.w.D, b.y1)
}

const bdfMaxOrder = 5

// The NDF coefficients, by order k = 0…5: κ_k, γ_k = Σ_{j≤k} 1/j,
// α_k = (1 − κ_k)·γ_k, and the error constants κ_k·γ_k + 1/(k + 1).
var bdfKappa = [bdfMaxOrder + 2]float64{0, -0.1850, -1.0 / 9, -0.0823, -0.0415, 0, 0}

var bdfGamma, bdfAlpha, bdfErrConst [bdfMaxOrder + 2]float64

func init() {
	for k := 1; k <= bdfMaxOrder+1; k++ {
		bdfGamma[k] = bdfGamma[k-1] + 1/float64(k)
	}
	for k := range bdfMaxOrder + 2 {
		bdfAlpha[k] = (1 - bdfKappa[k]) * bdfGamma[k]
		bdfErrConst[k] = bdfKappa[k]*bdfGamma[k] + 1/float64(k+1)
	}
}

// bdfWork is the state of a BDF solve, in float64: the differences D
// (D[0] = y, D[j] = ∇ʲy scaled to the step), and the Newton iteration's
// vectors.
type bdfWork struct {
	n                           int
	D                           [][]float64 // bdfMaxOrder + 3 rows of n
	pred, psi, d, y, dy, scale  []float64
	f                           []float64
	ru, r, u                    []float64 // (order+1)² scratch for rescaling
	next                        [][]float64
	order                       int
	luValid, jacCurrent, jacSet bool
	nonFinite                   bool // the last Newton iteration met a non-finite f
}

// errNonFiniteJacobian: the finite-difference Jacobian has NaN or Inf in
// it (the step is rejected as for a NaN state).
var errNonFiniteJacobian = errors.New("the Jacobian is not finite")

// allFiniteF reports whether every element of x is finite.
func allFiniteF(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

func (w *bdfWork) ensure(n int) {
	if w.n == n && w.D != nil {
		return
	}
	w.n = n
	w.D = make([][]float64, bdfMaxOrder+3)
	for i := range w.D {
		w.D[i] = make([]float64, n)
	}
	w.next = make([][]float64, bdfMaxOrder+1)
	for i := range w.next {
		w.next[i] = make([]float64, n)
	}
	for _, v := range []*[]float64{&w.pred, &w.psi, &w.d, &w.y, &w.dy, &w.scale, &w.f} {
		*v = make([]float64, n)
	}
	m := (bdfMaxOrder + 1) * (bdfMaxOrder + 1)
	w.ru, w.r, w.u = make([]float64, m), make([]float64, m), make([]float64, m)
}

// bdfR writes into m (order+1 square, row-major) the matrix R(order,
// factor) of the rescaling of the differences: row 0 ones, then the
// cumulative products down each column of (i − 1 − factor·j)/i.
func bdfR(m []float64, order int, factor float64) {
	k := order + 1
	for j := range k {
		m[j] = 1
	}
	for i := 1; i < k; i++ {
		for j := range k {
			v := 0.0
			if j > 0 {
				v = (float64(i) - 1 - factor*float64(j)) / float64(i)
			}
			m[i*k+j] = m[(i-1)*k+j] * v
		}
	}
}

// rescale changes the differences to a step factor times the current one:
// D[0…order] ← (R·U)ᵀ·D[0…order], R = R(order, factor), U = R(order, 1).
func (w *bdfWork) rescale(factor float64) {
	k := w.order + 1
	bdfR(w.r, w.order, factor)
	bdfR(w.u, w.order, 1)
	for i := range k {
		for j := range k {
			s := 0.0
			for l := range k {
				s += w.r[i*k+l] * w.u[l*k+j]
			}
			w.ru[i*k+j] = s
		}
	}
	for j := range k {
		nj := w.next[j]
		clear(nj)
		for i := range k {
			c := w.ru[i*k+j]
			if c == 0 {
				continue
			}
			for e, v := range w.D[i] {
				nj[e] += c * v
			}
		}
	}
	for j := range k {
		copy(w.D[j], w.next[j])
	}
	w.luValid = false
}

// bdfNewtonMax is the most Newton iterations of a BDF step.
const bdfNewtonMax = 4

// predict sets the prediction Σ_j D_j, ψ and the error scale at order k.
func (m *bdfMethod[T]) predict(b stepBufs[T], k int) {
	w := &m.w
	for i := range b.n {
		p, q := 0.0, 0.0
		for j := 0; j <= k; j++ {
			p += w.D[j][i]
		}
		for j := 1; j <= k; j++ {
			q += bdfGamma[j] * w.D[j][i]
		}
		w.pred[i], w.psi[i] = p, q/bdfAlpha[k]
		w.scale[i] = m.e.opts().ATol + m.e.opts().RTol*math.Abs(p)
	}
}

// correct solves the corrector at tNew with I − c·J, refreshing the
// Jacobian once when the Newton iteration with an old one does not
// converge. bad reports a Jacobian or LU that is not finite (f turned NaN
// or Inf near the prediction), which rejects the step as a NaN in the
// state does; err is a failure that ends the solve.
func (m *bdfMethod[T]) correct(b stepBufs[T], eval evalFunc[T], tNew, c float64) (converged bool, iters int, bad bool, err error) {
	w := &m.w
	if !w.jacSet {
		if err := m.jacobian(b, eval, tNew); errors.Is(err, errNonFiniteJacobian) {
			return false, 0, true, nil
		} else if err != nil {
			return false, 0, false, err
		}
	}
	for {
		if !w.luValid {
			if err := m.la.factor(c); err != nil {
				if !allFiniteF(m.la.jac) {
					return false, iters, true, nil
				}
				return false, iters, false, fmt.Errorf("%w: the BDF matrix I − c·J is singular at t=%g", ErrStepUnderflow, tNew)
			}
			m.e.stats().LUs++
			w.luValid = true
		}
		if converged, iters, err = m.newton(b, eval, tNew, c, bdfNewtonMax, m.ntol); err != nil || converged || w.jacCurrent {
			return converged, iters, false, err
		}
		// Not converged with an old Jacobian: a fresh one at the
		// prediction, then try again.
		if err := m.jacobian(b, eval, tNew); errors.Is(err, errNonFiniteJacobian) {
			return false, iters, true, nil
		} else if err != nil {
			return false, iters, false, err
		}
	}
}

// newton solves the corrector at tNew from the prediction by simplified
// Newton iterations with the factorised I − c·J: converged (the
// iterations' contraction says the remaining correction is below tol),
// and the number of iterations. A non-finite f ends it unconverged.
func (m *bdfMethod[T]) newton(b stepBufs[T], eval evalFunc[T], tNew, c float64, maxIter int, tol float64) (bool, int, error) {
	w := &m.w
	n := b.n
	clear(w.d)
	copy(w.y, w.pred)
	w.nonFinite = false
	old := -1.0
	k := 0
	for ; k < maxIter; k++ {
		for i := range n {
			b.tmp[i] = T(w.y[i])
		}
		if err := eval(evalStage, 0, tNew, b.tmp, b.y1); err != nil {
			return false, k + 1, err
		}
		for i := range n {
			v := float64(b.y1[i])
			if math.IsNaN(v) || math.IsInf(v, 0) {
				w.nonFinite = true
				return false, k + 1, nil
			}
			m.la.rhs[i] = c*v - w.psi[i] - w.d[i]
		}
		luSolve(m.la.lu, n, m.la.piv, m.la.rhs)
		norm := m.norm(b, m.la.rhs, 1)
		rate := -1.0
		if old >= 0 {
			rate = norm / old
			if rate >= 1 || math.Pow(rate, float64(maxIter-k))/(1-rate)*norm > tol {
				return false, k + 1, nil
			}
		}
		for i := range n {
			w.y[i] += m.la.rhs[i]
			w.d[i] += m.la.rhs[i]
		}
		if norm == 0 || (rate >= 0 && rate/(1-rate)*norm < tol) {
			return true, k + 1, nil
		}
		old = norm
	}
	return false, k, nil
}

// norm returns the error norm (RMS, or the largest over ErrorParts) of
// scale_factor·x / w.scale.
func (m *bdfMethod[T]) norm(b stepBufs[T], x []float64, factor float64) float64 {
	w := &m.w
	return m.e.mixed(func(lo, hi int) float64 {
		sum := 0.0
		for i := lo; i < hi; i++ {
			v := factor * x[i] / w.scale[i]
			sum += v * v
		}
		return math.Sqrt(sum / float64(hi-lo))
	})
}

// jacobian forms J = ∂f/∂y at (tNew, prediction) by forward
// differences (n + 1 evaluations of f).
func (m *bdfMethod[T]) jacobian(b stepBufs[T], eval evalFunc[T], tNew float64) error {
	w := &m.w
	n, ros := b.n, &m.la
	ros.ensure(n)
	for i := range n {
		b.tmp[i] = T(w.pred[i])
	}
	f0 := w.f
	if err := eval(evalProbe, 0, tNew, b.tmp, b.y1); err != nil {
		return err
	}
	for i := range n {
		f0[i] = float64(b.y1[i])
	}
	if err := fdJacobian(eval, tNew, b.tmp, b.y1, f0, ros.jac); err != nil {
		return err
	}
	m.e.stats().Jacobians++
	if !allFiniteF(ros.jac[:n*n]) {
		w.jacSet = false
		return errNonFiniteJacobian
	}
	w.jacSet, w.jacCurrent, w.luValid = true, true, false
	return nil
}

// bdfInterpolate writes into dst the bdf interpolant at tq of the step of
// size h and order k ending at tNew, whose differences are D[0…k].
func bdfInterpolate[T tensor.Float](dst []T, D [][]float64, k int, tNew, h, tq float64) {
	for i := range dst {
		v, p := D[0][i], 1.0
		for j := range k {
			p *= (tq - (tNew - h*float64(j))) / (h * float64(1+j))
			v += D[j+1][i] * p
		}
		dst[i] = T(v)
	}
}
