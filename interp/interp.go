package interp

import (
	"fmt"
	"math"
	"sort"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// Interpolant is a control X(t) made from observations: its value and its
// derivative dX/dt at time t, each [B, C], differentiable with respect to
// the observations. Linear, NaturalCubic and HermiteBackward implement it.
type Interpolant[T tensor.Float] interface {
	Evaluate(tp *autograd.Tape[T], t float64) autograd.Var[T]
	Derivative(tp *autograd.Tape[T], t float64) autograd.Var[T]
	// Times returns the knot times (the caller must not modify them).
	Times() []float64
}

// pieces is the representation all three interpolants share: on piece i,
// [t_i, t_{i+1}], X(t) = Σ_k coef[k][i]·s^k with s = t − t_i, each
// coefficient a [B, C] Var recorded once by the constructor.
type pieces[T tensor.Float] struct {
	name  string
	times []float64
	obs   autograd.Var[T]
	b, c  int
	coef  [][]autograd.Var[T] // coef[k][i]
}

// validate checks the knots and the observations' shape for the
// constructor name, returning B and C.
func validate[T tensor.Float](name string, times []float64, obs autograd.Var[T]) (b, c int, err error) {
	if len(times) < 2 {
		return 0, 0, fmt.Errorf("interp: %s: %d knot times, need at least 2", name, len(times))
	}
	for i, t := range times {
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return 0, 0, fmt.Errorf("interp: %s: times[%d] = %v is not finite", name, i, t)
		}
		if i > 0 && t <= times[i-1] {
			what := "earlier than"
			if t == times[i-1] {
				what = "equal to"
			}
			return 0, 0, fmt.Errorf("interp: %s: times[%d] = %v is %s times[%d] = %v: knot times must be strictly increasing", name, i, t, what, i-1, times[i-1])
		}
	}
	if obs.IsZero() {
		return 0, 0, fmt.Errorf("interp: %s: no observations (zero Var)", name)
	}
	shape := obs.Shape()
	if len(shape) != 3 {
		return 0, 0, fmt.Errorf("interp: %s: observations of shape %v, want rank 3 [batch, time, channels]", name, shape)
	}
	if shape[1] != len(times) {
		return 0, 0, fmt.Errorf("interp: %s: observations of shape %v have %d times along axis 1, but there are %d knot times", name, shape, shape[1], len(times))
	}
	if shape[0] == 0 || shape[2] == 0 {
		return 0, 0, fmt.Errorf("interp: %s: observations of shape %v are empty", name, shape)
	}
	if err := finite(name, times, shape, obs.Value().ReadData()); err != nil {
		return 0, 0, err
	}
	return shape[0], shape[2], nil
}

// finite returns an error naming the first observation, of the values
// y [B, n, C] at the knot times, that is a NaN or infinite: the package
// reads no value as missing (see the package documentation), and one would
// spread into the pieces of its channel.
func finite[T tensor.Float](name string, times []float64, shape []int, y []T) error {
	n, c := shape[1], shape[2]
	for k, v := range y {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			b, i, ch := k/(n*c), k/c%n, k%c
			return fmt.Errorf("interp: %s: observations[%d, %d, %d] = %v is not finite: series %d, channel %d, at times[%d] = %v (a NaN is not read as a missing value: fill missing values first)",
				name, b, i, ch, f, b, ch, i, times[i])
		}
	}
	return nil
}

// newPieces validates and returns the common part, with the per-piece
// coefficients still to be set.
func newPieces[T tensor.Float](name string, times []float64, obs autograd.Var[T]) (*pieces[T], error) {
	b, c, err := validate(name, times, obs)
	if err != nil {
		return nil, err
	}
	return &pieces[T]{name: name, times: append([]float64(nil), times...), obs: obs, b: b, c: c}, nil
}

