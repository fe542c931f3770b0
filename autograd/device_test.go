package autograd_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/tensor/enginetest"
)

// fakeDevice is a CPU engine dressed as one that computes in device memory:
// it has an Elementwise and takes GEMMs' tensors (tensor.TensorGemmer), and
// after every op it marks the result's storage as newer on the "device", so
// that any later host access of it (a tensor method, Data, ReadData) calls
// SyncHost, which counts the copy and notes the autograd function that
// asked for it. Its "device memory" is host memory: before each op it
// clears its operands' marks without counting.
type fakeDevice[T tensor.Float] struct {
	tensor.Engine[T]
	mark *tensor.DeviceMark
	ew   fakeElementwise[T]
	ref  *markedElementwise[T] // non-nil: Elementwise returns it instead of ew
	// noBlocks hides the Elementwise's CopyBlocks: a device engine that
	// is no tensor.BlockCopier, whose tape takes the older device paths.
	noBlocks bool
	syncs    atomic.Int64 // storages copied to the host
	reads    atomic.Int64 // numbers read by the host (Sum, SumSquares, Dot)

	mu    sync.Mutex
	sites map[string]int // the autograd function behind each sync
}

func newFakeDevice[T tensor.Float](eng tensor.Engine[T]) *fakeDevice[T] {
	d := &fakeDevice[T]{Engine: eng, sites: map[string]int{}}
	d.mark = tensor.NewDeviceMark(d)
	d.ew.d = d
	return d
}

// newRefDevice returns a fake device whose Elementwise is
// tensor.HostElementwise, the reference, between the fake's marks.
func newRefDevice[T tensor.Float](eng tensor.Engine[T]) *fakeDevice[T] {
	d := newFakeDevice(eng)
	d.ref = &markedElementwise[T]{d: d, e: tensor.HostElementwise[T]()}
	return d
}

// SyncHost counts the copy and notes its site: the innermost function of
// package autograd on the stack, marked "(tensor.Gemm)" when the copy was
// asked for by tensor.Tensor.Gemm on the way, and "(conv)" when it was
// asked for by the wrapped CPU engine's convolutions (the fake device's
// own, which read their operands on the host).
func (d *fakeDevice[T]) SyncHost(s *tensor.Storage) {
	d.syncs.Add(1)
	s.ClearDeviceNewer()
	pc := make([]uintptr, 32)
	frames := runtime.CallersFrames(pc[:runtime.Callers(2, pc)])
	site, gemm, conv := "?", false, false
	for {
		f, more := frames.Next()
		if strings.Contains(f.Function, "/tensor.(*Tensor[...]).Gemm") {
			gemm = true
		}
		if strings.Contains(f.Function, "/tensor.(*cpuEngine[...]).Conv2D") {
			conv = true
		}
		if i := strings.Index(f.Function, "/autograd."); i >= 0 {
			site = f.Function[i+len("/autograd."):]
			break
		}
		if !more {
			break
		}
	}
	if gemm {
		site += " (tensor.Gemm)"
	}
	if conv {
		site += " (conv)"
	}
	d.mu.Lock()
	d.sites[site]++
	d.mu.Unlock()
}

// Elementwise returns the fake's elementwise work.
func (d *fakeDevice[T]) Elementwise() tensor.Elementwise[T] {
	if d.noBlocks {
		return struct{ tensor.Elementwise[T] }{&d.ew}
	}
	if d.ref != nil {
		return d.ref
	}
	return &d.ew
}

// newNoBlocksDevice returns a fake device that is no tensor.BlockCopier.
func newNoBlocksDevice[T tensor.Float](eng tensor.Engine[T]) *fakeDevice[T] {
	d := newFakeDevice(eng)
	d.noBlocks = true
	return d
}

// GemmTensors computes the product on the host with the wrapped engine.
func (d *fakeDevice[T]) GemmTensors(z *tensor.Tensor[T], alpha T, a *tensor.Tensor[T], transA bool, b *tensor.Tensor[T], transB bool, beta T) {
	m := d.in(z, a, b)
	z.Gemm(d.Engine, alpha, a, transA, b, transB, beta)
	d.out(z, m)
}

// in clears the marks of the tensors an op reads or writes, uncounted: the
// values are where the device keeps them. It returns the storages it
// cleared, for out to mark again.
func (d *fakeDevice[T]) in(ts ...*tensor.Tensor[T]) []*tensor.Storage {
	var marked []*tensor.Storage
	for _, x := range ts {
		if x != nil && x.Storage().DeviceNewer() {
			marked = append(marked, x.Storage())
			x.Storage().ClearDeviceNewer()
		}
	}
	return marked
}

// out records that the device wrote z (nil for none) and that it still
// holds the values of the operands in marked newer than host memory:
// reading them on the device left host memory as it was.
func (d *fakeDevice[T]) out(z *tensor.Tensor[T], marked []*tensor.Storage) {
	for _, s := range marked {
		s.MarkDeviceNewer(d.mark)
	}
	if z != nil {
		z.DeviceWrote()
		z.Storage().MarkDeviceNewer(d.mark)
	}
}

// syncSites returns the sites of the syncs since the last call, and forgets
// them.
func (d *fakeDevice[T]) syncSites() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.sites
	d.sites = map[string]int{}
	return s
}

