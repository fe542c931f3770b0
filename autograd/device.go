package autograd

import "github.com/adamnode/adamnode/tensor"

// Elementwise work through the engine's Elementwise: one compute path.
//
// Every tape hands the elementwise work of the ops below to its engine's
// tensor.Elementwise (tensor.ElementwiseOf; tensor.HostElementwise for an
// engine of another package without one): the CPU engines' own, whose
// fast paths (the vector kernels, large tensors split across the workers,
// the gradients' fused loops inside BinaryBackward and MapBackward) give
// the bits the host loops of this package gave, or a device's (package
// cuda's), which keeps the values and gradients in its memory so that host
// memory is touched only where the host reads a number: a loss's Item, or
// a value the caller reads with Data. Every CPU test so runs the code a
// GPU runs.
//
// A few places ask t.onDevice (tensor.OnDevice: the engine computes in
// memory of its own), each for a reason of memory or of arithmetic the
// interface does not express:
//
//   - NewTape: the engine's block copies (tensor.BlockCopierOf) only on a
//     device, where Concat, Narrow and Split (shape.go, four sites) and
//     Conv2DTime's filter (conv_time.go) use them or Copy on whole blocks
//     (outer 1) to keep the values there; on the CPU the host loops over
//     views are the fast path and read no device memory;
//   - Conv2DTime (conv_time.go, four sites): a device keeps the filter split
//     into its input and time channels while the filter's version stands
//     (so a cached filter is not the arena's), and forms the time channel's
//     bias and filter gradient with the engine's convolutions; the CPU
//     gathers the filter and sums the taps on the host each call;
//   - the scalar ops' backward (scalarOpGrad): the CPU reads s and sums s's
//     gradient in float64, which on a device would copy s and the gradient
//     to the host; the device's BinaryBackward sums in T;
//   - Sum, Mean and MSE and their backward, SoftmaxCrossEntropy, AddBias,
//     SumAxis, MeanAxis and MaxAxis forward and the backward of SumAxis and
//     MeanAxis (reduce.go, linalg.go, axis.go): the CPU sums in float64 in
//     order (or per row, for SoftmaxCrossEntropy and the axis sums) and
//     adds a bias in one pass, where the device sums in T or through
//     Elementwise.Sum's lanes and reads one number: the CPU's bits would
//     change through the interface.
//
// On the engine's Elementwise (on a device; the CPU's as listed above):
//
//   - the maps Scale, AddConst, Neg, RSub, Abs, Pow, Sin, Cos, Clamp,
//     Hardtanh, LeakyReLU, ELU, Softplus, Sigmoid, Tanh, ReLU, Exp, Log,
//     Sqrt and Square, their backward (MapBackward, given the output or
//     the input as tensor.MapOp.BackwardFromOutput says; LeakyReLU with a
//     negative slope and ELU with a negative α, whose output does not tell
//     the input's sign, take their gradient on the host), and the
//     activations fused into LinearAct, Conv2DAct and Conv2DTimeAct;
//   - Add, Sub, Mul and Div, broadcasting or not, and their backward
//     (Binary, BinaryBackward), AddScalar, SubScalar, MulScalar and
//     DivScalar likewise (the one-element operand broadcast), AddBias,
//     LinComb and its backward;
//   - Sum, Mean and MSE (their one number read by the host, set into the
//     result on the device), SoftmaxCrossEntropy (three numbers read, the
//     labels' one-hot sent up; its backward reads the output gradient), SumAxis, MeanAxis and MaxAxis forward, the
//     backward of Sum, Mean, SumAxis and MeanAxis;
//   - Linear's bias (tensor.GemmBias: the product by the engine's GEMM,
//     the bias added by Binary) and the bias gradient of Linear, AddBias and Conv2D
//     (SumPerChannel);
//   - Conv2DTime's filter split into its input channels and time channel
//     (kept while the filter's version stands), and its filter gradient
//     assembled from the engine's convolution's and the time taps' sums,
//     where the engine (or its Elementwise) is a tensor.BlockCopier: its
//     CopyBlocks; without one they are host copies;
//   - Concat, Narrow and Split (Chunk and Select too) along any axis, and
//     their backward (each operand's gradient a narrowing of the output
//     gradient, set or added; Narrow's the output gradient scattered into
//     the input's, the rest zeroed or kept), with the engine's CopyBlocks
//     where it is a tensor.BlockCopier: outer blocks of d·inner elements
//     for an operand of d along the axis; without one, along the leading
//     axis or one whose outer dimensions are all 1, with its Copy;
//   - the gradients' plumbing: seeding Backward's output gradient,
//     accumulating a gradient a backward function returns, Reshape's
//     backward, a Scalar leaf's value, and ZeroGradsOn.
//
// The host reads one number (Elementwise.Sum or SumSquares, no tensor
// copied) in the forward pass of Sum, Mean and MSE and in MSE's backward.
// SumAxis and MeanAxis sum in the engine's arithmetic (in T), where the
// host's sum in float64.
//
// Linear's bias and the backward of Sum, Mean, SumAxis and MeanAxis call
// Binary with z = x, x shaped like z (the other operand broadcast), as
// Elementwise's doc allows.
//
// Still on the host (each reads its operands' values there, which copies
// them from the device): RDiv, MaxAxis's backward, Softmax, LogSoftmax,
// LogSumExp, Where, MaskedSum, MaskedMean, Gather, IndexSelect, Cumsum,
// Permute, Transpose, Stack, Concat, Narrow and Split along an axis with
// more than one block outside it where the engine is no BlockCopier,
// pooling, the time-channel ops ConcatTime and LinearTime (Conv2DTime's time channel
// is the engine's convolutions), the rules written in ops of Grad with
// CreateGraph and of JVP where they make constants on the host (masks),
// RowShards' sums of its shards' gradients, and whatever a Custom node's
// functions do. Conv2D's products are the engine's own.

