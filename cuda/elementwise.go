package cuda

import (
	"fmt"
	"math"
	"slices"

	"github.com/adamnode/adamnode/tensor"
)

// Elementwise returns the engine's tensor.Elementwise: every method runs
// the package's kernels (Kernels) on the tensors' device copies, uploading
// an operand only when its storage changed since its last upload, and
// leaves each result's device copy current, as GemmTensors does. The
// kernels are compiled (or taken from a cache) on the first call, for the
// backend's device; Elementwise returns nil when they cannot be
// (NVRTC or the driver API does not load, or the source does not compile:
// the backend's kernel error says which).
//
// What each method computes, and how close it is to the CPU's
// (tensor.HostElementwise), is what the kernels' functions document: Map
// and MapBackward are Map, MapBackward and the maps with parameters
// (LeakyReLU, Hardtanh, Clamp, ELU, Pow, Scale, AddScalar; Scale's and
// AddScalar's gradients are LinComb's and Copy's); Binary and
// BinaryBackward are Binary and BinaryBackward, with operands of any rank:
// the broadcast collapsed (the axes of size 1 dropped, neighbours merged
// where each operand is broadcast along both or neither), and where more
// than MaxDims groups of axes remain, one call per element of the leading
// ones, in row-major order (so a gradient's terms are still added in the
// output's order); LinComb is LinComb, MaxTerms terms a call; the axis
// reductions run on the shape [outer, n, inner] around the axis;
// SumPerChannel is ChannelSums; Sum, SumSquares and Dot round the float64
// sum to T once on the device and copy that element to the host; ErrorNorm
// is ErrorNorm or MixedErrorNorm (MaxNormParts parts a call, combined).
// It is also a tensor.ArgMaxer: ArgMaxAxis is ArgMaxAxis, which
// tensor.ArgMaxOn calls; and a tensor.BlockCopier: CopyBlocks is
// CopyBlocks, a strided copy between parts of two tensors on the device
// (autograd's Conv2DTime splits its filter and assembles its gradient so).
// Shapes are checked before anything runs, as the tensor methods check
// them: a misfit panics with a *tensor.ShapeError naming cuda's method and
// the shapes. A failed kernel panics with its error.
func (e *engine[T]) Elementwise() tensor.Elementwise[T] {
	b := e.b
	b.kernOnce.Do(func() {
		b.kern, b.kernErr = NewKernels(b.device)
		b.kernLoaded.Store(b.kern)
	})
	if b.kern == nil {
		return nil
	}
	return elementwise[T]{b: b, k: b.kern}
}

// elementwise is a backend's tensor.Elementwise for T.
type elementwise[T tensor.Float] struct {
	b *backend
	k *Kernels
}

// dev returns the Buffer of t's elements at device address p.
func dev[T tensor.Float](p uintptr, t *tensor.Tensor[T]) Buffer[T] {
	return Buffer[T]{ptr: p, n: t.Len()}
}

// shapeError returns the *tensor.ShapeError of cuda's method op.
func shapeError(op, format string, args ...any) *tensor.ShapeError {
	return &tensor.ShapeError{Op: "cuda." + op, Msg: fmt.Sprintf(format, args...)}
}

// mustSameShape panics with a *tensor.ShapeError naming op unless a and b
// have the same shape.
func mustSameShape[T tensor.Float](op string, a, b *tensor.Tensor[T]) {
	if !slices.Equal(a.Shape(), b.Shape()) {
		panic(shapeError(op, "shapes %v and %v do not match", a.Shape(), b.Shape()))
	}
}

// plainMaps are the kernels' maps without parameters, by tensor.MapOp.
var plainMaps = map[tensor.MapOp]MapOp{
	tensor.MapTanh: Tanh, tensor.MapSigmoid: Sigmoid, tensor.MapExp: Exp, tensor.MapReLU: ReLU,
	tensor.MapSoftplus: Softplus, tensor.MapLog: Log, tensor.MapSqrt: Sqrt, tensor.MapSquare: Square,
	tensor.MapNeg: Neg, tensor.MapAbs: Abs, tensor.MapSin: Sin, tensor.MapCos: Cos,
}

// checkMap panics unless op is a map and its bounds are in order.
func checkMap[T tensor.Float](name string, op tensor.MapOp, a, b T) {
	if op < 0 || op >= tensor.NumMapOps {
		panic(fmt.Sprintf("cuda: %s: unknown %v", name, op))
	}
	if (op == tensor.MapHardtanh || op == tensor.MapClamp) && a > b {
		panic(shapeError(name, "%v: lower bound %v above upper bound %v", op, a, b))
	}
}

