package sde

import (
	"errors"
	"fmt"
	"math"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock/integrate"
	"github.com/adamnode/adamnode/tensor"
)

// ErrMaxSteps is wrapped by the error of an adaptive solve that attempted
// Options.MaxSteps steps without reaching the last output time, and of a
// fixed-step solve whose Step would take more than MaxSteps steps. It is
// the ODE integrator's sentinel (odeblock.ErrMaxSteps, the same value), so
// that errors.Is answers alike for ODE and SDE solves.
var ErrMaxSteps = integrate.ErrMaxSteps

// ErrStepUnderflow is wrapped by the error of an adaptive solve whose step
// had to shrink below Options.MinStep, and of a fixed-step solve whose Step
// is too small for float64 to tell its step times apart. It is
// odeblock.ErrStepUnderflow, the same value.
var ErrStepUnderflow = integrate.ErrStepUnderflow

// loop drives a stepper through the output times, with fixed or adaptive
// steps, recording on tp.
type loop[T tensor.Float] struct {
	p    *problem[T]
	stp  stepper[T]
	path Path[T]
	opt  Options
	tp   *autograd.Tape[T]
	// scratch: tp is the loop's own no-grad tape, reset before each step
	// (the state and the stepper's carried values re-enter as constants),
	// so memory does not grow with the steps.
	scratch bool
	out     func(k int, y autograd.Var[T]) // at output time k ≥ 1; y valid until the next step
	taken   func(revStep, autograd.Var[T]) // each step that enters the solution, and its end state
}

// run integrates from y0 at ts[0] and returns the state at the last time.
func (l *loop[T]) run(y0 autograd.Var[T], ts []float64) (autograd.Var[T], error) {
	p := l.p
	if err := l.stp.start(l.tp, ts[0], y0); err != nil {
		return y0, p.fail(forward, ts[0], 0, err)
	}
	if l.opt.Adaptive {
		return l.adaptive(y0, ts)
	}
	y := y0
	for k := 1; k < len(ts); k++ {
		a, b := ts[k-1], ts[k]
		n := stepsIn(b-a, l.opt.Step)
		h := (b - a) / float64(n)
		for i := range n {
			t := a + float64(i)*h
			end := -1
			hi := h
			if i == n-1 {
				end, hi = k, b-t // land exactly on the output time
			}
			y = l.rebase(y)
			var err error
			if y, err = l.step(t, hi, y); err != nil {
				return y, p.fail(forward, t, hi, err)
			}
			p.stats.Accepted++
			l.commit(revStep{t, hi, end}, y)
			if end > 0 {
				l.out(end, y)
			}
		}
	}
	return y, nil
}

// step takes one step and checks the state.
func (l *loop[T]) step(t, h float64, y autograd.Var[T]) (autograd.Var[T], error) {
	var y1 autograd.Var[T]
	var err error
	if as, ok := l.stp.(areaStepper[T]); ok {
		ap, ok := l.path.(AreaPath[T])
		if !ok {
			return y, fmt.Errorf("method %q needs a path with Lévy areas (an AreaPath, as Brownian)", l.p.method)
		}
		dW, dH := tensor.New[T](l.path.Shape()...), tensor.New[T](l.path.Shape()...)
		if err := ap.IncrementArea(dW, dH, t, t+h); err != nil {
			return y, err
		}
		y1, err = as.stepArea(l.tp, t, h, y, dW.Reshape(l.p.wShape...), dH.Reshape(l.p.wShape...))
	} else {
		var dW autograd.Var[T]
		if dW, err = increment(l.tp, l.p, l.path, t, h); err != nil {
			return y, err
		}
		y1, err = l.stp.step(l.tp, t, h, y, dW)
	}
	if err == nil {
		err = l.p.finite(y1)
	}
	if err != nil && l.p.method == ReversibleHeun && errors.Is(err, ErrNonFinite) {
		err = fmt.Errorf("%w — %s", err, reversibleHeunUnstable)
	}
	if err != nil {
		return y, err
	}
	return y1, nil
}

// reversibleHeunUnstable says why a reversible Heun solve may overflow.
const reversibleHeunUnstable = "reversible_heun is not A-stable: where the drift contracts (∂f/∂y < 0) " +
	"its errors grow like e^{|∂f/∂y|·t} at any step size, and heun is stable there; see sde.ReversibleHeun"

func (l *loop[T]) commit(s revStep, y1 autograd.Var[T]) {
	l.p.stats.Steps++
	if l.taken != nil {
		l.taken(s, y1)
	}
}

