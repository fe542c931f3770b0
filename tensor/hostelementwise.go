package tensor

import (
	"fmt"
	"math"
	"slices"
)

// HostElementwise returns the CPU engines' Elementwise without their
// workers: every method on the calling goroutine, in host memory, with this
// package's own methods and the formulas autograd uses. It is the
// reference for a device engine's Elementwise (package enginetest's fakes
// and package cuda's tests compare with it), and the same code as what
// ElementwiseOf returns for a CPU engine, which splits large tensors
// (from 2¹⁶ elements) across the engine's workers; the elementwise results
// are the same either way.
//
// The maps are the tensor methods of their names (Tanh, Sigmoid, Exp,
// ReLU, Softplus, Log, Sqrt, Square, Neg, LeakyReLU, Hardtanh for
// Hardtanh and Clamp, Scale, AddScalar) and, where there is none,
// autograd's: |x|, sin x, cos x and x^a in float64 rounded to T, ELU's
// a·expm1(x) with expm1 in float64 rounded before the product. Their
// backward maps are the tensor methods (TanhBackward, SigmoidBackward,
// SoftplusBackward, ReLUBackward, LeakyReLUBackward) or autograd's rules,
// g times the rounded factor: Exp g·y, Log g·(1/x), Sqrt g·(1/(2y)),
// Square g·(2x), Neg −1·g, Abs g·sign x (0 at 0 and NaN), Sin g·cos x, Cos
// g·(−sin x), Hardtanh g·[a < x < b], Clamp g·[a ≤ x ≤ b], ELU from its
// output g·(1 where y > 0, y + a elsewhere) (a ≥ 0), Pow g·(a·x^(a−1)) (0
// for a = 0), Scale a·g, AddScalar g.
//
// Binary and BinaryBackward broadcast by NumPy's rule with any number of
// dimensions; the gradient's terms are added in T in the output's
// row-major order to 0 (or, with accumulate, to z), as autograd's
// broadcast rule does, and set directly when the operands share a shape,
// as its elementwise rules do (Sub's y side −1·g, Div's g/y and −g·out/y).
// LinComb is LinearCombination's arithmetic, with no base the first term's
// product itself (not 0 + it). The reductions are SumAxis and MaxAxis,
// MeanAxis the sum divided by the axis's length in T; SumPerChannel is
// autograd's bias gradient (AddColumnSums for an inner size of 1, else
// float64 sums per channel). Sum, SumSquares and Dot add in float64 in
// order (Sum through SumSlice), and ErrorNorm forms each ratio in T as the
// CPU solvers do (in float64 where a float32 ratio of finite operands
// overflows) and sums the squares in float64, scaled by the largest. It is
// also a BlockCopier, whose CopyBlocks is the package function CopyBlocks.
func HostElementwise[T Float]() Elementwise[T] { return hostElementwise[T]{} }

// hostElementwise is the CPU engines' Elementwise: eng's workers take the
// elementwise methods' large tensors (parallelMin), and with eng nil
// (HostElementwise) everything runs on the calling goroutine.
type hostElementwise[T Float] struct{ eng *cpuEngine[T] }

// parallelMin is the number of elements from which the CPU Elementwise
// splits its elementwise work across the engine's workers (Parallel);
// below it, the split costs more than it saves. The hand-off itself takes
// about a microsecond while the pool's workers poll, but a map is bound by
// memory, and the other core has to fetch its half of operands the calling
// core just wrote: at 2¹⁴, MLP fields of width 32 at batch 512
// (16384-element maps) trained 19% slower (mlpbench, 7 alternating runs).
// The split allocates its closure (but LinComb's and Copy's, whose jobs
// the engine pools), so small ops, which dominate overhead-bound models,
// allocate nothing.
const parallelMin = 1 << 16