func (w elementwise[T]) Map(op tensor.MapOp, z, x *tensor.Tensor[T], a, c T) {
	checkMap("Map", op, a, c)
	mustSameShape("Map", z, x)
	b, k := w.b, w.k
	b.lock()
	defer b.unlock()
	b.tick()
	dx := dev(in(b, x), x)
	dz := dev(out(b, z, false), z)
	var err error
	switch op {
	case tensor.MapLeakyReLU:
		err = LeakyReLU(k, dz, dx, a)
	case tensor.MapHardtanh:
		err = Hardtanh(k, dz, dx, a, c)
	case tensor.MapClamp:
		err = Clamp(k, dz, dx, a, c)
	case tensor.MapELU:
		err = ELU(k, dz, dx, a)
	case tensor.MapPow:
		err = Pow(k, dz, dx, a)
	case tensor.MapScale:
		err = Scale(k, dz, dx, a)
	case tensor.MapAddScalar:
		err = AddScalar(k, dz, dx, a)
	default:
		err = Map(k, plainMaps[op], dz, dx)
	}
	must(err)
	produced(b, z)
}

// readsU reports whether op's backward map reads u.
func readsU(op tensor.MapOp) bool {
	return op != tensor.MapNeg && op != tensor.MapScale && op != tensor.MapAddScalar
}

func (w elementwise[T]) MapBackward(op tensor.MapOp, z, g, u *tensor.Tensor[T], a, c T, accumulate bool) {
	checkMap("MapBackward", op, a, c)
	mustSameShape("MapBackward", z, g)
	if readsU(op) {
		mustSameShape("MapBackward", z, u)
	}
	b, k := w.b, w.k
	b.lock()
	defer b.unlock()
	b.tick()
	dg := dev(in(b, g), g)
	var du Buffer[T]
	if readsU(op) {
		du = dev(in(b, u), u)
	}
	dz := dev(out(b, z, accumulate), z)
	var err error
	switch op {
	case tensor.MapLeakyReLU:
		err = LeakyReLUBackward(k, dz, dg, du, a, accumulate)
	case tensor.MapHardtanh:
		err = HardtanhBackward(k, dz, dg, du, a, c, accumulate)
	case tensor.MapClamp:
		err = ClampBackward(k, dz, dg, du, a, c, accumulate)
	case tensor.MapELU:
		err = ELUBackward(k, dz, dg, du, a, accumulate)
	case tensor.MapPow:
		err = PowBackward(k, dz, dg, du, a, accumulate)
	case tensor.MapScale, tensor.MapAddScalar:
		coef := a
		if op == tensor.MapAddScalar {
			coef = 1
		}
		switch {
		case accumulate: // z + coef·g, the same element of z and g where z is g
			err = LinComb(k, dz, dz, []T{coef}, []Buffer[T]{dg})
		case op == tensor.MapScale:
			err = Scale(k, dz, dg, a)
		case dz.ptr != dg.ptr: // else z is g already
			err = Copy(k, dz, dg)
		}
	default:
		err = MapBackward(k, plainMaps[op], dz, dg, du, accumulate)
	}
	must(err)
	produced(b, z)
}

// collapse returns the broadcast of x and y to out (of no size 0) in as
// few axes as keep it element for element in row-major order: the axes
// of size 1 in out dropped, and neighbouring axes merged where each
// operand is broadcast along both or along neither. co is the output's
// shape, cx and cy the operands' (of co's rank, 1 where broadcast).
func collapse(x, y, out []int) (co, cx, cy []int) {
	pad := func(s []int) []int {
		p := make([]int, len(out))
		for i := range p {
			p[i] = 1
			if j := len(s) - len(out) + i; j >= 0 {
				p[i] = s[j]
			}
		}
		return p
	}
	px, py := pad(x), pad(y)
	for i, n := range out {
		if n == 1 {
			continue
		}
		bx, by := px[i] == 1, py[i] == 1
		if k := len(co) - 1; k >= 0 && (cx[k] == 1) == bx && (cy[k] == 1) == by {
			co[k] *= n
			cx[k] *= px[i]
			cy[k] *= py[i]
			continue
		}
		co, cx, cy = append(co, n), append(cx, px[i]), append(cy, py[i])
	}
	return co, cx, cy
}

