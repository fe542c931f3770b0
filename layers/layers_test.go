package layers_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/tensor"
)

type ag64 = autograd.Var[float64]
type tape64 = autograd.Tape[float64]

// awayFrom returns a tensor of the given shape whose elements have random
// signs and magnitudes in [lo, hi): inputs kept away from the kinks of
// ReLU (0) and Hardtanh (±1).
func awayFrom(rng *rand.Rand, lo, hi float64, shape ...int) *tensor.Tensor[float64] {
	x := tensor.New[float64](shape...)
	for i := range x.Data() {
		v := lo + (hi-lo)*rng.Float64()
		if rng.IntN(2) == 0 {
			v = -v
		}
		x.Data()[i] = v
	}
	return x
}

// paperField is the paper's vector field f for c channels and nhid hidden
// ones: cat t → conv1x1 → ReLU → cat t → conv3x3 (pad 1) → ReLU → cat t →
// conv1x1.
func paperField[T tensor.Float](rng *rand.Rand, c, nhid int) *layers.Sequential[T] {
	return layers.NewSequential[T]().
		Add("t1", layers.TimeConcat[T]{}).
		Add("conv1", layers.NewConv2D[T](rng, c+1, nhid, 1, tensor.ConvParams{})).
		Add("relu1", layers.ReLU[T]{}).
		Add("t2", layers.TimeConcat[T]{}).
		Add("conv2", layers.NewConv2D[T](rng, nhid+1, nhid, 3, tensor.ConvParams{Pad: 1})).
		Add("relu2", layers.ReLU[T]{}).
		Add("t3", layers.TimeConcat[T]{}).
		Add("conv3", layers.NewConv2D[T](rng, nhid+1, c, 1, tensor.ConvParams{}))
}

func noBias[T tensor.Float, M interface {
	*layers.Linear[T] | *layers.Conv2D[T]
}](m M) M {
	switch l := any(m).(type) {
	case *layers.Linear[T]:
		l.Bias = nil
	case *layers.Conv2D[T]:
		l.Bias = nil
	}
	return m
}

