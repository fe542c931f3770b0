package optim_test

import (
	"fmt"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
)

// Minimise (w − 3)² with Adam: the gradient is 2(w − 3).
func ExampleAdam() {
	w := autograd.NewParam("w", tensor.FromSlice([]float64{0}))
	cfg := optim.AdamDefaults()
	cfg.LR = 0.1
	opt := optim.NewAdam([]*autograd.Param[float64]{w}, cfg)
	for range 200 {
		opt.ZeroGrad()
		w.Grad.Data()[0] = 2 * (w.Value.Data()[0] - 3)
		opt.Step()
	}
	fmt.Printf("w = %.3f\n", w.Value.Data()[0])
	// Output: w = 3.000
}

// A training loop sets the learning rate from a schedule each epoch and
// clips the gradient norm before each step, as the paper's code does at 10.
func ExampleClipGradNorm() {
	w := autograd.NewParam("w", tensor.FromSlice([]float32{0, 0}))
	opt := optim.NewSGD([]*autograd.Param[float32]{w}, optim.SGDConfig{LR: 0.1, Momentum: 0.9})
	sched := optim.CosineLR{Base: 0.1, EtaMin: 0.001, TMax: 10}
	for epoch := range 2 {
		opt.SetLR(sched.LR(epoch))
		opt.ZeroGrad()
		copy(w.Grad.Data(), []float32{30, 40}) // from Backward, in a real loop
		norm, err := optim.ClipGradNorm(opt.Params(), 10)
		if err != nil {
			fmt.Println(err) // NaN or Inf: skip the step
			continue
		}
		opt.Step()
		fmt.Printf("epoch %d: lr %.4f, norm %.0f, clipped grad %.2f\n", epoch, opt.LR(), norm, w.Grad.Data())
	}
	// Output:
	// epoch 0: lr 0.1000, norm 50, clipped grad [6.00 8.00]
	// epoch 1: lr 0.0976, norm 50, clipped grad [6.00 8.00]
}

// StateDict names the buffers after the parameters, ready for
// layers.SaveCheckpoint.
func ExampleAdam_StateDict() {
	w := autograd.NewParam("f.conv2.weight", tensor.New[float32](2, 2))
	opt := optim.NewAdam([]*autograd.Param[float32]{w}, optim.AdamDefaults())
	opt.Step()
	tensors, meta, err := opt.StateDict()
	if err != nil {
		panic(err)
	}
	fmt.Println(tensors["optim.adam.exp_avg.f.conv2.weight"].Shape())
	fmt.Println(meta["optim.type"], meta["optim.adam.lr"], meta["optim.adam.step.f.conv2.weight"])
	// Output:
	// [2 2]
	// adam 0.001 1
}

// ExampleMinimize fits w to minimize ‖w − (1, 2)‖² with Adam, one call a
// step: zero the gradients, Backward, step.
func ExampleMinimize() {
	w := autograd.NewParam("w", tensor.New[float64](2))
	target := tensor.FromSlice([]float64{1, 2}, 2)
	opt := optim.NewAdam([]*autograd.Param[float64]{w}, optim.AdamDefaults().WithLR(0.1))
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	for range 300 {
		tp.Reset()
		loss := autograd.Sum(autograd.Square(autograd.Sub(tp.Param(w), tp.Const(target))))
		if err := optim.Minimize(opt, tp, loss); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Printf("w = (%.2f, %.2f)\n", w.Value.At(0), w.Value.At(1))
	// Output: w = (1.00, 2.00)
}