var (
	_ tensor.ElementwiseEngine[float64] = (*fakeDevice[float64])(nil)
	_ tensor.TensorGemmer[float32]      = (*fakeDevice[float32])(nil)
	_ tensor.HostSyncer                 = (*fakeDevice[float64])(nil)
	_ tensor.BlockCopier[float32]       = (*fakeElementwise[float32])(nil)
	_ tensor.BlockCopier[float64]       = (*markedElementwise[float64])(nil)
)

// fakeElementwise is a plain-loop tensor.Elementwise on host memory, the
// fake device's.
type fakeElementwise[T tensor.Float] struct{ d *fakeDevice[T] }

func (f *fakeElementwise[T]) Map(op tensor.MapOp, z, x *tensor.Tensor[T], a, b T) {
	m := f.d.in(z, x)
	zd := z.HostMemory()
	for i, v := range x.HostMemory() {
		zd[i] = enginetest.RefMap(op, v, a, b)
	}
	f.d.out(z, m)
}

func (f *fakeElementwise[T]) MapBackward(op tensor.MapOp, z, g, u *tensor.Tensor[T], a, b T, accumulate bool) {
	m := f.d.in(z, g, u)
	zd, gd := z.HostMemory(), g.HostMemory()
	var ud []T
	if op != tensor.MapNeg {
		ud = u.HostMemory()
	}
	for i := range zd {
		var ui T
		if op != tensor.MapNeg {
			ui = ud[i]
		}
		v, _ := enginetest.RefMapBackward(op, gd[i], ui, a, b)
		if accumulate {
			zd[i] += v
		} else {
			zd[i] = v
		}
	}
	f.d.out(z, m)
}

// bcastIndex returns the flat index into a tensor of shape s broadcast to
// out of the output's flat index o.
func bcastIndex(out, s []int, o int) int {
	idx, stride := 0, 1
	for i := len(out) - 1; i >= 0; i-- {
		c := o % out[i]
		o /= out[i]
		if j := len(s) - len(out) + i; j >= 0 {
			if s[j] != 1 {
				idx += c * stride
			}
			stride *= s[j]
		}
	}
	return idx
}

func binValue[T tensor.Float](op tensor.BinaryOp, a, b T) T {
	switch op {
	case tensor.BinaryAdd:
		return a + b
	case tensor.BinarySub:
		return a - b
	case tensor.BinaryMul:
		return a * b
	}
	return a / b
}

func (f *fakeElementwise[T]) Binary(op tensor.BinaryOp, z, x, y *tensor.Tensor[T]) {
	m := f.d.in(z, x, y)
	zd, xd, yd := z.HostMemory(), x.HostMemory(), y.HostMemory()
	out, xs, ys := z.Shape(), x.Shape(), y.Shape()
	for o := range zd {
		zd[o] = binValue(op, xd[bcastIndex(out, xs, o)], yd[bcastIndex(out, ys, o)])
	}
	f.d.out(z, m)
}

func (f *fakeElementwise[T]) BinaryBackward(op tensor.BinaryOp, side int, z, g, x, y, out *tensor.Tensor[T], accumulate bool) {
	m := f.d.in(z, g, x, y, out)
	zd, gd, xd, yd := z.HostMemory(), g.HostMemory(), x.HostMemory(), y.HostMemory()
	if !accumulate {
		clear(zd)
	}
	os, xs, ys := g.Shape(), x.Shape(), y.Shape()
	for o, gv := range gd {
		xi, yi := bcastIndex(os, xs, o), bcastIndex(os, ys, o)
		var c T
		switch {
		case op == tensor.BinaryAdd, op == tensor.BinarySub && side == 0:
			c = gv
		case op == tensor.BinarySub:
			c = -gv
		case op == tensor.BinaryMul && side == 0:
			c = gv * yd[yi]
		case op == tensor.BinaryMul:
			c = gv * xd[xi]
		case side == 0:
			c = gv / yd[yi]
		default:
			c = -gv * out.HostMemory()[o] / yd[yi]
		}
		if side == 0 {
			zd[xi] += c
		} else {
			zd[yi] += c
		}
	}
	f.d.out(z, m)
}

func (f *fakeElementwise[T]) LinComb(z, base *tensor.Tensor[T], coef []T, xs []*tensor.Tensor[T]) {
	m := append(f.d.in(z, base), f.d.in(xs...)...)
	zd := z.HostMemory()
	for i := range zd {
		var s T
		if base != nil {
			s = base.HostMemory()[i]
		}
		for k, x := range xs {
			s += coef[k] * x.HostMemory()[i]
		}
		zd[i] = s
	}
	f.d.out(z, m)
}

func (f *fakeElementwise[T]) Fill(z *tensor.Tensor[T], v T) {
	m := f.d.in(z)
	z.Fill(v)
	f.d.out(z, m)
}

func (f *fakeElementwise[T]) Copy(z, x *tensor.Tensor[T]) {
	m := f.d.in(z, x)
	copy(z.HostMemory(), x.HostMemory())
	f.d.out(z, m)
}