// split returns the engine whose workers take n elements, or nil when the
// work stays on the calling goroutine.
func (h hostElementwise[T]) split(n int) *cpuEngine[T] {
	if h.eng != nil && h.eng.workers > 1 && n >= parallelMin {
		return h.eng
	}
	return nil
}

// flatPart returns elements [lo, hi) of x as a one-dimensional view in one
// allocation; nil for a nil x.
func flatPart[T Float](x *Tensor[T], lo, hi int) *Tensor[T] {
	if x == nil {
		return nil
	}
	n := hi - lo
	p := &partView[T]{n: [1]int{n}}
	p.t = Tensor[T]{shape: p.n[:], data: x.data[lo : lo+n : lo+n], st: x.storage()}
	return &p.t
}

// partView is flatPart's view with its shape.
type partView[T Float] struct {
	t Tensor[T]
	n [1]int
}

func (h hostElementwise[T]) Map(op MapOp, z, x *Tensor[T], a, b T) {
	if op < 0 || op >= NumMapOps {
		panic(fmt.Sprintf("tensor.HostElementwise: Map: unknown %v", op))
	}
	if e := h.split(z.Len()); e != nil {
		mustSameShape("HostElementwise.Map", z.shape, x.shape)
		e.Parallel(z.Len(), func(lo, hi int) { hostMap(op, flatPart(z, lo, hi), flatPart(x, lo, hi), a, b) })
		return
	}
	hostMap(op, z, x, a, b)
}

// hostMap sets z = op(x) with parameters a and b, op a known map.
func hostMap[T Float](op MapOp, z, x *Tensor[T], a, b T) {
	switch op {
	case MapTanh:
		z.Tanh(x)
	case MapSigmoid:
		z.Sigmoid(x)
	case MapExp:
		z.Exp(x)
	case MapReLU:
		z.ReLU(x)
	case MapSoftplus:
		z.Softplus(x)
	case MapLog:
		z.Log(x)
	case MapSqrt:
		z.Sqrt(x)
	case MapSquare:
		z.Square(x)
	case MapNeg:
		z.Neg(x)
	case MapAbs:
		z.wrote()
		unary64("Abs", z, x, math.Abs)
	case MapSin:
		z.wrote()
		unary64("Sin", z, x, math.Sin)
	case MapCos:
		z.wrote()
		unary64("Cos", z, x, math.Cos)
	case MapLeakyReLU:
		z.LeakyReLU(x, a)
	case MapHardtanh, MapClamp:
		z.Hardtanh(x, a, b)
	case MapELU:
		z.wrote()
		unary("ELU", z, x, func(v T) T {
			if v > 0 {
				return v
			}
			return a * T(math.Expm1(float64(v)))
		})
	case MapPow:
		p := float64(a)
		z.wrote()
		unary64("Pow", z, x, func(v float64) float64 { return math.Pow(v, p) })
	case MapScale:
		z.Scale(x, a)
	default: // MapAddScalar (Map checked op)
		z.AddScalar(x, a)
	}
}

func (h hostElementwise[T]) MapBackward(op MapOp, z, g, u *Tensor[T], a, b T, accumulate bool) {
	checkBackwardMap(op, a, b)
	if e := h.split(z.Len()); e != nil {
		name := "HostElementwise.MapBackward"
		mustSameShape(name, z.shape, g.shape)
		if readsU(op) {
			mustSameShape(name, z.shape, u.shape)
		} else {
			u = nil
		}
		e.Parallel(z.Len(), func(lo, hi int) {
			hostMapBackward(op, flatPart(z, lo, hi), flatPart(g, lo, hi), flatPart(u, lo, hi), a, b, accumulate)
		})
		return
	}
	hostMapBackward(op, z, g, u, a, b, accumulate)
}

