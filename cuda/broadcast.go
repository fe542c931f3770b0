package cuda

import (
	"fmt"

	"github.com/adamnode/adamnode/tensor"
)

// BinaryOp names a binary operation for Binary and BinaryBackward.
type BinaryOp int32

const (
	Add BinaryOp = iota // x + y
	Sub                 // x − y
	Mul                 // x·y
	Div                 // x/y
	numBinaryOps
)

func (op BinaryOp) String() string {
	if op >= 0 && op < numBinaryOps {
		return [...]string{"Add", "Sub", "Mul", "Div"}[op]
	}
	return fmt.Sprintf("BinaryOp(%d)", int32(op))
}

// Side names the operand of a binary operation whose gradient
// BinaryBackward forms.
type Side int32

const (
	Left  Side = iota // x
	Right             // y
)

// MaxDims is the most dimensions the broadcasting operations take.
const MaxDims = 4

// bcast is a broadcast of two shapes: the output's sizes and each
// operand's shape and element strides along the output's axes (0 where it
// is broadcast), all right-aligned in MaxDims dimensions.
type bcast struct {
	out, xs, ys, sx, sy [MaxDims]int64
	n, nx, ny           int
}

// broadcast returns the broadcast of xshape and yshape by NumPy's rule
// (shapes aligned at their last axes, missing leading sizes 1, each pair
// equal or one of them 1), or an error naming op and both shapes.
func broadcast(op string, xshape, yshape []int) (bcast, error) {
	var b bcast
	if len(xshape) > MaxDims || len(yshape) > MaxDims {
		return b, fmt.Errorf("cuda: %s: shapes %v and %v: more than %d dimensions", op, xshape, yshape, MaxDims)
	}
	pad := func(s []int) (p [MaxDims]int64, n int, ok bool) {
		n = 1
		for i := range p {
			p[i] = 1
			if j := len(s) - MaxDims + i; j >= 0 {
				if s[j] < 0 {
					return p, 0, false
				}
				p[i] = int64(s[j])
				n *= s[j]
			}
		}
		return p, n, true
	}
	var okx, oky bool
	b.xs, b.nx, okx = pad(xshape)
	b.ys, b.ny, oky = pad(yshape)
	if !okx || !oky {
		return b, fmt.Errorf("cuda: %s: shapes %v and %v: a negative size", op, xshape, yshape)
	}
	b.n = 1
	for i := range MaxDims {
		a, c := b.xs[i], b.ys[i]
		switch {
		case a == c || c == 1:
			b.out[i] = a
		case a == 1:
			b.out[i] = c
		default:
			return b, fmt.Errorf("cuda: %s: shapes %v and %v do not broadcast", op, xshape, yshape)
		}
		b.n *= int(b.out[i])
	}
	sx, sy := int64(1), int64(1)
	for i := MaxDims - 1; i >= 0; i-- {
		if b.xs[i] != 1 {
			b.sx[i] = sx
		}
		if b.ys[i] != 1 {
			b.sy[i] = sy
		}
		sx *= b.xs[i]
		sy *= b.ys[i]
	}
	return b, nil
}

