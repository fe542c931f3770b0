package integrate

import (
	"fmt"
	"math"
	"sync"

	"github.com/adamnode/adamnode/tensor"
)

// Solving on a device.
//
// SolveTensors is Solve on tensors. On a solver of NewSolverOn (or after
// useDevice, odeblock's hook) with an engine that
// has an Elementwise (package cuda's), an explicit Runge–Kutta solve keeps
// its work buffers in that engine's memory: the stage inputs and the
// solution are the engine's LinComb, the error norm its ErrorNorm, the
// dense output (dopri5's quartic, a tableau's Dense weights, the cubic
// Hermite) a LinComb of the step's states and stages, and the copies its
// Copy; f gets views of those buffers. The host reads two numbers per
// attempted step (the error ratio, and whether the solution is finite,
// both from ErrorNorm) and keeps the step-size control, the stops, jumps
// and output times, as on the CPU. The outputs are written by the engine
// too: nothing of the state crosses to the host unless OnStep is set (its
// Y0 and Y1 are then copied back for it). A denseLog keeps such a solve's
// steps in the device's memory too, and denseLog.AtTensor evaluates them
// there.
//
// Everything else runs on the host, with f still given tensors (views of
// host memory): a solve with an Event, and the implicit,
// Rosenbrock, BDF and Adams methods, which form Jacobians and solve
// linear systems in host memory. So does every solve on an engine without
// an Elementwise (the CPU engines), where SolveTensors is Solve to the
// bit. There f's tensors are views of the solver's slices, one per
// slice, made once (hostView): a whole state in y0's shape; a shorter one
// (a stage input without the quadratures) the front of the whole
// buffer's flat view, sharing its storage, so that f can key what it
// derives from a buffer by the buffer's memory.
//
// The device buffers are tensors; the solver's algorithms, written once
// over slices (solverOps), name them by the slices of their host memory
// (Tensor.HostMemory), which ensureDev points the solver's buffers at.
// find maps a slice back to its tensor by its first element, a plain
// pointer comparison: every slice the device path is handed starts where
// a buffer starts, and a range inside one is passed as the buffer and
// its bounds (span). A slice that starts anywhere else is not one of the
// device's buffers, and find panics.
//
// The device path's arithmetic is the engine's: stage sums as
// tensor.LinearCombination's, the error norm as HostElementwise.ErrorNorm
// documents; the dense output sums its terms in T where the host forms
// them in float64. Its steps match the host's up to that rounding.

// TensorFunc evaluates dy = f(t, y) on tensors: y and dy are views of the
// solver's buffers, in y0's shape (flat, and shorter, where Quadrature
// leaves the quadratures out). f must not keep them.
type TensorFunc[T tensor.Float] func(t float64, y, dy *tensor.Tensor[T]) error

// devMode is a Solver's device mode (useDevice) and the tensor views its
// SolveTensors hands f.
type devMode[T tensor.Float] struct {
	ew tensor.Elementwise[T]
	on bool // the solve under way keeps its buffers on the device

	n      int
	layout [3]int              // the stages, dense stages and buffers bufs was made for
	bufs   []*tensor.Tensor[T] // the device buffers, flat, in ensure's order
	shaped []*tensor.Tensor[T] // the same in the state's shape
	shape  []int               // the state's shape
	views  map[viewKey]*tensor.Tensor[T]
	host   map[hostKey[T]]*tensor.Tensor[T] // host mode's views (hostView)
	empty  *tensor.Tensor[T]
	use    bool // solves through SolveTensors run on the device (useDevice)

	f         tensorEvalFunc[T] // the solve's f
	plain     TensorFunc[T]     // SolveTensors' f
	plainEval tensorEvalFunc[T] // plain told the purpose of each evaluation
	devEval   evalFunc[T]       // f on the device buffers' views
	hostEv    evalFunc[T]       // f on views of host memory
	out       []*tensor.Tensor[T]
	outs      [][]T // a host-memory solve's outputs

	comb  tensorCombiner[T]
	terms [16]*tensor.Tensor[T] // combine's views of the stages
	ks    [16]*tensor.Tensor[T] // interpolate's views of the stages
}

// viewKey names a part of a device buffer: the buffer and its bounds.
type viewKey struct{ buf, lo, hi int }

// hostKey names a view of host memory: its first element, its length, and
// whether it is flat.
type hostKey[T tensor.Float] struct {
	p    *T
	n    int
	flat bool
}