// bcastRun is one kernel call of a broadcast of more than MaxDims groups
// of axes: the element offsets of its blocks of x, y and the output, and
// whether it is the first to reach its block of x (of y), in row-major
// order.
type bcastRun struct {
	ox, oy, oo     int
	firstX, firstY bool
}

// bcastSplit splits a collapsed broadcast (collapse) into its last
// MaxDims groups, which one kernel call takes (shapes ix and iy, of nx,
// ny and no elements), and the runs over the leading groups, in
// row-major order: one run, at offset 0, when there are at most MaxDims.
func bcastSplit(co, cx, cy []int) (runs []bcastRun, ix, iy []int, nx, ny, no int) {
	lead := max(0, len(co)-MaxDims)
	ix, iy = cx[lead:], cy[lead:]
	nx, ny, no = 1, 1, 1
	for i := lead; i < len(co); i++ {
		nx, ny, no = nx*cx[i], ny*cy[i], no*co[i]
	}
	// The leading groups' strides, in elements (0 where broadcast).
	sx, sy, so := make([]int, lead), make([]int, lead), make([]int, lead)
	ax, ay, ao := nx, ny, no
	for i := lead - 1; i >= 0; i-- {
		if cx[i] != 1 {
			sx[i] = ax
		}
		if cy[i] != 1 {
			sy[i] = ay
		}
		so[i] = ao
		ax, ay, ao = ax*cx[i], ay*cy[i], ao*co[i]
	}
	idx := make([]int, lead)
	for {
		r := bcastRun{firstX: true, firstY: true}
		for i, v := range idx {
			r.ox += v * sx[i]
			r.oy += v * sy[i]
			r.oo += v * so[i]
			r.firstX = r.firstX && (v == 0 || sx[i] != 0)
			r.firstY = r.firstY && (v == 0 || sy[i] != 0)
		}
		runs = append(runs, r)
		i := lead - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < co[i] {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return runs, ix, iy, nx, ny, no
		}
	}
}

// part returns n elements of b from off, or b itself when it is empty (a
// buffer the kernel does not read).
func part[T tensor.Float](b Buffer[T], off, n int) Buffer[T] {
	if b.n == 0 {
		return b
	}
	return b.Slice(off, off+n)
}

// binaryOps are the kernels' binary operations, by tensor.BinaryOp.
var binaryOps = map[tensor.BinaryOp]BinaryOp{tensor.BinaryAdd: Add, tensor.BinarySub: Sub, tensor.BinaryMul: Mul, tensor.BinaryDiv: Div}

func (w elementwise[T]) Binary(op tensor.BinaryOp, z, x, y *tensor.Tensor[T]) {
	bop, ok := binaryOps[op]
	if !ok {
		panic(fmt.Sprintf("cuda: Binary: unknown op %d", op))
	}
	xs, ys := x.Shape(), y.Shape()
	o, ok := tensor.BroadcastShape(xs, ys)
	if !ok {
		panic(shapeError("Binary", "shapes %v and %v do not broadcast", xs, ys))
	}
	if !slices.Equal(z.Shape(), o) {
		panic(shapeError("Binary", "destination shape %v for operands of shapes %v and %v (broadcast %v)", z.Shape(), xs, ys, o))
	}
	if z.Len() == 0 {
		return
	}
	runs, ix, iy, nx, ny, no := bcastSplit(collapse(xs, ys, o))
	b := w.b
	b.lock()
	defer b.unlock()
	b.tick()
	dx, dy := dev(in(b, x), x), dev(in(b, y), y)
	dz := dev(out(b, z, false), z)
	for _, r := range runs {
		must(Binary(w.k, bop, part(dz, r.oo, no), part(dx, r.ox, nx), part(dy, r.oy, ny), ix, iy))
	}
	produced(b, z)
}