// CopyBlocks is tensor.BlockCopier's, in plain loops on host memory.
func (f *fakeElementwise[T]) CopyBlocks(z, x *tensor.Tensor[T], a T, s tensor.Blocks, accumulate bool) {
	tensor.CheckBlocks("fake CopyBlocks", z, x, s)
	m := f.d.in(z, x)
	zd, xd := z.HostMemory(), x.HostMemory()
	for b := range s.Count {
		for i := range s.Len {
			v := a * xd[s.XOff+b*s.XStride+i]
			if accumulate {
				v += zd[s.ZOff+b*s.ZStride+i]
			}
			zd[s.ZOff+b*s.ZStride+i] = v
		}
	}
	f.d.out(z, m)
}

func (f *fakeElementwise[T]) SumAxis(z, x *tensor.Tensor[T], axis int) {
	m := f.d.in(z, x)
	z.SumAxis(x, axis)
	f.d.out(z, m)
}

func (f *fakeElementwise[T]) MeanAxis(z, x *tensor.Tensor[T], axis int) {
	m := f.d.in(z, x)
	z.SumAxis(x, axis)
	z.Scale(z, T(1/float64(x.Dim(axis))))
	f.d.out(z, m)
}

func (f *fakeElementwise[T]) MaxAxis(z, x *tensor.Tensor[T], axis int) {
	m := f.d.in(z, x)
	z.MaxAxis(x, axis)
	f.d.out(z, m)
}

func (f *fakeElementwise[T]) SumPerChannel(z, x *tensor.Tensor[T], accumulate bool) {
	m := f.d.in(z, x)
	zd, xd := z.HostMemory(), x.HostMemory()
	c := len(zd)
	inner := len(xd) / (x.Dim(0) * c)
	if !accumulate {
		clear(zd)
	}
	for i, v := range xd {
		zd[i/inner%c] += v
	}
	f.d.out(z, m)
}

func (f *fakeElementwise[T]) Sum(x *tensor.Tensor[T]) float64 {
	return f.Dot(x, nil)
}

func (f *fakeElementwise[T]) SumSquares(x *tensor.Tensor[T]) float64 { return f.Dot(x, x) }

func (f *fakeElementwise[T]) Dot(x, y *tensor.Tensor[T]) float64 {
	m := f.d.in(x, y)
	defer f.d.out(nil, m)
	f.d.reads.Add(1)
	var s float64
	for i, v := range x.HostMemory() {
		if y == nil {
			s += float64(v)
		} else {
			s += float64(v) * float64(y.HostMemory()[i])
		}
	}
	return s
}

func (f *fakeElementwise[T]) ErrorNorm(e, y0, y1 *tensor.Tensor[T], atol, rtol T, parts []int) (float64, bool) {
	panic("fake ErrorNorm: autograd does not call it")
}

// markedElementwise runs an Elementwise on host memory between the fake
// device's marks: it clears its operands' marks, calls e, and marks the
// result and the operands again.
type markedElementwise[T tensor.Float] struct {
	d *fakeDevice[T]
	e tensor.Elementwise[T]
}

func (f *markedElementwise[T]) Map(op tensor.MapOp, z, x *tensor.Tensor[T], a, b T) {
	m := f.d.in(z, x)
	f.e.Map(op, z, x, a, b)
	f.d.out(z, m)
}

func (f *markedElementwise[T]) MapBackward(op tensor.MapOp, z, g, u *tensor.Tensor[T], a, b T, accumulate bool) {
	m := f.d.in(z, g, u)
	f.e.MapBackward(op, z, g, u, a, b, accumulate)
	f.d.out(z, m)
}

func (f *markedElementwise[T]) Binary(op tensor.BinaryOp, z, x, y *tensor.Tensor[T]) {
	m := f.d.in(z, x, y)
	f.e.Binary(op, z, x, y)
	f.d.out(z, m)
}

func (f *markedElementwise[T]) BinaryBackward(op tensor.BinaryOp, side int, z, g, x, y, out *tensor.Tensor[T], accumulate bool) {
	m := f.d.in(z, g, x, y, out)
	f.e.BinaryBackward(op, side, z, g, x, y, out, accumulate)
	f.d.out(z, m)
}

func (f *markedElementwise[T]) LinComb(z, base *tensor.Tensor[T], coef []T, xs []*tensor.Tensor[T]) {
	m := append(f.d.in(z, base), f.d.in(xs...)...)
	f.e.LinComb(z, base, coef, xs)
	f.d.out(z, m)
}

func (f *markedElementwise[T]) Fill(z *tensor.Tensor[T], v T) {
	m := f.d.in(z)
	f.e.Fill(z, v)
	f.d.out(z, m)
}

func (f *markedElementwise[T]) Copy(z, x *tensor.Tensor[T]) {
	m := f.d.in(z, x)
	f.e.Copy(z, x)
	f.d.out(z, m)
}

func (f *markedElementwise[T]) CopyBlocks(z, x *tensor.Tensor[T], a T, s tensor.Blocks, accumulate bool) {
	m := f.d.in(z, x)
	f.e.(tensor.BlockCopier[T]).CopyBlocks(z, x, a, s, accumulate)
	f.d.out(z, m)
}

