package tensor_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

func TestViewsShareStorage(t *testing.T) {
	x := tensor.FromSlice([]float64{0, 1, 2, 3, 4, 5}, 3, 2)
	r := x.Reshape(2, -1)
	if !r.HasShape(2, 3) {
		t.Fatalf("Reshape(2, -1) of [3 2] has shape %v, want [2 3]", r.Shape())
	}
	r.Set(10, 1, 2)
	if x.At(2, 1) != 10 {
		t.Errorf("write through reshape view not seen: x[2,1] = %v", x.At(2, 1))
	}
	s := x.Slice(1, 3)
	if !s.HasShape(2, 2) || s.At(0, 0) != 2 {
		t.Fatalf("Slice(1,3) = %v", s)
	}
	s.Set(-1, 0, 1)
	if x.At(1, 1) != -1 {
		t.Errorf("write through slice view not seen: x[1,1] = %v", x.At(1, 1))
	}
	c := x.Clone()
	c.Set(99, 0, 0)
	if x.At(0, 0) == 99 {
		t.Error("Clone shares storage")
	}
	if tensor.New[float32](0, 3).Len() != 0 {
		t.Error("zero-size tensor has elements")
	}
}

func TestShapeErrorsNameBothShapes(t *testing.T) {
	cases := []struct {
		name  string
		f     func()
		wants []string
	}{
		{"Add", func() { tensor.New[float64](2, 3).Add(tensor.New[float64](2, 3), tensor.New[float64](3, 2)) }, []string{"Add", "[2 3]", "[3 2]"}},
		{"Reshape", func() { tensor.New[float32](2, 3).Reshape(4, 2) }, []string{"Reshape", "[4 2]", "[2 3]"}},
		{"Gemm", func() {
			tensor.MatMul(tensor.EngineFor[float64](tensor.Gonum(1)), tensor.New[float64](2, 3), tensor.New[float64](4, 5))
		}, []string{"Gemm", "[2 3]", "[4 5]"}},
		{"Conv2D", func() {
			tensor.Conv2D(tensor.EngineFor[float32](tensor.Gonum(1)), tensor.New[float32](1, 3, 5, 5), tensor.New[float32](4, 2, 3, 3), nil, tensor.ConvParams{})
		}, []string{"Conv2D", "[4 2 3 3]", "[1 3 5 5]"}},
		{"AddBias", func() { tensor.New[float64](2, 3).AddBias(tensor.New[float64](2, 3), tensor.New[float64](4)) }, []string{"AddBias", "[4]", "[2 3]"}},
		{"Concat", func() { tensor.Concat(1, tensor.New[float64](2, 3), tensor.New[float64](3, 3)) }, []string{"Concat", "[3 3]", "[2 3]"}},
		{"FromSlice", func() { tensor.FromSlice(make([]float64, 5), 2, 3) }, []string{"FromSlice", "[2 3]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := func() (err error) {
				defer tensor.Recover(&err)
				c.f()
				return nil
			}()
			var se *tensor.ShapeError
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want a *ShapeError", err)
			}
			for _, w := range c.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q does not name %q", err, w)
				}
			}
		})
	}
}

