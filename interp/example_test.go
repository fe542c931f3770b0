package interp_test

import (
	"fmt"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/interp"
	"github.com/adamnode/adamnode/tensor"
)

// Example interpolates one channel observed at four irregular times with a
// natural cubic spline, reads X and dX/dt between the knots and past the
// last one (the end cubic extrapolated), and takes the gradient of X(1.5) with respect to the
// observations: the weights the spline gives each observation there.
func Example() {
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	times := []float64{0, 1, 3, 4}
	obs := tp.Input(tensor.FromSlice([]float64{0, 1, 0, 2}, 1, 4, 1)) // [B=1, n=4, C=1]
	x, err := interp.NewNaturalCubic(times, obs)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range []float64{0.5, 1, 2, 4, 5} {
		fmt.Printf("t=%.1f  X=%+.4f  dX/dt=%+.4f\n", t, x.Evaluate(tp, t).Item(), x.Derivative(tp, t).Item())
	}
	if err := tp.Backward(x.Evaluate(tp, 1.5)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("dX(1.5)/dy = %.4f\n", obs.Grad().Data())

	_, err = interp.NewLinear([]float64{0, 1, 1, 2}, obs)
	fmt.Println(err)
	// Output:
	// t=0.5  X=+0.6641  dX/dt=+1.1094
	// t=1.0  X=+1.0000  dX/dt=+0.1250
	// t=2.0  X=+0.3125  dX/dt=-1.0000
	// t=4.0  X=+2.0000  dX/dt=+2.5625
	// t=5.0  X=+4.0000  dX/dt=+0.8750
	// dX(1.5)/dy = [-0.1875 0.9844 0.2969 -0.0938]
	// interp: NewLinear: times[2] = 1 is equal to times[1] = 1: knot times must be strictly increasing
}