// TestGradients runs every layer through autograd's gradient checker in
// float64: the gradients of its parameters and of its input.
func TestGradients(t *testing.T) {
	labels := []int{2, 0, 1, 2, 1}
	target := tensor.RandN[float64](rand.New(rand.NewPCG(9, 9)), 0, 1, 5, 3)
	for _, tc := range []struct {
		name   string
		module func(rng *rand.Rand) layers.Module[float64]
		in     []int
		lo, hi float64 // input magnitudes
		time   bool    // run with ForwardT at t = 0.7
		loss   func(y ag64) ag64
	}{
		{name: "Linear", module: func(r *rand.Rand) layers.Module[float64] { return layers.NewLinear[float64](r, 4, 3) }, in: []int{5, 4}},
		{name: "Linear no bias", module: func(r *rand.Rand) layers.Module[float64] { return noBias[float64](layers.NewLinear[float64](r, 4, 3)) }, in: []int{5, 4}},
		{name: "Conv2D 3x3 pad 1", module: func(r *rand.Rand) layers.Module[float64] {
			return layers.NewConv2D[float64](r, 2, 3, 3, tensor.ConvParams{Pad: 1})
		}, in: []int{2, 2, 5, 5}},
		{name: "Conv2D 3x3 stride 2", module: func(r *rand.Rand) layers.Module[float64] {
			return layers.NewConv2D[float64](r, 2, 3, 3, tensor.ConvParams{Stride: 2})
		}, in: []int{2, 2, 7, 6}},
		{name: "Conv2D 3x3 stride 2 pad 1 no bias", module: func(r *rand.Rand) layers.Module[float64] {
			return noBias[float64](layers.NewConv2D[float64](r, 2, 2, 3, tensor.ConvParams{Stride: 2, Pad: 1}))
		}, in: []int{1, 2, 6, 6}},
		{name: "Conv2D 1x1", module: func(r *rand.Rand) layers.Module[float64] {
			return layers.NewConv2D[float64](r, 3, 2, 1, tensor.ConvParams{})
		}, in: []int{2, 3, 4, 4}},
		{name: "ReLU", module: func(*rand.Rand) layers.Module[float64] { return layers.ReLU[float64]{} }, in: []int{3, 4}},
		{name: "LeakyReLU", module: func(*rand.Rand) layers.Module[float64] { return layers.LeakyReLU[float64]{Slope: 0.3} }, in: []int{2, 3, 2, 2}},
		{name: "ELU", module: func(*rand.Rand) layers.Module[float64] { return layers.ELU[float64]{Alpha: 1} }, in: []int{2, 3, 2, 2}},
		{name: "Tanh", module: func(*rand.Rand) layers.Module[float64] { return layers.Tanh[float64]{} }, in: []int{3, 4}},
		{name: "Sigmoid", module: func(*rand.Rand) layers.Module[float64] { return layers.Sigmoid[float64]{} }, in: []int{3, 4}},
		{name: "Softplus", module: func(*rand.Rand) layers.Module[float64] { return layers.Softplus[float64]{} }, in: []int{3, 4}, lo: 0, hi: 5},
		{name: "Hardtanh inside", module: func(*rand.Rand) layers.Module[float64] { return layers.NewHardtanh[float64]() }, in: []int{3, 4}, lo: 0.1, hi: 0.9},
		{name: "Hardtanh outside", module: func(*rand.Rand) layers.Module[float64] { return layers.Hardtanh[float64]{Min: -0.5, Max: 2} }, in: []int{3, 4}, lo: 2.1, hi: 3},
		{name: "Flatten", module: func(*rand.Rand) layers.Module[float64] { return layers.Flatten[float64]{} }, in: []int{2, 3, 2, 2}},
		{name: "Dropout", module: func(*rand.Rand) layers.Module[float64] { return freshDropout{p: 0.4} }, in: []int{4, 5}},
		{name: "Dropout eval", module: func(*rand.Rand) layers.Module[float64] {
			d := layers.NewDropout[float64](0.4, rand.New(rand.NewPCG(1, 1)))
			d.SetTraining(false)
			return d
		}, in: []int{4, 5}},
		{name: "Sequential MLP", module: func(r *rand.Rand) layers.Module[float64] {
			return layers.NewSequential[float64](layers.NewLinear[float64](r, 4, 6), layers.Tanh[float64]{}, layers.NewLinear[float64](r, 6, 3))
		}, in: []int{5, 4}},
		{name: "paper field", module: func(r *rand.Rand) layers.Module[float64] { return paperField[float64](r, 2, 3) }, in: []int{2, 2, 4, 4}, time: true},
		{name: "classifier", module: func(r *rand.Rand) layers.Module[float64] {
			return layers.NewSequential[float64](
				layers.NewConv2D[float64](r, 1, 2, 3, tensor.ConvParams{Pad: 1}), layers.ReLU[float64]{},
				layers.NewConv2D[float64](r, 2, 2, 3, tensor.ConvParams{Stride: 2, Pad: 1}), layers.LeakyReLU[float64]{Slope: 0.3},
				layers.Flatten[float64]{}, layers.NewLinear[float64](r, 2*3*3, 3))
		}, in: []int{5, 1, 6, 6}, loss: func(y ag64) ag64 { return layers.SoftmaxCrossEntropy(y, labels) }},
		{name: "MSE", module: func(r *rand.Rand) layers.Module[float64] { return layers.NewLinear[float64](r, 4, 3) }, in: []int{5, 4},
			loss: func(y ag64) ag64 { return layers.MSE(y, target) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			m := tc.module(rng)
			lo, hi := tc.lo, tc.hi
			if hi == 0 {
				lo, hi = 0.2, 1.2
			}
			x := autograd.NewParam("x", awayFrom(rng, lo, hi, tc.in...))
			f := func(tp *tape64) ag64 {
				var y ag64
				if tc.time {
					y = layers.ForwardT(m, tp, 0.7, tp.Param(x))
				} else {
					y = m.Forward(tp, tp.Param(x))
				}
				if tc.loss != nil {
					y = tc.loss(y)
				}
				return y
			}
			params := append(m.Params(), x)
			rep, err := autograd.CheckGradients(f, params, autograd.GradCheckOptions{Seed: 5})
			if err != nil {
				t.Fatal(err)
			}
			if want := sizeOf(params); rep.Checked != want {
				t.Fatalf("checked %d elements, want %d", rep.Checked, want)
			}
		})
	}
}