// binOps maps a binKind to the engine's binary operation.
var binOps = [...]tensor.BinaryOp{binAdd: tensor.BinaryAdd, binSub: tensor.BinarySub, binMul: tensor.BinaryMul, binDiv: tensor.BinaryDiv}

// actOps maps an activation to the engine's map.
var actOps = [...]tensor.MapOp{
	actReLU: tensor.MapReLU, actLeakyReLU: tensor.MapLeakyReLU, actTanh: tensor.MapTanh,
	actSigmoid: tensor.MapSigmoid, actSoftplus: tensor.MapSoftplus,
}

// flatRange returns elements [lo, hi) of x's row-major order as a flat
// view of its storage.
func flatRange[T tensor.Float](x *tensor.Tensor[T], lo, hi int) *tensor.Tensor[T] {
	return x.Reshape(x.Len()).Slice(lo, hi)
}

// ewConcat writes the operands xs one after another into z with the
// engine's Copy: Concat along an axis with nothing outside it (outer 1),
// where each operand is one block of z.
func (t *Tape[T]) ewConcat(z *tensor.Tensor[T], xs []Var[T], inner, ax int) {
	// z whole on the device first: the blocks are then written into its
	// copy in place, where writing a part of a tensor the device does not
	// hold whole would copy the parts written before back to the host.
	t.ew.Fill(z, 0)
	at := 0
	for _, xv := range xs {
		x := t.entryAt(int(xv.i)).value
		m := x.Dim(ax) * inner
		t.ew.Copy(flatRange(z, at, at+m), x.Reshape(m))
		at += m
	}
}

// ewConcatGrad is Concat's backward for ewConcat: each operand's block of
// the output gradient g, copied or added with the engine's Elementwise.
func (t *Tape[T]) ewConcatGrad(e *entry[T], g *tensor.Tensor[T], inner, ax int) {
	at := 0
	for _, x := range e.ins {
		m := x.value.Dim(ax) * inner
		if dst, acc := t.gradDst(x); dst != nil {
			t.ewScaled(dst.Reshape(m), acc, 1, flatRange(g, at, at+m))
		}
		at += m
	}
}

// blocksConcat writes the operands xs one after another along axis ax
// into z, the [outer, n] result (n elements a row of the leading axes),
// with the engine's CopyBlocks: operand x is outer blocks of
// x.Dim(ax)·inner elements, each at its offset in a row of z. Concat along
// any axis on the device.
func (t *Tape[T]) blocksConcat(z *tensor.Tensor[T], xs []Var[T], outer, inner, n, ax int) {
	if len(xs) > 1 {
		// z whole on the device first, as in ewConcat: each operand's
		// blocks then write a part of its copy in place.
		t.ew.Fill(z, 0)
	}
	at := 0
	for _, xv := range xs {
		x := t.entryAt(int(xv.i)).value
		m := x.Dim(ax) * inner
		t.blocks.CopyBlocks(z, x, 1, tensor.Blocks{Count: outer, Len: m, ZOff: at, ZStride: n, XStride: m}, false)
		at += m
	}
}

