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
	t.ew.Binary(binOps[k], z, xe.value, ye.value)
	e := t.record(op, z, bcastRule[T]{}, xe, ye, nil)
	e.n[0] = int(k)
	return t.varOf(e)
}

// bcastRule is the backward of a broadcast binary op (its kind in n[0]):
// each operand's gradient is the output's, times the op's partial
// derivative, summed over the axes the operand was broadcast along.
type bcastRule[T tensor.Float] struct{}

func (bcastRule[T]) backward(t *Tape[T], e *entry[T]) { t.ewBinaryGrad(binKind(e.n[0]), e) }
