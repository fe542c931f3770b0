package tensor

import (
	"fmt"
	"testing"
)

// TestCPUElementwiseSplits: the CPU engine's Elementwise hands a tensor to
// the workers from parallelMin elements on, and only with more than one
// worker; HostElementwise never does.
func TestCPUElementwiseSplits(t *testing.T) {
	many := Gonum(3).(*cpuBackend).f64
	one := Gonum(1).(*cpuBackend).f64
	for _, c := range []struct {
		name string
		h    hostElementwise[float64]
		n    int
		want bool
	}{
		{"3 workers, parallelMin−1", hostElementwise[float64]{eng: many}, parallelMin - 1, false},
		{"3 workers, parallelMin", hostElementwise[float64]{eng: many}, parallelMin, true},
		{"1 worker, parallelMin", hostElementwise[float64]{eng: one}, parallelMin, false},
		{"2 workers, 4·parallelMin", hostElementwise[float64]{eng: Gonum(2).(*cpuBackend).f64}, 4 * parallelMin, true},
		{"HostElementwise", hostElementwise[float64]{}, 4 * parallelMin, false},
	} {
		if got := c.h.split(c.n) != nil; got != c.want {
			t.Errorf("%s: split(%d) = %v, want %v", c.name, c.n, got, c.want)
		}
	}
}

// TestHostBinaryUnknownOp: Binary panics on an op that is not one, on
// operands of one shape and with a one-element y alike.
func TestHostBinaryUnknownOp(t *testing.T) {
	el := HostElementwise[float64]()
	for _, op := range []BinaryOp{BinaryAdd - 1, BinaryDiv + 1} {
		for _, y := range []*Tensor[float64]{New[float64](3), New[float64]()} {
			t.Run(fmt.Sprintf("op %d y %v", op, y.Shape()), func(t *testing.T) {
				defer func() {
					if recover() == nil {
						t.Errorf("Binary(%d) with y of shape %v: no panic", op, y.Shape())
					}
				}()
				el.Binary(op, New[float64](3), New[float64](3), y)
			})
		}
	}
}

// TestHostBinaryScalarRank: a one-element y of higher rank than x
// broadcasts to a shape of its rank, so a z shaped like x is misuse, and
// panics with a *ShapeError as any misfit; of rank up to x's it is the
// scalar it holds.
func TestHostBinaryScalarRank(t *testing.T) {
	el := HostElementwise[float64]()
	x := FromSlice([]float64{1, 2, 3}, 3)
	for _, c := range []struct {
		y     []int
		panic bool
	}{{[]int{}, false}, {[]int{1}, false}, {[]int{1, 1}, true}} {
		t.Run(fmt.Sprint(c.y), func(t *testing.T) {
			y := New[float64](c.y...)
			y.Data()[0] = 2
			z := New[float64](3)
			defer func() {
				_, isShape := recover().(*ShapeError)
				if isShape != c.panic {
					t.Errorf("y of shape %v: ShapeError panic %v, want %v", c.y, isShape, c.panic)
				}
				if !c.panic {
					if got := z.Data(); got[0] != 0.5 || got[1] != 1 || got[2] != 1.5 {
						t.Errorf("y of shape %v: x/y = %v, want [0.5 1 1.5]", c.y, got)
					}
				}
			}()
			el.Binary(BinaryDiv, z, x, y)
		})
	}
}

// TestCPUElementwiseChecksBeforeSplit: the CPU engine's Elementwise checks
// a map's op before it splits the work, so an unknown one panics on the
// calling goroutine (recoverably), not in a worker.
// Likewise a Copy between tensors of different lengths panics with a
// *ShapeError.
func TestCPUElementwiseChecksBeforeSplit(t *testing.T) {
	el := Gonum(2).(*cpuBackend).f64.Elementwise()
	for _, n := range []int{3, 2 * parallelMin} {
		z := New[float64](n)
		for _, op := range []MapOp{-1, NumMapOps} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("Map(%d) of %d elements: no panic", op, n)
					}
				}()
				el.Map(op, z, z, 0, 0)
			}()
		}
		func() {
			defer func() {
				if _, ok := recover().(*ShapeError); !ok {
					t.Errorf("Copy of 1 element into %d: no *ShapeError", n)
				}
			}()
			el.Copy(z, New[float64](1))
		}()
	}
}

// TestHostBinaryBackwardOut: on operands of one shape, BinaryBackward reads
// out (and checks its shape) for Div's y side alone: the other gradients
// take a nil out; Div's y side with an out of another shape panics.
func TestHostBinaryBackwardOut(t *testing.T) {
	el := HostElementwise[float64]()
	x, y, g := FromSlice([]float64{1, 2}, 2), FromSlice([]float64{4, 8}, 2), FromSlice([]float64{1, 1}, 2)
	for op := BinaryAdd; op <= BinaryDiv; op++ {
		for side := range 2 {
			if op == BinaryDiv && side == 1 {
				continue
			}
			z := New[float64](2)
			el.BinaryBackward(op, side, z, g, x, y, nil, false)
		}
	}
	defer func() {
		if _, ok := recover().(*ShapeError); !ok {
			t.Error("Div's y side with out of shape [3] for operands of shape [2]: no *ShapeError")
		}
	}()
	el.BinaryBackward(BinaryDiv, 1, New[float64](2), g, x, y, New[float64](3), false)
}

// TestHostBinaryHighRank: broadcasting walks operands of rank above the
// eight its index keeps on the stack, each element x's and y's at the
// output's index (size-1 axes read at 0, y aligned at the last axes).
func TestHostBinaryHighRank(t *testing.T) {
	xs, ys := []int{2, 1, 2, 1, 2, 1, 2, 1, 3}, []int{2, 1, 2, 1, 2, 1, 2, 1}
	x, y := New[float64](xs...), New[float64](ys...)
	for i := range x.Data() {
		x.Data()[i] = float64(i)
	}
	for i := range y.Data() {
		y.Data()[i] = 1000 * float64(i)
	}
	out, _ := BroadcastShape(xs, ys)
	z := New[float64](out...)
	HostElementwise[float64]().Binary(BinaryAdd, z, x, y)
	at := func(shape, idx []int) int { // the element of an operand of shape at the output's idx
		k, off := 0, len(idx)-len(shape)
		for a, d := range shape {
			k *= d
			if d != 1 {
				k += idx[off+a]
			}
		}
		return k
	}
	idx := make([]int, len(out))
	for _, got := range z.Data() {
		if want := x.Data()[at(xs, idx)] + y.Data()[at(ys, idx)]; got != want {
			t.Fatalf("z%v = %v, want %v", idx, got, want)
		}
		for a := len(idx) - 1; a >= 0; a-- {
			if idx[a]++; idx[a] < out[a] {
				break
			}
			idx[a] = 0
		}
	}
}