func sizeOf[T tensor.Float](ps []*autograd.Param[T]) int {
	n := 0
	for _, p := range ps {
		n += p.Value.Len()
	}
	return n
}

// freshDropout is a Dropout with the same mask at every call (a new
// generator of a fixed seed each time), as the gradient checker needs.
type freshDropout struct{ p float64 }

func (d freshDropout) Forward(tp *tape64, x ag64) ag64 {
	return layers.NewDropout[float64](d.p, rand.New(rand.NewPCG(7, 7))).Forward(tp, x)
}
func (freshDropout) Params() []*autograd.Param[float64] { return nil }

type initCase struct {
	name  string
	w, b  *autograd.Param[float32]
	fanIn int
}

func TestInitBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	l := layers.NewLinear[float32](rng, 300, 200)
	c := layers.NewConv2D[float32](rng, 51, 50, 3, tensor.ConvParams{Pad: 1})
	if !l.Weight.Value.HasShape(200, 300) || !l.Bias.Value.HasShape(200) || !c.Weight.Value.HasShape(50, 51, 3, 3) || !c.Bias.Value.HasShape(50) {
		t.Fatalf("shapes %v %v %v %v", l.Weight.Value.Shape(), l.Bias.Value.Shape(), c.Weight.Value.Shape(), c.Bias.Value.Shape())
	}
	for _, tc := range []initCase{{"Linear", l.Weight, l.Bias, 300}, {"Conv2D", c.Weight, c.Bias, 51 * 9}} {
		bound := 1 / math.Sqrt(float64(tc.fanIn))
		for _, p := range []*autograd.Param[float32]{tc.w, tc.b} {
			var lo, hi, sum, sq float64
			for _, v := range p.Value.Data() {
				v := float64(v)
				lo, hi = min(lo, v), max(hi, v)
				sum += v
				sq += v * v
			}
			n := float64(p.Value.Len())
			if lo < -bound || hi >= bound {
				t.Errorf("%s %s: values in [%v, %v], outside ±%v", tc.name, p.Name, lo, hi, bound)
			}
			// Uniform on ±b: mean 0, variance b²/3; the extremes near ±b.
			if n > 1000 {
				mean, variance := sum/n, sq/n-(sum/n)*(sum/n)
				if math.Abs(mean) > 4*bound/math.Sqrt(3*n) || math.Abs(variance/(bound*bound/3)-1) > 0.05 || hi < 0.99*bound || lo > -0.99*bound {
					t.Errorf("%s %s: mean %v, variance %v (want 0, %v), range [%v, %v]", tc.name, p.Name, mean, variance, bound*bound/3, lo, hi)
				}
			}
		}
	}
}