// blocksConcatGrad is Concat's backward with the engine's CopyBlocks: each
// operand's blocks of the output gradient g, set into its gradient (which
// they cover whole) or added to it.
func (t *Tape[T]) blocksConcatGrad(e *entry[T], g *tensor.Tensor[T], outer, inner, ax int) {
	n := g.Dim(ax) * inner
	at := 0
	for _, x := range e.ins {
		m := x.value.Dim(ax) * inner
		if dst, acc := t.gradDst(x); dst != nil {
			t.blocks.CopyBlocks(dst, g, 1, tensor.Blocks{Count: outer, Len: m, ZStride: m, XOff: at, XStride: n}, acc)
		}
		at += m
	}
}

// blocksNarrowGrad is Narrow's backward with the engine's CopyBlocks: the
// output gradient g placed at the slab [start, start+length) along the
// axis of the input's gradient dst, viewed as [outer, n, inner]: set, the
// rest of dst zeroed first (unless the slab is all of it), or with acc
// added.
func (t *Tape[T]) blocksNarrowGrad(dst *tensor.Tensor[T], acc bool, g *tensor.Tensor[T], outer, inner, n, start, length int) {
	m := length * inner
	if !acc && m < n*inner {
		t.ew.Fill(dst, 0)
	}
	t.blocks.CopyBlocks(dst, g, 1, tensor.Blocks{Count: outer, Len: m, ZOff: start * inner, ZStride: n * inner, XStride: m}, acc)
}

// gradsShare reports whether the gradient of one of xs shares g's storage
// (a caller's buffers, Param.Grad or a VJP's destinations, may): there
// CopyBlocks, whose z and x must not, gives way to the other paths.
func gradsShare[T tensor.Float](xs []*entry[T], g *tensor.Tensor[T]) bool {
	for _, x := range xs {
		if x.grad != nil && x.grad.Storage() == g.Storage() {
			return true
		}
	}
	return false
}

// ewLinComb sets z = base + a·x (base nil: a·x) with the engine's
// Elementwise, through the tape's scratch slices (a slice literal handed to
// an interface method would be allocated on every call).
func (t *Tape[T]) ewLinComb(z, base *tensor.Tensor[T], a T, x *tensor.Tensor[T]) {
	t.ewCoef = append(t.ewCoef[:0], a)
	t.ewXs = append(t.ewXs[:0], x)
	t.ew.LinComb(z, base, t.ewCoef, t.ewXs)
	t.ewXs[0] = nil
}

// ewScaled sets dst = a·g, or adds it with acc, with the engine's
// Elementwise: addScaledGrad's arithmetic (a·g rounded, then added).
func (t *Tape[T]) ewScaled(dst *tensor.Tensor[T], acc bool, a T, g *tensor.Tensor[T]) {
	switch {
	case acc:
		t.ewLinComb(dst, dst, a, g)
	case a == 1:
		t.ew.Copy(dst, g)
	default:
		t.ewLinComb(dst, nil, a, g)
	}
}

// ewMapGrad adds the gradient of the map op (parameters a and b) recorded
// as e into the gradient of e's input with the engine's MapBackward, given
// e's output or input as op needs.
func (t *Tape[T]) ewMapGrad(e *entry[T], op tensor.MapOp, a, b T) {
	dst, acc := t.gradDst(e.in[0])
	if dst == nil {
		return
	}
	u := e.in[0].value
	if op.BackwardFromOutput() {
		u = e.value
	}
	t.ew.MapBackward(op, dst, e.grad, u, a, b, acc)
}

// ewBinaryGrad adds the gradients of the binary op k recorded as e (its
// operands broadcasting or not) into its operands' gradients with the
// engine's BinaryBackward.
func (t *Tape[T]) ewBinaryGrad(k binKind, e *entry[T]) {
	x, y := e.in[0], e.in[1]
	for side, v := range [2]*entry[T]{x, y} {
		if dst, acc := t.gradDst(v); dst != nil {
			t.ew.BinaryBackward(binOps[k], side, dst, e.grad, x.value, y.value, e.value, acc)
		}
	}
}