// NewSolverOn returns a solver with the given options, or an error naming
// the option that is out of range, whose explicit Runge–Kutta solves
// through SolveTensors run in the memory of eng's Elementwise when it has
// one (package cuda's engines); on an engine without one (the CPU's)
// SolveTensors solves in host memory, as on a solver of NewSolver.
func NewSolverOn[T tensor.Float](eng tensor.Engine[T], opt Options) (*Solver[T], error) {
	s, err := NewSolver[T](opt)
	if err != nil {
		return nil, err
	}
	s.useDevice(eng)
	return s, nil
}

// useDevice makes the solver's explicit Runge–Kutta solves through
// SolveTensors run in the memory of eng's Elementwise, when it has one
// (see "Solving on a device"); it reports whether it does. nil, or an
// engine without one, turns device mode off, keeping the device's buffers
// for when it is turned on again.
func (s *Solver[T]) useDevice(eng tensor.Engine[T]) bool {
	var ew tensor.Elementwise[T]
	if eng != nil {
		ew = tensor.DeviceElementwise(eng)
	}
	d := &s.dev
	if ew != nil && ew != d.ew {
		d.ew, d.layout = ew, [3]int{} // another engine: ensureDev makes its buffers
	}
	d.use = ew != nil
	return d.use
}

// OnDevice reports whether the solve under way keeps its buffers on the
// device (for f and OnStep to know).
func (s *Solver[T]) OnDevice() bool { return s.dev.on }

// deviceSolve reports whether a SolveTensors with the current settings
// runs on the device.
func (s *Solver[T]) deviceSolve() bool {
	_, rk := s.m.(*explicitRK[T])
	return s.dev.use && rk && s.Event == nil && s.opt.ErrorRows == 0
}

// SolveTensors is Solve on tensors: it integrates from ts[0] to
// ts[len−1] starting at y0 and writes the state at each ts[i] into out[i]
// (each of y0's length; out[0] gets y0). f gets y and dy in y0's shape.
// On a solver of NewSolverOn, an explicit Runge–Kutta solve keeps its
// buffers in the device engine's memory (see the package doc).
func (s *Solver[T]) SolveTensors(f TensorFunc[T], y0 *tensor.Tensor[T], ts []float64, out []*tensor.Tensor[T]) (Stats, error) {
	d := &s.dev
	if d.plainEval == nil {
		d.plainEval = func(_ evalKind, _ int, t float64, y, dy *tensor.Tensor[T]) error { return d.plain(t, y, dy) }
	}
	d.plain = f
	defer func() { d.plain = nil }()
	return s.solveTensorsEval(d.plainEval, y0, ts, out)
}

// solveTensorsEval is SolveTensors with f told the purpose of each
// evaluation.
func (s *Solver[T]) solveTensorsEval(f tensorEvalFunc[T], y0 *tensor.Tensor[T], ts []float64, out []*tensor.Tensor[T]) (Stats, error) {
	n := y0.Len()
	dir, err := s.checkSolve(n, ts, len(out))
	if err != nil {
		return Stats{}, err
	}
	for i, o := range out {
		if err := outputLen(i, o.Len(), n); err != nil {
			return Stats{}, err
		}
	}
	d := &s.dev
	d.f = f
	d.setShape(y0)
	defer func() {
		clear(d.out) // the outputs' views go, their slice stays for the next solve
		d.f, d.out, d.on = nil, d.out[:0], false
	}()
	if !s.deviceSolve() {
		return s.solveTensorsOnHost(y0, ts, out)
	}
	s.ensureDev(n)
	d.on = true
	flat := flatView(y0)
	if _, ok := d.norm(flat, flat, flat, 1, 0, nil); !ok {
		return Stats{}, &SolveError{Phase: s.opt.Phase, T: ts[0], Err: ErrNonFinite}
	}
	d.out = d.out[:0]
	for _, o := range out {
		d.out = append(d.out, flatView(o))
	}
	d.ew.Copy(d.view(s.y), flat)
	d.ew.Copy(d.out[0], flat)
	if d.devEval == nil {
		d.devEval = func(kind evalKind, stage int, t float64, y, dy []T) error {
			return d.f(kind, stage, t, d.viewOf(y, 0, len(y), false), d.viewOf(dy, 0, len(dy), false))
		}
	}
	return s.loop(d.devEval, ts, nil, dir)
}