// hostMapBackward is MapBackward on the calling goroutine.
func hostMapBackward[T Float](op MapOp, z, g, u *Tensor[T], a, b T, accumulate bool) {
	switch op {
	case MapTanh:
		z.TanhBackward(g, u, accumulate)
		return
	case MapSigmoid:
		z.SigmoidBackward(g, u, accumulate)
		return
	case MapSoftplus:
		z.SoftplusBackward(g, u, accumulate)
		return
	case MapReLU:
		z.ReLUBackward(g, u, accumulate)
		return
	case MapLeakyReLU:
		z.LeakyReLUBackward(g, u, a, accumulate)
		return
	}
	name := "HostElementwise.MapBackward"
	mustSameShape(name, z.shape, g.shape)
	gd := g.host()
	var ud []T
	if readsU(op) {
		mustSameShape(name, z.shape, u.shape)
		ud = u.host()
	}
	z.wrote()
	zd := z.data
	for i := range zd {
		var ui T
		if ud != nil {
			ui = ud[i]
		}
		d := backwardTerm(op, gd[i], ui, a, b)
		if accumulate {
			zd[i] += d
		} else {
			zd[i] = d
		}
	}
}

// checkBackwardMap panics unless op is a map whose backward
// hostElementwise forms element by element, with parameters it accepts.
func checkBackwardMap[T Float](op MapOp, a, b T) {
	if op < 0 || op >= NumMapOps {
		panic(fmt.Sprintf("tensor.HostElementwise: MapBackward: unknown %v", op))
	}
	if op == MapELU && !(a >= 0) {
		panic(fmt.Sprintf("tensor.HostElementwise: MapBackward ELU: α = %v: the gradient from the output needs α ≥ 0", a))
	}
	if (op == MapHardtanh || op == MapClamp) && a > b {
		panic(&ShapeError{Op: "HostElementwise.MapBackward", Msg: fmt.Sprintf("%v: lower bound %v above upper bound %v", op, a, b)})
	}
}

// backwardTerm returns the gradient term g·op′ of one element given u (the
// map's input, or its output for Exp, Sqrt and ELU; not read by Neg, Scale
// and AddScalar), each factor rounded to T before the product.
func backwardTerm[T Float](op MapOp, g, u, a, b T) T {
	switch op {
	case MapExp:
		return g * u
	case MapLog:
		return g * (1 / u)
	case MapSqrt:
		return g * (1 / (2 * u))
	case MapSquare:
		return g * (2 * u)
	case MapNeg:
		return -1 * g
	case MapAbs:
		var s T
		switch {
		case u > 0:
			s = 1
		case u < 0:
			s = -1
		}
		return g * s
	case MapSin:
		return g * T(math.Cos(float64(u)))
	case MapCos:
		return g * T(-math.Sin(float64(u)))
	case MapHardtanh:
		return g * mask[T](u > a && u < b)
	case MapClamp:
		return g * mask[T](u >= a && u <= b)
	case MapELU:
		f := T(1)
		if !(u > 0) {
			f = u + a
		}
		return g * f
	case MapPow:
		var f T
		if p := float64(a); p != 0 {
			f = T(p * math.Pow(float64(u), p-1))
		}
		return g * f
	case MapScale:
		return a * g
	}
	return g // MapAddScalar
}

// readsU reports whether op's backward map reads u (Neg, Scale and
// AddScalar do not).
func readsU(op MapOp) bool { return op != MapNeg && op != MapScale && op != MapAddScalar }

// mask returns 1 if c, else 0.
func mask[T Float](c bool) T {
	if c {
		return 1
	}
	return 0
}

// BroadcastShape returns the shape that operands of shapes x and y
// broadcast to by NumPy's rule (shapes aligned at their last axes, a
// missing leading axis of size 1, each pair of sizes equal or one of them
// 1, the result the larger), and false when they do not broadcast.
func BroadcastShape(x, y []int) ([]int, bool) {
	r := max(len(x), len(y))
	out := make([]int, r)
	for i := range r {
		a, c := 1, 1
		if j := len(x) - r + i; j >= 0 {
			a = x[j]
		}
		if j := len(y) - r + i; j >= 0 {
			c = y[j]
		}
		switch {
		case a == c || c == 1:
			out[i] = a
		case a == 1:
			out[i] = c
		default:
			return nil, false
		}
	}
	return out, true
}