// Binary sets dst = x op y with broadcasting (NumPy's rule, up to MaxDims
// dimensions): x of shape xshape and y of shape yshape, row-major, dst of
// the broadcast shape. Each element is one IEEE operation, as autograd's
// broadcasting ops: the CPU's to the bit. dst may be an operand that is
// not broadcast (whose shape is dst's). Lengths that do not match the
// shapes, and shapes that do not broadcast, are errors.
func Binary[T tensor.Float](k *Kernels, op BinaryOp, dst, x, y Buffer[T], xshape, yshape []int) error {
	if op < 0 || op >= numBinaryOps {
		return fmt.Errorf("cuda: Binary: unknown %v", op)
	}
	name := "Binary " + op.String()
	b, err := broadcast(name, xshape, yshape)
	if err != nil {
		return err
	}
	if dst.n != b.n || x.n != b.nx || y.n != b.ny {
		return fmt.Errorf("cuda: %s: lengths %d, %d and %d for shapes %v, %v and their broadcast %v", name, dst.n, x.n, y.n, xshape, yshape, b.out)
	}
	if b.n == 0 {
		return nil
	}
	if err := k.enter(); err != nil {
		return err
	}
	defer k.leave()
	return k.launch(kernelIndex[T](kBinary), k.gridFor(b.n), uint64(dst.ptr), uint64(x.ptr), uint64(y.ptr), uint64(op), uint64(b.n),
		uint64(b.out[1]), uint64(b.out[2]), uint64(b.out[3]),
		uint64(b.sx[0]), uint64(b.sx[1]), uint64(b.sx[2]), uint64(b.sx[3]),
		uint64(b.sy[0]), uint64(b.sy[1]), uint64(b.sy[2]), uint64(b.sy[3]))
}

// BinaryBackward sets dst, of the shape of operand side of Binary's x op
// y, to its gradient given the output gradient g (of the broadcast shape),
// or adds it to dst with accumulate: for each element of the operand, the
// sum over the output elements it reaches of
//
//	Add  g                Sub  g (Left), −g (Right)
//	Mul  g·y (Left)       g·x (Right)
//	Div  g/y (Left)       (−g·z)/y (Right), z the output x/y
//
// each term rounded, added in T in the output's row-major order to dst's
// value (accumulate) or 0: autograd's broadcast rule, term for term and in
// its order, so the CPU's to the bit. One thread per element of the
// operand, which sums its terms alone: a few elements gathering many (a
// bias's gradient) run on few threads. Buffers the terms do not read may be
// empty: x is read for Mul's Right, y for Mul's Left and Div, z for Div's
// Right. dst must not overlap g or what is read.
func BinaryBackward[T tensor.Float](k *Kernels, op BinaryOp, side Side, dst, g, x, y, z Buffer[T], xshape, yshape []int, accumulate bool) error {
	if op < 0 || op >= numBinaryOps || side != Left && side != Right {
		return fmt.Errorf("cuda: BinaryBackward: unknown %v or side %d", op, side)
	}
	name := "BinaryBackward " + op.String()
	b, err := broadcast(name, xshape, yshape)
	if err != nil {
		return err
	}
	e, m := b.xs, b.nx
	if side == Right {
		e, m = b.ys, b.ny
	}
	var w Buffer[T]
	sw := b.sy
	switch {
	case op == Mul && side == Left:
		w = y
	case op == Mul:
		w, sw = x, b.sx
	case op == Div:
		w = y
	}
	bad := dst.n != m || g.n != b.n
	switch {
	case op == Mul && side == Right:
		bad = bad || x.n != b.nx
	case op == Mul || op == Div:
		bad = bad || y.n != b.ny
	}
	if op == Div && side == Right {
		bad = bad || z.n != b.n
	}
	if bad {
		return fmt.Errorf("cuda: %s: lengths dst %d, g %d, x %d, y %d, z %d for shapes %v and %v (broadcast %v)", name, dst.n, g.n, x.n, y.n, z.n, xshape, yshape, b.out)
	}
	if m == 0 {
		return nil
	}
	acc := uint64(0)
	if accumulate {
		acc = 1
	}
	if err := k.enter(); err != nil {
		return err
	}
	defer k.leave()
	return k.launch(kernelIndex[T](kBinBwd), k.gridFor(m), uint64(dst.ptr), uint64(g.ptr), uint64(w.ptr), uint64(z.ptr), uint64(op), uint64(side), acc, uint64(m),
		uint64(b.out[0]), uint64(b.out[1]), uint64(b.out[2]), uint64(b.out[3]),
		uint64(e[1]), uint64(e[2]), uint64(e[3]),
		uint64(sw[0]), uint64(sw[1]), uint64(sw[2]), uint64(sw[3]))
}