// solveTensorsOnHost is solveTensorsEval in host memory: y0 and the
// outputs read and written through their host memory, f given views of
// the solver's slices.
func (s *Solver[T]) solveTensorsOnHost(y0 *tensor.Tensor[T], ts []float64, out []*tensor.Tensor[T]) (Stats, error) {
	d := &s.dev
	outs := d.outs[:0]
	for _, o := range out {
		outs = append(outs, o.Data())
	}
	d.outs = outs
	defer clear(outs)
	if d.hostEv == nil {
		d.hostEv = func(kind evalKind, stage int, t float64, y, dy []T) error {
			return d.f(kind, stage, t, d.hostView(y, false), d.hostView(dy, false))
		}
	}
	return s.solveEval(d.hostEv, y0.ReadData(), ts, outs)
}

// flatView returns x flat: x itself when it is (no view to make a solve).
func flatView[T tensor.Float](x *tensor.Tensor[T]) *tensor.Tensor[T] {
	if x.Rank() == 1 {
		return x
	}
	return x.Reshape(x.Len())
}

// setShape records y0's shape as the state's, dropping the views of
// another; the same shape again costs nothing.
func (d *devMode[T]) setShape(y0 *tensor.Tensor[T]) {
	same := len(d.shape) == y0.Rank()
	for i := 0; same && i < len(d.shape); i++ {
		same = d.shape[i] == y0.Dim(i)
	}
	if !same {
		d.shape = y0.Shape()
		clear(d.views)
		clear(d.host)
		d.shaped = nil
	}
}

// hostView returns a tensor over x (host memory), made once per slice,
// marked as changed: the solver writes its buffers through slices, so an
// engine must not reuse a copy it made of them before. A whole state is
// in the state's shape (flat: flat); a shorter front of a solver buffer
// (a stage input without the quadratures) is the front of the whole
// buffer's flat view, which shares the storage of its view in the
// state's shape.
func (d *devMode[T]) hostView(x []T, flat bool) *tensor.Tensor[T] {
	if len(x) == 0 {
		return d.emptyView()
	}
	k := hostKey[T]{&x[0], len(x), flat}
	v := d.host[k]
	if v == nil {
		if d.host == nil {
			d.host = map[hostKey[T]]*tensor.Tensor[T]{}
		}
		// (An if chain, not a switch: mutation testing sees its conditions.)
		if n := numel(d.shape); len(x) < n && cap(x) >= n {
			v = d.hostView(x[:n], true).Slice(0, len(x))
		} else if len(x) != n {
			v = tensor.FromSlice(x)
		} else if flat {
			v = d.hostView(x, false).Reshape(n)
		} else {
			v = tensor.FromSlice(x, d.shape...)
		}
		d.host[k] = v
	}
	v.MarkChanged()
	return v
}

// state returns the state x of a step for OnStep (StepInfo.State0 and
// State1): the device buffer in a device solve, else x's flat view.
func (d *devMode[T]) state(x []T) *tensor.Tensor[T] {
	if d.on {
		return d.view(x)
	}
	return d.hostView(x, true)
}