func (w elementwise[T]) BinaryBackward(op tensor.BinaryOp, side int, z, g, x, y, o *tensor.Tensor[T], accumulate bool) {
	bop, ok := binaryOps[op]
	if !ok || side != 0 && side != 1 {
		panic(fmt.Sprintf("cuda: BinaryBackward: unknown op %d or side %d", op, side))
	}
	xs, ys := x.Shape(), y.Shape()
	bs, ok := tensor.BroadcastShape(xs, ys)
	if !ok {
		panic(shapeError("BinaryBackward", "shapes %v and %v do not broadcast", xs, ys))
	}
	if !slices.Equal(g.Shape(), bs) {
		panic(shapeError("BinaryBackward", "gradient of shape %v for operands of shapes %v and %v (broadcast %v)", g.Shape(), xs, ys, bs))
	}
	want := xs
	if side == 1 {
		want = ys
	}
	if !slices.Equal(z.Shape(), want) {
		panic(shapeError("BinaryBackward", "destination shape %v for the gradient of operand %d of shapes %v and %v", z.Shape(), side, xs, ys))
	}
	readOut := op == tensor.BinaryDiv && side == 1
	if readOut && !slices.Equal(o.Shape(), bs) {
		panic(shapeError("BinaryBackward", "output of shape %v for operands of shapes %v and %v (broadcast %v)", o.Shape(), xs, ys, bs))
	}
	if z.Len() == 0 || accumulate && g.Len() == 0 {
		return
	}
	b := w.b
	b.lock()
	defer b.unlock()
	b.tick()
	if g.Len() == 0 { // no terms: z = 0
		must(Fill(w.k, dev(out(b, z, false), z), 0))
		produced(b, z)
		return
	}
	runs, ix, iy, nx, ny, no := bcastSplit(collapse(xs, ys, bs))
	dg := dev(in(b, g), g)
	var dx, dy, do Buffer[T]
	switch {
	case op == tensor.BinaryMul && side == 1:
		dx = dev(in(b, x), x)
	case op == tensor.BinaryMul || op == tensor.BinaryDiv:
		dy = dev(in(b, y), y)
	}
	if readOut {
		do = dev(in(b, o), o)
	}
	dz := dev(out(b, z, accumulate), z)
	for _, r := range runs {
		oz, nz, first := r.ox, nx, r.firstX
		if side == 1 {
			oz, nz, first = r.oy, ny, r.firstY
		}
		must(BinaryBackward(w.k, bop, Side(side), part(dz, oz, nz), part(dg, r.oo, no), part(dx, r.ox, nx), part(dy, r.oy, ny), part(do, r.oo, no), ix, iy, accumulate || !first))
	}
	produced(b, z)
}

func (w elementwise[T]) LinComb(z, base *tensor.Tensor[T], coef []T, xs []*tensor.Tensor[T]) {
	if len(coef) != len(xs) {
		panic(shapeError("LinComb", "%d coefficients for %d terms", len(coef), len(xs)))
	}
	if base != nil {
		mustSameShape("LinComb", z, base)
	}
	for _, x := range xs {
		mustSameShape("LinComb", z, x)
	}
	if z.Len() == 0 {
		return
	}
	b, k := w.b, w.k
	b.lock()
	defer b.unlock()
	b.tick()
	var db Buffer[T]
	if base != nil {
		db = dev(in(b, base), base)
	}
	src := make([]Buffer[T], len(xs))
	for j, x := range xs {
		src[j] = dev(in(b, x), x)
	}
	dz := dev(out(b, z, false), z)
	m := min(len(xs), MaxTerms)
	must(LinComb(k, dz, db, coef[:m], src[:m]))
	for j := m; j < len(xs); j += MaxTerms {
		hi := min(j+MaxTerms, len(xs))
		must(LinComb(k, dz, dz, coef[j:hi], src[j:hi]))
	}
	produced(b, z)
}

func (w elementwise[T]) Fill(z *tensor.Tensor[T], v T) {
	b := w.b
	b.lock()
	defer b.unlock()
	b.tick()
	must(Fill(w.k, dev(out(b, z, false), z), v))
	produced(b, z)
}

func (w elementwise[T]) Copy(z, x *tensor.Tensor[T]) {
	if z.Len() != x.Len() {
		panic(shapeError("Copy", "shapes %v and %v do not match (%d and %d elements)", z.Shape(), x.Shape(), z.Len(), x.Len()))
	}
	b := w.b
	b.lock()
	defer b.unlock()
	b.tick()
	dx := dev(in(b, x), x)
	dz := dev(out(b, z, false), z)
	if dz.ptr != dx.ptr { // else z's elements are x's
		must(Copy(w.k, dz, dx))
	}
	produced(b, z)
}