// split cuts x [B, n−1, C] into the n−1 pieces' [B, C] Vars.
func (p *pieces[T]) split(x autograd.Var[T]) []autograd.Var[T] {
	m := len(p.times) - 1
	sizes := make([]int, m)
	for i := range sizes {
		sizes[i] = 1
	}
	parts := autograd.Split(x, 1, sizes...)
	for i, v := range parts {
		parts[i] = autograd.Reshape(v, p.b, p.c)
	}
	return parts
}

// setCoef records the coefficients of s^0, s^1, … from [B, n−1, C] Vars.
func (p *pieces[T]) setCoef(xs ...autograd.Var[T]) {
	p.coef = make([][]autograd.Var[T], len(xs))
	for k, x := range xs {
		p.coef[k] = p.split(x)
	}
}

// locate returns the piece of t, the largest i with t_i ≤ t clamped to
// [0, n−2] (so a knot takes the piece to its right, t_{n−1} the last piece,
// and times outside the knots their end piece), and s = t − t_i.
func (p *pieces[T]) locate(tp *autograd.Tape[T], op string, t float64) (int, float64) {
	if tp != p.obs.Tape() {
		panic(usage("%s.%s: tape is not the tape of the observations", p.name, op))
	}
	if math.IsNaN(t) {
		panic(usage("%s.%s: t is NaN", p.name, op))
	}
	n := len(p.times)
	i := sort.Search(n, func(k int) bool { return p.times[k] > t }) - 1 // the last t_i ≤ t
	i = min(max(i, 0), n-2)
	return i, t - p.times[i]
}

// evaluate returns Σ_k coef[k][i]·s^k.
func (p *pieces[T]) evaluate(tp *autograd.Tape[T], t float64) autograd.Var[T] {
	i, s := p.locate(tp, "Evaluate", t)
	w := make([]T, len(p.coef))
	xs := make([]autograd.Var[T], len(p.coef))
	pow := 1.0
	for k := range p.coef {
		w[k], xs[k] = T(pow), p.coef[k][i]
		pow *= s
	}
	return autograd.LinComb(w, xs...)
}

// derivative returns Σ_{k≥1} k·coef[k][i]·s^{k−1}.
func (p *pieces[T]) derivative(tp *autograd.Tape[T], t float64) autograd.Var[T] {
	i, s := p.locate(tp, "Derivative", t)
	w := make([]T, len(p.coef)-1)
	xs := make([]autograd.Var[T], len(p.coef)-1)
	pow := 1.0
	for k := 1; k < len(p.coef); k++ {
		w[k-1], xs[k-1] = T(float64(k)*pow), p.coef[k][i]
		pow *= s
	}
	return autograd.LinComb(w, xs...)
}

// steps returns, as constants shaped [1, n−1, 1] to broadcast over
// [B, n−1, C], the knot spacings h_i = t_{i+1} − t_i scaled by a.
func (p *pieces[T]) steps(a float64) autograd.Var[T] {
	n := len(p.times)
	tp := p.obs.Tape()
	h := tp.Scratch(1, n-1, 1)
	d := h.Data()
	for i := range n - 1 {
		d[i] = T(a * (p.times[i+1] - p.times[i]))
	}
	return tp.Const(h)
}

// slopes returns y_i [B, n−1, C] (the left ends of the pieces) and the
// divided differences Δ_i = (y_{i+1} − y_i)/h_i [B, n−1, C].
func (p *pieces[T]) slopes() (y0, delta autograd.Var[T]) {
	n := len(p.times)
	y0 = autograd.Narrow(p.obs, 1, 0, n-1)
	y1 := autograd.Narrow(p.obs, 1, 1, n-1)
	return y0, autograd.Div(autograd.Sub(y1, y0), p.steps(1))
}

// usageError is the panic value of a misuse of an interpolant (a tape
// other than the observations', a NaN time): an error, as autograd's
// misuse panics are, which tensor.Recover lets through (it recovers bad
// shapes only). Bad observations are errors of the constructors.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usage returns the usageError "interp: <message>".
func usage(format string, args ...any) *usageError {
	return &usageError{msg: "interp: " + fmt.Sprintf(format, args...)}
}