func TestInitFunctions(t *testing.T) {
	for _, tc := range []struct {
		shape []int
		fanIn int
	}{{[]int{10, 3}, 3}, {[]int{4, 3, 5, 5}, 75}, {[]int{4, 0}, 0}, {[]int{2, 7, 1, 1}, 7}} {
		if got := layers.FanIn(tc.shape); got != tc.fanIn {
			t.Errorf("FanIn(%v) = %d, want %d", tc.shape, got, tc.fanIn)
		}
	}
	if b := layers.BiasBound(16); b != 0.25 {
		t.Errorf("BiasBound(16) = %v", b)
	}
	if b := layers.BiasBound(0); b != 0 {
		t.Errorf("BiasBound(0) = %v", b)
	}
	// a = 0 (ReLU gain √2): bound = √2·√(3/6) = 1; a = √5: bound = 1/√6.
	for _, tc := range []struct{ a, bound float64 }{{0, 1}, {math.Sqrt(5), 1 / math.Sqrt(6)}} {
		rng := rand.New(rand.NewPCG(5, 5))
		w := layers.KaimingUniform(rng, tensor.New[float64](1000, 6), tc.a, 6)
		ref := rand.New(rand.NewPCG(5, 5))
		for i, v := range w.Data() {
			if want := -tc.bound + 2*tc.bound*ref.Float64(); math.Abs(v-want) > 1e-15 {
				t.Fatalf("a = %v: w[%d] = %v, want %v", tc.a, i, v, want)
			}
		}
	}
	if w := layers.KaimingUniform(rand.New(rand.NewPCG(1, 1)), tensor.Full[float64](3, 2, 0), math.Sqrt(5), 0); w.Len() != 0 {
		t.Errorf("empty weight: %v", w)
	}
}

// TestInitReproducible checks that a seed fixes the initialisation, drawn
// weight first, then bias, in row-major order.
func TestInitReproducible(t *testing.T) {
	a := layers.NewLinear[float64](rand.New(rand.NewPCG(42, 0)), 3, 2)
	b := layers.NewLinear[float64](rand.New(rand.NewPCG(42, 0)), 3, 2)
	c := layers.NewLinear[float64](rand.New(rand.NewPCG(43, 0)), 3, 2)
	ref := rand.New(rand.NewPCG(42, 0))
	bound := 1 / math.Sqrt(3)
	for i := range 6 {
		want := -bound + 2*bound*ref.Float64()
		if math.Abs(a.Weight.Value.Data()[i]-want) > 1e-15 || a.Weight.Value.Data()[i] != b.Weight.Value.Data()[i] {
			t.Fatalf("weight[%d] = %v, %v; want %v", i, a.Weight.Value.Data()[i], b.Weight.Value.Data()[i], want)
		}
	}
	for i := range 2 {
		if want := -bound + 2*bound*ref.Float64(); math.Abs(a.Bias.Value.Data()[i]-want) > 1e-15 {
			t.Fatalf("bias[%d] = %v, want %v", i, a.Bias.Value.Data()[i], want)
		}
	}
	if a.Weight.Value.Data()[0] == c.Weight.Value.Data()[0] {
		t.Errorf("different seeds gave the same weights")
	}
}

func TestModulePaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	f := paperField[float32](rng, 5, 50)
	model := layers.NewSequential[float32]().
		Add("f", f).
		Add("flatten", layers.Flatten[float32]{}).
		Add("fc", layers.NewLinear[float32](rng, 5*28*28, 10))
	var names []string
	for _, p := range model.Params() {
		names = append(names, p.Name)
	}
	want := "f.conv1.weight f.conv1.bias f.conv2.weight f.conv2.bias f.conv3.weight f.conv3.bias fc.weight fc.bias"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("paths %s\nwant  %s", got, want)
	}
	// Positional names, as nn.Sequential's, and a root prefix.
	seq := layers.NewSequential[float32](layers.NewLinear[float32](rng, 2, 3), layers.ReLU[float32]{}, layers.NewLinear[float32](rng, 3, 1))
	layers.Prefix("head", seq)
	names = names[:0]
	for _, p := range seq.Params() {
		names = append(names, p.Name)
	}
	if got := strings.Join(names, " "); got != "head.0.weight head.0.bias head.2.weight head.2.bias" {
		t.Errorf("paths %s", got)
	}
	if n, m := seq.Child(1); n != "1" || seq.Len() != 3 {
		t.Errorf("child 1 is %q %T of %d", n, m, seq.Len())
	}
	mustPanic(t, "duplicate child", `already called "fc"`, func() { model.Add("fc", layers.ReLU[float32]{}) })
	mustPanic(t, "dotted child", "contains a dot", func() { model.Add("a.b", layers.ReLU[float32]{}) })
}

