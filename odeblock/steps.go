package odeblock

import (
	"fmt"
	"github.com/adamnode/adamnode/odeblock/internal/integrate"
	"math"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// This file holds what the modes that differentiate the discrete solve
// (Backprop, Checkpoint, Recursive) share: the log of accepted steps, the
// stage tapes, and the backward pass through the steps, last to first.

// step is one accepted step of the forward solve.
type step[T tensor.Float] struct {
	geom   integrate.StepGeom
	y0     []T             // Checkpoint: the state at its start
	stages []*stageTape[T] // Backprop: its stages, recorded
	out    int             // index into Times of the output at its end, or 0 (z0's: none)
	inner  []int           // indices into Times of the outputs strictly inside it (dense output)
	innerW []innerOutput   // their dense-output weights, once innerOutputs has formed them
}

// stageTape is one evaluation of the dynamics recorded on its own tape.
type stageTape[T tensor.Float] struct {
	tp      *autograd.Tape[T]
	y       *tensor.Tensor[T] // the input, owned
	in, out autograd.Var[T]
	free    bool // in the Block's pool
}

// logStep appends the accepted step of si to p.steps (with the output
// times inside it and the one it ends on) and returns it; nil for a
// rejected step.
func (p *pass[T]) logStep(si StepInfo[T]) *step[T] {
	if !si.Accepted {
		return nil
	}
	st := step[T]{geom: si.Geom()}
	dir := math.Copysign(1, p.ts[len(p.ts)-1]-p.ts[0])
	p.nextOut = max(p.nextOut, 1)
	for _, t := range p.ts[p.nextOut:] {
		d := (t - si.End) * dir
		if d > 0 {
			break
		}
		k := p.nextOut
		p.nextOut++
		if d == 0 {
			st.out = k
			break
		}
		st.inner = append(st.inner, k)
	}
	p.steps = append(p.steps, st)
	return &p.steps[len(p.steps)-1]
}

// outputsInside reports whether the discrete modes (Backprop, Checkpoint,
// Recursive) take output times inside steps, from the method's dense
// output, rather than ending a step on each, as torchdiffeq's odeint
// interpolates: when that output is a linear map of the step's start, end
// and stages alone (outputWeights) and the method's order is at most 5
// (dopri5, tsit5, bosh3). Every output time is a step end otherwise:
// where the dense output needs more evaluations (dop853's, or f at the
// end of a step without FSAL: fehlberg2, adaptive_heun), for fixed steps
// (which land on every output time), and for dopri8, whose quartic
// interpolant is far less accurate than its eighth-order steps.
func outputsInside(opt Options) bool {
	tb, err := opt.MethodTableau()
	return err == nil && !!tb.Explicit() && tb.Order <= 5 && len(tb.DenseC) == 0 && (tb.Dense != nil || tb.FSAL)
}

// outputWeights returns the weights of method tb's dense output at the
// fraction x of a step from y0 to y1 of size h with stages k:
// y(t + x·h) = cy0·y0 + cy1·y1 + h·Σ w[i]·k_i (f at the step's ends being
// its first and, FSAL, last stage). It evaluates integrate.InterpolateStep itself on
// unit inputs, so the weights are those of the values the solve wrote.
func outputWeights(tb *Tableau, x float64) (cy0, cy1 float64, w []float64) {
	s := tb.Stages()
	ks := make([][]float64, s)
	for i := range ks {
		ks[i] = []float64{0}
	}
	at := func(y0, y1 float64) float64 {
		dst := []float64{0}
		integrate.InterpolateStep(tb, dst, []float64{y0}, []float64{y1}, ks, 0, 1, x, ks[0], ks[s-1])
		return dst[0]
	}
	cy0, cy1 = at(1, 0), at(0, 1)
	w = make([]float64, s)
	for i := range ks {
		ks[i][0] = 1
		w[i] = at(0, 0)
		ks[i][0] = 0
	}
	return cy0, cy1, w
}

// takeState returns a copy of y in a buffer from the Block's pool (given
// back when the pass's backward ends).
func (p *pass[T]) takeState(y []T) []T { return p.b.pools.takeState(y) }

// startParamGrads makes the pass's parameter gradient buffers, which the
// stage tapes accumulate into (autograd.Tape.RedirectParams) and the
// block's node returns — never Param.Grad behind the outer tape's back.
func (p *pass[T]) startParamGrads() {
	p.pgrads = make([]*tensor.Tensor[T], len(p.params))
	for j, prm := range p.params {
		p.pgrads[j] = p.tp.Scratch(prm.Value.Shape()...)
		p.pgrads[j].Zero()
	}
}

// needed reports, per stage, whether its evaluation affects the step's
// result: B[i] ≠ 0 or a later stage reads it.
func needed(tb *Tableau) []bool {
	s := tb.Stages()
	out := make([]bool, s)
	for i := range out {
		out[i] = tb.B[i] != 0
		for l := i + 1; l < s; l++ {
			out[i] = out[i] || tb.A[l][i] != 0
		}
	}
	return out
}

// stagesOf returns the tapes of step j's stages, of those need marks at
// least, and the evaluations it took to get them (0 when the forward
// recorded them).
type stagesOf[T tensor.Float] func(j int, need []bool) ([]*stageTape[T], int, error)

// innerOutput is an output time inside a step, with the weights of the
// dense output that gave it (outputWeights).
type innerOutput struct {
	k        int // index into Times
	cy0, cy1 float64
	w        []float64
}

// innerOutputs returns the weights of the outputs inside step sp, formed
// on the first call and kept on the step (the backward pass asks for a
// step's twice when it shares its last stage with the next).
func (p *pass[T]) innerOutputs(sp *step[T]) []innerOutput {
	if len(sp.inner) == 0 || sp.innerW != nil {
		return sp.innerW
	}
	out := make([]innerOutput, len(sp.inner))
	for i, k := range sp.inner {
		o := innerOutput{k: k}
		o.cy0, o.cy1, o.w = outputWeights(p.solver.Tableau(), (p.ts[k]-sp.geom.Start())/sp.geom.Size())
		out[i] = o
	}
	sp.innerW = out
	return out
}

// sharesFSAL reports whether step j's last stage is step j+1's first, one
// recorded evaluation (Backprop with an FSAL method, no jump between them).
func (p *pass[T]) sharesFSAL(j int) bool {
	if j+1 >= len(p.steps) {
		return false
	}
	a, b := p.steps[j].stages, p.steps[j+1].stages
	return len(b) > 0 && b[0] != nil && a[len(a)-1] == b[0]
}

// stepsBackward is the backward pass through the accepted steps, last to
// first: the adjoint of y1 = y0 + h·Σ b_i·k_i, k_i = F(t_i, y0 + h·Σ a_il·k_l),
// and of the outputs inside a step, cy0·y0 + cy1·y1 + h·Σ w_i·k_i, with
// each step's stages from stages. It returns the gradients of z0 and of
// the parameters (p.pgrads).
func (p *pass[T]) stepsBackward(g *tensor.Tensor[T], stages stagesOf[T]) ([]*tensor.Tensor[T], error) {
	w := p.newStepAdjoint(g)
	var st Stats
	defer func() { p.b.stats.Backward = st }()
	for j := len(p.steps) - 1; j >= 0; j-- {
		w.seed(j)
		tapes, nfe, err := stages(j, w.stepNeed)
		st.NFE += nfe
		if err != nil {
			return nil, err
		}
		n, err := w.pullStages(&p.steps[j], tapes)
		st.NFE += n
		if err != nil {
			return nil, err
		}
		copy(w.ybar, w.acc)
		st.Accepted++
	}
	axpy(w.ybar, 1, w.row(0))
	out := make([]*tensor.Tensor[T], 1+len(p.params))
	out[0] = tensor.FromSlice(w.ybar, p.shape...)
	copy(out[1:], p.pgrads)
	return out, nil
}

// stepAdjoint is the work of stepsBackward: the cotangents of a step's end
// (ybar), of its start (acc) and of its stages (kbar), and the stages that
// need pulling back.
type stepAdjoint[T tensor.Float] struct {
	p              *pass[T]
	g              *tensor.Tensor[T] // ∂L/∂z at every output time
	need, stepNeed []bool
	ybar, acc      []T
	kbar           [][]T
	kbarT          []*tensor.Tensor[T]
}

// newStepAdjoint makes the work buffers, from the outer tape: valid until
// its next Reset, after this backward (ybar, the gradient of z0, is
// returned, and only read).
func (p *pass[T]) newStepAdjoint(g *tensor.Tensor[T]) *stepAdjoint[T] {
	s := p.solver.Tableau().Stages()
	w := &stepAdjoint[T]{p: p, g: g, need: needed(p.solver.Tableau()), stepNeed: make([]bool, s),
		ybar: p.tp.Scratch(p.n).Data(), acc: p.tp.Scratch(p.n).Data(),
		kbar: make([][]T, s), kbarT: make([]*tensor.Tensor[T], s)}
	clear(w.ybar)
	for i := range w.kbar {
		w.kbarT[i] = p.tp.Scratch(p.shape...)
		w.kbar[i] = w.kbarT[i].Data()
	}
	return w
}

// row returns ∂L/∂z at output k.
func (w *stepAdjoint[T]) row(k int) []T { return w.g.Slice(k, k+1).Data() }

// seed sets the cotangents of step j from those of its end and of the
// outputs it gives (at its end, and inside it from its dense output), and
// marks the stages to pull back.
func (w *stepAdjoint[T]) seed(j int) {
	p, tb := w.p, w.p.solver.Tableau()
	s := tb.Stages()
	sp := &p.steps[j]
	inner := p.innerOutputs(sp)
	if sp.out != 0 {
		axpy(w.ybar, 1, w.row(sp.out))
	}
	for _, o := range inner {
		axpy(w.ybar, T(o.cy1), w.row(o.k))
	}
	copy(w.stepNeed, w.need)
	copy(w.acc, w.ybar)
	for i := range w.kbar {
		clear(w.kbar[i])
		if tb.B[i] != 0 {
			axpy(w.kbar[i], T(sp.geom.Size()*tb.B[i]), w.ybar)
		}
	}
	// The outputs inside the step read its start and stages; its last
	// stage, when step j+1 shares it, was pulled back there.
	shared := p.sharesFSAL(j)
	for _, o := range inner {
		axpy(w.acc, T(o.cy0), w.row(o.k))
		for i, wi := range o.w {
			if wi != 0 && !(shared && i == s-1) {
				axpy(w.kbar[i], T(sp.geom.Size()*wi), w.row(o.k))
				w.stepNeed[i] = true
			}
		}
	}
	if j > 0 && p.sharesFSAL(j-1) {
		// Step j−1's last stage is this step's first.
		prev := &p.steps[j-1]
		for _, o := range p.innerOutputs(prev) {
			if wi := o.w[s-1]; wi != 0 {
				axpy(w.kbar[0], T(prev.geom.Size()*wi), w.row(o.k))
				w.stepNeed[0] = true
			}
		}
	}
}

// pullStages pulls the stage cotangents of step sp back through its stage
// tapes, last to first, into the cotangent of its start and of the earlier
// stages, and returns the evaluations pulled back.
func (w *stepAdjoint[T]) pullStages(sp *step[T], tapes []*stageTape[T]) (nfe int, err error) {
	tb := w.p.solver.Tableau()
	for i := tb.Stages() - 1; i >= 0; i-- {
		if !w.stepNeed[i] {
			continue
		}
		x := tapes[i]
		w.kbarT[i].MarkChanged() // written through w.kbar[i] since
		if err := x.tp.BackwardWith(x.out, w.kbarT[i]); err != nil {
			return nfe, fmt.Errorf("odeblock: backward through the step at t=%g, stage %d: %w", sp.geom.Start(), i, err)
		}
		nfe++
		ybarI := x.in.Grad().Data()
		axpy(w.acc, 1, ybarI)
		for l, a := range tb.A[i] {
			if a != 0 {
				axpy(w.kbar[l], T(sp.geom.Size()*a), ybarI)
			}
		}
	}
	return nfe, nil
}

// restage records the stages of the step sp from the state y0 at its
// start on the tapes, up to the last one the backward pass needs, with the
// shared stepper: the inputs and times are the forward's to the bit. It
// returns the evaluations taken.
func (p *pass[T]) restage(sp *step[T], y0 []T, tapes []*stageTape[T], need []bool) (nfe int, err error) {
	tb := p.solver.Tableau()
	last := 0
	for i := range need {
		if need[i] {
			last = i
		}
	}
	k := p.stageValues(len(tapes))
	in := func(i int) []T { return tapes[i].y.Data() }
	err = integrate.RKStages(p.solver.Combiner(), tb, sp.geom, y0, k, 0, last+1, in, func(i int, t float64, _ []T) error {
		x := tapes[i]
		x.tp.Reset()
		if p.pgrads != nil {
			x.tp.RedirectParams(p.params, p.pgrads)
		}
		if err := p.recordStage(x, t); err != nil {
			return err
		}
		nfe++
		k[i] = x.out.Value().Data()
		return nil
	})
	return nfe, err
}

// stageValues returns the pass's slice of s stage values (reused).
func (p *pass[T]) stageValues(s int) [][]T {
	if len(p.kv) != s {
		p.kv = make([][]T, s)
	}
	return p.kv
}

// restageTapes returns the block's s stage tapes for recomputing steps
// (passPools.restageTapes).
func (p *pass[T]) restageTapes(s int) []*stageTape[T] {
	return p.b.pools.restageTapes(p.eng, p.shape, s)
}

// recordStage records the dynamics at time t on the stage tape x, whose
// input x.y is set.
func (p *pass[T]) recordStage(x *stageTape[T], t float64) (err error) {
	defer recoverUnlisted(&err)
	x.in = x.tp.Input(x.y)
	x.out = p.b.Dynamics.Eval(x.tp, t, x.in)
	return nil
}

// recoverUnlisted turns the panic of a parameter that the dynamics read but
// do not list in Params() (autograd.UnlistedParamError) into *err; other
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
	*err = fmt.Errorf("odeblock: the dynamics read parameter %q, which their Params() does not list: list it there (its gradient would be wrong or lost), or read it with Tape.Const to hold it constant", u.Name)
}
