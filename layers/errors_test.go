package layers_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/tensor"
)

// recovered runs f under tensor.Recover and returns the error it made of
// f's panic, and the panic value it let through (nil if none).
func recovered(f func()) (err error, through any) {
	defer func() { through = recover() }()
	func() {
		defer tensor.Recover(&err)
		f()
	}()
	return err, nil
}

// TestMisusePanicsTyped: a bad size panics with a *tensor.ShapeError of
// the layer's name, which tensor.Recover turns into that error, naming the
// sizes; any other misuse panics with an error (not a string) that
// tensor.Recover lets through, as autograd's.
func TestMisusePanicsTyped(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	tp := autograd.NewTape(tensor.EngineFor[float32](tensor.Default()))
	x := tp.Const(tensor.New[float32](1, 2))
	gelu := layers.NewRNNCell[float32](rng, 2, 2, layers.RNNTanh)
	gelu.Nonlinearity = "gelu"
	seq := layers.NewSequential[float32]().Add("fc", layers.NewLinear[float32](rng, 2, 2))
	for _, tc := range []struct {
		name  string
		f     func()
		shape bool
		want  []string
	}{
		{"NewLinear", func() { layers.NewLinear[float32](rng, -3, 4) }, true, []string{"layers.NewLinear", "-3 → 4", "[4, -3]"}},
		{"NewConv2D", func() { layers.NewConv2D[float32](rng, 2, 3, 0, tensor.ConvParams{}) }, true, []string{"layers.NewConv2D", "2 → 3 channels", "kernel 0", "[3, 2, 0, 0]"}},
		{"NewConv2D stride", func() { layers.NewConv2D[float32](rng, 2, 3, 1, tensor.ConvParams{Stride: -1}) }, true, []string{"layers.NewConv2D", "stride -1"}},
		{"NewConv2D padding", func() { layers.NewConv2D[float32](rng, 2, 3, 1, tensor.ConvParams{Pad: -2}) }, true, []string{"layers.NewConv2D", "padding -2"}},
		{"NewConv2D out", func() { layers.NewConv2D[float32](rng, 2, -3, 1, tensor.ConvParams{}) }, true, []string{"layers.NewConv2D", "2 → -3"}},
		{"NewGroupNorm", func() { layers.NewGroupNorm[float32](4, 6) }, true, []string{"layers.NewGroupNorm", "4 groups", "6 channels"}},
		{"NewGroupNorm zero", func() { layers.NewGroupNorm[float32](0, 6) }, true, []string{"layers.NewGroupNorm", "0 groups"}},
		{"NewGRUCell", func() { layers.NewGRUCell[float32](rng, 3, -1) }, true, []string{"layers.NewGRUCell", "3 → -1", "[-3, -1]"}},
		{"NewLSTMCell", func() { layers.NewLSTMCell[float32](rng, -2, 5) }, true, []string{"layers.NewLSTMCell", "-2 → 5", "[20, 5]"}},
		{"NewDropout", func() { layers.NewDropout[float32](1.5, rng) }, false, []string{"layers: NewDropout: probability 1.5"}},
		{"NewDropout nil", func() { layers.NewDropout[float32](0.5, nil) }, false, []string{"layers: NewDropout: nil generator"}},
		{"NewRNNCell", func() { layers.NewRNNCell[float32](rng, 2, 2, "sigmoid") }, false, []string{"layers: NewRNNCell", `"sigmoid"`}},
		{"RNNCell", func() { gelu.Step(tp, x, autograd.Var[float32]{}) }, false, []string{"layers: RNNCell", `"gelu"`}},
		{"ForwardT", func() { layers.ForwardT[float32](nil, tp, 0, x) }, false, []string{"layers: ForwardT", "neither"}},
		{"Sequential.Forward", func() { layers.NewSequential[float32]().Add("tc", layers.TimeConcat[float32]{}).Forward(tp, x) }, false, []string{"layers: Sequential.Forward", "needs a time"}},
		{"Sequential.Add dot", func() { seq.Add("a.b", layers.ReLU[float32]{}) }, false, []string{"layers: Sequential.Add", `"a.b"`, "dot"}},
		{"Sequential.Add twice", func() { seq.Add("fc", layers.ReLU[float32]{}) }, false, []string{"layers: Sequential.Add", `"fc"`}},
		{"Sequential.Add nil", func() { seq.Add("n", nil) }, false, []string{"layers: Sequential.Add", `nil module "n"`}},
	} {
		err, through := recovered(tc.f)
		if tc.shape {
			var se *tensor.ShapeError
			if !errors.As(err, &se) || through != nil {
				t.Errorf("%s: tensor.Recover gave %v (%T) and let %v through, want a *tensor.ShapeError", tc.name, err, err, through)
				continue
			}
		} else {
			e, ok := through.(error)
			if !ok || err != nil {
				t.Errorf("%s: tensor.Recover gave %v and let %v (%T) through, want an error value let through", tc.name, err, through, through)
				continue
			}
			err = e
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", tc.name, err, w)
			}
		}
	}
}
