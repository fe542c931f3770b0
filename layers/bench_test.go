package layers_test

import (
	"math/rand/v2"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
)

// BenchmarkConvClassifierStep times one training iteration of a plain conv
// classifier (no ODE) at MNIST shapes, batch 32, in float32: conv 1→32 3×3
// pad 1, ReLU, conv 32→32 3×3 stride 2 pad 1 (28×28 → 14×14), ReLU,
// flatten, linear 6272→10, softmax cross-entropy, backward, Adam step,
// zeroing the gradients. The tape is reused across iterations. One
// sub-benchmark per compiled-in backend (gonum; openblas with -tags
// openblas).
func BenchmarkConvClassifierStep(b *testing.B) {
	for _, be := range tensor.Backends(0) {
		b.Run(be.Name(), func(b *testing.B) { benchClassifierStep(b, be) })
	}
}

func benchClassifierStep(b *testing.B, be tensor.Backend) {
	const batch = 32
	rng := rand.New(rand.NewPCG(1, 2))
	model := layers.NewSequential[float32]().
		Add("conv1", layers.NewConv2D[float32](rng, 1, 32, 3, tensor.ConvParams{Pad: 1})).
		Add("relu1", layers.ReLU[float32]{}).
		Add("conv2", layers.NewConv2D[float32](rng, 32, 32, 3, tensor.ConvParams{Stride: 2, Pad: 1})).
		Add("relu2", layers.ReLU[float32]{}).
		Add("flatten", layers.Flatten[float32]{}).
		Add("fc", layers.NewLinear[float32](rng, 32*14*14, 10))
	opt := optim.NewAdam(model.Params(), optim.AdamConfig{LR: 1e-4, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
	x := tensor.RandU[float32](rng, 0, 1, batch, 1, 28, 28)
	labels := make([]int, batch)
	for i := range labels {
		labels[i] = rng.IntN(10)
	}
	tp := autograd.NewTape(tensor.EngineFor[float32](be))
	step := func() {
		tp.Reset()
		loss := layers.SoftmaxCrossEntropy(model.Forward(tp, tp.Const(x)), labels)
		tp.Backward(loss)
		opt.Step()
		opt.ZeroGrad()
	}
	step() // fill the tape's buffers
	b.ReportAllocs()
	for b.Loop() {
		step()
	}
	b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "images/s")
}