// axisReduction runs the reduction f of x along axis into z on the shape
// [outer, n, inner] around the axis, after checking the shapes as the
// tensor methods do (and for a max, an axis of some elements).
func axisReduction[T tensor.Float](w elementwise[T], name string, f func(*Kernels, Buffer[T], Buffer[T], []int, int) error, z, x *tensor.Tensor[T], axis int, isMax bool) {
	xs := x.Shape()
	ax := axis
	if ax < 0 {
		ax += len(xs)
	}
	if ax < 0 || ax >= len(xs) {
		panic(shapeError(name, "axis %d out of range for shape %v", axis, xs))
	}
	want := append(slices.Clone(xs[:ax]), xs[ax+1:]...)
	if !slices.Equal(z.Shape(), want) || isMax && xs[ax] == 0 {
		panic(shapeError(name, "destination shape %v does not fit the reduction of shape %v over axis %d", z.Shape(), xs, ax))
	}
	if z.Len() == 0 {
		return
	}
	outer, inner := 1, 1
	for _, d := range xs[:ax] {
		outer *= d
	}
	for _, d := range xs[ax+1:] {
		inner *= d
	}
	b := w.b
	b.lock()
	defer b.unlock()
	b.tick()
	dx := dev(in(b, x), x)
	dz := dev(out(b, z, false), z)
	must(f(w.k, dz, dx, []int{outer, xs[ax], inner}, 1))
	produced(b, z)
}

func (w elementwise[T]) SumAxis(z, x *tensor.Tensor[T], axis int) {
	axisReduction(w, "SumAxis", SumAxis[T], z, x, axis, false)
}

func (w elementwise[T]) MeanAxis(z, x *tensor.Tensor[T], axis int) {
	axisReduction(w, "MeanAxis", MeanAxis[T], z, x, axis, false)
}

func (w elementwise[T]) MaxAxis(z, x *tensor.Tensor[T], axis int) {
	axisReduction(w, "MaxAxis", MaxAxis[T], z, x, axis, true)
}

func (w elementwise[T]) SumPerChannel(z, x *tensor.Tensor[T], accumulate bool) {
	xs := x.Shape()
	if z.Rank() != 1 || len(xs) < 2 || xs[1] != z.Len() {
		panic(shapeError("SumPerChannel", "per-channel shape %v does not fit tensor shape %v (want [B, C, ...] and [C])", z.Shape(), xs))
	}
	c := z.Len()
	if c == 0 || accumulate && x.Len() == 0 {
		return
	}
	inner := 1
	for _, d := range xs[2:] {
		inner *= d
	}
	b := w.b
	b.lock()
	defer b.unlock()
	b.tick()
	if x.Len() == 0 { // no terms: z = 0
		must(Fill(w.k, dev(out(b, z, false), z), 0))
		produced(b, z)
		return
	}
	dx := dev(in(b, x), x)
	dz := dev(out(b, z, accumulate), z)
	must(ChannelSums(w.k, dz, dx, xs[0], c, inner, accumulate))
	produced(b, z)
}

// sum runs the whole-tensor sum op (0 Σx, 1 Σx², 2 Σx·y) into an element
// of the kernels' scratch memory and copies it to the host.
func (w elementwise[T]) sum(op int, x, y *tensor.Tensor[T]) float64 {
	b, k := w.b, w.k
	b.lock()
	defer b.unlock()
	b.tick()
	dx := dev(in(b, x), x)
	// The error norms' first result slot: free between calls, which b.mu
	// keeps apart.
	dst := Buffer[T]{ptr: k.normSlot(0), n: 1}
	switch op {
	case 0:
		must(Sum(k, dst, dx))
	case 1:
		must(SumSquares(k, dst, dx))
	default:
		must(Dot(k, dst, dx, dev(in(b, y), y)))
	}
	var r [1]T
	must(Download(k, r[:], dst))
	return float64(r[0])
}

func (w elementwise[T]) Sum(x *tensor.Tensor[T]) float64        { return w.sum(0, x, nil) }
func (w elementwise[T]) SumSquares(x *tensor.Tensor[T]) float64 { return w.sum(1, x, nil) }

func (w elementwise[T]) Dot(x, y *tensor.Tensor[T]) float64 {
	mustSameShape("Dot", x, y)
	return w.sum(2, x, y)
}