func mustPanic(t *testing.T, name, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Errorf("%s: no panic", name)
		} else if !strings.Contains(fmt.Sprint(r), want) {
			t.Errorf("%s: panic %q does not mention %q", name, r, want)
		}
	}()
	f()
}

func TestShapeMisuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	tp := autograd.NewTape(tensor.EngineFor[float32](tensor.Gonum(1)))
	l := layers.NewLinear[float32](rng, 4, 3)
	mustPanic(t, "Linear", "[2 5]", func() { l.Forward(tp, tp.Const(tensor.New[float32](2, 5))) })
	mustPanic(t, "Linear", "[3 4]", func() { l.Forward(tp, tp.Const(tensor.New[float32](2, 5))) })
	c := layers.NewConv2D[float32](rng, 3, 4, 3, tensor.ConvParams{})
	mustPanic(t, "Conv2D", "[1 2 5 5]", func() { c.Forward(tp, tp.Const(tensor.New[float32](1, 2, 5, 5))) })
	mustPanic(t, "NewDropout", "outside [0, 1]", func() { layers.NewDropout[float32](1.5, rng) })
	mustPanic(t, "NewConv2D", "bad sizes", func() { layers.NewConv2D[float32](rng, 1, 1, 0, tensor.ConvParams{}) })
}

func TestDropout(t *testing.T) {
	const n = 200000
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Gonum(1)))
	for _, p := range []float64{0.1, 0.3, 0.5, 0.9} {
		tp.Reset()
		d := layers.NewDropout[float64](p, rand.New(rand.NewPCG(uint64(100*p), 1)))
		x := tp.Input(tensor.Full[float64](2, n))
		y := d.Forward(tp, x)
		zeros, sum := 0, 0.0
		for _, v := range y.Value().Data() {
			switch {
			case v == 0:
				zeros++
			case math.Abs(v-2/(1-p)) > 1e-12:
				t.Fatalf("p = %v: kept element %v, want %v", p, v, 2/(1-p))
			}
			sum += v
		}
		// Zeros ~ Binomial(n, p): within 5 standard deviations.
		sd := math.Sqrt(n * p * (1 - p))
		if math.Abs(float64(zeros)-n*p) > 5*sd {
			t.Errorf("p = %v: %d zeros of %d, want %v ± %v", p, zeros, n, n*p, 5*sd)
		}
		// The mean is preserved: E[y] = x.
		if mean := sum / n; math.Abs(mean-2) > 5*2*sd/n/(1-p) {
			t.Errorf("p = %v: mean %v, want 2", p, mean)
		}
		// The gradient of Σy is the mask.
		tp.Backward(autograd.Sum(y))
		g := x.Grad().Data()
		for i, v := range y.Value().Data() {
			if g[i] != v/2 {
				t.Fatalf("p = %v: gradient %v where y = %v", p, g[i], v)
			}
		}
	}

	// Evaluation mode, p = 0: the identity, the very same Var.
	tp.Reset()
	x := tp.Const(tensor.Full[float64](1, 10))
	d := layers.NewDropout[float64](0.5, rand.New(rand.NewPCG(1, 1)))
	model := layers.NewSequential[float64](layers.ReLU[float64]{}, d)
	layers.SetTraining[float64](model, false)
	if d.Training() || d.Forward(tp, x) != x {
		t.Errorf("evaluation mode is not the identity")
	}
	layers.SetTraining[float64](model, true)
	if !d.Training() || d.Forward(tp, x) == x {
		t.Errorf("training mode again is the identity")
	}
	if y := layers.NewDropout[float64](0, rand.New(rand.NewPCG(1, 1))).Forward(tp, x); y != x {
		t.Errorf("p = 0 is not the identity")
	}
	y := layers.NewDropout[float64](1, rand.New(rand.NewPCG(1, 1))).Forward(tp, x)
	for _, v := range y.Value().Data() {
		if v != 0 {
			t.Fatalf("p = 1 keeps %v", v)
		}
	}

	// The seed fixes the masks.
	a := layers.NewDropout[float64](0.5, rand.New(rand.NewPCG(9, 9))).Forward(tp, x).Value().Data()
	b := layers.NewDropout[float64](0.5, rand.New(rand.NewPCG(9, 9))).Forward(tp, x).Value().Data()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different masks at %d", i)
		}
	}
}