func numel(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

func (d *devMode[T]) emptyView() *tensor.Tensor[T] {
	if d.empty == nil {
		d.empty = tensor.New[T](0)
	}
	return d.empty
}

// ensureDev makes the device buffers for states of n elements and points
// the solver's slices at their host memory, which then only names them:
// the values are in the engine's memory.
func (s *Solver[T]) ensureDev(n int) {
	d := &s.dev
	stages, dense := s.tb.Stages(), len(s.tb.DenseC)
	bufs := s.slabLen(1)
	layout := [3]int{stages, dense, bufs}
	if d.n != n || d.layout != layout {
		d.n, d.layout = n, layout
		d.bufs = d.bufs[:0]
		for range bufs {
			d.bufs = append(d.bufs, tensor.New[T](n))
		}
		d.shaped = nil
		clear(d.views)
		s.onDev = false
	}
	if !s.onDev {
		i := 0
		s.assign(func() []T {
			i++
			return d.bufs[i-1].HostMemory()
		})
		s.onDev, s.base, s.n = true, nil, n
	}
	s.kdAt = math.NaN()
	if d.shaped == nil {
		for _, b := range d.bufs {
			d.shaped = append(d.shaped, b.Reshape(d.shape...))
		}
	}
}

// find returns the index of the device buffer x starts, of which it is a
// front; it panics when there is none (a slice of the host's, or one
// starting inside a buffer, which the device path must not be handed).
func (d *devMode[T]) find(x []T) int {
	for i, b := range d.bufs {
		if h := b.HostMemory(); len(h) >= len(x) && &h[0] == &x[0] {
			return i
		}
	}
	panic(fmt.Sprintf("integrate: a slice of %d elements that does not start one of the solver's device buffers", len(x)))
}

// view returns the flat tensor view of the device buffer memory x names.
func (d *devMode[T]) view(x []T) *tensor.Tensor[T] { return d.viewOf(x, 0, len(x), true) }

// span returns the flat view of elements [lo, hi) of the device buffer x
// starts.
func (d *devMode[T]) span(x []T, lo, hi int) *tensor.Tensor[T] { return d.viewOf(x, lo, hi, true) }

// viewOf returns elements [lo, hi) of the device buffer x starts, a view
// made once per buffer and bounds; a whole buffer is the buffer itself,
// or, not flat (f's), its view in the state's shape.
func (d *devMode[T]) viewOf(x []T, lo, hi int, flat bool) *tensor.Tensor[T] {
	if hi == lo {
		return d.emptyView()
	}
	i := d.find(x)
	b := d.bufs[i]
	if lo == 0 && hi == b.Len() {
		if flat {
			return b
		}
		return d.shaped[i]
	}
	k := viewKey{i, lo, hi}
	v := d.views[k]
	if v == nil {
		if d.views == nil {
			d.views = map[viewKey]*tensor.Tensor[T]{}
		}
		v = b.Slice(lo, hi)
		d.views[k] = v
	}
	return v
}

// linComb is combiner.linComb on the device: dst = base + h·Σ c[j]·ks[j].
func (d *devMode[T]) linComb(dst, base []T, h float64, cs []float64, ks [][]T) {
	var b *tensor.Tensor[T]
	if base != nil {
		b = d.view(base[:len(dst)]) // a stage input stops short of the quadratures
	}
	d.combine(d.view(dst), b, h, cs, ks, 0)
}

// combine sets z = base + h·Σ c[j]·ks[j] (base nil: zero), skipping the
// zero coefficients, with the engine's LinComb over the stages' elements
// [lo, lo + z.Len()).
func (d *devMode[T]) combine(z, base *tensor.Tensor[T], h float64, cs []float64, ks [][]T, lo int) {
	for j, c := range cs {
		if c != 0 {
			d.terms[j] = d.span(ks[j], lo, lo+z.Len())
		}
	}
	d.comb.ew = d.ew
	d.comb.linComb(z, base, h, cs, d.terms[:len(cs)])
	clear(d.terms[:len(cs)])
}

// copy sets dst = src, both device buffers.
func (d *devMode[T]) copy(dst, src []T) { d.ew.Copy(d.view(dst), d.view(src)) }

// norm returns the engine's ErrorNorm of e scaled by y0 and y1, and
// whether every ratio is finite; NaN when one is not.
func (d *devMode[T]) norm(e, y0, y1 *tensor.Tensor[T], atol, rtol float64, parts []int) (float64, bool) {
	r, ok := d.ew.ErrorNorm(e, y0, y1, T(atol), T(rtol), parts)
	if !ok {
		return math.NaN(), false
	}
	return r, true
}

// finite reports whether every element of the device buffer x is finite
// (the ErrorNorm of x with atol 1 and rtol 0 is x itself).
func (d *devMode[T]) finite(x []T) bool {
	v := d.view(x)
	_, ok := d.norm(v, v, v, 1, 0, nil)
	return ok
}

// normSpan returns the length of the state's part the error norm covers
// and its parts (nil: one).
func (s *Solver[T]) normSpan() (int, []int) {
	if len(s.opt.ErrorParts) > 0 {
		return partsLen(s.opt.ErrorParts), s.opt.ErrorParts
	}
	if s.opt.ErrorLen > 0 && s.opt.ErrorLen < s.n {
		return s.opt.ErrorLen, nil
	}
	return s.n, nil
}

// interpolate is denseOutput on the device, into the flat output dst: the
// dense output of the accepted step g of s as LinCombs of the step's
// states, stages and end slopes, its quartic's midpoint formed in s.tmp.
func (d *devMode[T]) interpolate(s *Solver[T], dst *tensor.Tensor[T], g stepGeom, tq float64, f0, f1 []T) {
	ks := d.ks[:len(s.kall)]
	for i, k := range s.kall {
		ks[i] = d.view(k)
	}
	d.comb.ew, d.comb.tmp = d.ew, d.view(s.tmp)
	denseOutput[*tensor.Tensor[T]](&d.comb, &s.w, s.tb, dst, d.view(s.y), d.view(s.y1), ks, g.t, g.h, tq, d.view(f0), d.view(f1))
	clear(ks)
	d.comb.tmp = nil
}

// devOps is solverOps in a device solve: the solver's slices name device
// buffers (devMode.find), on which the engine's Elementwise computes.
type devOps[T tensor.Float] struct{ s *Solver[T] }

func (o devOps[T]) copy(dst, src []T) { o.s.dev.copy(dst, src) }

func (o devOps[T]) linComb(dst, base []T, h float64, cs []float64, ks [][]T) {
	o.s.dev.linComb(dst, base, h, cs, ks)
}

func (o devOps[T]) axpy(dst, base []T, a float64, x []T) {
	d := &o.s.dev
	o.s.ks1[0] = x
	d.linComb(dst, base, a, one[:], o.s.ks1[:])
	o.s.ks1[0] = nil
}

func (o devOps[T]) denseInput(dst, base []T, h float64, cs []float64, ks [][]T) {
	o.s.dev.linComb(dst, base, h, cs, ks)
}

func (o devOps[T]) errNorm(h float64, cs []float64, ks [][]T, y0, y1 []T) float64 {
	s, d := o.s, &o.s.dev
	m, parts := s.normSpan()
	if m == 0 {
		return 0
	}
	d.linComb(s.tmp[:m], nil, h, cs, ks)
	r, _ := d.norm(d.view(s.tmp[:m]), d.view(y0[:m]), d.view(y1[:m]), s.opt.ATol, s.opt.RTol, parts)
	return r
}

func (o devOps[T]) scaledNorm(x, y []T) (float64, bool) {
	s, d := o.s, &o.s.dev
	m, parts := s.normSpan()
	if m == 0 {
		return 0, true
	}
	v := d.view(y[:m])
	return d.norm(d.view(x[:m]), v, v, s.opt.ATol, s.opt.RTol, parts)
}

// sums853 forms each estimate in s.tmp and takes its square from the
// engine's ErrorNorm: two norms, two numbers read by the host.
func (o devOps[T]) sums853(e5, e3 []float64, ks [][]T, y0, y1 []T, lo, hi int) (s5, s3 float64, ok bool) {
	s, d := o.s, &o.s.dev
	v0, v1, e := d.span(y0, lo, hi), d.span(y1, lo, hi), d.span(s.tmp, lo, hi)
	l := float64(hi - lo)
	sq := func(c []float64) (float64, bool) {
		d.combine(e, nil, 1, c, ks, lo)
		r, ok := d.norm(e, v0, v1, s.opt.ATol, s.opt.RTol, nil)
		return r * r * l, ok
	}
	s5, ok5 := sq(e5)
	s3, ok3 := sq(e3)
	return s5, s3, ok5 && ok3
}

func (o devOps[T]) finite(x []T) bool { return o.s.dev.finite(x) }

// hostRead brings the device buffers xs to host memory, for a reader
// there (OnStep).
func (d *devMode[T]) hostRead(xs ...[]T) {
	for _, x := range xs {
		if len(x) > 0 {
			d.view(x).ReadData()
		}
	}
}

// combinerPool lends the tensor hooks (RKStagesOn, RKSolutionOn) their
// combiners: the hooks are one table shared by every goroutine's Blocks,
// so a combiner is taken for one call and given back after it, and a
// caller that keeps stepping takes back one it gave (no allocation a call
// in steady state).
type combinerPool[T tensor.Float] struct{ p sync.Pool }

// get returns a combiner over ew, one given back before where there is.
func (p *combinerPool[T]) get(ew tensor.Elementwise[T]) *tensorCombiner[T] {
	c, _ := p.p.Get().(*tensorCombiner[T])
	if c == nil {
		c = new(tensorCombiner[T])
	}
	c.ew = ew
	return c
}

// rkStagesOn is rkStages on tensors in the memory of ew's engine, with
// the coefficients and terms of a device solve's stage sums in the same
// order, so that a step recomputed on the device (Checkpoint's,
// Recursive's) has the forward's inputs to the bit.
func (p *combinerPool[T]) rkStagesOn(ew tensor.Elementwise[T], tb *Tableau, g stepGeom, y0 *tensor.Tensor[T], k []*tensor.Tensor[T], from, to int, in func(i int) *tensor.Tensor[T], eval func(i int, t float64, y *tensor.Tensor[T]) error) error {
	c := p.get(ew)
	err := rkStages[*tensor.Tensor[T]](c, tb, g, y0, k, from, to, in, eval)
	p.p.Put(c)
	return err
}

// rkSolutionOn is rkSolution on tensors in the memory of ew's engine.
func (p *combinerPool[T]) rkSolutionOn(ew tensor.Elementwise[T], tb *Tableau, h float64, y0, y1, lastIn *tensor.Tensor[T], k []*tensor.Tensor[T]) {
	c := p.get(ew)
	rkSolution[*tensor.Tensor[T]](c, tb, h, y0, y1, lastIn, k)
	p.p.Put(c)
}