// elementwise cases: each kernel against a plain scalar formula.
func TestElementwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	type unaryCase struct {
		name string
		run  func(z, x *tensor.Tensor[float64])
		ref  func(v float64) float64
		lo   float64
	}
	unaries := []unaryCase{
		{"Exp", func(z, x *tensor.Tensor[float64]) { z.Exp(x) }, math.Exp, -3},
		{"Log", func(z, x *tensor.Tensor[float64]) { z.Log(x) }, math.Log, 0.01},
		{"Sqrt", func(z, x *tensor.Tensor[float64]) { z.Sqrt(x) }, math.Sqrt, 0},
		{"Square", func(z, x *tensor.Tensor[float64]) { z.Square(x) }, func(v float64) float64 { return v * v }, -3},
		{"Neg", func(z, x *tensor.Tensor[float64]) { z.Neg(x) }, func(v float64) float64 { return -v }, -3},
		{"Tanh", func(z, x *tensor.Tensor[float64]) { z.Tanh(x) }, math.Tanh, -3},
		{"Sigmoid", func(z, x *tensor.Tensor[float64]) { z.Sigmoid(x) }, func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }, -3},
		{"Softplus", func(z, x *tensor.Tensor[float64]) { z.Softplus(x) }, func(v float64) float64 { return math.Log(1 + math.Exp(v)) }, -3},
		{"ReLU", func(z, x *tensor.Tensor[float64]) { z.ReLU(x) }, func(v float64) float64 { return math.Max(v, 0) }, -3},
		{"LeakyReLU", func(z, x *tensor.Tensor[float64]) { z.LeakyReLU(x, 0.3) }, func(v float64) float64 {
			if v > 0 {
				return v
			}
			return 0.3 * v
		}, -3},
		{"Hardtanh", func(z, x *tensor.Tensor[float64]) { z.Hardtanh(x, -1, 1) }, func(v float64) float64 { return math.Min(math.Max(v, -1), 1) }, -3},
		{"Scale", func(z, x *tensor.Tensor[float64]) { z.Scale(x, -2.5) }, func(v float64) float64 { return -2.5 * v }, -3},
		{"AddScalar", func(z, x *tensor.Tensor[float64]) { z.AddScalar(x, 0.5) }, func(v float64) float64 { return v + 0.5 }, -3},
	}
	for _, shape := range [][]int{{1}, {7}, {3, 5}, {2, 3, 4, 5}} {
		for _, c := range unaries {
			x := tensor.RandU[float64](rng, c.lo, 3, shape...)
			z := tensor.New[float64](shape...)
			c.run(z, x)
			for i, v := range x.Data() {
				if got, want := z.Data()[i], c.ref(v); math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
					t.Fatalf("%s(%v) = %v, want %v", c.name, v, got, want)
				}
			}
			// In place: z aliases x.
			c.run(x, x)
			for i := range x.Data() {
				if x.Data()[i] != z.Data()[i] {
					t.Fatalf("%s in place differs at %d", c.name, i)
				}
			}
		}
		x := tensor.RandU[float64](rng, 0.5, 2, shape...)
		y := tensor.RandU[float64](rng, 0.5, 2, shape...)
		binaries := []struct {
			name string
			got  *tensor.Tensor[float64]
			ref  func(a, b float64) float64
		}{
			{"Add", tensor.Add(x, y), func(a, b float64) float64 { return a + b }},
			{"Sub", tensor.Sub(x, y), func(a, b float64) float64 { return a - b }},
			{"Mul", tensor.Mul(x, y), func(a, b float64) float64 { return a * b }},
			{"Div", tensor.Div(x, y), func(a, b float64) float64 { return a / b }},
			{"AddScaled", tensor.New[float64](shape...).AddScaled(x, 3, y), func(a, b float64) float64 { return a + 3*b }},
			{"Axpy", x.Clone().Axpy(-2, y), func(a, b float64) float64 { return a - 2*b }},
		}
		for _, c := range binaries {
			for i := range x.Data() {
				if got, want := c.got.Data()[i], c.ref(x.Data()[i], y.Data()[i]); math.Abs(got-want) > 1e-14*math.Max(1, math.Abs(want)) {
					t.Fatalf("%s: element %d = %v, want %v", c.name, i, got, want)
				}
			}
		}
	}
}

func TestStableSigmoidSoftplus(t *testing.T) {
	x := tensor.FromSlice([]float32{-1000, -50, 0, 50, 1000})
	s := tensor.New[float32](5).Sigmoid(x)
	sp := tensor.New[float32](5).Softplus(x)
	for i, v := range x.Data() {
		if math.IsNaN(float64(s.Data()[i])) || math.IsInf(float64(sp.Data()[i]), 0) && v < 1e38 {
			t.Errorf("at %v: sigmoid %v softplus %v", v, s.Data()[i], sp.Data()[i])
		}
	}
	if s.Data()[0] != 0 || s.Data()[4] != 1 || s.Data()[2] != 0.5 {
		t.Errorf("sigmoid limits: %v", s.Data())
	}
	if sp.Data()[4] != 1000 || sp.Data()[0] != 0 {
		t.Errorf("softplus limits: %v", sp.Data())
	}
}

func TestBiasAndChannelSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, shape := range [][]int{{4, 3}, {2, 3, 5, 4}, {1, 3, 1, 1}} {
		x := tensor.RandN[float64](rng, 0, 1, shape...)
		bias := tensor.RandN[float64](rng, 0, 1, 3)
		z := tensor.New[float64](shape...).AddBias(x, bias)
		inner := x.Len() / (shape[0] * 3)
		for i, v := range x.Data() {
			c := (i / inner) % 3
			if z.Data()[i] != v+bias.Data()[c] {
				t.Fatalf("AddBias %v: element %d", shape, i)
			}
		}
		s := tensor.New[float64](3).SumPerChannel(x)
		want := make([]float64, 3)
		for i, v := range x.Data() {
			want[(i/inner)%3] += v
		}
		for c := range want {
			if math.Abs(s.Data()[c]-want[c]) > 1e-12 {
				t.Fatalf("SumPerChannel %v: channel %d = %v, want %v", shape, c, s.Data()[c], want[c])
			}
		}
	}
}

func TestReductions(t *testing.T) {
	x := tensor.FromSlice([]float64{
		1, 5, 2,
		7, -1, 7,
	}, 2, 3)
	if x.Sum() != 21 || x.Mean() != 3.5 || x.Max() != 7 {
		t.Errorf("Sum %v Mean %v Max %v", x.Sum(), x.Mean(), x.Max())
	}
	if got := tensor.New[float64](3).SumAxis(x, 0).Data(); got[0] != 8 || got[1] != 4 || got[2] != 9 {
		t.Errorf("SumAxis 0 = %v", got)
	}
	if got := tensor.New[float64](2).SumAxis(x, -1).Data(); got[0] != 8 || got[1] != 13 {
		t.Errorf("SumAxis -1 = %v", got)
	}
	if got := tensor.New[float64](2).MaxAxis(x, 1).Data(); got[0] != 5 || got[1] != 7 {
		t.Errorf("MaxAxis 1 = %v", got)
	}
	// A NaN propagates wherever it stands along the axis, as in PyTorch.
	nan := math.NaN()
	xn := tensor.FromSlice([]float64{1, nan, 3, nan, 2, 0, 5, 6, nan}, 3, 3)
	if got := tensor.New[float64](3).MaxAxis(xn, 1).Data(); !math.IsNaN(got[0]) || !math.IsNaN(got[1]) || !math.IsNaN(got[2]) {
		t.Errorf("MaxAxis with a NaN in each row (middle, first, last) = %v, want NaN in each", got)
	}
	// Of equal largest elements the first is kept: −0 before +0 stays −0.
	negZero := math.Copysign(0, -1)
	if got := tensor.New[float64](1).MaxAxis(tensor.FromSlice([]float64{negZero, 0}, 1, 2), 1).Data(); !math.Signbit(got[0]) {
		t.Errorf("MaxAxis of [−0 +0] = %v, want −0 (the first of equal elements)", got[0])
	}
	xc := tensor.FromSlice([]float64{1, nan, 3, nan, 2, 0}, 2, 3)
	if got := tensor.New[float64](3).MaxAxis(xc, 0).Data(); !math.IsNaN(got[0]) || !math.IsNaN(got[1]) || got[2] != 3 {
		t.Errorf("MaxAxis 0 of [[1 NaN 3] [NaN 2 0]] = %v, want [NaN NaN 3]", got)
	}
	if got := tensor.ArgMax(x, 1); got[0] != 1 || got[1] != 0 {
		t.Errorf("ArgMax 1 = %v (ties go to the first)", got)
	}
	if got := tensor.ArgMax(x, 0); got[0] != 1 || got[1] != 0 || got[2] != 1 {
		t.Errorf("ArgMax 0 = %v", got)
	}
	if got := tensor.FromSlice([]float64{3, 4}).Norm2(); got != 5 {
		t.Errorf("Norm2 = %v", got)
	}
	if got := tensor.FromSlice([]float32{3e30, 4e30}).Norm2(); math.Abs(got-5e30) > 1e24 {
		t.Errorf("Norm2 overflows: %v", got)
	}
	if got := tensor.Dot(x, x); got != 129 {
		t.Errorf("Dot = %v", got)
	}
}

func TestConcatSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for axis := 0; axis < 4; axis++ {
		a := tensor.RandN[float32](rng, 0, 1, 2, 3, 4, 5)
		shapeB := a.Shape()
		shapeB[axis] = 2
		b := tensor.RandN[float32](rng, 0, 1, shapeB...)
		c := tensor.Concat(axis, a, b)
		if c.Dim(axis) != a.Dim(axis)+2 {
			t.Fatalf("axis %d: concat shape %v", axis, c.Shape())
		}
		// Every element of a and b is where the index arithmetic puts it.
		for i := 0; i < a.Len(); i += 7 {
			idx := unravel(i, a.Shape())
			if c.At(idx...) != a.Data()[i] {
				t.Fatalf("axis %d: a element %v misplaced", axis, idx)
			}
		}
		for i := 0; i < b.Len(); i += 5 {
			idx := unravel(i, b.Shape())
			idx[axis] += a.Dim(axis)
			if c.At(idx...) != b.Data()[i] {
				t.Fatalf("axis %d: b element %v misplaced", axis, idx)
			}
		}
		parts := tensor.Split(c, axis, a.Dim(axis), 2)
		for i := range a.Data() {
			if parts[0].Data()[i] != a.Data()[i] {
				t.Fatalf("axis %d: split does not invert concat", axis)
			}
		}
		for i := range b.Data() {
			if parts[1].Data()[i] != b.Data()[i] {
				t.Fatalf("axis %d: split does not invert concat (second piece)", axis)
			}
		}
	}
}

func unravel(i int, shape []int) []int {
	idx := make([]int, len(shape))
	for k := len(shape) - 1; k >= 0; k-- {
		idx[k] = i % shape[k]
		i /= shape[k]
	}
	return idx
}

func TestMatMulFloat32MatchesFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, b := range tensor.Backends(2) {
		a64 := tensor.RandN[float64](rng, 0, 1, 37, 29)
		b64 := tensor.RandN[float64](rng, 0, 1, 29, 41)
		a32, b32 := toF32(a64), toF32(b64)
		c64 := tensor.MatMul(tensor.EngineFor[float64](b), a64, b64)
		c32 := tensor.MatMul(tensor.EngineFor[float32](b), a32, b32)
		for i, v := range c64.Data() {
			if math.Abs(float64(c32.Data()[i])-v) > 1e-5*math.Sqrt(29)*4 {
				t.Fatalf("%s: float32 %v vs float64 %v", b.Name(), c32.Data()[i], v)
			}
		}
	}
}

func toF32(x *tensor.Tensor[float64]) *tensor.Tensor[float32] {
	out := tensor.New[float32](x.Shape()...)
	for i, v := range x.Data() {
		out.Data()[i] = float32(v)
	}
	return out
}

// TestConvGradientsFiniteDifferences checks the backward passes against
// central differences of the forward in float64: for L = Σ dy ⊙ conv(x, w),
// ∂L/∂x and ∂L/∂w.
func TestConvGradientsFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	e := tensor.EngineFor[float64](tensor.Default())
	for _, p := range []tensor.ConvParams{{Stride: 1, Pad: 0}, {Stride: 1, Pad: 1}, {Stride: 2, Pad: 1}, {Stride: 2, Pad: 2}} {
		x := tensor.RandN[float64](rng, 0, 1, 2, 3, 6, 5)
		w := tensor.RandN[float64](rng, 0, 1, 4, 3, 3, 3)
		dy := tensor.RandN[float64](rng, 0, 1, tensor.Conv2DOutputShape(x.Shape(), w.Shape(), p)...)
		loss := func() float64 { return tensor.Dot(dy, tensor.Conv2D(e, x, w, nil, p)) }
		dx := tensor.New[float64](x.Shape()...)
		dw := tensor.New[float64](w.Shape()...)
		e.Conv2DBackwardData(dx, dy, w, p, false)
		e.Conv2DBackwardFilter(dw, nil, dy, x, p, false)
		for _, c := range []struct {
			name    string
			v, grad *tensor.Tensor[float64]
		}{{"x", x, dx}, {"w", w, dw}} {
			const h = 1e-5
			for i := range c.v.Data() {
				old := c.v.Data()[i]
				c.v.Data()[i] = old + h
				lp := loss()
				c.v.Data()[i] = old - h
				lm := loss()
				c.v.Data()[i] = old
				fd := (lp - lm) / (2 * h)
				if d := math.Abs(fd - c.grad.Data()[i]); d > 1e-7*math.Max(1, math.Abs(fd)) {
					t.Fatalf("%+v: ∂L/∂%s[%d] = %v, finite difference %v", p, c.name, i, c.grad.Data()[i], fd)
				}
			}
		}
	}
}

