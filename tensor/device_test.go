package tensor_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/tensor"
)

// parkingDevice is a HostSyncer whose "device" holds the newer values of
// the tensors parked on it: their host memory is overwritten with NaN
// until SyncHost copies the values back.
type parkingDevice struct {
	mu      sync.Mutex
	mark    *tensor.DeviceMark
	pending map[*tensor.Storage]func()
	syncs   int
}

func newParkingDevice() *parkingDevice {
	d := &parkingDevice{pending: map[*tensor.Storage]func(){}}
	d.mark = tensor.NewDeviceMark(d)
	return d
}

func (d *parkingDevice) SyncHost(s *tensor.Storage) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if f := d.pending[s]; f != nil {
		f()
		delete(d.pending, s)
		d.syncs++
	}
	s.ClearDeviceNewer()
}

// park moves t's values to the device.
func (d *parkingDevice) park(t *tensor.Tensor[float64]) {
	h := t.HostMemory()
	dev := slices.Clone(h)
	for i := range h {
		h[i] = math.NaN()
	}
	d.mu.Lock()
	d.pending[t.Storage()] = func() { copy(t.HostMemory(), dev) }
	d.mu.Unlock()
	t.Storage().MarkDeviceNewer(d.mark)
}

// TestMethodsSyncTheirOperands: every method of the package that reads a
// tensor whose newer values are on a device (Storage.MarkDeviceNewer)
// brings them to the host first — its operands, the destination it
// accumulates into or writes in part — so its result is the one computed
// from the device's values; each operand parked in turn.
func TestMethodsSyncTheirOperands(t *testing.T) {
	type T = *tensor.Tensor[float64]
	eng := tensor.EngineFor[float64](tensor.Gonum(1))
	vec := func(ts []T) []float64 { return slices.Clone(ts[0].ReadData()) }
	num := func(v float64) []float64 { return []float64{v} }
	cp := tensor.ConvParams{Stride: 1, Pad: 1}
	cases := []struct {
		name   string
		shapes [][]int
		run    func(ops []T) []float64
	}{
		{"Add", [][]int{{2, 3}, {2, 3}}, func(o []T) []float64 { return tensor.Add(o[0], o[1]).ReadData() }},
		{"Sub", [][]int{{2, 3}, {2, 3}}, func(o []T) []float64 { return tensor.Sub(o[0], o[1]).ReadData() }},
		{"Mul", [][]int{{2, 3}, {2, 3}}, func(o []T) []float64 { return tensor.Mul(o[0], o[1]).ReadData() }},
		{"Div", [][]int{{2, 3}, {2, 3}}, func(o []T) []float64 { return tensor.Div(o[0], o[1]).ReadData() }},
		{"Scale", [][]int{{5}}, func(o []T) []float64 { return tensor.Scale(o[0], 3).ReadData() }},
		{"AddScalar", [][]int{{5}}, func(o []T) []float64 { return tensor.New[float64](5).AddScalar(o[0], 2).ReadData() }},
		{"Axpy", [][]int{{5}, {5}}, func(o []T) []float64 { o[0].Axpy(2, o[1]); return vec(o) }},
		{"AddScaled", [][]int{{5}, {5}}, func(o []T) []float64 { return tensor.New[float64](5).AddScaled(o[0], 2, o[1]).ReadData() }},
		{"Map", [][]int{{5}}, func(o []T) []float64 {
			return tensor.New[float64](5).Map(o[0], func(v float64) float64 { return v * v }).ReadData()
		}},
		{"Exp", [][]int{{5}}, func(o []T) []float64 { return tensor.New[float64](5).Exp(o[0]).ReadData() }},
		{"Log", [][]int{{5}}, func(o []T) []float64 { return tensor.New[float64](5).Log(o[0]).ReadData() }},
		{"Sqrt", [][]int{{5}}, func(o []T) []float64 { return tensor.New[float64](5).Sqrt(o[0]).ReadData() }},
		{"Square", [][]int{{5}}, func(o []T) []float64 { return tensor.New[float64](5).Square(o[0]).ReadData() }},
		{"Neg", [][]int{{5}}, func(o []T) []float64 { return tensor.New[float64](5).Neg(o[0]).ReadData() }},
		{"Tanh", [][]int{{5}}, func(o []T) []float64 { return tensor.New[float64](5).Tanh(o[0]).ReadData() }},
		{"Sigmoid", [][]int{{5}}, func(o []T) []float64 { return tensor.New[float64](5).Sigmoid(o[0]).ReadData() }},
		{"Softplus", [][]int{{5}}, func(o []T) []float64 { return tensor.New[float64](5).Softplus(o[0]).ReadData() }},
		{"ReLU", [][]int{{5}}, func(o []T) []float64 { return tensor.New[float64](5).ReLU(o[0]).ReadData() }},
		{"LeakyReLU", [][]int{{5}}, func(o []T) []float64 { return tensor.New[float64](5).LeakyReLU(o[0], 0.1).ReadData() }},
		{"Hardtanh", [][]int{{5}}, func(o []T) []float64 { return tensor.New[float64](5).Hardtanh(o[0], 0.6, 0.9).ReadData() }},
		{"ReLUBackward", [][]int{{5}, {5}, {5}}, func(o []T) []float64 { o[0].ReLUBackward(o[1], o[2], true); return vec(o) }},
		{"TanhBackward", [][]int{{5}, {5}, {5}}, func(o []T) []float64 { o[0].TanhBackward(o[1], o[2], true); return vec(o) }},
		{"SigmoidBackward", [][]int{{5}, {5}, {5}}, func(o []T) []float64 { o[0].SigmoidBackward(o[1], o[2], true); return vec(o) }},
		{"SoftplusBackward", [][]int{{5}, {5}, {5}}, func(o []T) []float64 { o[0].SoftplusBackward(o[1], o[2], true); return vec(o) }},
		{"LeakyReLUBackward", [][]int{{5}, {5}, {5}}, func(o []T) []float64 { o[0].LeakyReLUBackward(o[1], o[2], 0.2, true); return vec(o) }},
		{"AddBias", [][]int{{2, 3, 2}, {3}}, func(o []T) []float64 { return tensor.New[float64](2, 3, 2).AddBias(o[0], o[1]).ReadData() }},
		{"SumPerChannel", [][]int{{2, 3, 2}}, func(o []T) []float64 { return tensor.New[float64](3).SumPerChannel(o[0]).ReadData() }},
		{"Sum", [][]int{{2, 3}}, func(o []T) []float64 { return num(o[0].Sum()) }},
		{"Mean", [][]int{{2, 3}}, func(o []T) []float64 { return num(o[0].Mean()) }},
		{"Max", [][]int{{2, 3}}, func(o []T) []float64 { return num(o[0].Max()) }},
		{"Norm2", [][]int{{2, 3}}, func(o []T) []float64 { return num(o[0].Norm2()) }},
		{"Dot", [][]int{{6}, {6}}, func(o []T) []float64 { return num(tensor.Dot(o[0], o[1])) }},
		{"SumAxis", [][]int{{2, 3}}, func(o []T) []float64 { return tensor.New[float64](2).SumAxis(o[0], 1).ReadData() }},
		{"MaxAxis", [][]int{{2, 3}}, func(o []T) []float64 { return tensor.New[float64](3).MaxAxis(o[0], 0).ReadData() }},
		{"ArgMax", [][]int{{2, 3}}, func(o []T) []float64 {
			var r []float64
			for _, i := range tensor.ArgMax(o[0], 1) {
				r = append(r, float64(i))
			}
			return r
		}},
		{"Concat", [][]int{{2, 1}, {2, 2}}, func(o []T) []float64 { return tensor.Concat(1, o[0], o[1]).ReadData() }},
		{"SplitInto", [][]int{{2, 3}}, func(o []T) []float64 {
			a, b := tensor.New[float64](2, 1), tensor.New[float64](2, 2)
			tensor.SplitInto(o[0], 1, a, b)
			return append(slices.Clone(a.ReadData()), b.ReadData()...)
		}},
		{"At", [][]int{{2, 3}}, func(o []T) []float64 { return num(o[0].At(1, 2)) }},
		{"Clone", [][]int{{2, 3}}, func(o []T) []float64 { return o[0].Clone().HostMemory() }},
		{"Copy", [][]int{{6}}, func(o []T) []float64 { return tensor.New[float64](2, 3).Copy(o[0]).ReadData() }},
		{"Data", [][]int{{6}}, func(o []T) []float64 { return slices.Clone(o[0].Data()) }},
		{"String", [][]int{{6}}, func(o []T) []float64 { return num(float64(len(o[0].String()))) }},
		{"Set", [][]int{{6}}, func(o []T) []float64 { o[0].Set(7, 2); return vec(o) }},
		{"a view's Fill", [][]int{{3, 2}}, func(o []T) []float64 { o[0].Slice(1, 2).Fill(7); return vec(o) }},
		{"Gemm", [][]int{{2, 3}, {3, 4}, {2, 4}}, func(o []T) []float64 {
			o[2].Gemm(eng, 1, o[0], false, o[1], false, 0.5)
			return slices.Clone(o[2].ReadData())
		}},
		{"GemmBias", [][]int{{2, 3}, {4, 3}, {4}}, func(o []T) []float64 {
			return tensor.New[float64](2, 4).GemmBias(eng, 1, o[0], false, o[1], true, o[2]).ReadData()
		}},
		{"Conv2D", [][]int{{1, 2, 3, 3}, {2, 2, 3, 3}, {2}}, func(o []T) []float64 {
			y := tensor.New[float64](1, 2, 3, 3)
			eng.Conv2D(y, o[0], o[1], o[2], cp)
			return y.ReadData()
		}},
		{"Conv2DBackwardData", [][]int{{1, 2, 3, 3}, {2, 2, 3, 3}}, func(o []T) []float64 {
			dx := tensor.New[float64](1, 2, 3, 3)
			eng.Conv2DBackwardData(dx, o[0], o[1], cp, false)
			return dx.ReadData()
		}},
		{"Conv2DBackwardFilter", [][]int{{1, 2, 3, 3}, {1, 2, 3, 3}}, func(o []T) []float64 {
			dw := tensor.New[float64](2, 2, 3, 3)
			eng.Conv2DBackwardFilter(dw, nil, o[0], o[1], cp, false)
			return dw.ReadData()
		}},
	}
	operands := func(shapes [][]int) []T {
		rng := rand.New(rand.NewPCG(1, 2))
		ops := make([]T, len(shapes))
		for i, s := range shapes {
			ops[i] = tensor.RandU[float64](rng, 0.5, 1.5, s...)
		}
		return ops
	}
	for _, c := range cases {
		want := c.run(operands(c.shapes))
		for i := range c.shapes {
			t.Run(fmt.Sprintf("%s/operand %d", c.name, i), func(t *testing.T) {
				d := newParkingDevice()
				ops := operands(c.shapes)
				d.park(ops[i])
				got := c.run(ops)
				if diff := cmp.Diff(want, got, cmpopts.EquateNaNs()); diff != "" {
					t.Errorf("result (−from host values +with the operand on the device):\n%s", diff)
				}
				if d.syncs != 1 || ops[i].Storage().DeviceNewer() {
					t.Errorf("%d copies from the device, operand still marked %v; want 1 and false", d.syncs, ops[i].Storage().DeviceNewer())
				}
			})
		}
	}
}