// bcastPlan is the broadcast of two shapes: the output's shape and each
// operand's element strides along the output's axes (0 where broadcast).
type bcastPlan struct {
	out, sx, sy []int
}

// planBroadcast returns the broadcast of x and y, panicking with a
// *ShapeError naming op when they do not broadcast.
func planBroadcast(op string, x, y []int) bcastPlan {
	out, ok := BroadcastShape(x, y)
	if !ok {
		panic(&ShapeError{Op: op, Msg: fmt.Sprintf("shapes %v and %v do not broadcast", x, y)})
	}
	strides := func(s []int) []int {
		st := make([]int, len(out))
		n := 1
		for i := len(out) - 1; i >= 0; i-- {
			if j := len(s) - len(out) + i; j >= 0 {
				if s[j] != 1 {
					st[i] = n
				}
				n *= s[j]
			}
		}
		return st
	}
	return bcastPlan{out: out, sx: strides(x), sy: strides(y)}
}

// rows calls row(o, ox, oy, ix, iy, n) for each run of the output's last
// axis in row-major order: n output elements from offset o, the operands'
// elements from ox and oy with strides ix and iy (1 or 0).
func (p bcastPlan) rows(row func(o, ox, oy, ix, iy, n int)) {
	r := len(p.out)
	if r == 0 {
		row(0, 0, 0, 0, 0, 1)
		return
	}
	total := 1
	for _, d := range p.out {
		total *= d
	}
	n := p.out[r-1]
	if total == 0 {
		return
	}
	var buf [8]int
	idx := append(buf[:0], make([]int, r)...) // on the stack up to rank 8
	ox, oy := 0, 0
	for o := 0; o < total; o += n {
		row(o, ox, oy, p.sx[r-1], p.sy[r-1], n)
		for a := r - 2; a >= 0; a-- {
			idx[a]++
			ox += p.sx[a]
			oy += p.sy[a]
			if idx[a] < p.out[a] {
				break
			}
			ox -= p.sx[a] * p.out[a]
			oy -= p.sy[a] * p.out[a]
			idx[a] = 0
		}
	}
}

func (h hostElementwise[T]) Binary(op BinaryOp, z, x, y *Tensor[T]) {
	if slices.Equal(x.shape, y.shape) && slices.Equal(z.shape, x.shape) {
		if op < BinaryAdd || op > BinaryDiv {
			panic(fmt.Sprintf("tensor.HostElementwise: Binary: unknown op %d", op))
		}
		if e := h.split(z.Len()); e != nil {
			e.Parallel(z.Len(), func(lo, hi int) { binarySame(op, flatPart(z, lo, hi), flatPart(x, lo, hi), flatPart(y, lo, hi)) })
			return
		}
		binarySame(op, z, x, y)
		return
	}
	if len(y.data) == 1 && len(y.shape) <= len(x.shape) && slices.Equal(z.shape, x.shape) {
		// A one-element y (a scalar operand) broadcast: the tensor
		// methods' loops rather than the general broadcast.
		if op < BinaryAdd || op > BinaryDiv {
			panic(fmt.Sprintf("tensor.HostElementwise: Binary: unknown op %d", op))
		}
		binaryScalar(op, z, x, y.host()[0])
		return
	}
	name := "HostElementwise.Binary"
	p := planBroadcast(name, x.shape, y.shape)
	if !slices.Equal(z.shape, p.out) {
		panic(&ShapeError{Op: name, Msg: fmt.Sprintf("destination shape %v for operands of shapes %v and %v (broadcast %v)", z.shape, x.shape, y.shape, p.out)})
	}
	if op < BinaryAdd || op > BinaryDiv {
		panic(fmt.Sprintf("tensor.HostElementwise: Binary: unknown op %d", op))
	}
	xd, yd := x.host(), y.host()
	z.wrote()
	zd := z.data
	p.rows(func(o, ox, oy, ix, iy, n int) {
		for i := range n {
			a, c := xd[ox+i*ix], yd[oy+i*iy]
			switch op {
			case BinaryAdd:
				zd[o+i] = a + c
			case BinarySub:
				zd[o+i] = a - c
			case BinaryMul:
				zd[o+i] = a * c
			default:
				zd[o+i] = a / c
			}
		}
	})
}

