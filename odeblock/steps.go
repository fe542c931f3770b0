package odeblock

import (
	"fmt"
	"github.com/adamnode/adamnode/odeblock/internal/hooks"
	"math"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// This file holds what the modes that differentiate the discrete solve
// (Backprop, Checkpoint, Recursive) share: the log of accepted steps, the
// stage tapes, and the backward pass through the steps, last to first.

// step is one accepted step of the forward solve.
type step[T tensor.Float] struct {
	geom   hooks.StepGeom
	y0     *tensor.Tensor[T] // Checkpoint, Recursive: the state at its start, kept where the pass's states are (pass.ew)
	stages []*stageTape[T]   // Backprop: its stages, recorded
	out    int               // index into Times of the output at its end, or 0 (z0's: none)
	inner  []int             // indices into Times of the outputs strictly inside it (dense output)
	innerW []innerOutput     // their dense-output weights, once innerOutputs has formed them
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
	st := step[T]{geom: hk[T]().Geom(si)}
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
		hk[float64]().InterpolateStep(tb, dst, []float64{y0}, []float64{y1}, ks, 0, 1, x, ks[0], ks[s-1])
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

// keepStart keeps the state at the start of the step si (StepInfo.State0:
// the device's buffer, or a view of the host's) in sp, a copy in a tensor
// from the Block's pool made by the pass's Elementwise.
func (p *pass[T]) keepStart(sp *step[T], si StepInfo[T]) {
	sp.y0 = p.b.pools.takeState(p.ew, si.State0, p.shape)
}

// putStarts gives the states keepStart kept back to the Block's pool.
func (p *pass[T]) putStarts() {
	for i := range p.steps {
		if sp := &p.steps[i]; sp.y0 != nil {
			p.b.pools.putState(sp.y0)
			sp.y0 = nil
		}
	}
}

// startParamGrads makes the pass's parameter gradient buffers, which the
// stage tapes accumulate into (autograd.Tape.RedirectParams) and the
// block's node returns — never Param.Grad behind the outer tape's back.
func (p *pass[T]) startParamGrads() {
	p.pgrads = make([]*tensor.Tensor[T], len(p.params))
	for j, prm := range p.params {
		p.pgrads[j] = p.tp.Scratch(prm.Value.Shape()...)
		p.ew.Fill(p.pgrads[j], 0)
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
// the parameters (p.pgrads). Its sums are the pass's Elementwise's: on a
// device, nothing of the state crosses to the host.
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
		w.v.ew.Copy(w.ybar, w.acc)
		st.Accepted++
	}
	w.v.axpy(w.ybar, 1, w.row(0))
	out := make([]*tensor.Tensor[T], 1+len(p.params))
	out[0] = w.ybar
	copy(out[1:], p.pgrads)
	return out, nil
}

// vecs is the discrete modes' arithmetic on tensors of one number of
// elements, with the pass's Elementwise (pass.ew): its terms gathered in
// arrays of its own, so that a call allocates nothing.
type vecs[T tensor.Float] struct {
	ew   tensor.Elementwise[T]
	coef [1]T
	xs   [1]*tensor.Tensor[T]
}

// axpy adds a·x to dst (of x's shape): dst + a·x, the product rounded
// before the sum, as tensor.AxpySlice forms it.
func (v *vecs[T]) axpy(dst *tensor.Tensor[T], a T, x *tensor.Tensor[T]) {
	v.coef[0], v.xs[0] = a, x
	v.ew.LinComb(dst, dst, v.coef[:], v.xs[:])
	v.xs[0] = nil
}

// stepAdjoint is the work of stepsBackward: the cotangents of a step's end
// (ybar), of its start (acc) and of its stages (kbar), all in the state's
// shape, and the stages that need pulling back.
type stepAdjoint[T tensor.Float] struct {
	p              *pass[T]
	v              vecs[T]
	g              *tensor.Tensor[T]   // ∂L/∂z at every output time
	rows           []*tensor.Tensor[T] // g's rows in the state's shape, formed when first asked for
	need, stepNeed []bool
	ybar, acc      *tensor.Tensor[T]
	kbar           []*tensor.Tensor[T]
}

// newStepAdjoint makes the work buffers, from the outer tape: valid until
// its next Reset, after this backward (ybar, the gradient of z0, is
// returned, and only read).
func (p *pass[T]) newStepAdjoint(g *tensor.Tensor[T]) *stepAdjoint[T] {
	s := p.solver.Tableau().Stages()
	w := &stepAdjoint[T]{p: p, v: vecs[T]{ew: p.ew}, g: g, rows: make([]*tensor.Tensor[T], len(p.ts)),
		need: needed(p.solver.Tableau()), stepNeed: make([]bool, s),
		ybar: p.tp.Scratch(p.shape...), acc: p.tp.Scratch(p.shape...), kbar: make([]*tensor.Tensor[T], s)}
	w.v.ew.Fill(w.ybar, 0)
	for i := range w.kbar {
		w.kbar[i] = p.tp.Scratch(p.shape...)
	}
	return w
}

// row returns ∂L/∂z at output k.
func (w *stepAdjoint[T]) row(k int) *tensor.Tensor[T] {
	if w.rows[k] == nil {
		w.rows[k] = w.g.Slice(k, k+1).Reshape(w.p.shape...)
	}
	return w.rows[k]
}

// seed sets the cotangents of step j from those of its end and of the
// outputs it gives (at its end, and inside it from its dense output), and
// marks the stages to pull back.
func (w *stepAdjoint[T]) seed(j int) {
	p, tb, v := w.p, w.p.solver.Tableau(), &w.v
	s := tb.Stages()
	sp := &p.steps[j]
	inner := p.innerOutputs(sp)
	if sp.out != 0 {
		v.axpy(w.ybar, 1, w.row(sp.out))
	}
	for _, o := range inner {
		v.axpy(w.ybar, T(o.cy1), w.row(o.k))
	}
	copy(w.stepNeed, w.need)
	v.ew.Copy(w.acc, w.ybar)
	for i := range w.kbar {
		v.ew.Fill(w.kbar[i], 0)
		if tb.B[i] != 0 {
			v.axpy(w.kbar[i], T(sp.geom.Size()*tb.B[i]), w.ybar)
		}
	}
	// The outputs inside the step read its start and stages; its last
	// stage, when step j+1 shares it, was pulled back there.
	shared := p.sharesFSAL(j)
	for _, o := range inner {
		v.axpy(w.acc, T(o.cy0), w.row(o.k))
		for i, wi := range o.w {
			if wi != 0 && !(shared && i == s-1) {
				v.axpy(w.kbar[i], T(sp.geom.Size()*wi), w.row(o.k))
				w.stepNeed[i] = true
			}
		}
	}
	if j > 0 && p.sharesFSAL(j-1) {
		// Step j−1's last stage is this step's first.
		prev := &p.steps[j-1]
		for _, o := range p.innerOutputs(prev) {
			if wi := o.w[s-1]; wi != 0 {
				v.axpy(w.kbar[0], T(prev.geom.Size()*wi), w.row(o.k))
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
		if err := x.tp.BackwardWith(x.out, w.kbar[i]); err != nil {
			return nfe, fmt.Errorf("odeblock: backward through the step at t=%g, stage %d: %w", sp.geom.Start(), i, err)
		}
		nfe++
		ybarI := x.in.Grad()
		w.v.axpy(w.acc, 1, ybarI)
		for l, a := range tb.A[i] {
			if a != 0 {
				w.v.axpy(w.kbar[l], T(sp.geom.Size()*a), ybarI)
			}
		}
	}
	return nfe, nil
}

// restage records the stages of the step sp from the state y0 at its
// start on the tapes, up to the last one the backward pass needs, with the
// integrator's stepper and the pass's Elementwise: the stage inputs and
// times are the forward's to the bit (on the host, the Elementwise's
// LinComb is the solver's tensor.LinearCombination). It returns the
// evaluations taken.
func (p *pass[T]) restage(sp *step[T], y0 *tensor.Tensor[T], tapes []*stageTape[T], need []bool) (nfe int, err error) {
	r := p.restager()
	r.tapes, r.nfe = tapes, 0
	if len(r.k) != len(tapes) {
		r.k = make([]*tensor.Tensor[T], len(tapes))
	}
	err = hk[T]().RKStagesOn(p.ew, p.solver.Tableau(), sp.geom, y0, r.k, 0, lastNeeded(need)+1, r.in, r.eval)
	clear(r.k)
	r.tapes = nil
	return r.nfe, err
}

// restaging is restage's work, its functions made once per pass.
type restaging[T tensor.Float] struct {
	tapes []*stageTape[T]
	k     []*tensor.Tensor[T]
	nfe   int
	in    func(i int) *tensor.Tensor[T]
	eval  func(i int, t float64, y *tensor.Tensor[T]) error
}

// restager returns the pass's restaging, made on the first call.
func (p *pass[T]) restager() *restaging[T] {
	if r := p.rs; r != nil {
		return r
	}
	r := &restaging[T]{}
	r.in = func(i int) *tensor.Tensor[T] { return r.tapes[i].y }
	r.eval = func(i int, t float64, _ *tensor.Tensor[T]) error {
		if err := p.rerecord(r.tapes[i], t); err != nil {
			return err
		}
		r.nfe++
		r.k[i] = p.shaped(r.tapes[i].out.Value())
		return nil
	}
	p.rs = r
	return r
}

// lastNeeded returns the last stage need marks (0 for none).
func lastNeeded(need []bool) int {
	last := 0
	for i := range need {
		if need[i] {
			last = i
		}
	}
	return last
}

// rerecord records the dynamics at time t on the stage tape x afresh, its
// input x.y set, the parameters' gradients going to the pass's.
func (p *pass[T]) rerecord(x *stageTape[T], t float64) error {
	x.tp.Reset()
	if p.pgrads != nil {
		x.tp.RedirectParams(p.params, p.pgrads)
	}
	return p.recordStage(x, t)
}

// shaped returns x, a state's worth of values, in the state's shape.
func (p *pass[T]) shaped(x *tensor.Tensor[T]) *tensor.Tensor[T] {
	if x.HasShape(p.shape...) {
		return x
	}
	return x.Reshape(p.shape...)
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