func TestTimeConcat(t *testing.T) {
	tp := autograd.NewTape(tensor.EngineFor[float32](tensor.Gonum(1)))
	x := tp.Const(tensor.FromSlice([]float32{1, 2, 3, 4, 5, 6, 7, 8}, 2, 1, 2, 2))
	y := layers.TimeConcat[float32]{}.ForwardT(tp, 0.25, x)
	want := []float32{1, 2, 3, 4, 0.25, 0.25, 0.25, 0.25, 5, 6, 7, 8, 0.25, 0.25, 0.25, 0.25}
	if !y.Value().HasShape(2, 2, 2, 2) || fmt.Sprint(y.Value().Data()) != fmt.Sprint(want) {
		t.Errorf("ForwardT = %v", y.Value())
	}
	// Through a nested Sequential, as an ODE right-hand side f(h, t).
	inner := layers.NewSequential[float32](layers.TimeConcat[float32]{})
	outer := layers.NewSequential[float32](layers.ReLU[float32]{}, inner, layers.TimeConcat[float32]{})
	z := outer.ForwardT(tp, 2, x)
	if !z.Value().HasShape(2, 3, 2, 2) || z.Value().At(1, 2, 1, 1) != 2 || z.Value().At(0, 1, 0, 0) != 2 {
		t.Errorf("nested ForwardT = %v", z.Value())
	}
	if y := layers.ForwardT[float32](layers.ReLU[float32]{}, tp, 5, x); !y.Value().HasShape(2, 1, 2, 2) {
		t.Errorf("ForwardT of a plain module changed the shape: %v", y.Shape())
	}
	mustPanic(t, "Forward", "needs a time", func() { outer.Forward(tp, x) })
	// TimeConcat is a TimeModule only: no Forward to call by mistake.
	var tc any = layers.TimeConcat[float32]{}
	if _, ok := tc.(layers.Module[float32]); ok {
		t.Error("TimeConcat is a Module")
	}
	if _, ok := tc.(layers.TimeModule[float32]); !ok {
		t.Error("TimeConcat is not a TimeModule")
	}
	// A Layer that is neither a Module nor a TimeModule is refused.
	var bare layers.Layer[float32] = paramsOnly{}
	mustPanic(t, "Add", "neither a Module nor a TimeModule", func() { layers.NewSequential[float32]().Add("p", bare) })
	mustPanic(t, "ForwardT", "neither a Module nor a TimeModule", func() { layers.ForwardT(bare, tp, 1, x) })
}

// paramsOnly lists parameters but records nothing: neither a Module nor a
// TimeModule.
type paramsOnly struct{}

func (paramsOnly) Params() []*autograd.Param[float32] { return nil }

