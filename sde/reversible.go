package sde

import (
	"fmt"
	"math"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// revState is reversible Heun's extended state at a step boundary: y, ŷ
// and f, g at ŷ — plain tensors owned by the solve.
type revState[T tensor.Float] struct {
	y, yhat, mu, sigma *tensor.Tensor[T]
}

// revStep is one step of the grid, with the output index it ends on (or
// −1).
type revStep struct {
	t, h float64
	out  int
}

// solveReversible runs reversible Heun forward on a scratch tape in
// no-grad mode, reset after every step (memory independent of the number
// of steps), and records the outputs on tp as one custom node whose
// backward runs the steps in reverse: each state is reconstructed from the
// next in algebra and the cotangent of the extended state (y, ŷ, μ, σ) is
// pulled back through the step, with one vector–Jacobian product of
// (f, g) per step: f and g at ŷₙ are evaluated once, on a tape, for both
// the reconstruction of yₙ and the pull-back through μₙ, σₙ.
//
// The step map, with μₙ = f(tₙ, ŷₙ), σₙ = g(tₙ, ŷₙ) and σΔW the noise
// layout's product:
//
//	ŷₙ₊₁ = 2yₙ − ŷₙ + h μₙ + σₙΔW
//	μₙ₊₁, σₙ₊₁ = f(tₙ₊₁, ŷₙ₊₁), g(tₙ₊₁, ŷₙ₊₁)
//	yₙ₊₁ = yₙ + ½h(μₙ + μₙ₊₁) + ½(σₙ + σₙ₊₁)ΔW
//
// is undone by ŷₙ = 2yₙ₊₁ − ŷₙ₊₁ − h μₙ₊₁ − σₙ₊₁ΔW, then μₙ, σₙ at ŷₙ,
// then yₙ = yₙ₊₁ − ½h(μₙ + μₙ₊₁) − ½(σₙ + σₙ₊₁)ΔW. Its transpose, for the
// cotangents (a_y, a_ŷ, a_μ, a_σ) of the state at n+1:
//
//	a_μ += ½h a_y,  a_σ += ½ a_y ⊗ ΔW          (μₙ₊₁, σₙ₊₁ in yₙ₊₁)
//	a_ŷ += (a_μ, a_σ)ᵀ ∂(f, g)/∂ŷ at ŷₙ₊₁       (and into ∂L/∂θ)
//	a_y, a_ŷ, a_μ, a_σ ← a_y + 2a_ŷ, −a_ŷ, h(a_ŷ + ½a_y), (a_ŷ + ½a_y) ⊗ ΔW
//
// and at t₀, where ŷ₀ = y₀ and μ₀, σ₀ are read at y₀, the gradient of y₀
// is a_y + a_ŷ + (a_μ, a_σ)ᵀ ∂(f, g)/∂y.
func solveReversible[T tensor.Float](tp *autograd.Tape[T], p *problem[T], y0 autograd.Var[T], ts []float64, path Path[T], opt Options) ([]autograd.Var[T], *Stats, error) {
	stp := &reversibleHeun[T]{p: p}
	y0v := y0.Value().Clone()
	return solveAsNode(tp, p, y0, ts, path, opt, stp, "sde.ReversibleHeun", nil,
		func(yN *tensor.Tensor[T], steps []revStep) backwardFunc[T] {
			final := revState[T]{y: yN, yhat: stp.yhat.Value().Clone(), mu: stp.mu.Value().Clone(), sigma: stp.sigma.Value().Clone()}
			return func(gy *tensor.Tensor[T], params []*autograd.Param[T]) ([]*tensor.Tensor[T], error) {
				return reverseHeun(p, tp.Engine(), final, y0v, steps, ts[0], path, gy, params)
			}
		})
}

// backwardFunc returns the cotangents of y0 and of each parameter given the
// cotangent gy of the stacked outputs y(ts[1:]).
type backwardFunc[T tensor.Float] func(gy *tensor.Tensor[T], params []*autograd.Param[T]) ([]*tensor.Tensor[T], error)

// solveAsNode runs stp forward from y0 on a scratch tape (values only,
// memory flat in the steps), recording the steps taken, and records the
// outputs y(ts[1:]) on tp as one custom node, stacked along a new leading
// axis, whose inputs are y0 and the SDE's parameters; ys[k] selects output
// k. taken, if not nil, sees each step and its end state (valid during the
// call). makeBack, called once the forward pass is done with its final
// state and the steps, returns the node's backward.
func solveAsNode[T tensor.Float](tp *autograd.Tape[T], p *problem[T], y0 autograd.Var[T], ts []float64, path Path[T], opt Options, stp stepper[T], name string, taken func(revStep, autograd.Var[T]), makeBack func(yN *tensor.Tensor[T], steps []revStep) backwardFunc[T]) ([]autograd.Var[T], *Stats, error) {
	st := p.stats
	inner := autograd.NewTape(tp.Engine())
	inner.SetNoGrad(true)
	defer inner.Release()

	out := tensor.New[T](append([]int{len(ts) - 1}, p.yShape...)...)
	var steps []revStep
	l := &loop[T]{p: p, stp: stp, path: path, opt: opt, tp: inner, scratch: true,
		out: func(k int, y autograd.Var[T]) {
			copy(out.Slice(k-1, k).Data(), y.Value().ReadData())
		},
		taken: func(s revStep, y autograd.Var[T]) {
			steps = append(steps, s)
			if taken != nil {
				taken(s, y)
			}
		},
	}
	yN, err := l.run(inner.Const(y0.Value()), ts)
	if err != nil {
		return nil, st, err
	}
	back := makeBack(yN.Value().Clone(), steps)
	inner.Reset()

	params := p.sde.Params()
	if params == nil {
		params = []*autograd.Param[T]{} // a VJP then reports any parameter read
	}
	inputs := []autograd.Var[T]{y0}
	for _, q := range params {
		inputs = append(inputs, tp.Param(q))
	}
	node := autograd.Custom(name, out, func(gy *tensor.Tensor[T]) ([]*tensor.Tensor[T], error) {
		return back(gy, params)
	}, inputs...)
	ys := []autograd.Var[T]{y0}
	for k := 1; k < len(ts); k++ {
		ys = append(ys, autograd.Select(node, 0, k-1))
	}
	return ys, st, nil
}

// reverseHeun is the backward pass of solveReversible: it returns the
// cotangents of y0 and of each parameter.
func reverseHeun[T tensor.Float](p *problem[T], eng tensor.Engine[T], final revState[T], y0 *tensor.Tensor[T], steps []revStep, t0 float64, path Path[T], gy *tensor.Tensor[T], params []*autograd.Param[T]) ([]*tensor.Tensor[T], error) {
	b := newRevBackward(p, eng, final, path, params)
	defer b.inner.Release()
	cur, next := &revRecord[T]{tp: autograd.NewTape(eng)}, &revRecord[T]{tp: autograd.NewTape(eng)}
	defer cur.tp.Release()
	defer next.tp.Release()
	if len(steps) > 0 {
		last := steps[len(steps)-1]
		if err := b.record(cur, last.t+last.h, b.s.yhat); err != nil {
			return nil, p.fail(backward, last.t, last.h, fmt.Errorf("backward: %w", err))
		}
	}
	for i := len(steps) - 1; i >= 0; i-- {
		if err := b.step(steps, i, gy, cur, next); err != nil {
			return nil, err
		}
		cur, next = next, cur
	}
	// ŷ₀ = y₀, and μ₀, σ₀ were read at y₀ (kept: the reconstruction
	// reaches it to rounding, which Stats.Drift reports).
	p.stats.Drift = max(maxAbsDiff(b.s.y, y0), maxAbsDiff(b.s.yhat, y0))
	b.ay.Add(b.ay, b.ayh)
	if err := b.vjp(t0, y0, b.ay); err != nil {
		return nil, p.fail(backward, t0, 0, fmt.Errorf("backward: %w", err))
	}
	return append([]*tensor.Tensor[T]{b.ay}, b.pgrads...), nil
}

// revBackward is the state of reverseHeun: the reconstructed forward state
// s, the adjoints of y, ŷ, μ and σ, the parameters' gradients and the
// scratch the steps share.
type revBackward[T tensor.Float] struct {
	p                  *problem[T]
	path               Path[T]
	params             []*autograd.Param[T]
	pgrads             []*tensor.Tensor[T]
	pb                 *autograd.Pullback[T]
	inner              *autograd.Tape[T] // the reconstruction's, no grad
	n, ng              int
	s                  revState[T]
	ay, ayh, amu, asig *tensor.Tensor[T]
	tmp, tmpG, cot, dW *tensor.Tensor[T]
}

// revRecord is an evaluation of f and g at one point recorded on its own
// tape for the backward pass: the reconstruction of step n's start needs
// f and g at ŷₙ, and the next backward step pulls (a_μ, a_σ) back through
// the very same evaluation, so each is taken once.
type revRecord[T tensor.Float] struct {
	tp        *autograd.Tape[T]
	x, fg     autograd.Var[T]
	mu, sigma *tensor.Tensor[T]
}

func newRevBackward[T tensor.Float](p *problem[T], eng tensor.Engine[T], final revState[T], path Path[T], params []*autograd.Param[T]) *revBackward[T] {
	b := &revBackward[T]{
		p: p, path: path, params: params, pgrads: make([]*tensor.Tensor[T], len(params)),
		pb: autograd.NewPullback(eng), inner: autograd.NewTape(eng),
		n: p.n, ng: numel(p.gShape),
		s:  revState[T]{y: final.y.Clone(), yhat: final.yhat.Clone(), mu: final.mu.Clone(), sigma: final.sigma.Clone()},
		ay: tensor.New[T](p.yShape...), ayh: tensor.New[T](p.yShape...),
		amu: tensor.New[T](p.yShape...), asig: tensor.New[T](p.gShape...),
		tmp: tensor.New[T](p.yShape...), tmpG: tensor.New[T](p.gShape...),
		dW: tensor.New[T](path.Shape()...),
	}
	b.cot = tensor.New[T](b.n + b.ng)
	for j, q := range params {
		b.pgrads[j] = tensor.New[T](q.Value.Shape()...)
	}
	b.inner.SetNoGrad(true)
	return b
}

// cotangent sets cot = (a_μ, a_σ), flattened.
func (b *revBackward[T]) cotangent() {
	copy(b.cot.Data()[:b.n], b.amu.ReadData())
	copy(b.cot.Data()[b.n:], b.asig.ReadData())
}

// vjp adds (a_μ, a_σ)ᵀ ∂(f, g)/∂y at (t, at) into dst and the parameters'
// gradients.
func (b *revBackward[T]) vjp(t float64, at, dst *tensor.Tensor[T]) (err error) {
	defer recoverUnlisted(&err)
	b.p.stats.BackwardEvals++
	b.cotangent()
	fg := func(tp *autograd.Tape[T], in []autograd.Var[T]) autograd.Var[T] {
		f := b.p.sde.Drift(tp, t, in[0])
		g := b.p.sde.Diffusion(tp, t, in[0])
		return autograd.Concat(0, autograd.Reshape(f, b.n), autograd.Reshape(g, b.ng))
	}
	_, err = b.pb.VJP(fg, []*tensor.Tensor[T]{at}, b.cot, autograd.VJPDest[T]{
		Inputs: []*tensor.Tensor[T]{dst}, Params: b.params, ParamGrads: b.pgrads, Accumulate: true,
	})
	return err
}

// record evaluates f and g at (t, at) on r's tape, for pull.
func (b *revBackward[T]) record(r *revRecord[T], t float64, at *tensor.Tensor[T]) (err error) {
	defer recoverUnlisted(&err)
	b.p.stats.BackwardEvals++
	r.tp.Reset()
	r.tp.RedirectParams(b.params, b.pgrads)
	r.x = r.tp.Input(at.Clone())
	f := b.p.sde.Drift(r.tp, t, r.x)
	g := b.p.sde.Diffusion(r.tp, t, r.x)
	r.fg = autograd.Concat(0, autograd.Reshape(f, b.n), autograd.Reshape(g, b.ng))
	r.mu, r.sigma = f.Value(), g.Value()
	return nil
}

// pull adds (a_μ, a_σ)ᵀ ∂(f, g)/∂y at the point r recorded into dst and
// the parameters' gradients.
func (b *revBackward[T]) pull(r *revRecord[T], dst *tensor.Tensor[T]) (err error) {
	defer recoverUnlisted(&err)
	b.cotangent()
	if err := r.tp.BackwardWith(r.fg, b.cot); err != nil {
		return err
	}
	if gx := r.x.Grad(); gx != nil {
		dst.Add(dst, gx.Reshape(dst.Shape()...))
	}
	return nil
}

// step runs the backward pass through steps[i]: the adjoints through the
// step's end, then the state at its start reconstructed in algebra (f and
// g at ŷₙ recorded into next, the ones at ŷₙ₊₁ being in cur), then the
// step's linear part transposed.
func (b *revBackward[T]) step(steps []revStep, i int, gy *tensor.Tensor[T], cur, next *revRecord[T]) error {
	p, s, sp := b.p, &b.s, steps[i]
	ay, ayh, amu, asig, tmp := b.ay, b.ayh, b.amu, b.asig, b.tmp
	if sp.out > 0 {
		ay.Add(ay, gy.Slice(sp.out-1, sp.out).Reshape(p.yShape...))
	}
	if err := b.path.Increment(b.dW, sp.t, sp.t+sp.h); err != nil {
		return p.fail(backward, sp.t, sp.h, fmt.Errorf("backward: %w", err))
	}
	w := b.dW.Reshape(p.wShape...)
	// μₙ₊₁ and σₙ₊₁ in yₙ₊₁, then through f and g at ŷₙ₊₁.
	amu.AddScaled(amu, T(sp.h/2), ay)
	tmp.Scale(ay, 0.5)
	p.applyT(b.tmpG, tmp, w)
	asig.Add(asig, b.tmpG)
	if err := b.pull(cur, ayh); err != nil {
		return p.fail(backward, sp.t, sp.h, fmt.Errorf("backward: %w", err))
	}
	// Reconstruct the state at tₙ.
	inner := b.inner
	inner.Reset()
	sw := p.apply(inner.Const(s.sigma), inner.Const(w))
	yhat := autograd.LinComb([]T{2, -1, T(-sp.h), -1}, inner.Const(s.y), inner.Const(s.yhat), inner.Const(s.mu), sw)
	if err := p.finite(yhat); err != nil {
		return p.fail(backward, sp.t, sp.h, fmt.Errorf("backward reconstruction: %w", err))
	}
	// At the time the forward solve evaluated f and g at ŷₙ: the end of
	// the step before (or t₀).
	tn := sp.t
	if i > 0 {
		tn = steps[i-1].t + steps[i-1].h
	}
	if err := b.record(next, tn, yhat.Value()); err != nil {
		return p.fail(backward, sp.t, sp.h, fmt.Errorf("backward: %w", err))
	}
	mu, sigma := inner.Const(next.mu), inner.Const(next.sigma)
	y := autograd.LinComb([]T{1, T(-sp.h / 2), T(-sp.h / 2), -0.5, -0.5},
		inner.Const(s.y), mu, inner.Const(s.mu), p.apply(sigma, inner.Const(w)), sw)
	for _, v := range []autograd.Var[T]{mu, sigma, y} {
		if err := p.finite(v); err != nil {
			return p.fail(backward, sp.t, sp.h, fmt.Errorf("backward reconstruction: %w", err))
		}
	}
	s.y.Copy(y.Value())
	s.yhat.Copy(yhat.Value())
	s.mu.Copy(next.mu)
	s.sigma.Copy(next.sigma)
	// The linear part of the step, transposed.
	tmp.AddScaled(ayh, 0.5, ay) // a_ŷ + ½a_y
	amu.Scale(tmp, T(sp.h))
	p.applyT(asig, tmp, w)
	ay.AddScaled(ay, 2, ayh)
	ayh.Neg(ayh)
	return nil
}

// recoverUnlisted turns the panic of a parameter that the SDE reads but
// does not list in Params() (autograd.UnlistedParamError) into *err; other
// panics go on. Call it deferred.
func recoverUnlisted(err *error) {
	r := recover()
	if r == nil {
		return
	}
	u, ok := r.(*autograd.UnlistedParamError)
	if !ok {
		panic(r)
	}
	*err = fmt.Errorf("the SDE reads parameter %q, which its Params() does not list: list it there (its gradient would be lost), or read it with Tape.Const to hold it constant", u.Name)
}

// maxAbsDiff is the largest |a − b| elementwise.
func maxAbsDiff[T tensor.Float](a, b *tensor.Tensor[T]) float64 {
	var m float64
	bv := b.ReadData()
	for i, v := range a.ReadData() {
		m = max(m, math.Abs(float64(v-bv[i])))
	}
	return m
}
