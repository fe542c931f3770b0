package layers_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

type normAffine struct {
	Weight, Bias []float64
	Y            []float64
}

// normTorch is testdata/norm_torch.json (written by gen_norm.py with
// PyTorch).
type normTorch struct {
	X, X2     []float64
	Shape     []int
	LayerNorm normAffine
	GroupNorm normAffine
	BatchNorm struct {
		Weight, Bias         []float64
		Train1, Train2, Eval []float64
		RunningMeanRaw       []float64 `json:"running_mean"`
		RunningVarRaw        []float64 `json:"running_var"`
	}
}

func closeTo(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > tol*math.Max(1, math.Abs(want[i])) {
			t.Fatalf("%s[%d] = %.15g, PyTorch %.15g", what, i, got[i], want[i])
		}
	}
}

// TestNormMatchesPyTorch: LayerNorm, GroupNorm and BatchNorm (training,
// running statistics after two batches, evaluation) give PyTorch's numbers
// on a fixed input, in float64.
func TestNormMatchesPyTorch(t *testing.T) {
	raw, err := os.ReadFile("testdata/norm_torch.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref normTorch
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	eng := tensor.EngineFor[float64](tensor.Default())
	set := func(p *autograd.Param[float64], v []float64) { copy(p.Value.Data(), v) }
	forward := func(m layers.Module[float64], x []float64) []float64 {
		tp := autograd.NewTape(eng)
		y := m.Forward(tp, tp.Const(tensor.FromSlice(append([]float64(nil), x...), ref.Shape...)))
		return append([]float64(nil), y.Value().Data()...)
	}
	ln := layers.NewLayerNorm[float64](2, 3)
	set(ln.Weight, ref.LayerNorm.Weight)
	set(ln.Bias, ref.LayerNorm.Bias)
	closeTo(t, "LayerNorm", forward(ln, ref.X), ref.LayerNorm.Y, 1e-12)

	gn := layers.NewGroupNorm[float64](2, 4)
	set(gn.Weight, ref.GroupNorm.Weight)
	set(gn.Bias, ref.GroupNorm.Bias)
	closeTo(t, "GroupNorm", forward(gn, ref.X), ref.GroupNorm.Y, 1e-12)

	bn := layers.NewBatchNorm[float64](4)
	set(bn.Weight, ref.BatchNorm.Weight)
	set(bn.Bias, ref.BatchNorm.Bias)
	closeTo(t, "BatchNorm training, batch 1", forward(bn, ref.X), ref.BatchNorm.Train1, 1e-12)
	closeTo(t, "BatchNorm training, batch 2", forward(bn, ref.X2), ref.BatchNorm.Train2, 1e-12)
	closeTo(t, "BatchNorm running mean", bn.RunningMean.Value.Data(), ref.BatchNorm.RunningMeanRaw, 1e-12)
	closeTo(t, "BatchNorm running variance", bn.RunningVar.Value.Data(), ref.BatchNorm.RunningVarRaw, 1e-12)
	layers.SetTraining[float64](bn, false)
	closeTo(t, "BatchNorm evaluation", forward(bn, ref.X), ref.BatchNorm.Eval, 1e-12)
}

// TestNormGradients checks LayerNorm, GroupNorm and BatchNorm (training
// mode; its running statistics are updated by every evaluation, which the
// gradient does not see) and the pooling layers against central
// differences, through the input and the affine parameters.
func TestNormGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	randomize := func(ps ...*autograd.Param[float64]) {
		for _, p := range ps {
			for i := range p.Value.Data() {
				p.Value.Data()[i] = rng.NormFloat64()
			}
		}
	}
	ln, gn, bn := layers.NewLayerNorm[float64](3, 2), layers.NewGroupNorm[float64](2, 4), layers.NewBatchNorm[float64](4)
	for _, m := range []layers.Module[float64]{ln, gn, bn} {
		randomize(m.Params()...)
	}
	cases := []struct {
		name  string
		m     layers.Module[float64]
		shape []int
	}{
		{"LayerNorm", ln, []int{2, 4, 3, 2}},
		{"GroupNorm", gn, []int{2, 4, 3, 2}},
		{"GroupNorm1D", gn, []int{3, 4, 5}},
		{"BatchNorm", bn, []int{3, 4, 2, 2}},
		{"BatchNorm1D", bn, []int{5, 4}},
		{"MaxPool2D", layers.MaxPool2D[float64]{Kernel: 2}, []int{2, 3, 4, 4}},
		{"AvgPool2D", layers.AvgPool2D[float64]{Kernel: 3, Stride: 2, Pad: 1}, []int{1, 2, 5, 5}},
		{"AdaptiveAvgPool2D", layers.AdaptiveAvgPool2D[float64]{H: 2, W: 2}, []int{2, 2, 5, 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := autograd.NewParam("x", tensor.RandN[float64](rng, 0.3, 1.5, c.shape...))
			w := tensor.RandN[float64](rng, 0, 1, c.shape...)
			loss := func(tp *autograd.Tape[float64]) autograd.Var[float64] {
				y := c.m.Forward(tp, tp.Param(x))
				if y.Len() == w.Len() {
					return autograd.Sum(autograd.Mul(y, tp.Const(w.Reshape(y.Shape()...))))
				}
				return autograd.Sum(autograd.Square(y))
			}
			ps := append([]*autograd.Param[float64]{x}, c.m.Params()...)
			if rep, err := autograd.CheckGradients(loss, ps, autograd.GradCheckOptions{Step: 1e-6, AbsTol: 1e-7, RelTol: 1e-6}); err != nil {
				t.Fatalf("%v\n%v", err, rep)
			}
		})
	}
}

