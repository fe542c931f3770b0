package tensor_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

// TestOnDeviceByEngine: the CPU engines have an Elementwise of their own
// (ElementwiseOf) yet compute in host memory (OnDevice false,
// DeviceElementwise nil); a stand-in wrapping a CPU engine with an
// Elementwise is a device; an engine of another type without one has none.
func TestOnDeviceByEngine(t *testing.T) {
	cpu := tensor.EngineFor[float64](tensor.Gonum(2))
	fake := elementwiseEngine{Engine: cpu, el: &countingBinary{Elementwise: tensor.HostElementwise[float64]()}}
	bare := struct{ tensor.Engine[float64] }{cpu}
	for _, c := range []struct {
		name              string
		e                 tensor.Engine[float64]
		hasEW, onDevice   bool
		deviceElementwise bool
	}{
		{"CPU", cpu, true, false, false},
		{"serial CPU", tensor.Serial(cpu), true, false, false},
		{"stand-in", fake, true, true, true},
		{"wrapped without Elementwise", bare, false, false, false},
	} {
		got := [3]bool{tensor.ElementwiseOf(c.e) != nil, tensor.OnDevice(c.e), tensor.DeviceElementwise(c.e) != nil}
		if want := [3]bool{c.hasEW, c.onDevice, c.deviceElementwise}; got != want {
			t.Errorf("%s: (ElementwiseOf non-nil, OnDevice, DeviceElementwise non-nil) = %v, want %v", c.name, got, want)
		}
	}
	for _, b := range tensor.Backends(2) {
		if e := tensor.EngineFor[float32](b); tensor.ElementwiseOf(e) == nil || tensor.OnDevice(e) {
			t.Errorf("%s float32: ElementwiseOf nil or OnDevice", b.Name())
		}
	}
}

// TestCPUElementwiseSplit: the CPU engine's Elementwise, which splits
// tensors of 2¹⁶ elements and more across its workers, gives the bits
// HostElementwise gives on the calling goroutine, for every map and its
// backward, the binary ops and their gradients, and linear combinations,
// set and accumulated, at sizes on both sides of the split.
func TestCPUElementwiseSplit(t *testing.T) {
	for _, n := range []int{1<<16 - 1, 1<<16 + 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			testCPUElementwiseSplit[float64](t, n)
			testCPUElementwiseSplit[float32](t, n)
		})
	}
}

