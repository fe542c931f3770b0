package layers_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
)

// The paper's vector field f(h, t) for c = 5 channels and 50 hidden ones:
// time channels concatenated before each convolution. Its ForwardT is an
// ODE right-hand side: f is an odeblock.Field as it is.
func ExampleTimeConcat() {
	rng := rand.New(rand.NewPCG(1, 2))
	f := layers.NewSequential[float32]().
		Add("t1", layers.TimeConcat[float32]{}).
		Add("conv1", layers.NewConv2D[float32](rng, 5+1, 50, 1, tensor.ConvParams{})).
		Add("relu1", layers.ReLU[float32]{}).
		Add("t2", layers.TimeConcat[float32]{}).
		Add("conv2", layers.NewConv2D[float32](rng, 50+1, 50, 3, tensor.ConvParams{Pad: 1})).
		Add("relu2", layers.ReLU[float32]{}).
		Add("t3", layers.TimeConcat[float32]{}).
		Add("conv3", layers.NewConv2D[float32](rng, 50+1, 5, 1, tensor.ConvParams{}))
	layers.Prefix("f", f)

	tp := autograd.NewTape(tensor.EngineFor[float32](tensor.Default()))
	h := tp.Const(tensor.New[float32](2, 5, 28, 28))
	dh := f.ForwardT(tp, 0.5, h) // f(h, t) at t = 0.5
	fmt.Println(dh.Shape())
	for _, p := range f.Params()[:3] {
		fmt.Println(p.Name, p.Value.Shape())
	}
	// Output:
	// [2 5 28 28]
	// f.conv1.weight [50 6 1 1]
	// f.conv1.bias [50]
	// f.conv2.weight [50 51 3 3]
}

// One training step of a small classifier, then a checkpoint of its
// parameters and its optimizer's state, and a resume.
func ExampleSaveCheckpoint() {
	rng := rand.New(rand.NewPCG(1, 2))
	model := layers.NewSequential[float32]().
		Add("conv", layers.NewConv2D[float32](rng, 1, 4, 3, tensor.ConvParams{Pad: 1})).
		Add("relu", layers.ReLU[float32]{}).
		Add("flatten", layers.Flatten[float32]{}).
		Add("fc", layers.NewLinear[float32](rng, 4*8*8, 10))
	opt := optim.NewAdam(model.Params(), optim.AdamDefaults())

	x := tensor.RandU[float32](rng, 0, 1, 3, 1, 8, 8)
	labels := []int{3, 1, 4}
	tp := autograd.NewTape(tensor.EngineFor[float32](tensor.Default()))
	loss := layers.SoftmaxCrossEntropy(model.Forward(tp, tp.Const(x)), labels)
	tp.Backward(loss)
	if _, err := optim.ClipGradNorm(model.Params(), 10); err != nil {
		fmt.Println(err)
		return
	}
	opt.Step()
	opt.ZeroGrad()

	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "epoch1.safetensors")
	if err := layers.SaveCheckpoint(path, model.Params(), opt, map[string]string{"epoch": "1"}); err != nil {
		fmt.Println(err)
		return
	}

	// Resume: the same architecture, any initialisation.
	rng2 := rand.New(rand.NewPCG(7, 7))
	resumed := layers.NewSequential[float32]().
		Add("conv", layers.NewConv2D[float32](rng2, 1, 4, 3, tensor.ConvParams{Pad: 1})).
		Add("relu", layers.ReLU[float32]{}).
		Add("flatten", layers.Flatten[float32]{}).
		Add("fc", layers.NewLinear[float32](rng2, 4*8*8, 10))
	opt2 := optim.NewAdam(resumed.Params(), optim.AdamDefaults())
	meta, err := layers.LoadCheckpoint(path, resumed.Params(), opt2)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("epoch", meta["epoch"], "steps", opt2.Steps()[0])
	s, _ := layers.ReadSafetensorsFile(path)
	for _, t := range s.Tensors[:3] {
		fmt.Println(t.Name, t.DType, t.Shape)
	}
	fmt.Println(s.Tensors[4].Name)
	// Output:
	// epoch 1 steps 1
	// conv.weight F32 [4 1 3 3]
	// conv.bias F32 [4]
	// fc.weight F32 [10 256]
	// optim.adam.exp_avg.conv.bias
}

// Summary lists a model's parameters and buffers with their shapes.
func ExampleSummary() {
	rng := rand.New(rand.NewPCG(1, 2))
	m := layers.NewSequential[float32]().
		Add("conv", layers.NewConv2D[float32](rng, 1, 4, 3, tensor.ConvParams{Pad: 1})).
		Add("bn", layers.NewBatchNorm[float32](4)).
		Add("relu", layers.ReLU[float32]{}).
		Add("pool", layers.AdaptiveAvgPool2D[float32]{H: 1, W: 1})
	fmt.Print(layers.Summary[float32](m))
	// Output:
	// name             shape               elements
	// conv.weight      [4 1 3 3]                 36
	// conv.bias        [4]                        4
	// bn.weight        [4]                        4
	// bn.bias          [4]                        4
	// bn.running_mean  [4]                        4  (buffer)
	// bn.running_var   [4]                        4  (buffer)
	// 4 parameters (48 elements), 2 buffers (8 elements)
}