// ewScalarOut returns a one-element (rank 0) tensor set to s on the device.
func (t *Tape[T]) ewScalarOut(s float64) *tensor.Tensor[T] {
	z := t.arena.get()
	t.ew.Fill(z, T(s))
	return z
}

// ewBroadcastGrad adds a·g into dst with the engine's Elementwise, g
// broadcasting to dst's shape (g of one element, or shaped like a
// reduction of dst with its axis kept).
func (t *Tape[T]) ewBroadcastGrad(dst *tensor.Tensor[T], acc bool, a T, g *tensor.Tensor[T]) {
	if a != 1 {
		s := t.arena.like(g)
		t.ew.Map(tensor.MapScale, s, g, a, 0)
		g = s
	}
	if !acc {
		t.ew.Fill(dst, 0)
	}
	// dst has the result's shape, so the engine reads each of its elements
	// only for the element it writes.
	t.ew.Binary(tensor.BinaryAdd, dst, dst, g)
}

// ZeroGradsOn zeroes the gradient of every parameter in ps as ZeroGrads
// does, with eng's Elementwise when it has one (tensor.DeviceElementwise), so
// that a gradient the device holds is zeroed there instead of being copied
// to the host first.
func ZeroGradsOn[T tensor.Float](eng tensor.Engine[T], ps []*Param[T]) {
	ew := tensor.DeviceElementwise(eng)
	for _, p := range ps {
		if ew == nil || p.Grad == nil || !p.Grad.SameShape(p.Value) {
			p.ZeroGrad()
			continue
		}
		ew.Fill(p.Grad, 0)
	}
}

// ewSeed is backward's seeding of the output gradient dst with g (ones when
// g is nil), added to what dst holds with acc, on the engine's device.
func (t *Tape[T]) ewSeed(dst *tensor.Tensor[T], acc bool, g *tensor.Tensor[T]) {
	switch {
	case g == nil && acc:
		t.ew.Map(tensor.MapAddScalar, dst, dst, 1, 0)
	case g == nil:
		t.ew.Fill(dst, 1)
	default:
		t.ewScaled(dst, acc, 1, g)
	}
}

// ewLinCombVars sets z = Σ_i coef[i]·xs[i] with the engine's LinComb.
func (t *Tape[T]) ewLinCombVars(z *tensor.Tensor[T], coef []T, xs []Var[T]) {
	t.ewXs = t.ewXs[:0]
	for _, xv := range xs {
		t.ewXs = append(t.ewXs, t.entryAt(int(xv.i)).value)
	}
	t.ew.LinComb(z, nil, coef, t.ewXs)
	clear(t.ewXs)
}

// ewMSE is MSE with the engine's Elementwise: x − y into a tensor kept for
// backward, its sum of squares read by the host.
func (t *Tape[T]) ewMSE(xe, ye *entry[T]) Var[T] {
	d := t.arena.like(xe.value)
	t.ew.Binary(tensor.BinarySub, d, xe.value, ye.value)
	n := float64(d.Len())
	e := t.record("MSE", t.ewScalarOut(t.ew.SumSquares(d)/n), mseRule[T]{}, xe, ye, nil)
	if e.rule != nil {
		e.aux = d
	} else {
		t.arena.put(d, -1)
	}
	return t.varOf(e)
}

// ewReduceAxis sets z to the reduction k of x along axis a with the
// engine's Elementwise (z viewed without the axis when keepDim kept it).
// The sums are the engine's, in T, where the host's run in float64.
func (t *Tape[T]) ewReduceAxis(k axisKind, z, x *tensor.Tensor[T], a int, keepDim bool) {
	if keepDim {
		var buf [maxPooledRank]int
		dims := dimsOf(z, &buf)
		z = z.Reshape(append(dims[:a:a], dims[a+1:]...)...)
	}
	switch k {
	case axisSum:
		t.ew.SumAxis(z, x, a)
	case axisMean:
		t.ew.MeanAxis(z, x, a)
	default:
		t.ew.MaxAxis(z, x, a)
	}
}

// ewAxisGrad adds the gradient of SumAxis (or MeanAxis), g, broadcast
// along the reduced axis of x viewed as [outer, n, inner], into dst.
func (t *Tape[T]) ewAxisGrad(k axisKind, dst *tensor.Tensor[T], acc bool, g *tensor.Tensor[T], outer, n, inner int) {
	scale := T(1)
	if k == axisMean {
		scale = T(1 / float64(n))
	}
	t.ewBroadcastGrad(dst.Reshape(outer, n, inner), acc, scale, g.Reshape(outer, 1, inner))
}