// binaryScalar sets z = x op s of x's shape: x + s, x + (−s) (the same
// bits as x − s), s·x or x/s.
func binaryScalar[T Float](op BinaryOp, z, x *Tensor[T], s T) {
	switch op {
	case BinaryAdd:
		z.AddScalar(x, s)
	case BinarySub:
		z.AddScalar(x, -s)
	case BinaryMul:
		z.Scale(x, s)
	default:
		xd := x.host()
		z.wrote()
		for i, v := range xd[:len(z.data)] {
			z.data[i] = v / s
		}
	}
}

// binarySame sets z = x op y of one shape with the tensor methods.
func binarySame[T Float](op BinaryOp, z, x, y *Tensor[T]) {
	switch op {
	case BinaryAdd:
		z.Add(x, y)
	case BinarySub:
		z.Sub(x, y)
	case BinaryMul:
		z.Mul(x, y)
	default:
		z.Div(x, y)
	}
}

func (h hostElementwise[T]) BinaryBackward(op BinaryOp, side int, z, g, x, y, out *Tensor[T], accumulate bool) {
	name := "HostElementwise.BinaryBackward"
	if op < BinaryAdd || op > BinaryDiv || side != 0 && side != 1 {
		panic(fmt.Sprintf("tensor.HostElementwise: BinaryBackward: unknown op %d or side %d", op, side))
	}
	want := x.shape
	if side == 1 {
		want = y.shape
	}
	if slices.Equal(x.shape, y.shape) {
		// One shape: autograd's elementwise rules, no broadcast planned.
		checkBinaryGrad(name, side, z, g, x, y, x.shape, want)
		if op == BinaryDiv && side == 1 {
			mustSameShape(name, out.shape, g.shape)
		}
		if e := h.split(z.Len()); e != nil {
			e.Parallel(z.Len(), func(lo, hi int) {
				binaryGradSame(op, side, flatPart(z, lo, hi), flatPart(g, lo, hi), flatPart(x, lo, hi), flatPart(y, lo, hi), flatPart(out, lo, hi), accumulate)
			})
			return
		}
		binaryGradSame(op, side, z, g, x, y, out, accumulate)
		return
	}
	p := planBroadcast(name, x.shape, y.shape)
	checkBinaryGrad(name, side, z, g, x, y, p.out, want)
	gd := g.host()
	var xd, yd, od []T
	switch {
	case op == BinaryMul && side == 1:
		xd = x.host()
	case op == BinaryMul || op == BinaryDiv:
		yd = y.host()
	}
	if op == BinaryDiv && side == 1 {
		if !slices.Equal(out.shape, p.out) {
			panic(&ShapeError{Op: name, Msg: fmt.Sprintf("output of shape %v for operands of shapes %v and %v (broadcast %v)", out.shape, x.shape, y.shape, p.out)})
		}
		od = out.host()
	}
	z.wrote()
	zd := z.data
	if !accumulate {
		clear(zd)
	}
	p.rows(func(o, ox, oy, ix, iy, n int) {
		for i := range n {
			gi, xi, yi := gd[o+i], ox+i*ix, oy+i*iy
			var c T
			switch {
			case op == BinaryAdd, op == BinarySub && side == 0:
				c = gi
			case op == BinarySub:
				c = -gi
			case op == BinaryMul && side == 0:
				c = gi * yd[yi]
			case op == BinaryMul:
				c = gi * xd[xi]
			case side == 0:
				c = gi / yd[yi]
			default:
				c = -gi * od[o+i] / yd[yi]
			}
			if side == 0 {
				zd[xi] += c
			} else {
				zd[yi] += c
			}
		}
	})
}