func (w elementwise[T]) ErrorNorm(e, y0, y1 *tensor.Tensor[T], atol, rtol T, parts []int) (rms float64, finite bool) {
	mustSameShape("ErrorNorm", e, y0)
	mustSameShape("ErrorNorm", e, y1)
	total := 0
	for _, p := range parts {
		if p < 0 {
			total = -1
			break
		}
		total += p
	}
	if len(parts) > 0 && total != e.Len() {
		panic(shapeError("ErrorNorm", "parts %v for tensors of shape %v (%d elements)", parts, e.Shape(), e.Len()))
	}
	b, k := w.b, w.k
	b.lock()
	defer b.unlock()
	b.tick()
	de, d0, d1 := dev(in(b, e), e), dev(in(b, y0), y0), dev(in(b, y1), y1)
	if len(parts) == 0 {
		n, err := ErrorNorm(k, de, d0, d1, atol, rtol)
		must(err)
		return n.RMS, !n.NonFinite()
	}
	var res Norm
	off := 0
	for i := 0; i < len(parts); i += MaxNormParts {
		ps := parts[i:min(i+MaxNormParts, len(parts))]
		m := 0
		for _, p := range ps {
			m += p
		}
		n, err := MixedErrorNorm(k, de.Slice(off, off+m), d0.Slice(off, off+m), d1.Slice(off, off+m), atol, rtol, ps)
		must(err)
		res.NaN += n.NaN
		res.Inf += n.Inf
		if !(n.RMS <= res.RMS) { // NaN wins
			res.RMS = n.RMS
		}
		off += m
	}
	switch {
	case res.NaN > 0:
		res.RMS = math.NaN()
	case res.Inf > 0:
		res.RMS = math.Inf(1)
	}
	return res.RMS, !res.NonFinite()
}

// ArgMaxAxis is tensor.ArgMaxer's: tensor.ArgMax of x along axis, computed
// by the ArgMaxAxis kernel on x's device copy (x uploaded only when its
// storage changed since its last upload), of which only the indices come
// to the host (4 bytes each). An axis out of range or of size 0 panics
// with a *tensor.ShapeError, as tensor.ArgMax does.
func (w elementwise[T]) ArgMaxAxis(x *tensor.Tensor[T], axis int) []int {
	xs := x.Shape()
	ax := axis
	if ax < 0 {
		ax += len(xs)
	}
	if ax < 0 || ax >= len(xs) {
		panic(shapeError("ArgMaxAxis", "axis %d out of range for shape %v", axis, xs))
	}
	if xs[ax] == 0 {
		panic(shapeError("ArgMaxAxis", "empty axis %d of shape %v", ax, xs))
	}
	outer, inner := 1, 1
	for _, d := range xs[:ax] {
		outer *= d
	}
	for _, d := range xs[ax+1:] {
		inner *= d
	}
	idx := make([]int, outer*inner)
	if len(idx) == 0 {
		return idx
	}
	b := w.b
	b.lock()
	defer b.unlock()
	b.tick()
	must(ArgMaxAxis(w.k, idx, dev(in(b, x), x), []int{outer, xs[ax], inner}, 1))
	return idx
}

// CopyBlocks is tensor.BlockCopier's: for b in [0, s.Count) and i in
// [0, s.Len), z[s.ZOff + b·s.ZStride + i] = a·x[s.XOff + b·s.XStride + i],
// or z[…] + a·x[…] with accumulate, by the CopyBlocks kernel on the
// tensors' device copies: tensor.CopyBlocks's results bit for bit. z's
// other elements keep their values, so z's device copy must hold them:
// unless the blocks cover all of z and are set (not accumulated), z is
// read as an operand (uploaded only when its storage changed since its
// last upload, or written in place where the device holds a newer copy of
// its whole storage). s is checked first with tensor.CheckBlocks: a misfit
// panics with a *tensor.ShapeError naming cuda.CopyBlocks, the shapes and
// the ranges.
func (w elementwise[T]) CopyBlocks(z, x *tensor.Tensor[T], a T, s tensor.Blocks, accumulate bool) {
	tensor.CheckBlocks("cuda.CopyBlocks", z, x, s)
	if s.Count == 0 || s.Len == 0 {
		return
	}
	whole := !accumulate && s.ZOff == 0 && (s.Count == 1 || s.ZStride == s.Len) && s.Count*s.Len == z.Len()
	b := w.b
	b.lock()
	defer b.unlock()
	b.tick()
	dx := dev(in(b, x), x)
	dz := dev(out(b, z, !whole), z)
	must(CopyBlocks(w.k, dz, dx, a, s, accumulate))
	produced(b, z)
}
