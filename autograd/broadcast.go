package autograd

import (
	"fmt"

	"github.com/adamnode/adamnode/tensor"
)

// Broadcasting follows PyTorch's (and NumPy's) rule: two shapes are
// aligned at their last axes, a missing leading axis counts as size 1, and
// each pair of sizes must be equal or one of them 1; the result takes the
// larger size of each pair. An operand broadcast along an axis receives
// the sum of the gradient over that axis.

// bcastStrides returns, per axis of out, the element stride of an operand
// of shape s broadcast to out: 0 along the axes it is broadcast on.
func bcastStrides(s, out []int) []int {
	st := make([]int, len(out))
	stride := 1
	for i := len(out) - 1; i >= 0; i-- {
		j := len(s) - len(out) + i
		if j >= 0 && s[j] != 1 {
			st[i] = stride
		}
		if j >= 0 {
			stride *= s[j]
		}
	}
	return st
}

// bcastRows calls row(o, ox, oy, ix, iy, n) for each run of the last axis of
// out: n output elements from offset o, the operands' elements from ox and
// oy with strides ix and iy (1 or 0).
func bcastRows(out, sx, sy []int, row func(o, ox, oy, ix, iy, n int)) {
	r := len(out)
	if r == 0 {
		row(0, 0, 0, 0, 0, 1)
		return
	}
	total := 1
	for _, d := range out {
		total *= d
	}
	n := out[r-1]
	if total == 0 || n == 0 {
		return
	}
	idx := make([]int, r)
	ox, oy := 0, 0
	for o := 0; o < total; o += n {
		row(o, ox, oy, sx[r-1], sy[r-1], n)
		for a := r - 2; a >= 0; a-- {
			idx[a]++
			ox += sx[a]
			oy += sy[a]
			if idx[a] < out[a] {
				break
			}
			ox -= sx[a] * out[a]
			oy -= sy[a] * out[a]
			idx[a] = 0
		}
	}
}

// broadcastBinary records z = x ∘ y for operands of different shapes that
// broadcast, panicking with a *tensor.ShapeError naming both when they do
// not.
func broadcastBinary[T tensor.Float](t *Tape[T], op string, k binKind, xe, ye *entry[T]) Var[T] {
	xs, ys := xe.value.Shape(), ye.value.Shape()
	out, ok := tensor.BroadcastShape(xs, ys)
	if !ok {
		panic(&tensor.ShapeError{Op: "autograd." + op, Msg: fmt.Sprintf("shapes %v and %v do not broadcast", xs, ys)})
	}
	z := t.arena.get(out...)
	if t.onDevice {
		t.ew.Binary(binOps[k], z, xe.value, ye.value)
		e := t.record(op, z, bcastRule[T]{}, xe, ye, nil)
		e.n[0] = int(k)
		return t.varOf(e)
	}
	zd, xd, yd := z.Data(), xe.value.Data(), ye.value.Data()
	bcastRows(out, bcastStrides(xs, out), bcastStrides(ys, out), func(o, ox, oy, ix, iy, n int) {
		for i := range n {
			a, b := xd[ox+i*ix], yd[oy+i*iy]
			switch k {
			case binAdd:
				zd[o+i] = a + b
			case binSub:
				zd[o+i] = a - b
			case binMul:
				zd[o+i] = a * b
			case binDiv:
				zd[o+i] = a / b
			}
		}
	})
	e := t.record(op, z, bcastRule[T]{}, xe, ye, nil)
	e.n[0] = int(k)
	return t.varOf(e)
}

// bcastRule is the backward of a broadcast binary op (its kind in n[0]):
// each operand's gradient is the output's, times the op's partial
// derivative, summed over the axes the operand was broadcast along.
type bcastRule[T tensor.Float] struct{}

func (bcastRule[T]) backward(t *Tape[T], e *entry[T]) {
	k := binKind(e.n[0])
	if t.onDevice {
		t.ewBinaryGrad(k, e)
		return
	}
	x, y := e.in[0], e.in[1]
	out := e.value.Shape()
	sx, sy := bcastStrides(x.value.Shape(), out), bcastStrides(y.value.Shape(), out)
	g, xd, yd, zd := e.grad.Data(), x.value.Data(), y.value.Data(), e.value.Data()
	for side, v := range []*entry[T]{x, y} {
		dst, acc := t.gradDst(v)
		if dst == nil {
			continue
		}
		if !acc {
			dst.Zero()
		}
		d := dst.Data()
		bcastRows(out, sx, sy, func(o, ox, oy, ix, iy, n int) {
			for i := range n {
				gi, xi, yi := g[o+i], ox+i*ix, oy+i*iy
				var c T
				switch {
				case k == binAdd, k == binSub && side == 0:
					c = gi
				case k == binSub:
					c = -gi
				case k == binMul && side == 0:
					c = gi * yd[yi]
				case k == binMul:
					c = gi * xd[xi]
				case side == 0: // Div
					c = gi / yd[yi]
				default:
					c = -gi * zd[o+i] / yd[yi]
				}
				if side == 0 {
					d[xi] += c
				} else {
					d[yi] += c
				}
			}
		})
	}
}