// checkBinaryGrad panics unless BinaryBackward's gradient g has the
// broadcast shape out and its destination z the shape want of operand
// side.
func checkBinaryGrad[T Float](name string, side int, z, g, x, y *Tensor[T], out, want []int) {
	if !slices.Equal(g.shape, out) {
		panic(&ShapeError{Op: name, Msg: fmt.Sprintf("gradient of shape %v for operands of shapes %v and %v (broadcast %v)", g.shape, x.shape, y.shape, out)})
	}
	if !slices.Equal(z.shape, want) {
		panic(&ShapeError{Op: name, Msg: fmt.Sprintf("destination shape %v for the gradient of operand %d of shapes %v and %v", z.shape, side, x.shape, y.shape)})
	}
}

// binaryGradSame is BinaryBackward for operands of one shape (z, g, x, y
// and out all of it): z set to, or with acc added, g (Add, Sub's x), −1·g
// (Sub's y), g⊙y or g⊙x (Mul), g/y or −g·out/y (Div), autograd's
// elementwise rules.
func binaryGradSame[T Float](op BinaryOp, side int, z, g, x, y, out *Tensor[T], acc bool) {
	gd := g.host()
	var ad, bd []T
	switch {
	case op == BinaryMul && side == 0:
		ad = y.host()
	case op == BinaryMul:
		ad = x.host()
	case op == BinaryDiv && side == 0:
		ad = y.host()
	case op == BinaryDiv:
		ad, bd = out.host(), y.host()
	}
	z.wrote()
	d := z.data
	switch {
	case op == BinaryAdd, op == BinarySub && side == 0:
		scaledInto(d, acc, 1, gd)
	case op == BinarySub:
		scaledInto(d, acc, -1, gd)
	case op == BinaryMul:
		mulInto(d, acc, gd, ad)
	case side == 0:
		divInto(d, acc, gd, ad)
	default:
		gd, ad, bd = gd[:len(d)], ad[:len(d)], bd[:len(d)]
		for i := range d {
			v := -gd[i] * ad[i] / bd[i]
			if acc {
				d[i] += v
			} else {
				d[i] = v
			}
		}
	}
}

// scaledInto sets d = a·s, or adds it with acc.
func scaledInto[T Float](d []T, acc bool, a T, s []T) {
	s = s[:len(d)]
	switch {
	case acc && a == 1:
		for i, x := range s {
			d[i] += x
		}
	case acc:
		for i, x := range s {
			d[i] += T(a * x) // rounded before the sum: no fused multiply-add on arm64
		}
	case a == 1:
		copy(d, s)
	default:
		for i, x := range s {
			d[i] = a * x
		}
	}
}

// mulInto sets d = g ⊙ m, or adds it with acc.
func mulInto[T Float](d []T, acc bool, gs, ms []T) {
	gs, ms = gs[:len(d)], ms[:len(d)]
	if acc {
		for i := range d {
			d[i] += T(gs[i] * ms[i]) // rounded before the sum: no fused multiply-add on arm64
		}
		return
	}
	for i := range d {
		d[i] = gs[i] * ms[i]
	}
}

// divInto sets d = g ⊘ m, or adds it with acc.
func divInto[T Float](d []T, acc bool, gs, ms []T) {
	gs, ms = gs[:len(d)], ms[:len(d)]
	if acc {
		for i := range d {
			d[i] += gs[i] / ms[i]
		}
		return
	}
	for i := range d {
		d[i] = gs[i] / ms[i]
	}
}

