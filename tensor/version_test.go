package tensor_test

import (
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

// TestVersionCountsWrites: every method that stores into a tensor, and
// Data, changes the version of the destination's storage, seen by its
// views too; reads (ReadData, the operands of a write) do not.
func TestVersionCountsWrites(t *testing.T) {
	e := tensor.EngineFor[float64](tensor.Gonum(1))
	x := tensor.FromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	y := tensor.FromSlice([]float64{0.5, 1, 1.5, 2, 2.5, 3}, 2, 3)
	bias := tensor.FromSlice([]float64{1, 2, 3}, 3)
	img := tensor.New[float64](1, 2, 4, 4).Fill(0.5)
	w := tensor.New[float64](3, 2, 3, 3).Fill(0.25)
	out := tensor.New[float64](1, 3, 2, 2).Fill(1)
	p := tensor.ConvParams{}
	writes := []struct {
		name  string
		dst   func() *tensor.Tensor[float64] // the tensor written, made fresh
		write func(z *tensor.Tensor[float64])
	}{
		{"Data", nil, func(z *tensor.Tensor[float64]) { z.Data() }},
		{"MarkChanged", nil, func(z *tensor.Tensor[float64]) { z.MarkChanged() }},
		{"Set", nil, func(z *tensor.Tensor[float64]) { z.Set(1, 0, 0) }},
		{"Fill", nil, func(z *tensor.Tensor[float64]) { z.Fill(2) }},
		{"Zero", nil, func(z *tensor.Tensor[float64]) { z.Zero() }},
		{"Copy", nil, func(z *tensor.Tensor[float64]) { z.Copy(x) }},
		{"Add", nil, func(z *tensor.Tensor[float64]) { z.Add(x, y) }},
		{"Sub", nil, func(z *tensor.Tensor[float64]) { z.Sub(x, y) }},
		{"Mul", nil, func(z *tensor.Tensor[float64]) { z.Mul(x, y) }},
		{"Div", nil, func(z *tensor.Tensor[float64]) { z.Div(x, y) }},
		{"Scale", nil, func(z *tensor.Tensor[float64]) { z.Scale(x, 2) }},
		{"AddScalar", nil, func(z *tensor.Tensor[float64]) { z.AddScalar(x, 1) }},
		{"Axpy", nil, func(z *tensor.Tensor[float64]) { z.Axpy(2, x) }},
		{"AddScaled", nil, func(z *tensor.Tensor[float64]) { z.AddScaled(x, 2, y) }},
		{"Map", nil, func(z *tensor.Tensor[float64]) { z.Map(x, func(v float64) float64 { return v }) }},
		{"Exp", nil, func(z *tensor.Tensor[float64]) { z.Exp(x) }},
		{"Log", nil, func(z *tensor.Tensor[float64]) { z.Log(x) }},
		{"Sqrt", nil, func(z *tensor.Tensor[float64]) { z.Sqrt(x) }},
		{"Square", nil, func(z *tensor.Tensor[float64]) { z.Square(x) }},
		{"Neg", nil, func(z *tensor.Tensor[float64]) { z.Neg(x) }},
		{"Tanh", nil, func(z *tensor.Tensor[float64]) { z.Tanh(x) }},
		{"Sigmoid", nil, func(z *tensor.Tensor[float64]) { z.Sigmoid(x) }},
		{"Softplus", nil, func(z *tensor.Tensor[float64]) { z.Softplus(x) }},
		{"ReLU", nil, func(z *tensor.Tensor[float64]) { z.ReLU(x) }},
		{"ReLUBackward", nil, func(z *tensor.Tensor[float64]) { z.ReLUBackward(x, y, true) }},
		{"TanhBackward", nil, func(z *tensor.Tensor[float64]) { z.TanhBackward(x, y, false) }},
		{"SigmoidBackward", nil, func(z *tensor.Tensor[float64]) { z.SigmoidBackward(x, y, false) }},
		{"SoftplusBackward", nil, func(z *tensor.Tensor[float64]) { z.SoftplusBackward(x, y, false) }},
		{"LeakyReLU", nil, func(z *tensor.Tensor[float64]) { z.LeakyReLU(x, 0.1) }},
		{"LeakyReLUBackward", nil, func(z *tensor.Tensor[float64]) { z.LeakyReLUBackward(x, y, 0.1, false) }},
		{"Hardtanh", nil, func(z *tensor.Tensor[float64]) { z.Hardtanh(x, -1, 1) }},
		{"AddBias", nil, func(z *tensor.Tensor[float64]) { z.AddBias(x, bias) }},
		{"Gemm", func() *tensor.Tensor[float64] { return tensor.New[float64](2, 2) },
			func(z *tensor.Tensor[float64]) { z.Gemm(e, 1, x, false, y, true, 0) }},
		{"GemmBias", func() *tensor.Tensor[float64] { return tensor.New[float64](2, 2) },
			func(z *tensor.Tensor[float64]) { z.GemmBias(e, 1, x, false, y, true, bias.Slice(0, 2)) }},
		{"SumAxis", func() *tensor.Tensor[float64] { return tensor.New[float64](3) },
			func(z *tensor.Tensor[float64]) { z.SumAxis(x, 0) }},
		{"MaxAxis", func() *tensor.Tensor[float64] { return tensor.New[float64](2) },
			func(z *tensor.Tensor[float64]) { z.MaxAxis(x, 1) }},
		{"SumPerChannel", func() *tensor.Tensor[float64] { return tensor.New[float64](3) },
			func(z *tensor.Tensor[float64]) { z.SumPerChannel(x) }},
		{"Concat", func() *tensor.Tensor[float64] { return tensor.New[float64](4, 3) },
			func(z *tensor.Tensor[float64]) { z.Concat(0, x, y) }},
		{"SplitInto", func() *tensor.Tensor[float64] { return tensor.New[float64](1, 3) },
			func(z *tensor.Tensor[float64]) { tensor.SplitInto(x, 0, z, tensor.New[float64](1, 3)) }},
		{"Conv2D", func() *tensor.Tensor[float64] { return tensor.New[float64](1, 3, 2, 2) },
			func(z *tensor.Tensor[float64]) { e.Conv2D(z, img, w, nil, p) }},
		{"Conv2DBackwardData", func() *tensor.Tensor[float64] { return tensor.New[float64](1, 2, 4, 4) },
			func(z *tensor.Tensor[float64]) { e.Conv2DBackwardData(z, out, w, p, false) }},
		{"Conv2DBackwardFilter", func() *tensor.Tensor[float64] { return tensor.New[float64](3, 2, 3, 3) },
			func(z *tensor.Tensor[float64]) { e.Conv2DBackwardFilter(z, nil, out, img, p, false) }},
		{"Conv2DBackwardFilter bias", func() *tensor.Tensor[float64] { return tensor.New[float64](3) },
			func(z *tensor.Tensor[float64]) {
				e.Conv2DBackwardFilter(tensor.New[float64](3, 2, 3, 3), z, out, img, p, true)
			}},
	}
	operands := []*tensor.Tensor[float64]{x, y, bias, img, w, out}
	for _, c := range writes {
		z := tensor.New[float64](2, 3)
		if c.dst != nil {
			z = c.dst()
		}
		view := z.Reshape(-1)
		before := make([]uint64, len(operands))
		for i, o := range operands {
			before[i] = o.Version()
		}
		v := z.Version()
		c.write(z)
		if z.Version() == v || view.Version() != z.Version() || view.Storage() != z.Storage() {
			t.Errorf("%s: version %d → %d (view %d): the write was not counted", c.name, v, z.Version(), view.Version())
		}
		for i, o := range operands {
			if o.Version() != before[i] {
				t.Errorf("%s: operand %d's version changed: a read counted as a write", c.name, i)
			}
		}
	}

	s := x.Slice(1, 2)
	v := x.Version()
	if s.ReadData()[0] != 4 || x.Version() != v {
		t.Errorf("ReadData counted as a write (version %d → %d)", v, x.Version())
	}
	s.Set(7, 0, 0)
	if x.Version() == v {
		t.Error("a write through a Slice view did not change the viewed tensor's version")
	}
	if f := tensor.FromSlice(x.ReadData(), 6); f.Storage() == x.Storage() {
		t.Error("FromSlice shares the storage of the tensor whose memory it wraps")
	}
	var zero tensor.Tensor[float32]
	if zero.Storage() == nil || zero.Version() != 0 {
		t.Error("the zero Tensor has no storage")
	}
}