// TestBuffersInState: BatchNorm's running statistics are buffers — in
// State and prefixed with the parameters by a container, not in Params —
// and a checkpoint of State restores them.
func TestBuffersInState(t *testing.T) {
	seq := layers.NewSequential[float64]().Add("conv", layers.NewConv2D[float64](rand.New(rand.NewPCG(1, 1)), 1, 2, 3, tensor.ConvParams{Pad: 1})).Add("bn", layers.NewBatchNorm[float64](2))
	var names []string
	for _, p := range layers.State[float64](seq) {
		names = append(names, p.Name)
	}
	want := []string{"conv.weight", "conv.bias", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("State names %v, want %v", names, want)
	}
	if n := len(seq.Params()); n != 4 {
		t.Errorf("%d parameters, want 4 (buffers are not trained)", n)
	}
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	seq.Forward(tp, tp.Const(tensor.RandN[float64](rand.New(rand.NewPCG(2, 2)), 1, 2, 4, 1, 3, 3)))
	path := filepath.Join(t.TempDir(), "bn.safetensors")
	if err := layers.SaveParams(path, layers.State[float64](seq), nil); err != nil {
		t.Fatal(err)
	}
	fresh := layers.NewSequential[float64]().Add("conv", layers.NewConv2D[float64](rand.New(rand.NewPCG(9, 9)), 1, 2, 3, tensor.ConvParams{Pad: 1})).Add("bn", layers.NewBatchNorm[float64](2))
	if _, err := layers.LoadParams(path, layers.State[float64](fresh)); err != nil {
		t.Fatal(err)
	}
	for i, p := range layers.State[float64](fresh) {
		if fmt.Sprint(p.Value.Data()) != fmt.Sprint(layers.State[float64](seq)[i].Value.Data()) {
			t.Errorf("%s not restored", p.Name)
		}
	}
}

// TestPrefixFamily: Prefix names an ODE family's field parameters and its
// own scalars together, so two blocks' parameters do not collide, and a
// checkpoint of both saves; with the same names it is an error naming the
// duplicate.
func TestPrefixFamily(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	newDyn := func() *odeblock.HBNODE[float64] {
		f := layers.NewSequential[float64]().Add("fc", layers.NewLinear[float64](rng, 2, 2))
		return odeblock.NewHBNODE[float64](f, -1)
	}
	a, b := newDyn(), newDyn()
	path := filepath.Join(t.TempDir(), "two.safetensors")
	both := append(a.Params(), b.Params()...)
	if err := layers.SaveParams(path, both, nil); err == nil || !strings.Contains(err.Error(), "fc.weight") {
		t.Errorf("unprefixed blocks saved: %v, want an error naming fc.weight", err)
	}
	layers.Prefix[float64]("ode1", a)
	layers.Prefix[float64]("ode2", b)
	var names []string
	for _, p := range append(a.Params(), b.Params()...) {
		names = append(names, p.Name)
	}
	want := "[ode1.fc.weight ode1.fc.bias ode1.gamma ode2.fc.weight ode2.fc.bias ode2.gamma]"
	if fmt.Sprint(names) != want {
		t.Errorf("names %v, want %s", names, want)
	}
	if err := layers.SaveParams(path, append(a.Params(), b.Params()...), nil); err != nil {
		t.Error(err)
	}
}

// TestLoadHalfPrecision: F16 and BF16 tensors written as PyTorch writes
// them load into float32 and float64 parameters with torch's own values
// (in the file's metadata); the file's I64 counter is refused, or skipped
// with IgnoreUnknown.
func TestLoadHalfPrecision(t *testing.T) {
	const path = "testdata/torch_half.safetensors"
	st, err := layers.ReadSafetensorsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float64{}
	for _, n := range []string{"fc.weight", "fc.bias"} {
		var v []float64
		if err := json.Unmarshal([]byte(st.Metadata[n]), &v); err != nil {
			t.Fatal(err)
		}
		want[n] = v
	}
	ps := []*autograd.Param[float32]{autograd.NewParam("fc.weight", tensor.New[float32](2, 3)), autograd.NewParam("fc.bias", tensor.New[float32](2))}
	if _, err := layers.LoadParams(path, ps); err == nil || !strings.Contains(err.Error(), "num_batches_tracked") {
		t.Errorf("a file with an unknown tensor: %v, want an error naming it", err)
	}
	if _, err := layers.LoadCheckpointWith(path, ps, nil, layers.LoadOptions{IgnoreUnknown: true}); err != nil {
		t.Fatal(err)
	}
	p64 := []*autograd.Param[float64]{autograd.NewParam("fc.weight", tensor.New[float64](2, 3)), autograd.NewParam("fc.bias", tensor.New[float64](2))}
	if _, err := layers.LoadCheckpointWith(path, p64, nil, layers.LoadOptions{IgnoreUnknown: true, NoNarrowing: true}); err != nil {
		t.Fatal(err)
	}
	for i, p := range ps {
		for k, v := range p.Value.Data() {
			w := want[p.Name][k]
			if float64(v) != w || p64[i].Value.Data()[k] != w || math.Signbit(float64(v)) != math.Signbit(w) {
				t.Errorf("%s[%d] = %v (float32), %v (float64); torch %v", p.Name, k, v, p64[i].Value.Data()[k], w)
			}
		}
	}
}