func (h hostElementwise[T]) LinComb(z, base *Tensor[T], coef []T, xs []*Tensor[T]) {
	name := "HostElementwise.LinComb"
	if len(coef) != len(xs) {
		panic(&ShapeError{Op: name, Msg: fmt.Sprintf("%d coefficients for %d terms", len(coef), len(xs))})
	}
	var bd []T
	if base != nil {
		mustSameShape(name, z.shape, base.shape)
		bd = base.host()
	}
	var buf [16][]T // no allocation for up to 16 terms (an integrator stage sum)
	src := buf[:0]
	for _, x := range xs {
		mustSameShape(name, z.shape, x.shape)
		src = append(src, x.host())
	}
	z.wrote()
	if e := h.split(z.Len()); e != nil {
		linCombSplit(e, z.data, bd, coef, src)
		return
	}
	linComb(z.data, bd, coef, src)
}

// linCombSplit is LinComb's linComb with e's workers, each on a band of
// the elements, through a job from e's pool: no allocation a call.
func linCombSplit[T Float](e *cpuEngine[T], zd, bd, coef []T, src [][]T) {
	j, ok := e.linJobs.Get().(*linCombJob[T])
	if !ok {
		j = new(linCombJob[T])
		j.body = j.band
	}
	j.zd, j.bd, j.coef, j.src = zd, bd, coef, append(j.src[:0], src...)
	e.Parallel(len(zd), j.body)
	clear(j.src)
	j.zd, j.bd, j.coef, j.src = nil, nil, nil, j.src[:0]
	e.linJobs.Put(j)
}

// linCombJob is a split LinComb's operands, its band function bound once.
type linCombJob[T Float] struct {
	zd, bd, coef []T
	src          [][]T
	body         func(lo, hi int)
}

// band forms elements [lo, hi) of the combination.
func (j *linCombJob[T]) band(lo, hi int) {
	var buf [16][]T // no allocation for up to 16 terms
	parts := buf[:0]
	for _, s := range j.src {
		parts = append(parts, s[lo:hi])
	}
	var b []T
	if j.bd != nil {
		b = j.bd[lo:hi]
	}
	linComb(j.zd[lo:hi], b, j.coef, parts)
}

// linComb is LinearCombination's arithmetic, with no base the first term's
// product a·x itself rather than 0 + a·x (which differ in a zero's sign).
func linComb[T Float](d, base, coef []T, src [][]T) {
	if base == nil && len(src) > 0 {
		scaledInto(d, false, coef[0], src[0])
		if len(src) == 1 {
			return
		}
		base, coef, src = d, coef[1:], src[1:]
	}
	LinearCombination(d, base, coef, src)
}

func (hostElementwise[T]) Fill(z *Tensor[T], v T) { z.Fill(v) }

func (h hostElementwise[T]) Copy(z, x *Tensor[T]) {
	if e := h.split(z.Len()); e != nil && z.Len() == x.Len() {
		z.wrote()
		j, ok := e.copyJobs.Get().(*copyJob[T])
		if !ok {
			j = new(copyJob[T])
			j.body = j.band
		}
		j.zd, j.xd = z.data, x.host()
		e.Parallel(len(j.zd), j.body)
		j.zd, j.xd = nil, nil
		e.copyJobs.Put(j)
		return
	}
	z.Copy(x)
}

// copyJob is a split Copy's operands, its band function bound once, so
// that a call allocates nothing.
type copyJob[T Float] struct {
	zd, xd []T
	body   func(lo, hi int)
}

// band copies elements [lo, hi).
func (j *copyJob[T]) band(lo, hi int) { copy(j.zd[lo:hi], j.xd[lo:hi]) }

func (hostElementwise[T]) SumAxis(z, x *Tensor[T], axis int) { z.SumAxis(x, axis) }

