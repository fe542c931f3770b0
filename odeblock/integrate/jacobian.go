package integrate

import (
	"math"

	"github.com/adamnode/adamnode/tensor"
)

// fdJacobian sets jac (n×n, row-major) to J = ∂f/∂y at (t, y) by forward
// differences, f(t, y) being f0: column j is (f(t, y + δⱼ·eⱼ) − f0)/δⱼ with
// δⱼ = √ε·max(|yⱼ|, 10⁻³), ε the machine epsilon of T (float64's would
// vanish in a float32 y), δⱼ then the step y + δⱼ actually takes in T. y
// is perturbed in place, one element at a time, and restored; col takes
// f's values. The implicit Runge–Kutta, Rosenbrock and BDF methods form
// their Jacobians with it (n evaluations of f).
func fdJacobian[T, F tensor.Float](eval evalFunc[T], t float64, y, col []T, f0 []F, jac []float64) error {
	n := len(y)
	root := math.Sqrt(epsOf[T]())
	for j := range n {
		yj := y[j]
		dy := root * math.Max(math.Abs(float64(yj)), 1e-3)
		y[j] = T(float64(yj) + dy)
		dy = float64(y[j]) - float64(yj)
		err := eval(evalProbe, 0, t, y, col)
		y[j] = yj
		if err != nil {
			return err
		}
		for i := range n {
			jac[i*n+j] = (float64(col[i]) - float64(f0[i])) / dy
		}
	}
	return nil
}

// epsOf returns the machine epsilon of T: 2⁻²³ for float32, 2⁻⁵² for
// float64.
func epsOf[T tensor.Float]() float64 {
	if _, ok := any(T(0)).(float32); ok {
		return 0x1p-23
	}
	return eps
}