func TestReLUBackward(t *testing.T) {
	y32 := tensor.FromSlice([]float32{0, 1.5, 0, 3, 1e-40, 0})
	g32 := tensor.FromSlice([]float32{1, 2, 3, 4, 5, 6})
	z32 := tensor.Full[float32](10, 6).ReLUBackward(g32, y32, false)
	if want := []float32{0, 2, 0, 4, 5, 0}; !slices.Equal(z32.Data(), want) {
		t.Errorf("float32: %v, want %v", z32.Data(), want)
	}
	z32.ReLUBackward(g32, y32, true)
	if want := []float32{0, 4, 0, 8, 10, 0}; !slices.Equal(z32.Data(), want) {
		t.Errorf("float32 accumulate: %v, want %v", z32.Data(), want)
	}
	x64 := tensor.FromSlice([]float64{-1, 2, math.Copysign(0, -1), 0.5})
	y64 := tensor.New[float64](4).ReLU(x64)
	z64 := tensor.New[float64](4).ReLUBackward(tensor.FromSlice([]float64{1, 1, 1, 1}), y64, false)
	if want := []float64{0, 1, 0, 1}; !slices.Equal(z64.Data(), want) {
		t.Errorf("float64: %v, want %v", z64.Data(), want)
	}
}

// TestFloat32Maps compares the float32 maps (the vector kernels) with the
// math package over a dense grid and the edges of float32's range.
func TestFloat32Maps(t *testing.T) {
	var xs []float32
	for v := -120.0; v <= 120; v += 0.0137 {
		xs = append(xs, float32(v))
	}
	xs = append(xs, 0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 1e-7, 0.624, 0.626, 9.09, 9.11, 88.7, 88.75, -103.9, float32(math.Inf(1)), float32(math.Inf(-1)))
	x := tensor.FromSlice(xs)
	for _, c := range []struct {
		name string
		run  func(z, x *tensor.Tensor[float32])
		ref  func(float64) float64
	}{
		{"Exp", func(z, x *tensor.Tensor[float32]) { z.Exp(x) }, math.Exp},
		{"Tanh", func(z, x *tensor.Tensor[float32]) { z.Tanh(x) }, math.Tanh},
		{"Sigmoid", func(z, x *tensor.Tensor[float32]) { z.Sigmoid(x) }, func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }},
		{"Softplus", func(z, x *tensor.Tensor[float32]) { z.Softplus(x) }, tensor.SoftplusOf},
		{"Log", func(z, x *tensor.Tensor[float32]) { z.Log(x) }, math.Log},
		{"Sqrt", func(z, x *tensor.Tensor[float32]) { z.Sqrt(x) }, math.Sqrt},
	} {
		z := tensor.New[float32](len(xs))
		c.run(z, x)
		for i, v := range xs {
			want, got := float32(c.ref(float64(v))), z.Data()[i]
			if got == want || got != got && want != want {
				continue
			}
			d := math.Abs(float64(got) - float64(want))
			if !(d <= 2.5e-7*math.Abs(float64(want))) && !(math.Abs(float64(want)) < 1.2e-38 && d < 1.2e-38) {
				t.Fatalf("%s(%v) = %v, want %v", c.name, v, got, want)
			}
		}
		n := tensor.New[float32](1)
		c.run(n, tensor.FromSlice([]float32{float32(math.NaN())}))
		if !math.IsNaN(float64(n.Data()[0])) {
			t.Errorf("%s(NaN) = %v", c.name, n.Data()[0])
		}
	}
}

