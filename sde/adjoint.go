package sde

import (
	"fmt"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// solveAdjoint runs a Stratonovich method forward (values only) and
// records the outputs as one node whose backward solves the stochastic
// adjoint (Li et al. 2020) backward in time on the same Brownian path.
// For the Stratonovich SDE dy = f dt + g∘dW, the state y, its adjoint a
// and the parameters' gradient g_θ satisfy, in reverse time,
//
//	dy = f dt + g∘dW,  da = −aᵀ∂f/∂y dt − aᵀ∂g/∂y∘dW,  dg_θ = −aᵀ∂f/∂θ dt − aᵀ∂g/∂θ∘dW,
//
// an SDE in (y, a, g_θ) whose increments over a step back from t+h to t
// are, with Φ(x) = h f(s, x) + g(s, x)ΔW and ΔW the forward step's
// increment,
//
//	K(s; y, a) = (−Φ(y), aᵀ∂Φ/∂y, aᵀ∂Φ/∂θ)      (one VJP of Φ, whose value is Φ)
//
// solved by Heun's rule on the forward pass's steps: z̃ = z + K(t+h; z),
// z ← z + ½(K(t+h; z) + K(t; z̃)). Cotangents of outputs at intermediate
// times are added into a as the backward solve passes them. The state is
// reconstructed by solving the SDE backward, not stored.
func solveAdjoint[T tensor.Float](tp *autograd.Tape[T], p *problem[T], y0 autograd.Var[T], ts []float64, path Path[T], opt Options, method string) ([]autograd.Var[T], *Stats, error) {
	stp := newStepper(p, method, false)
	y0v := y0.Value().Clone()
	return solveAsNode(tp, p, y0, ts, path, opt, stp, "sde.Adjoint", nil,
		func(yN *tensor.Tensor[T], steps []revStep) backwardFunc[T] {
			return func(gy *tensor.Tensor[T], params []*autograd.Param[T]) ([]*tensor.Tensor[T], error) {
				return adjointHeun(p, tp.Engine(), yN, y0v, steps, path, gy, params)
			}
		})
}

func adjointHeun[T tensor.Float](p *problem[T], eng tensor.Engine[T], yN, y0 *tensor.Tensor[T], steps []revStep, path Path[T], gy *tensor.Tensor[T], params []*autograd.Param[T]) ([]*tensor.Tensor[T], error) {
	st := p.stats
	y, a := yN.Clone(), tensor.New[T](p.yShape...)
	grads := make([]*tensor.Tensor[T], len(params))
	pg1 := make([]*tensor.Tensor[T], len(params))
	pg2 := make([]*tensor.Tensor[T], len(params))
	for j, q := range params {
		grads[j] = tensor.New[T](q.Value.Shape()...)
		pg1[j] = tensor.New[T](q.Value.Shape()...)
		pg2[j] = tensor.New[T](q.Value.Shape()...)
	}
	phi1, phi2 := tensor.New[T](p.yShape...), tensor.New[T](p.yShape...)
	d1, d2 := tensor.New[T](p.yShape...), tensor.New[T](p.yShape...)
	yt, at := tensor.New[T](p.yShape...), tensor.New[T](p.yShape...)
	dW := tensor.New[T](path.Shape()...)
	pb := autograd.NewPullback(eng)

	// k evaluates K(s; x, cot): Φ(x) into phi, cotᵀ∂Φ/∂x into d and
	// cotᵀ∂Φ/∂θ into pg.
	k := func(s, h float64, x, cot, phi, d *tensor.Tensor[T], pg []*tensor.Tensor[T]) (err error) {
		defer recoverUnlisted(&err)
		st.BackwardEvals++
		w := dW.Reshape(p.wShape...)
		fn := func(tp *autograd.Tape[T], in []autograd.Var[T]) autograd.Var[T] {
			f := p.sde.Drift(tp, s, in[0])
			g := p.sde.Diffusion(tp, s, in[0])
			return autograd.LinComb([]T{T(h), 1}, f, p.apply(g, tp.Const(w)))
		}
		v, err := pb.VJP(fn, []*tensor.Tensor[T]{x}, cot, autograd.VJPDest[T]{
			Inputs: []*tensor.Tensor[T]{d}, Params: params, ParamGrads: pg,
		})
		if err != nil {
			return err
		}
		phi.Copy(v)
		return nil
	}

	for i := len(steps) - 1; i >= 0; i-- {
		sp := steps[i]
		t1 := sp.t + sp.h
		if sp.out > 0 {
			a.Add(a, gy.Slice(sp.out-1, sp.out).Reshape(p.yShape...))
		}
		if err := path.Increment(dW, sp.t, t1); err != nil {
			return nil, p.fail(backward, sp.t, sp.h, fmt.Errorf("adjoint: %w", err))
		}
		if err := k(t1, sp.h, y, a, phi1, d1, pg1); err != nil {
			return nil, p.fail(backward, sp.t, sp.h, fmt.Errorf("adjoint: %w", err))
		}
		yt.Sub(y, phi1)
		at.Add(a, d1)
		if err := k(sp.t, sp.h, yt, at, phi2, d2, pg2); err != nil {
			return nil, p.fail(backward, sp.t, sp.h, fmt.Errorf("adjoint: %w", err))
		}
		phi1.Add(phi1, phi2)
		y.AddScaled(y, -0.5, phi1)
		d1.Add(d1, d2)
		a.AddScaled(a, 0.5, d1)
		for j := range grads {
			pg1[j].Add(pg1[j], pg2[j])
			grads[j].AddScaled(grads[j], 0.5, pg1[j])
		}
		for _, x := range []*tensor.Tensor[T]{y, a} {
			if e := firstNonFinite(x.ReadData()); e >= 0 {
				return nil, p.fail(backward, sp.t, sp.h, fmt.Errorf("adjoint: element %d of the backward state is %v: %w", e, x.ReadData()[e], ErrNonFinite))
			}
		}
	}
	st.Drift = maxAbsDiff(y, y0)
	return append([]*tensor.Tensor[T]{a}, grads...), nil
}