func (f *markedElementwise[T]) SumAxis(z, x *tensor.Tensor[T], axis int) {
	m := f.d.in(z, x)
	f.e.SumAxis(z, x, axis)
	f.d.out(z, m)
}

func (f *markedElementwise[T]) MeanAxis(z, x *tensor.Tensor[T], axis int) {
	m := f.d.in(z, x)
	f.e.MeanAxis(z, x, axis)
	f.d.out(z, m)
}

func (f *markedElementwise[T]) MaxAxis(z, x *tensor.Tensor[T], axis int) {
	m := f.d.in(z, x)
	f.e.MaxAxis(z, x, axis)
	f.d.out(z, m)
}

func (f *markedElementwise[T]) SumPerChannel(z, x *tensor.Tensor[T], accumulate bool) {
	m := f.d.in(z, x)
	f.e.SumPerChannel(z, x, accumulate)
	f.d.out(z, m)
}

func (f *markedElementwise[T]) Sum(x *tensor.Tensor[T]) float64 {
	m := f.d.in(x)
	defer f.d.out(nil, m)
	f.d.reads.Add(1)
	return f.e.Sum(x)
}

func (f *markedElementwise[T]) SumSquares(x *tensor.Tensor[T]) float64 {
	m := f.d.in(x)
	defer f.d.out(nil, m)
	f.d.reads.Add(1)
	return f.e.SumSquares(x)
}

func (f *markedElementwise[T]) Dot(x, y *tensor.Tensor[T]) float64 {
	m := f.d.in(x, y)
	defer f.d.out(nil, m)
	f.d.reads.Add(1)
	return f.e.Dot(x, y)
}

func (f *markedElementwise[T]) ErrorNorm(e, y0, y1 *tensor.Tensor[T], atol, rtol T, parts []int) (float64, bool) {
	m := f.d.in(e, y0, y1)
	defer f.d.out(nil, m)
	return f.e.ErrorNorm(e, y0, y1, atol, rtol, parts)
}

// deviceModel holds the parameters of a small model that uses every op
// routed to the engine's Elementwise.
type deviceModel[T tensor.Float] struct {
	w1, b1, w2, b2, w3, b3, c, d, e, s *ag.Param[T]
	cw, cb                             *ag.Param[T] // convtime's filter (a time channel) and bias
	q, u                               *ag.Param[T] // shapes' tensors of rank 3 and 4
}

func newDeviceModel[T tensor.Float](rng *rand.Rand, in, hidden, out int) *deviceModel[T] {
	p := func(name string, scale float64, dims ...int) *ag.Param[T] {
		return ag.NewParam(name, tensor.RandN[T](rng, 0, scale, dims...))
	}
	return &deviceModel[T]{
		w1: p("w1", 0.5, hidden, in), b1: p("b1", 0.5, hidden),
		w2: p("w2", 0.5, hidden, hidden), b2: p("b2", 0.5, hidden),
		w3: p("w3", 0.5, out, hidden), b3: p("b3", 0.5, out),
		c: p("c", 0.5, hidden), d: p("d", 0.5, 1, hidden), e: p("e", 0.5, 3, 1, hidden), s: p("s", 0.5, 1),
		cw: p("cw", 0.5, 4, 2, 3, 3), cb: p("cb", 0.5, 4),
		q: p("q", 0.5, 2, 2, 4), u: p("u", 0.5, 2, 2, 3, 4),
	}
}

func (m *deviceModel[T]) params() []*ag.Param[T] {
	return []*ag.Param[T]{m.w1, m.b1, m.w2, m.b2, m.w3, m.b3, m.c, m.d, m.e, m.s, m.cw, m.cb, m.q, m.u}
}

// mlp is the ordinary model: Linear, activations, broadcasting Add, Mul
// and Div, LinComb, Scale, and a mean-squared-error loss built from ops.
func (m *deviceModel[T]) mlp(tp *ag.Tape[T], x, y *tensor.Tensor[T]) ag.Var[T] {
	xv := tp.Const(x)
	h := ag.Tanh(ag.Linear(xv, tp.Param(m.w1), tp.Param(m.b1)))
	h = ag.Add(h, tp.Param(m.c))             // [B, H] + [H]
	h = ag.Mul(h, ag.Sigmoid(tp.Param(m.d))) // [B, H] ⊙ [1, H]
	h2 := ag.LinearAct(h, tp.Param(m.w2), tp.Param(m.b2), ag.ReLUAct)
	h2 = ag.LinComb([]T{0.5, -0.25, 1}, h2, h, ag.Softplus(h2))
	h2 = ag.Div(h2, ag.AddConst(ag.Square(tp.Param(m.c)), 1)) // [B, H] ⊘ [H]
	// Split, Concat and Narrow along the leading axis, and along an axis
	// with only 1s before it: the engine's copies.
	b, hid := x.Dim(0), h2.Value().Dim(1)
	parts := ag.Split(h2, 0, 1, b-1)
	h2 = ag.Concat(0, ag.Scale(parts[1], 2), parts[0])
	n := ag.Reshape(ag.Narrow(ag.Reshape(ag.Tanh(h2), 1, b, hid), 1, 1, b-1), b-1, hid)
	h2 = ag.Concat(0, ag.Add(ag.Narrow(h2, 0, 0, b-1), n), ag.Narrow(h2, 0, b-1, 1))
	out := ag.Linear(ag.Scale(h2, 0.7), tp.Param(m.w3), tp.Param(m.b3))
	d := ag.Sub(out, tp.Const(y))
	return ag.Add(ag.Mean(ag.Square(d)), ag.Scale(ag.Sum(ag.Mul(d, d)), 0.01))
}