// sumPerChannel sets dst[c] = Σ_{b,...} g[b, c, ...], or adds it when acc:
// a bias's gradient, with the engine's SumPerChannel.
func (t *Tape[T]) sumPerChannel(dst *tensor.Tensor[T], acc bool, g *tensor.Tensor[T]) {
	t.ew.SumPerChannel(dst, g, acc)
}

// ewAddBias sets z = x + b, the bias b [C] broadcast over x [B, C, ...],
// with the engine's Binary (b viewed as [C, 1, ...] to align with x's
// second axis).
func (t *Tape[T]) ewAddBias(z, x, b *tensor.Tensor[T]) {
	if r := x.Rank(); r > 2 {
		var buf [maxPooledRank]int
		dims := buf[:0]
		if r > maxPooledRank+1 {
			dims = make([]int, 0, r-1)
		}
		dims = append(dims, b.Len())
		for range r - 2 {
			dims = append(dims, 1)
		}
		b = b.Reshape(dims...)
	}
	t.ew.Binary(tensor.BinaryAdd, z, x, b)
}

// ewScalarGrad adds the gradients of AddScalar, SubScalar, MulScalar or
// DivScalar (the binary op k of x and a one-element s) into those of x and
// s with the engine's BinaryBackward, s viewed as a scalar (rank 0) that
// broadcasts to x's shape.
func (t *Tape[T]) ewScalarGrad(k binKind, e *entry[T]) {
	x, s := e.in[0], e.in[1]
	s0 := s.value.Reshape()
	for side, v := range [2]*entry[T]{x, s} {
		dst, acc := t.gradDst(v)
		if dst == nil {
			continue
		}
		if side == 1 {
			dst = dst.Reshape()
		}
		t.ew.BinaryBackward(binOps[k], side, dst, e.grad, x.value, s0, e.value, acc)
	}
}

// ewSoftmaxCE records SoftmaxCrossEntropy on the engine's Elementwise: the
// rows' maxima, the exponentials of the shifted logits and their sums on
// the device, the labels as a one-hot tensor made on the host (B·K
// elements up); the host reads three numbers (the sums of the maxima, of
// the log-sums and of the picked logits). The gradient saved for backward,
// (softmax − onehot)/B, stays on the device. Formed in T where the host
// forms each row in float64.
func (t *Tape[T]) ewSoftmaxCE(le *entry[T], labels []int, recording bool) *entry[T] {
	z := le.value
	b, k := z.Dim(0), z.Dim(1)
	mx, s, ls := t.arena.get(b), t.arena.get(b), t.arena.get(b)
	t.ew.MaxAxis(mx, z, 1)
	p := t.arena.like(z)
	t.ew.Binary(tensor.BinarySub, p, z, mx.Reshape(b, 1))
	t.ew.Map(tensor.MapExp, p, p, 0, 0)
	t.ew.SumAxis(s, p, 1)
	t.ew.Map(tensor.MapLog, ls, s, 0, 0)
	// A fresh one-hot each call: an arena tensor may hold a device's newer
	// values, which writing its host memory would first copy back.
	oh := tensor.New[T](b, k)
	od := oh.Data()
	for n, l := range labels {
		od[n*k+l] = 1
	}
	loss := t.ew.Sum(mx) + t.ew.Sum(ls) - t.ew.Dot(oh, z)
	if b > 0 {
		loss /= float64(b)
	}
	var aux *tensor.Tensor[T]
	if recording {
		t.ew.Binary(tensor.BinaryDiv, p, p, s.Reshape(b, 1)) // softmax
		t.ew.Map(tensor.MapScale, p, p, T(1/float64(b)), 0)
		t.ewLinComb(p, p, T(-1/float64(b)), oh)
		aux = p
	} else {
		t.arena.put(p, -1)
	}
	t.arena.put(mx, -1)
	t.arena.put(s, -1)
	t.arena.put(ls, -1)
	e := t.record("SoftmaxCrossEntropy", t.ewScalarOut(loss), softmaxCERule[T]{}, le, nil, nil)
	saveCE(e, aux, labels, recording)
	return e
}
