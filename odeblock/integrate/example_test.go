package integrate_test

import (
	"fmt"
	"math"

	"github.com/adamnode/adamnode/odeblock/integrate"
)

// ExampleSolve integrates the harmonic oscillator q' = p, p' = −q from
// (1, 0) to t = π/2 and π with dopri5: (cos t, −sin t).
func ExampleSolve() {
	f := func(t float64, y, dy []float64) error {
		dy[0], dy[1] = y[1], -y[0]
		return nil
	}
	ys, stats, err := integrate.Solve(f, []float64{1, 0}, []float64{0, math.Pi / 2, math.Pi}, integrate.Options{RTol: 1e-9, ATol: 1e-12})
	if err != nil {
		fmt.Println(err)
		return
	}
	round := func(x float64) float64 { return math.Round(x*1e6)/1e6 + 0 } // no "-0"
	for i, y := range ys {
		fmt.Printf("t%d: q %+.6f, p %+.6f\n", i, round(y[0]), round(y[1]))
	}
	fmt.Println("steps accepted:", stats.Accepted > 0)
	// Output:
	// t0: q +1.000000, p +0.000000
	// t1: q +0.000000, p -1.000000
	// t2: q -1.000000, p +0.000000
	// steps accepted: true
}
