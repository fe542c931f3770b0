package tensor_test

import (
	"fmt"

	"github.com/adamnode/adamnode/tensor"
)

// The receiver is the result: kernels write into a destination the caller
// owns, so a loop can reuse it without allocating.
func Example() {
	x := tensor.FromSlice([]float64{1, -2, 3, -4}, 2, 2)
	y := tensor.Full[float64](0.5, 2, 2)
	z := tensor.New[float64](2, 2)
	z.Mul(x, y).ReLU(z) // z = relu(x ⊙ y)
	fmt.Println(z.Data())

	e := tensor.EngineFor[float64](tensor.Default())
	fmt.Println(tensor.MatMul(e, x, x).Data())
	// Output:
	// [0.5 0 1.5 0]
	// [-5 6 -9 10]
}

// A 3×3 convolution with padding 1 keeps the spatial size; the backward
// passes write into destinations shaped like the input and the filter.
func ExampleEngine() {
	e := tensor.EngineFor[float32](tensor.Default())
	p := tensor.ConvParams{Stride: 1, Pad: 1}
	x := tensor.Full[float32](1, 1, 2, 4, 4) // [B, C, H, W]
	w := tensor.Full[float32](1, 3, 2, 3, 3) // [Co, C, KH, KW]
	y := tensor.Conv2D(e, x, w, nil, p)
	fmt.Println(y.Shape(), y.At(0, 0, 0, 0), y.At(0, 0, 1, 1))

	dx := tensor.New[float32](x.Shape()...)
	e.Conv2DBackwardData(dx, tensor.Full[float32](1, y.Shape()...), w, p, false)
	fmt.Println(dx.At(0, 0, 0, 0))
	// Output:
	// [1 3 4 4] 8 18
	// 12
}

// Shape misuse panics with a *ShapeError; Recover turns it into an error at
// an API edge.
func ExampleRecover() {
	build := func() (err error) {
		defer tensor.Recover(&err)
		tensor.Add(tensor.New[float32](2, 3), tensor.New[float32](3, 2))
		return nil
	}
	fmt.Println(build())
	// Output:
	// tensor.Add: shapes [2 3] and [3 2] do not match
}