// maps is a model through every other routed op: the maps, the axis
// reductions, a rank-3 broadcast, AddBias and MSE.
func (m *deviceModel[T]) maps(tp *ag.Tape[T], x, y *tensor.Tensor[T]) ag.Var[T] {
	xv := tp.Const(x)
	h := ag.Linear(xv, tp.Param(m.w1), ag.Var[T]{})
	h = ag.AddBias(h, tp.Param(m.b1))
	a := ag.Add(ag.Exp(ag.Scale(ag.Sin(h), 0.5)), ag.Cos(h))
	a = ag.Add(a, ag.Log(ag.AddConst(ag.Abs(h), 1)))
	a = ag.Add(a, ag.Sqrt(ag.AddConst(ag.Square(h), 0.5)))
	a = ag.Add(a, ag.Pow(ag.AddConst(ag.Sigmoid(h), 0.5), 1.5))
	a = ag.Add(a, ag.Clamp(h, -0.3, 0.4))
	a = ag.Add(a, ag.Hardtanh(h, -0.2, 0.3))
	a = ag.Add(a, ag.LeakyReLU(h, 0.1))
	a = ag.Add(a, ag.ELU(ag.Neg(h), 0.7))
	a = ag.Sub(a, ag.RSub(2, ag.ReLU(h)))
	x3 := ag.Reshape(xv, 1, x.Dim(0), x.Dim(1)) // Linear of rank 3, fused activations
	a = ag.Add(a, ag.Reshape(ag.LinearAct(x3, tp.Param(m.w1), tp.Param(m.b1), ag.TanhAct), x.Dim(0), -1))
	a = ag.Add(a, ag.LinearAct(xv, tp.Param(m.w1), ag.Var[T]{}, ag.LeakyReLUAct(0.2)))
	a = ag.Add(a, ag.LinearAct(xv, tp.Param(m.w1), tp.Param(m.b1), ag.SigmoidAct))
	sv := tp.Param(m.s)
	a = ag.Add(a, ag.DivScalar(ag.MulScalar(ag.SubScalar(ag.AddScalar(h, sv), tp.Scalar(0.3)), sv), ag.AddConst(ag.Square(sv), 1)))
	a = ag.Mul(a, ag.Tanh(tp.Param(m.e)))                                      // [B, H] ⊙ [3, 1, H] → [3, B, H]
	s := ag.SumAxis(a, 1, false)                                               // [3, H]
	s = ag.Add(s, ag.SumAxis(ag.MeanAxis(a, 0, true), 1, false))               // [3, H] + [1, H]
	s2 := ag.MeanAxis(ag.SumAxis(s, -1, true), 0, true)                        // [1, 1]
	out := ag.Linear(ag.MeanAxis(s, 0, false), tp.Param(m.w3), tp.Param(m.b3)) // [Out]
	hb := ag.AddBias(ag.Reshape(h, x.Dim(0), -1, 1), tp.Param(m.b2))           // [B, H, 1] + [H]
	reg := ag.Mean(ag.Div(tp.Param(m.d), ag.AddConst(ag.Square(hb), 1)))
	return ag.Add(ag.MSE(ag.Add(out, s2), tp.Const(y)), reg)
}

// host is a model through ops that compute on the host, so that a
// device's values are copied there — RDiv and MaxAxis's backward — and
// SoftmaxCrossEntropy.
func (m *deviceModel[T]) host(tp *ag.Tape[T], x, _ *tensor.Tensor[T]) ag.Var[T] {
	h := ag.Tanh(ag.Linear(tp.Const(x), tp.Param(m.w1), tp.Param(m.b1)))
	logits := ag.Linear(h, tp.Param(m.w3), tp.Param(m.b3))
	mx := ag.MaxAxis(ag.RDiv(0.5, ag.AddConst(ag.Square(h), 1)), 1, false)
	return ag.Add(ag.SoftmaxCrossEntropy(logits, []int{2, 0, 1}), ag.Mean(mx))
}

// convtime is a convolution with a time channel (Conv2DTime, whose time
// bias and filter gradient the engine forms with convolutions of ones),
// with padding, so that the border taps differ.
func (m *deviceModel[T]) convtime(tp *ag.Tape[T], x, _ *tensor.Tensor[T]) ag.Var[T] {
	img := ag.Reshape(tp.Const(x), x.Dim(0), 1, 2, 2)
	p := tensor.ConvParams{Stride: 1, Pad: 1}
	z := ag.Conv2DTime(img, 0.7, tp.Param(m.cw), tp.Param(m.cb), p) // into the parameters' gradients
	// A filter that is not a leaf: its gradient is set, not added to.
	z2 := ag.Conv2DTime(img, -1.3, ag.Scale(tp.Param(m.cw), 1.5), ag.Scale(tp.Param(m.cb), 0.5), p)
	return ag.Mean(ag.Mul(ag.Tanh(z), z2))
}