// TestModuleCheckpoint saves a real model's parameters and loads them into a
// differently initialised copy: both then compute the same output.
func TestModuleCheckpoint(t *testing.T) {
	build := func(seed uint64) *layers.Sequential[float32] {
		rng := rand.New(rand.NewPCG(seed, 0))
		m := layers.NewSequential[float32]().
			Add("f", paperField[float32](rng, 2, 4)).
			Add("flatten", layers.Flatten[float32]{}).
			Add("fc", layers.NewLinear[float32](rng, 2*5*5, 3))
		return m
	}
	a, b := build(1), build(2)
	path := filepath.Join(t.TempDir(), "model.safetensors")
	if err := layers.SaveParams(path, a.Params(), map[string]string{"model": "node"}); err != nil {
		t.Fatal(err)
	}
	meta, err := layers.LoadParams(path, b.Params())
	if err != nil {
		t.Fatal(err)
	}
	if meta["model"] != "node" {
		t.Errorf("metadata %v", meta)
	}
	x := tensor.RandN[float32](rand.New(rand.NewPCG(3, 3)), 0, 1, 2, 2, 5, 5)
	tp := autograd.NewTape(tensor.EngineFor[float32](tensor.Gonum(1)))
	ya := a.ForwardT(tp, 0.5, tp.Const(x)).Value().Clone()
	yb := b.ForwardT(tp, 0.5, tp.Const(x)).Value()
	for i, v := range ya.Data() {
		if yb.Data()[i] != v {
			t.Fatalf("output %d: %v after loading, %v saved", i, yb.Data()[i], v)
		}
	}
}

// TestSequentialFusion: a Sequential records Linear/Conv2D + activation
// and TimeConcat + Conv2D or Linear (+ activation) as fused ops; values and gradients
// equal those of the children run one at a time.
func TestSequentialFusion(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	mlp := layers.NewSequential[float64](
		layers.NewLinear[float64](rng, 3, 8), layers.Tanh[float64]{},
		layers.NewLinear[float64](rng, 8, 8), layers.Softplus[float64]{},
		layers.NewLinear[float64](rng, 8, 8), layers.LeakyReLU[float64]{Slope: 0.2},
		layers.NewLinear[float64](rng, 8, 8), layers.LeakyReLU[float64]{Slope: -0.5}, // not fusable
		layers.NewLinear[float64](rng, 8, 2), layers.Sigmoid[float64]{})
	conv := paperField[float64](rng, 2, 4)
	conv.Add("relu3", layers.ReLU[float64]{})
	timed := layers.NewSequential[float64](
		layers.TimeConcat[float64]{}, layers.NewLinear[float64](rng, 4, 8), layers.Tanh[float64]{},
		layers.TimeConcat[float64]{}, layers.NewLinear[float64](rng, 9, 3))
	for _, c := range []struct {
		name  string
		m     *layers.Sequential[float64]
		shape []int
	}{
		{"mlp", mlp, []int{5, 3}},
		{"paper field", conv, []int{2, 2, 5, 5}},
		{"timed mlp", timed, []int{5, 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := tensor.RandN[float64](rng, 0, 1, c.shape...)
			r := tensor.New[float64]()
			run := func(fused bool) (*tensor.Tensor[float64], []*tensor.Tensor[float64]) {
				autograd.ZeroGrads(c.m.Params())
				tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Gonum(1)))
				var y ag64
				if fused {
					y = c.m.ForwardT(tp, 0.3, tp.Input(x))
				} else {
					y = tp.Input(x)
					for i := 0; i < c.m.Len(); i++ {
						_, m := c.m.Child(i)
						y = layers.ForwardT(m, tp, 0.3, y)
					}
				}
				if r.Len() != y.Len() {
					r = tensor.RandN[float64](rand.New(rand.NewPCG(1, 1)), 0, 1, y.Shape()...)
				}
				if err := tp.Backward(autograd.Sum(autograd.Mul(y, tp.Const(r)))); err != nil {
					t.Fatal(err)
				}
				var gs []*tensor.Tensor[float64]
				for _, p := range c.m.Params() {
					gs = append(gs, p.Grad.Clone())
				}
				return y.Value().Clone(), gs
			}
			want, wantG := run(false)
			got, gotG := run(true)
			near := func(what string, a, b *tensor.Tensor[float64]) {
				t.Helper()
				for i, v := range a.Data() {
					if u := b.Data()[i]; math.Abs(v-u) > 1e-12*math.Max(1, math.Abs(u)) {
						t.Fatalf("%s element %d: fused %v, one at a time %v", what, i, v, u)
					}
				}
			}
			near("output", got, want)
			for i, p := range c.m.Params() {
				near(p.Name, gotG[i], wantG[i])
			}
		})
	}
}