func (hostElementwise[T]) MeanAxis(z, x *Tensor[T], axis int) {
	z.SumAxis(x, axis)
	_, n, _, _ := axisLayout("MeanAxis", x.shape, axis)
	for i, v := range z.data {
		z.data[i] = v / T(n)
	}
}

func (hostElementwise[T]) MaxAxis(z, x *Tensor[T], axis int) { z.MaxAxis(x, axis) }

func (hostElementwise[T]) SumPerChannel(z, x *Tensor[T], accumulate bool) {
	name := "HostElementwise.SumPerChannel"
	if len(z.shape) != 1 {
		panic(newShapeError(name, z.shape, x.shape))
	}
	c := z.shape[0]
	batch, inner := channelLayout(name, x.shape, c)
	xd := x.host()
	z.wrote()
	d := z.data
	if !accumulate {
		clear(d)
	}
	if inner == 1 {
		AddColumnSums(d, xd[:batch*c])
		return
	}
	for ch := range c {
		var s float64
		for b := range batch {
			off := (b*c + ch) * inner
			s += SumSlice(xd[off : off+inner])
		}
		d[ch] += T(s)
	}
}

func (hostElementwise[T]) Sum(x *Tensor[T]) float64 { return SumSlice(x.host()) }

func (hostElementwise[T]) SumSquares(x *Tensor[T]) float64 {
	var s float64
	for _, v := range x.host() {
		s += float64(v) * float64(v)
	}
	return s
}

func (hostElementwise[T]) Dot(x, y *Tensor[T]) float64 {
	mustSameShape("HostElementwise.Dot", x.shape, y.shape)
	var s float64
	yd := y.host()
	for i, v := range x.host() {
		s += float64(v) * float64(yd[i])
	}
	return s
}

func (hostElementwise[T]) ErrorNorm(e, y0, y1 *Tensor[T], atol, rtol T, parts []int) (rms float64, finite bool) {
	name := "HostElementwise.ErrorNorm"
	mustSameShape(name, e.shape, y0.shape)
	mustSameShape(name, e.shape, y1.shape)
	n := len(e.data)
	whole := [1]int{n}
	if len(parts) == 0 {
		parts = whole[:]
	}
	total := 0
	for _, p := range parts {
		if p < 0 {
			total = -1
			break
		}
		total += p
	}
	if total != n {
		panic(&ShapeError{Op: name, Msg: fmt.Sprintf("parts %v for tensors of shape %v (%d elements)", slices.Clone(parts), e.shape, n)})
	}
	ed, ad, bd := e.host(), y0.host(), y1.host()
	ratio := func(i int) float64 {
		w := atol + rtol*max(absOf(ad[i]), absOf(bd[i]))
		v := float64(ed[i] / w)
		if isNonFinite(v) && !isNonFinite(float64(ed[i])) && !isNonFinite(float64(w)) {
			v = float64(ed[i]) / float64(w) // a float32 ratio that overflows
		}
		return v
	}
	// Each part twice: its largest |ratio| (and whether one is NaN or
	// infinite), then the squares scaled by it; nothing is kept between.
	nan, inf := false, false
	lo := 0
	for _, p := range parts {
		var m float64
		for i := lo; i < lo+p; i++ {
			v := ratio(i)
			nan = nan || math.IsNaN(v)
			inf = inf || math.IsInf(v, 0)
			m = max(m, math.Abs(v))
		}
		if !nan && !inf && m > 0 {
			var s float64
			for i := lo; i < lo+p; i++ {
				q := ratio(i) / m
				s += q * q
			}
			rms = max(rms, m*math.Sqrt(s/float64(p)))
		}
		lo += p
	}
	switch {
	case nan:
		return math.NaN(), false
	case inf:
		return math.Inf(1), false
	}
	return rms, true
}

// absOf returns |v| as the CPU solvers form it (v < 0 ? −v : v).
func absOf[T Float](v T) T {
	if v < 0 {
		return -v
	}
	return v
}

func isNonFinite(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