// shapes joins and cuts tensors of rank 2, 3 and 4 along the leading
// axis, middle axes and the last axis, with several blocks outside the
// axis (the engine's CopyBlocks where it has one): Concat with an operand
// twice and Narrows of one input (their gradients added to), Split, and a
// gradient penalty on u through Grad with CreateGraph, whose gradients'
// rules are Narrow and Concat of the output gradients.
func (m *deviceModel[T]) shapes(tp *ag.Tape[T], x, y *tensor.Tensor[T]) ag.Var[T] {
	xv := tp.Const(x)                                           // [3, 4]
	h := ag.Tanh(ag.Linear(xv, tp.Param(m.w1), tp.Param(m.b1))) // [3, 5]
	// Rank 2: the last axis, then the leading one.
	c := ag.Concat(-1, h, ag.Scale(xv, 0.5), h)                                  // [3, 14]
	p := ag.Split(c, 1, 4, 6, 4)                                                 // [3, 4], [3, 6], [3, 4]
	c2 := ag.Concat(0, ag.Narrow(c, 1, 2, 9), ag.Square(ag.Narrow(c, -1, 0, 9))) // [6, 9]
	// Rank 3: the middle axis, then the last.
	r := ag.Reshape(ag.Concat(0, p[0], ag.Sin(p[2])), 2, 3, 4)      // [2, 3, 4]
	q := ag.Concat(1, r, ag.Tanh(tp.Param(m.q)), ag.Scale(r, -0.5)) // [2, 8, 4]
	qs := ag.Split(q, 1, 3, 4, 1)                                   // [2, 3, 4], [2, 4, 4], [2, 1, 4]
	q2 := ag.Concat(2, qs[1], ag.Narrow(q, 1, 2, 4))                // [2, 4, 8]
	// Rank 4: axes 1, 3 and 2, then the leading one.
	v := ag.Concat(1, tp.Param(m.u), ag.Reshape(qs[0], 2, 1, 3, 4)) // [2, 3, 3, 4]
	v = ag.Concat(3, v, ag.Square(v))                               // [2, 3, 3, 8]
	v = ag.Concat(2, v, ag.Narrow(v, 2, 1, 2))                      // [2, 3, 5, 8]
	vs := ag.Split(v, -1, 3, 5)                                     // [2, 3, 5, 3], [2, 3, 5, 5]
	w := ag.Narrow(v, 0, 1, 1)                                      // [1, 3, 5, 8]
	loss := ag.Add(ag.Mean(ag.Square(c2)), ag.Mean(ag.Mul(q2, ag.Tanh(q2))))
	loss = ag.Add(loss, ag.Mean(ag.Square(ag.Sub(ag.Narrow(ag.Narrow(c2, 0, 1, 3), 1, 2, 3), tp.Const(y)))))
	loss = ag.Add(loss, ag.Add(ag.Mean(ag.Square(vs[0])), ag.Mean(ag.Tanh(w))))
	loss = ag.Add(loss, ag.Mean(ag.Mul(vs[1], ag.Reshape(ag.Narrow(qs[2], 2, 0, 1), 2, 1, 1, 1))))
	// The penalty: Concat's gradient is Narrows of the output gradient,
	// Narrow's a Concat of it with zeros, recorded on the tape.
	gs, err := ag.Grad([]ag.Var[T]{ag.Sum(ag.Mul(ag.Square(v), v))}, nil, ag.GradOptions[T]{Params: []*ag.Param[T]{m.u}, CreateGraph: true})
	if err != nil {
		panic(err)
	}
	return ag.Add(loss, ag.Scale(ag.Mean(ag.Square(gs.Params[0])), 0.1))
}

// deviceModels names the models the device tests run, with the shape of
// their targets for a batch of 3 and 3 outputs.
var deviceModels = []struct {
	name string
	y    []int
}{{"mlp", []int{3, 3}}, {"maps", []int{1, 3}}, {"host", []int{3, 3}}, {"convtime", []int{3, 3}}, {"shapes", []int{3, 3}}}

// devicePasses runs passes forward and backward passes of the model name on
// a tape computing with eng, each after ZeroGradsOn, and returns the last
// loss and the parameters (their gradients those of the last pass).
func devicePasses[T tensor.Float](t *testing.T, eng tensor.Engine[T], name string, yshape []int, passes int, each func(pass int)) (T, []*ag.Param[T]) {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	m := newDeviceModel[T](rng, 4, 5, 3)
	x := tensor.RandN[T](rng, 0, 1, 3, 4)
	y := tensor.RandN[T](rng, 0, 1, yshape...)
	f := map[string]func(*ag.Tape[T], *tensor.Tensor[T], *tensor.Tensor[T]) ag.Var[T]{"mlp": m.mlp, "maps": m.maps, "host": m.host, "convtime": m.convtime, "shapes": m.shapes}[name]
	tp := ag.NewTape(eng)
	var loss T
	for pass := range passes {
		tp.Reset()
		ag.ZeroGradsOn(eng, m.params())
		l := f(tp, x, y)
		if err := tp.Backward(l); err != nil {
			t.Fatal(err)
		}
		if n := ag.MisfiledArena(tp); n != 0 {
			t.Errorf("pass %d: %d tensors given back to the tape's arena under another shape's class", pass, n)
		}
		loss = l.Item()
		if each != nil {
			each(pass)
		}
	}
	return loss, m.params()
}