// rebase, on a scratch tape, carries y and the stepper's values over a
// reset of the tape.
func (l *loop[T]) rebase(y autograd.Var[T]) autograd.Var[T] {
	if !l.scratch {
		return y
	}
	carried := l.stp.snapshot()
	vals := make([]*tensor.Tensor[T], len(carried))
	for i, v := range carried {
		vals[i] = v.Value().Clone()
	}
	yv := y.Value().Clone()
	l.tp.Reset()
	for i, v := range vals {
		carried[i] = l.tp.Const(v)
	}
	l.stp.restore(carried)
	return l.tp.Const(yv)
}

// adaptive is step doubling: each attempt takes one step of h and two of
// h/2 from the same state on the same Brownian path, and their difference
// estimates the local error of the full step. The attempt is accepted when
// the RMS norm of (y_h − y_{h/2,h/2}) / (ATol + RTol·max(|y|, |y_{h/2,h/2}|))
// is at most 1; the two half steps enter the solution. The next h is
// h·min(10, max(0.2, 0.9·ratio^(−1/(p + ½)))) for the method's strong
// order p (the local error of a step of strong order p is O(h^(p+½))).
func (l *loop[T]) adaptive(y autograd.Var[T], ts []float64) (autograd.Var[T], error) {
	p, opt := l.p, l.opt
	span := ts[len(ts)-1] - ts[0]
	minStep := opt.MinStep
	if minStep == 0 {
		minStep = 1e-10 * span
	}
	maxSteps := opt.MaxSteps
	if maxSteps == 0 {
		maxSteps = 10000
	}
	expo := -1 / (strongOrder(p.method, p.noise) + 0.5)
	h := opt.Step
	t := ts[0]
	for k, attempts := 1, 0; k < len(ts); attempts++ {
		if attempts >= maxSteps {
			return y, p.fail(forward, t, h, fmt.Errorf("%d attempted steps before t=%g: %w", attempts, ts[len(ts)-1], ErrMaxSteps))
		}
		hh := h
		lands := false
		if t+hh >= ts[k]-minStep {
			hh, lands = ts[k]-t, true
		}
		if hh < minStep {
			return y, p.fail(forward, t, hh, fmt.Errorf("step %g below the smallest %g: %w", hh, minStep, ErrStepUnderflow))
		}
		y = l.rebase(y)
		snap := l.stp.snapshot()
		full, err := l.step(t, hh, y)
		if err != nil {
			return y, p.fail(forward, t, hh, err)
		}
		l.stp.restore(snap)
		mid := t + hh/2
		half, err := l.step(t, mid-t, y)
		if err != nil {
			return y, p.fail(forward, t, mid-t, err)
		}
		end := t + hh
		if lands {
			end = ts[k]
		}
		two, err := l.step(mid, end-mid, half)
		if err != nil {
			return y, p.fail(forward, mid, end-mid, err)
		}
		ratio := errorRatio(full.Value().ReadData(), two.Value().ReadData(), y.Value().ReadData(), opt.RTol, opt.ATol)
		if ratio <= 1 {
			p.stats.Accepted++
			out := -1
			if lands {
				out = k
			}
			l.commit(revStep{t, mid - t, -1}, half)
			l.commit(revStep{mid, end - mid, out}, two)
			y, t = two, end
			if lands {
				l.out(k, y)
				k++
			}
		} else {
			p.stats.Rejected++
			l.stp.restore(snap)
		}
		factor := 10.0
		if ratio > 0 {
			factor = min(10, max(0.2, 0.9*math.Pow(ratio, expo)))
		}
		h = hh * factor
	}
	return y, nil
}

// errorRatio is the RMS norm of (a − b)/(atol + rtol·max(|y|, |b|)).
func errorRatio[T tensor.Float](a, b, y []T, rtol, atol float64) float64 {
	var s float64
	for i := range a {
		sc := atol + rtol*max(math.Abs(float64(y[i])), math.Abs(float64(b[i])))
		d := float64(a[i]-b[i]) / sc
		s += d * d
	}
	if len(a) == 0 {
		return 0
	}
	r := math.Sqrt(s / float64(len(a)))
	if math.IsNaN(r) {
		return math.Inf(1)
	}
	return r
}

// strongOrder is the strong order the step-size control assumes.
func strongOrder(method string, noise Noise) float64 {
	switch method {
	case Milstein, SRK:
		return 1
	case SRI2, SRA1:
		return 1.5
	case Heun:
		if noise != General {
			return 1
		}
	}
	return 0.5
}

// stepsIn is the number of equal steps of at most maxStep (to a relative
// 1e-9) in span, at least 1 and at most 2⁵³ (checkFixedSteps refuses a
// fixed step with more; an adaptive solve's first step, which only
// estimates a count, may be smaller), so that the count never overflows.
func stepsIn(span, maxStep float64) int {
	n := math.Ceil(span / maxStep * (1 - 1e-9))
	if !(n <= 0x1p53) { // NaN too
		return 1 << 53
	}
	return max(1, int(n))
}