// TestSharedStorage: memory handed to FromSlice is reported as its
// caller's (Storage.Shared), views included; New's is not.
func TestSharedStorage(t *testing.T) {
	s := tensor.FromSlice([]float32{1, 2, 3, 4}, 2, 2)
	if !s.Storage().Shared() || !s.Slice(1, 2).Storage().Shared() || !s.Reshape(4).Storage().Shared() {
		t.Error("FromSlice's storage (or a view's) not Shared")
	}
	if n := tensor.New[float32](2, 2); n.Storage().Shared() || n.Clone().Storage().Shared() {
		t.Error("New's or Clone's storage Shared")
	}
}

// elementwiseEngine is a CPU engine with an Elementwise (the host
// reference), counting its Binary calls.
type elementwiseEngine struct {
	tensor.Engine[float64]
	el *countingBinary
}

func (e elementwiseEngine) Elementwise() tensor.Elementwise[float64] { return e.el }

type countingBinary struct {
	tensor.Elementwise[float64]
	calls int
}

func (c *countingBinary) Binary(op tensor.BinaryOp, z, x, y *tensor.Tensor[float64]) {
	c.calls++
	c.Elementwise.Binary(op, z, x, y)
}

// TestGemmBiasOnElementwise: on an engine with an Elementwise, GemmBias
// forms the product and adds the bias with Binary (on the engine's device),
// and with no product to form (k = 0) writes the bias alone, as on the CPU;
// empty results stay empty.
func TestGemmBiasOnElementwise(t *testing.T) {
	cpu := tensor.EngineFor[float64](tensor.Gonum(1))
	for _, c := range []struct {
		m, n, k int
		binary  int // Binary calls
	}{{3, 4, 5, 1}, {3, 4, 0, 0}, {0, 4, 5, -1}, {3, 0, 5, -1}} {
		t.Run(fmt.Sprintf("m=%d n=%d k=%d", c.m, c.n, c.k), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 8))
			a, b := tensor.RandN[float64](rng, 0, 1, c.m, c.k), tensor.RandN[float64](rng, 0, 1, c.n, c.k)
			bias := tensor.RandN[float64](rng, 0, 1, c.n)
			want := tensor.Full(math.NaN(), c.m, c.n).GemmBias(cpu, 1.5, a, false, b, true, bias)
			e := elementwiseEngine{Engine: cpu, el: &countingBinary{Elementwise: tensor.HostElementwise[float64]()}}
			got := tensor.Full(math.NaN(), c.m, c.n).GemmBias(e, 1.5, a, false, b, true, bias)
			if diff := cmp.Diff(want.ReadData(), got.ReadData(), cmpopts.EquateApprox(1e-14, 0)); diff != "" {
				t.Errorf("GemmBias (−CPU engine +with an Elementwise):\n%s", diff)
			}
			if c.binary >= 0 && e.el.calls != c.binary {
				t.Errorf("%d Binary calls, want %d", e.el.calls, c.binary)
			}
		})
	}
}

// TestHostMapBackwardUnknownOp: HostElementwise's MapBackward panics on an
// op that is not a map.
func TestHostMapBackwardUnknownOp(t *testing.T) {
	el := tensor.HostElementwise[float64]()
	for _, op := range []tensor.MapOp{-1, tensor.NumMapOps} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("MapBackward(%d): no panic", op)
				}
			}()
			z := tensor.New[float64](2)
			el.MapBackward(op, z, z, z, 0, 0, false)
		}()
	}
}