// deviceGrads returns the parameters' gradients by name, copied.
func deviceGrads[T tensor.Float](ps []*ag.Param[T]) map[string][]T {
	g := map[string][]T{}
	for _, p := range ps {
		g[p.Name] = append([]T(nil), p.Grad.ReadData()...)
	}
	return g
}

// TestDeviceGradients checks that a tape whose engine has an Elementwise
// (the fake device) computes the CPU engine's losses and gradients.
func TestDeviceGradients(t *testing.T) {
	t.Run("float64", func(t *testing.T) { testDeviceGradients(t, tensor.Gonum(1).Float64(), 1e-12) })
	t.Run("float32", func(t *testing.T) { testDeviceGradients(t, tensor.Gonum(1).Float32(), 2e-5) })
}

func testDeviceGradients[T tensor.Float](t *testing.T, cpu tensor.Engine[T], tol float64) {
	for _, mc := range deviceModels {
		t.Run(mc.name, func(t *testing.T) {
			wantLoss, wantPs := devicePasses(t, cpu, mc.name, mc.y, 2, nil)
			for _, dev := range []*fakeDevice[T]{newFakeDevice(cpu), newRefDevice(cpu), newNoBlocksDevice(cpu)} {
				name := "loops"
				switch {
				case dev.ref != nil:
					name = "HostElementwise"
				case dev.noBlocks:
					name = "no CopyBlocks"
				}
				loss, ps := devicePasses(t, dev, mc.name, mc.y, 2, nil)
				opt := cmpopts.EquateApprox(tol, tol)
				if diff := cmp.Diff(float64(wantLoss), float64(loss), opt); diff != "" {
					t.Errorf("%s: loss (−CPU +device):\n%s", name, diff)
				}
				if diff := cmp.Diff(deviceGrads(wantPs), deviceGrads(ps), opt); diff != "" {
					t.Errorf("%s: gradients (−CPU +device):\n%s", name, diff)
				}
				if dev.reads.Load() == 0 {
					t.Errorf("%s: the tape did not use the engine's Elementwise", name)
				}
			}
		})
	}
}

// TestDeviceSyncs counts the host copies of device values during forward
// and backward passes with the fake device, by the autograd function that
// asked for them, over passes that reuse the tape's buffers. An ordinary
// model copies one value, the loss its Item reads. The host model's ops
// that compute on the host copy their operands, and, where the tape's
// buffer for a result or gradient last held a device's values, that
// buffer too: RDiv (its operand; in backward, chain reads the operand and
// the result) and MaxAxis's backward (the input, the maxima, the
// gradient's buffer); SoftmaxCrossEntropy, on the device, copies only its
// output gradient's one element in backward.
func TestDeviceSyncs(t *testing.T) {
	item := "Var[...].Item"
	want := map[string]struct {
		sites []string // the functions that may copy values to the host
		reads int64    // the numbers the host reads per pass
	}{
		"mlp":  {[]string{item}, 2}, // Mean and Sum
		"maps": {[]string{item}, 3}, // MSE forward and backward, Mean
		// SoftmaxCrossEntropy on the device reads three numbers, and its
		// backward the output gradient (one element).
		"host": {[]string{"RDiv[...].func1", item, "axisRule[...].backward", "chain[...]",
			"softmaxCERule[...].backward"}, 4}, // Mean, and the three of SoftmaxCrossEntropy
		// The fake device's convolutions are the CPU engine's, which read
		// their operands on the host, and nothing else copies: the
		// filter's split (timeFilters), the scatter of its gradient and
		// its time channel's taps are the engine's CopyBlocks.
		"convtime": {[]string{"Conv2DTime[...] (conv)", "(*Tape[...]).ewTimeBias (conv)", "conv2DTimeRule[...].backward (conv)",
			"(*Tape[...]).ewTimeFilterGrad (conv)", item}, 1}, // Mean
		// Concat, Narrow and Split along any axis are the engine's
		// CopyBlocks, forward and backward, and so are the gradients'
		// rules in ops (Narrow's zeros filled on the device).
		"shapes": {[]string{item}, 8}, // seven Means and a Sum
	}
	for _, mc := range deviceModels {
		t.Run(mc.name, func(t *testing.T) {
			w := want[mc.name]
			cpu := tensor.Gonum(1).Float64()
			for _, dev := range []*fakeDevice[float64]{newFakeDevice(cpu), newRefDevice(cpu)} {
				devicePasses(t, dev, mc.name, mc.y, 3, func(pass int) {
					sites, n, reads := dev.syncSites(), dev.syncs.Swap(0), dev.reads.Swap(0)
					t.Logf("pass %d: %d syncs %v, %d numbers read", pass, n, sites, reads)
					for site := range sites {
						if !slices.Contains(w.sites, site) {
							t.Errorf("pass %d: %s copied device values to the host %d times, want none", pass, site, sites[site])
						}
					}
					if sites[item] != 1 {
						t.Errorf("pass %d: %d copies by %s, want 1 (the loss)", pass, sites[item], item)
					}
					if mc.name == "host" && sites["RDiv[...].func1"] == 0 {
						t.Errorf("pass %d: RDiv copied nothing to the host: does the fake device mark its results?", pass)
					}
					if reads != w.reads {
						t.Errorf("pass %d: the host read %d numbers, want %d", pass, reads, w.reads)
					}
				})
			}
		})
	}
}