// TestActivationBackward checks TanhBackward, SigmoidBackward and
// SoftplusBackward in float32 (the vector tanh for softplus) against float64,
// set and accumulated, and in place (z = g), in both precisions.
func TestActivationBackward(t *testing.T) {
	var xs []float64
	for v := -110.0; v <= 110; v += 0.173 {
		xs = append(xs, v)
	}
	xs = append(xs, 0, 1e-30, -1e-30, 1e-7, math.Inf(1), math.Inf(-1))
	n := len(xs)
	x64 := tensor.FromSlice(xs)
	x32 := tensor.New[float32](n)
	g64 := tensor.New[float64](n)
	for i, v := range xs {
		x32.Data()[i] = float32(v)
		g64.Data()[i] = 1 + float64(i%7)/8
	}
	g32 := tensor.New[float32](n)
	for i, v := range g64.Data() {
		g32.Data()[i] = float32(v)
	}
	for _, c := range []struct {
		name     string
		fwd32    func(z, x *tensor.Tensor[float32])
		fwd64    func(z, x *tensor.Tensor[float64])
		bwd32    func(z, g, y *tensor.Tensor[float32], acc bool)
		bwd64    func(z, g, y *tensor.Tensor[float64], acc bool)
		deriv    func(x float64) float64
		relative bool
	}{
		{"Tanh", func(z, x *tensor.Tensor[float32]) { z.Tanh(x) }, func(z, x *tensor.Tensor[float64]) { z.Tanh(x) },
			func(z, g, y *tensor.Tensor[float32], acc bool) { z.TanhBackward(g, y, acc) }, func(z, g, y *tensor.Tensor[float64], acc bool) { z.TanhBackward(g, y, acc) },
			func(x float64) float64 { return 1 - math.Tanh(x)*math.Tanh(x) }, false},
		{"Sigmoid", func(z, x *tensor.Tensor[float32]) { z.Sigmoid(x) }, func(z, x *tensor.Tensor[float64]) { z.Sigmoid(x) },
			func(z, g, y *tensor.Tensor[float32], acc bool) { z.SigmoidBackward(g, y, acc) }, func(z, g, y *tensor.Tensor[float64], acc bool) { z.SigmoidBackward(g, y, acc) },
			func(x float64) float64 { s := tensor.SigmoidOf(x); return s * (1 - s) }, false},
		{"Softplus", func(z, x *tensor.Tensor[float32]) { z.Softplus(x) }, func(z, x *tensor.Tensor[float64]) { z.Softplus(x) },
			func(z, g, y *tensor.Tensor[float32], acc bool) { z.SoftplusBackward(g, y, acc) }, func(z, g, y *tensor.Tensor[float64], acc bool) { z.SoftplusBackward(g, y, acc) },
			tensor.SigmoidOf, true},
	} {
		y32, y64 := tensor.New[float32](n), tensor.New[float64](n)
		c.fwd32(y32, x32)
		c.fwd64(y64, x64)
		z32, z64 := tensor.New[float32](n), tensor.New[float64](n)
		c.bwd32(z32, g32, y32, false)
		c.bwd64(z64, g64, y64, false)
		for i, x := range xs {
			want := g64.Data()[i] * c.deriv(x)
			if d := math.Abs(z64.Data()[i] - want); d > 1e-15*math.Abs(want)+1e-300 && !(d < 1e-15 && !c.relative) {
				t.Errorf("float64 %sBackward at x = %g: %g, want %g", c.name, x, z64.Data()[i], want)
			}
			// float32, against the derivative at x rounded to float32:
			// relative accuracy for softplus's σ; tanh' and σ' are computed
			// from y, so the error is absolute, some ulps of 1.
			want = float64(g32.Data()[i]) * c.deriv(float64(x32.Data()[i]))
			tol := 1e-6 * math.Abs(want)
			if !c.relative {
				tol += 4e-7
			} else if math.Abs(want) < 1e-37 {
				tol += 1e-44
			}
			if got := float64(z32.Data()[i]); !(math.Abs(got-want) <= tol) {
				t.Errorf("float32 %sBackward at x = %g: %g, want %g", c.name, x, got, want)
			}
		}
		acc := z32.Clone()
		c.bwd32(acc, g32, y32, true)
		in := g32.Clone()
		c.bwd32(in, in, y32, false)
		for i, v := range z32.Data() {
			if acc.Data()[i] != 2*v || in.Data()[i] != v {
				t.Fatalf("float32 %sBackward at x = %g: accumulated %g, in place %g, for %g", c.name, xs[i], acc.Data()[i], in.Data()[i], v)
			}
		}
		acc64 := z64.Clone()
		c.bwd64(acc64, g64, y64, true)
		in64 := g64.Clone()
		c.bwd64(in64, in64, y64, false)
		for i, v := range z64.Data() {
			if acc64.Data()[i] != 2*v || in64.Data()[i] != v {
				t.Fatalf("float64 %sBackward at x = %g: accumulated %g, in place %g, for %g", c.name, xs[i], acc64.Data()[i], in64.Data()[i], v)
			}
		}
	}
}
