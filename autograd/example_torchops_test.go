package autograd_test

import (
	"fmt"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// ExampleSoftmax: a masked attention over a padded batch, in the ops a
// PyTorch user reaches for: scores of [B, T] positions, a padding mask,
// softmax over the positions (log-softmax picked with Gather for a
// negative log-likelihood), and a mean over the real positions only.
func ExampleSoftmax() {
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	scores := tp.Input(tensor.FromSlice([]float64{
		1, 2, 0,
		0, 0, 0,
	}, 2, 3))
	pad := tensor.FromSlice([]float64{1, 1, 1, 1, 1, 0}, 2, 3) // the second row has 2 positions
	// Padded positions get a score of −10⁹ (a scalar that Where broadcasts):
	// no weight, and no gradient.
	masked := autograd.Where(pad, scores, tp.Scalar(-1e9))
	p := autograd.Softmax(masked, 1)
	fmt.Printf("softmax %.3f\n", p.Value().Data())

	targets := []int{1, 0} // one per row, as [B, 1] indices
	nll := autograd.Neg(autograd.Gather(autograd.LogSoftmax(masked, 1), 1, targets, []int{2, 1}))
	fmt.Printf("nll %.3f\n", nll.Value().Data())

	mean := autograd.MaskedMean(scores, pad, 1, false)
	fmt.Printf("mean over real positions %.3f\n", mean.Value().Data())

	if err := tp.Backward(autograd.Mean(nll)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("∂loss/∂scores %.3f\n", scores.Grad().Data())
	// Output:
	// softmax [0.245 0.665 0.090 0.500 0.500 0.000]
	// nll [0.408 0.693]
	// mean over real positions [1.000 0.000]
	// ∂loss/∂scores [0.122 -0.167 0.045 -0.250 0.250 0.000]
}