// TestDeviceTimeFiltersFollowTheWeight: Conv2DTime's split filters, kept
// by the tape between passes, are formed again when the weight changes,
// also between two uses in one pass (the first use's backward keeps the
// values it saw, as on the CPU).
func TestDeviceTimeFiltersFollowTheWeight(t *testing.T) {
	cpu := tensor.Gonum(1).Float64()
	run := func(eng tensor.Engine[float64]) map[string][]float64 {
		rng := rand.New(rand.NewPCG(7, 8))
		w := ag.NewParam("w", tensor.RandN[float64](rng, 0, 0.5, 3, 2, 3, 3))
		x := ag.NewParam("x", tensor.RandN[float64](rng, 0, 1, 2, 1, 4, 4)) // its gradient reads the filter
		p := tensor.ConvParams{Stride: 1, Pad: 1}
		tp := ag.NewTape(eng)
		grads := map[string][]float64{}
		for pass := range 3 {
			tp.Reset()
			ag.ZeroGradsOn(eng, []*ag.Param[float64]{w, x})
			z1 := ag.Conv2DTime(tp.Param(x), 0.5, tp.Param(w), ag.Var[float64]{}, p)
			w.Value.Data()[4] += 0.25 // between two uses in one pass
			z2 := ag.Conv2DTime(tp.Param(x), -0.8, tp.Param(w), ag.Var[float64]{}, p)
			if err := tp.Backward(ag.Mean(ag.Mul(ag.Tanh(z1), z2))); err != nil {
				t.Fatal(err)
			}
			grads[fmt.Sprint("w, pass ", pass)] = append([]float64(nil), w.Grad.ReadData()...)
			grads[fmt.Sprint("x, pass ", pass)] = append([]float64(nil), x.Grad.ReadData()...)
			w.Value.Data()[7] -= 0.5 // between passes
		}
		return grads
	}
	want := run(cpu)
	got := run(newFakeDevice(cpu))
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(1e-12, 1e-12)); diff != "" {
		t.Errorf("gradients (−CPU +device):\n%s", diff)
	}
}

// TestVJPZeroesWhereValuesAre: a VJP zeroes an input destination where
// its values are: with the device's Fill when they are on the device (no
// copy to the host to zero it there), on the host when they are there (so
// that a backward that writes the destination on the host, MaxAxis's,
// copies no more than it does into a destination it accumulates into,
// which is not zeroed at all).
func TestVJPZeroesWhereValuesAre(t *testing.T) {
	dev := newFakeDevice(tensor.Gonum(1).Float64())
	pb := ag.NewPullback[float64](dev)
	x := tensor.New[float64](2, 3)
	copy(x.Data(), []float64{1, -2, 3, 0.5, 2, -1})
	type T = *tensor.Tensor[float64]
	vjp := func(f func(*ag.Tape[float64], []ag.Var[float64]) ag.Var[float64], cot T, onDevice, acc bool) (T, int64) {
		dst := tensor.New[float64](2, 3)
		if onDevice {
			dev.Elementwise().Fill(dst, 7) // newer on the device
		} else {
			dst.Fill(7)
		}
		dev.syncs.Store(0)
		if _, err := pb.VJP(f, []T{x}, cot, ag.VJPDest[float64]{Inputs: []T{dst}, Accumulate: acc}); err != nil {
			t.Fatal(err)
		}
		return dst, dev.syncs.Load()
	}
	scale := func(_ *ag.Tape[float64], in []ag.Var[float64]) ag.Var[float64] { return ag.Scale(in[0], 3) }
	dst, n := vjp(scale, tensor.Full(1.0, 2, 3), true, false)
	if n != 0 {
		t.Errorf("device destination: the VJP copied %d storages to the host, want none (sites %v)", n, dev.syncSites())
	}
	if diff := cmp.Diff([]float64{3, 3, 3, 3, 3, 3}, dst.ReadData()); diff != "" {
		t.Errorf("device destination: input gradient (-want +got):\n%s", diff)
	}
	maxAxis := func(_ *ag.Tape[float64], in []ag.Var[float64]) ag.Var[float64] { return ag.MaxAxis(in[0], 1, false) }
	_, base := vjp(maxAxis, tensor.Full(1.0, 2), false, true)
	dst, n = vjp(maxAxis, tensor.Full(1.0, 2), false, false)
	if n != base {
		t.Errorf("host destination: the VJP copied %d storages to the host, %d when it does not zero the destination (sites %v)", n, base, dev.syncSites())
	}
	if diff := cmp.Diff([]float64{0, 0, 1, 0, 1, 0}, dst.ReadData()); diff != "" {
		t.Errorf("host destination: input gradient (-want +got):\n%s", diff)
	}
}
