package odeblock

import (
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/tensor/enginetest"
)

// TestStepStatesPooled: after a Checkpoint pass's backward the states it
// kept at its steps' starts are back in the Block's pool, every one a
// tensor — in host memory with a CPU engine, in the device's memory with a
// device engine — and the next pass takes them again.
func TestStepStatesPooled(t *testing.T) {
	for _, onDevice := range []bool{false, true} {
		var eng tensor.Engine[float64] = tensor.EngineFor[float64](tensor.Gonum(1))
		if onDevice {
			eng = enginetest.NewParkingDevice(eng)
		}
		w := autograd.NewParam("w", tensor.FromSlice([]float64{0.5, -0.3, 0.8}, 3))
		field := FieldFunc([]*autograd.Param[float64]{w}, func(tp *autograd.Tape[float64], _ float64, h autograd.Var[float64]) autograd.Var[float64] {
			return autograd.Mul(autograd.Tanh(h), tp.Param(w))
		})
		b := &Block[float64]{Dynamics: &NODE[float64]{F: field}, Times: []float64{0, 1}, Mode: Checkpoint{},
			Solver: Options{Method: "rk4", Step: 0.25}}
		x := tensor.FromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
		var first []*tensor.Tensor[float64]
		for pass := range 2 {
			tp := autograd.NewTape(eng)
			z, err := b.Forward(tp, tp.Const(x))
			if err != nil {
				t.Fatal(err)
			}
			if err := tp.Backward(autograd.Sum(autograd.Square(z))); err != nil {
				t.Fatal(err)
			}
			if kept := len(b.pools.states); kept != 4 {
				t.Fatalf("device %v, pass %d: %d states pooled; want the 4 steps'", onDevice, pass, kept)
			}
			if pass == 0 {
				first = append(first, b.pools.states...)
			}
			for i, s := range b.pools.states {
				switch {
				case s == nil:
					t.Errorf("pass %d: a nil state pooled", pass)
				case s.Storage().DeviceNewer() != onDevice:
					t.Errorf("device %v, pass %d: state %d's newest values on the device: %v", onDevice, pass, i, s.Storage().DeviceNewer())
				case pass == 1 && !slicesContain(first, s):
					t.Errorf("pass 1: state %d was made anew, not taken from the pool", i)
				}
			}
		}
	}
}

func slicesContain[T tensor.Float](ts []*tensor.Tensor[T], x *tensor.Tensor[T]) bool {
	for _, t := range ts {
		if t == x {
			return true
		}
	}
	return false
}

// TestStatesPool: the pool of states hands back a state of the
// shape asked for, filled by the engine, dropping those of other shapes on
// its way, and trims to the count asked for.
func TestStatesPool(t *testing.T) {
	var q passPools[float64]
	ew := tensor.HostElementwise[float64]()
	y := tensor.FromSlice([]float64{1, 2, 3, 4}, 4)
	a := q.takeState(ew, y, []int{2, 2})
	if !a.HasShape(2, 2) || a.At(1, 1) != 4 {
		t.Fatalf("a new state of shape %v holding %v, want [2 2] holding y", a.Shape(), a.ReadData())
	}
	q.putState(a)
	q.putState(tensor.New[float64](3))
	if b := q.takeState(ew, tensor.FromSlice([]float64{5, 6, 7, 8}, 4), []int{2, 2}); b != a || b.At(0, 0) != 5 || len(q.states) != 0 {
		t.Errorf("the pooled state of the shape was not reused and filled, or another was kept (%d left)", len(q.states))
	}
	q.putState(a)
	q.putState(a)
	q.trimStates(3)
	if len(q.states) != 2 {
		t.Errorf("%d states after trimming 2 to 3", len(q.states))
	}
	q.trimStates(1)
	if len(q.states) != 1 {
		t.Errorf("%d states after trimming 2 to 1", len(q.states))
	}
}