func testCPUElementwiseSplit[T tensor.Float](t *testing.T, n int) {
	cpu := tensor.ElementwiseOf(tensor.EngineFor[T](tensor.Gonum(3)))
	ref := tensor.HostElementwise[T]()
	rng := rand.New(rand.NewPCG(3, uint64(n)))
	rnd := func(lo float64) *tensor.Tensor[T] {
		x := tensor.New[T](n)
		for i := range x.Data() {
			x.Data()[i] = T(lo + rng.Float64())
		}
		return x
	}
	x, y, g, z0 := rnd(-0.5), rnd(0.5), rnd(-0.5), rnd(-0.5)
	both := func(name string, f func(el tensor.Elementwise[T], z *tensor.Tensor[T])) {
		t.Helper()
		want, got := z0.Clone(), z0.Clone()
		f(ref, want)
		f(cpu, got)
		w, d := want.Data(), got.Data()
		for i := range w {
			if w[i] != d[i] && !(w[i] != w[i] && d[i] != d[i]) || signbit(float64(w[i])) != signbit(float64(d[i])) {
				t.Errorf("%T n=%d %s: element %d = %v, HostElementwise's %v", T(0), n, name, i, d[i], w[i])
				return
			}
		}
	}
	pos := y // positive operands for Log, Sqrt and Pow
	for op := range tensor.NumMapOps {
		a, b := T(0.25), T(0.75)
		if op == tensor.MapHardtanh || op == tensor.MapClamp {
			a = -0.25
		}
		u := x
		if op == tensor.MapLog || op == tensor.MapSqrt || op == tensor.MapPow {
			u = pos
		}
		both(fmt.Sprintf("Map %v", op), func(el tensor.Elementwise[T], z *tensor.Tensor[T]) { el.Map(op, z, u, a, b) })
		for _, acc := range []bool{false, true} {
			both(fmt.Sprintf("MapBackward %v acc %v", op, acc), func(el tensor.Elementwise[T], z *tensor.Tensor[T]) {
				el.MapBackward(op, z, g, u, a, b, acc)
			})
		}
	}
	for op := tensor.BinaryAdd; op <= tensor.BinaryDiv; op++ {
		both(fmt.Sprintf("Binary %d", op), func(el tensor.Elementwise[T], z *tensor.Tensor[T]) { el.Binary(op, z, x, y) })
		out := tensor.New[T](n)
		ref.Binary(op, out, x, y)
		for side := range 2 {
			for _, acc := range []bool{false, true} {
				both(fmt.Sprintf("BinaryBackward %d side %d acc %v", op, side, acc), func(el tensor.Elementwise[T], z *tensor.Tensor[T]) {
					el.BinaryBackward(op, side, z, g, x, y, out, acc)
				})
			}
		}
	}
	many := make([]*tensor.Tensor[T], 17) // more terms than a band keeps on its stack
	manyCoef := make([]T, len(many))
	for j := range many {
		many[j], manyCoef[j] = []*tensor.Tensor[T]{x, y, g}[j%3], T(j)-8.5
	}
	for _, terms := range [][]*tensor.Tensor[T]{{x}, {x, y, g}, many} {
		coef := append([]T{0.5, -1.25, 3}, manyCoef...)[:len(terms)]
		both(fmt.Sprintf("LinComb of %d", len(terms)), func(el tensor.Elementwise[T], z *tensor.Tensor[T]) { el.LinComb(z, nil, coef, terms) })
		both(fmt.Sprintf("LinComb of %d on z", len(terms)), func(el tensor.Elementwise[T], z *tensor.Tensor[T]) { el.LinComb(z, z, coef, terms) })
		both(fmt.Sprintf("LinComb of %d on y", len(terms)), func(el tensor.Elementwise[T], z *tensor.Tensor[T]) { el.LinComb(z, y, coef, terms) })
	}
	both("Copy", func(el tensor.Elementwise[T], z *tensor.Tensor[T]) { el.Copy(z, x) })
}

// TestCPUElementwiseSplitAllocs: LinComb (of up to 16 terms) and Copy
// split across the workers allocate nothing a call: their jobs come from
// the engine's pools (a solver's stage sums and a gradient mode's copies
// of a large state, once per stage).
func TestCPUElementwiseSplitAllocs(t *testing.T) {
	if tensor.RaceEnabled {
		t.Skip("the race detector's sync.Pool drops some of what it is given")
	}
	const n = 1<<16 + 7
	el := tensor.ElementwiseOf(tensor.EngineFor[float32](tensor.Gonum(2)))
	x, y, z := tensor.New[float32](n), tensor.New[float32](n), tensor.New[float32](n)
	xs := []*tensor.Tensor[float32]{x, y, x, y, x, y, x, y, x, y, x, y, x, y, x, y}
	coef := make([]float32, len(xs))
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"LinComb of 16 on z", func() { el.LinComb(z, z, coef, xs) }},
		{"LinComb of 2", func() { el.LinComb(z, nil, coef[:2], xs[:2]) }},
		{"Copy", func() { el.Copy(z, x) }},
	} {
		if got := testing.AllocsPerRun(20, c.f); got != 0 {
			t.Errorf("%s of %d elements: %v allocations a call, want 0", c.name, n, got)
		}
	}
}

// TestCPULinCombFirstTerm: with no base, LinComb's first term is its
// product itself, so a negative zero stays one (0 + −0 would be +0), as
// autograd's gradients always had it.
func TestCPULinCombFirstTerm(t *testing.T) {
	for _, el := range []tensor.Elementwise[float64]{tensor.HostElementwise[float64](), tensor.ElementwiseOf(tensor.EngineFor[float64](tensor.Gonum(2)))} {
		z := tensor.New[float64](3)
		el.LinComb(z, nil, []float64{-1}, []*tensor.Tensor[float64]{tensor.FromSlice([]float64{0, 2, -3}, 3)})
		got := z.Data()
		if got[0] != 0 || !signbit(got[0]) || got[1] != -2 || got[2] != 3 {
			t.Errorf("LinComb(−1·[0 2 −3]) = %v (sign of the zero negative: %v), want [-0 -2 3]", got, signbit(got[0]))
		}
	}
}

func signbit(v float64) bool { return math.Signbit(v) }
