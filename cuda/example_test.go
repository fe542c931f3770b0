package cuda_test

import (
	"fmt"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/cuda"
	"github.com/adamnode/adamnode/tensor"
)

// Example runs a small layer, y = ReLU(x·W), and its gradients on GPU 0
// when the CUDA libraries load, and on the CPU otherwise: the model code
// is the same, only the engine differs. (The package's tests run it on
// the stand-in libraries, which emulate a device on the CPU.) The numbers
// are small integers, exact in float32 on both, so the output does not
// depend on where it ran.
func Example() {
	var b tensor.Backend = tensor.Default()
	if ok, _ := cuda.Available(); ok {
		if g, err := cuda.Backend(0); err == nil {
			b = g
		}
	}
	tp := autograd.NewTape(tensor.EngineFor[float32](b))
	defer tp.Release()
	x := tp.Input(tensor.FromSlice([]float32{1, 2, 3, -1, 0, 2}, 2, 3))
	w := autograd.NewParam("w", tensor.FromSlice([]float32{1, -1, 0, 2, -2, 1}, 3, 2))
	y := autograd.ReLU(autograd.MatMul(x, tp.Param(w)))
	loss := autograd.Sum(y)
	if err := tp.Backward(loss); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("y:", y.Value().ReadData())
	fmt.Println("loss:", loss.Item())
	fmt.Println("∂loss/∂w:", w.Grad.ReadData())
	// On the GPU, cuda.StatsOf(b) counts the copies the pass made
	// (Uploads, Downloads) and the device memory it used (PeakBytes).

	// Output:
	// y: [0 6 0 3]
	// loss: 9
	// ∂loss/∂w: [0 0 0 2 0 5]
}
