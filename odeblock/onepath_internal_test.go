package odeblock

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/tensor/enginetest"
)

// TestVecsAxpy: the discrete modes' axpy through an engine's Elementwise
// (LinComb of dst and one term) gives tensor.AxpySlice's bits — dst + a·x,
// the product rounded first — on a CPU engine of one worker and of two
// (which splits 2¹⁶ elements and more), and with HostElementwise, at
// lengths on both sides of the split, signed zeros and infinities included.
func TestVecsAxpy(t *testing.T) {
	testVecsAxpy[float32](t)
	testVecsAxpy[float64](t)
}

func testVecsAxpy[T tensor.Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	els := map[string]tensor.Elementwise[T]{
		"1 worker":  tensor.ElementwiseOf(tensor.EngineFor[T](tensor.Gonum(1))),
		"2 workers": tensor.ElementwiseOf(tensor.EngineFor[T](tensor.Gonum(2))),
		"host":      tensor.HostElementwise[T](),
	}
	for _, n := range []int{1, 7, 33, 1<<16 + 9} {
		x, y := make([]T, n), make([]T, n)
		for i := range x {
			x[i], y[i] = T(rng.NormFloat64()), T(rng.NormFloat64())
		}
		x[0], y[0] = 0, T(math.Copysign(0, -1)) // −0 + a·0
		if n > 2 {
			x[1], y[2] = T(math.Inf(1)), T(math.Inf(-1))
		}
		for _, a := range []T{0.37, -2, 0} {
			want := append([]T(nil), y...)
			tensor.AxpySlice(a, x, want)
			for name, ew := range els {
				v := vecs[T]{ew: ew}
				dst := tensor.FromSlice(append([]T(nil), y...), n)
				v.axpy(dst, a, tensor.FromSlice(x, n))
				for i, got := range dst.ReadData() {
					if math.Float64bits(float64(got)) != math.Float64bits(float64(want[i])) && !(got != got && want[i] != want[i]) {
						t.Fatalf("%T %s n=%d a=%v: element %d = %v, AxpySlice's %v", a, name, n, a, i, got, want[i])
					}
				}
				if v.xs[0] != nil {
					t.Errorf("%s: axpy kept its term", name)
				}
			}
		}
	}
}

// TestHostElementwise: the pass's host Elementwise is a CPU engine's own
// (its workers), and tensor.HostElementwise for a device engine (a pass
// solving on the host) and for an engine without one (a third party's).
func TestHostElementwise(t *testing.T) {
	cpu := tensor.EngineFor[float64](tensor.Gonum(2))
	host := tensor.HostElementwise[float64]()
	for _, c := range []struct {
		name string
		eng  tensor.Engine[float64]
		want tensor.Elementwise[float64]
	}{
		{"cpu", cpu, tensor.ElementwiseOf(cpu)},
		{"device", enginetest.NewParkingDevice(cpu), host},
		{"plain", struct{ tensor.Engine[float64] }{cpu}, host},
	} {
		if got := hostElementwise(c.eng); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		p := &pass[float64]{eng: c.eng}
		if got := p.elementwise(); got != c.want || p.ew != got {
			t.Errorf("%s: the pass's Elementwise %v (kept %v), want %v", c.name, got, p.ew, c.want)
		}
	}
	p := &pass[float64]{eng: cpu, ew: host}
	if got := p.elementwise(); got != host {
		t.Errorf("a pass's Elementwise once set: %v, want it kept", got)
	}
}
