package integrate

import (
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// decay is y' = −y: y(t) = e^{−t}·y(0).
func decay(_ float64, y, dy []float64) error {
	dy[0] = -y[0]
	return nil
}

// TestAdamsTorchdiffeq: every Adams method, at MaxOrder 5 and 12, on a
// decay and a rotation, gives torchdiffeq's values (odeint with
// step_size and max_order, float64) at output times that lie on the
// step grid, and every value is within the method's error of the exact
// solution.
func TestAdamsTorchdiffeq(t *testing.T) {
	exact := map[string]func(t float64) []float64{
		"decay":    func(t float64) []float64 { return []float64{math.Exp(-t)} },
		"rotation": func(t float64) []float64 { return []float64{math.Cos(t), math.Sin(t)} },
	}
	field := map[string]Func[float64]{"decay": decay, "rotation": rotation}
	for _, c := range []struct {
		problem, method string
		maxOrder        int
		step            float64
		ts              []float64
		want            [][]float64 // torchdiffeq's, after ts[0]
	}{
		{"decay", "explicit_adams", 5, 0.05, []float64{0, .25, .5, 1}, [][]float64{{0.77879898948502957}, {0.60652966369590677}, {0.36787927014338101}}},
		{"decay", "explicit_adams", 5, 0.02, []float64{0, 0.1, 0.4, 0.5, 1}, [][]float64{{0.90483736420509664}, {0.67032001809677222}, {0.6065306379225287}, {0.36787943853912025}}},
		{"decay", "explicit_adams", 12, 0.001, []float64{0, 1}, [][]float64{{0.36787944117129479}}},
		{"decay", "implicit_adams", 5, 0.05, []float64{0, .25, .5, 1}, [][]float64{{0.77880078116521056}, {0.60653065929302796}, {0.36787944219746027}}},
		{"decay", "implicit_adams", 12, 0.02, []float64{0, 0.1, 0.4, 0.5, 1}, [][]float64{{0.90483741799796702}, {0.67032004600752049}, {0.6065306596871809}, {0.36787944115600585}}},
		{"decay", "fixed_adams", 12, 0.05, []float64{0, .25, .5, 1}, [][]float64{{0.77880078083054005}, {0.6065306581327522}, {0.36787944011331758}}},
		{"decay", "fixed_adams", 5, 0.001, []float64{0, 1}, [][]float64{{0.36787944117144294}}},
		{"rotation", "explicit_adams", 5, 0.02, []float64{0, 0.1, 0.4, 0.5, 1}, [][]float64{{0.9950041056686878, 0.09983341010697433}, {0.92106094511000858, 0.38941830239468739}, {0.8775825197471413, 0.47942548903303567}, {0.54030231563681819, 0.84147090531094548}}},
		{"rotation", "explicit_adams", 12, 0.001, []float64{0, 1}, [][]float64{{0.54030230586791594, 0.84147098480759563}}},
		{"rotation", "implicit_adams", 5, 0.05, []float64{0, .25, .5, 1}, [][]float64{{0.96891242048821591, 0.2474039621596843}, {0.87758255858453216, 0.47942554064561449}, {0.54030229999545154, 0.84147098285633015}}},
		{"rotation", "implicit_adams", 12, 0.02, []float64{0, 0.1, 0.4, 0.5, 1}, [][]float64{{0.99500416528553759, 0.099833416678618003}, {0.92106099400066244, 0.38941834234124201}, {0.87758256188489514, 0.47942553863640852}, {0.54030230584789463, 0.84147098483353167}}},
		{"rotation", "fixed_adams", 12, 0.05, []float64{0, .25, .5, 1}, [][]float64{{0.96891242083522433, 0.24740396217155472}, {0.87758256019385794, 0.47942554120134212}, {0.54030230328476958, 0.84147098626584171}}},
	} {
		name := fmt.Sprintf("%s/%s/order%d/h%g/%v", c.problem, c.method, c.maxOrder, c.step, c.ts)
		y0 := exact[c.problem](0)
		out, _, err := Solve(field[c.problem], y0, c.ts, Options{Method: c.method, Step: c.step, MaxOrder: c.maxOrder})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		// The corrector iterates to a thousandth of the default tolerance
		// here and to torchdiffeq's own criterion there.
		tol := 1e-12
		if c.method != "explicit_adams" {
			tol = 1e-9
		}
		if d := cmp.Diff(c.want, out[1:], cmpopts.EquateApprox(0, tol)); d != "" {
			t.Errorf("%s: not torchdiffeq's values (-torchdiffeq +adamnode):\n%s", name, d)
		}
		for i, ti := range c.ts {
			if d := cmp.Diff(exact[c.problem](ti), out[i], cmpopts.EquateApprox(0, 1e-5)); d != "" {
				t.Errorf("%s: y(%g) is not within 1e-5 of the exact solution:\n%s", name, ti, d)
			}
		}
	}
}

// TestAdamsOutputGrids: with a fixed Step, output times between the
// step's grid points (where the solve lands a short step) are as accurate
// as a solve that ends there: the steps after a short one use the
// coefficients of their uneven history. The bounds are about five times
// the largest error seen over these grids (each output's error is that of
// a solve [0, t] to within a factor 5). With the fixed-step coefficients,
// y' = −y with Step 0.03 and outputs at 0.25 and 0.5 gave y(1) 485 away
// from e^{−1} (explicit_adams) and 1.9e-4 (implicit_adams); at MaxOrder 5,
// 1.1e-4 and 3.4e-5.
func TestAdamsOutputGrids(t *testing.T) {
	grids := [][]float64{
		{0, 1},
		{0, .25, .5, 1},
		{0, 0.1, 0.37, 0.5, 0.77, 1},
		{0, 0.001, 0.002, 0.5, 0.999, 1},
		{0, 0.3, 0.31, 0.32, 0.33, 0.34, 1},
	}
	for _, c := range []struct {
		method   string
		maxOrder int
		step     float64
		tol      float64 // |y(t) − exact| for every t
	}{
		{"explicit_adams", 5, 0.03, 3e-5},
		{"explicit_adams", 8, 0.03, 3e-5},
		{"explicit_adams", 12, 0.001, 5e-11},
		{"implicit_adams", 5, 0.03, 3e-7},
		{"implicit_adams", 12, 0.03, 3e-7},
		{"fixed_adams", 0, 0.03, 3e-7},
		{"fixed_adams", 0, 0.01, 3e-10},
	} {
		for _, ts := range grids {
			for _, p := range []struct {
				name  string
				f     Func[float64]
				exact func(t float64) []float64
			}{
				{"decay", decay, func(t float64) []float64 { return []float64{math.Exp(-t)} }},
				{"rotation", rotation, func(t float64) []float64 { return []float64{math.Cos(t), math.Sin(t)} }},
				{"nonlinear", nonlinear, func(t float64) []float64 { return []float64{1 / (1 + t*t)} }},
			} {
				name := fmt.Sprintf("%s/order%d/h%g/%s/%v", c.method, c.maxOrder, c.step, p.name, ts)
				out, _, err := Solve(p.f, p.exact(0), ts, Options{Method: c.method, Step: c.step, MaxOrder: c.maxOrder})
				if err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				want := make([][]float64, len(ts))
				for i, ti := range ts {
					want[i] = p.exact(ti)
				}
				if d := cmp.Diff(want, out, cmpopts.EquateApprox(0, c.tol)); d != "" {
					t.Errorf("%s: not within %g of the exact solution (-exact +got):\n%s", name, c.tol, d)
				}
			}
		}
	}
}

// TestAdamsBackwardAndJumps: a solve backward in time with output times
// off the grid, and a solve across a jump of the dynamics (Options.Jumps),
// where the history from before the jump is dropped and the method starts
// again: with the old history the step after the jump mixed f of both
// sides.
func TestAdamsBackwardAndJumps(t *testing.T) {
	for _, m := range []string{"explicit_adams", "implicit_adams"} {
		out, _, err := Solve(decay, []float64{1}, []float64{1, 0.77, 0.5, 0}, Options{Method: m, Step: 0.02, MaxOrder: 5})
		if err != nil {
			t.Fatalf("%s backward: %v", m, err)
		}
		want := [][]float64{{1}, {math.Exp(0.23)}, {math.Exp(0.5)}, {math.E}}
		if d := cmp.Diff(want, out, cmpopts.EquateApprox(0, 1e-6)); d != "" {
			t.Errorf("%s backward: (-exact +got):\n%s", m, d)
		}
		// y' = −y before t = 0.5, y' = 2 after: y(1) = e^{−0.5} + 1.
		jump := func(t float64, y, dy []float64) error {
			if t < 0.5 {
				dy[0] = -y[0]
			} else {
				dy[0] = 2
			}
			return nil
		}
		out, _, err = Solve(jump, []float64{1}, []float64{0, 1}, Options{Method: m, Step: 0.03, MaxOrder: 5, Stops: Stops{Jumps: []float64{0.5}}})
		if err != nil {
			t.Fatalf("%s jump: %v", m, err)
		}
		if got, want := out[1][0], math.Exp(-0.5)+1; math.Abs(got-want) > 1e-6 {
			t.Errorf("%s across a jump: y(1) = %.12g, want %.12g", m, got, want)
		}
	}
}

// TestAdamsUnevenCoefficients: the coefficients of an uneven history are
// the fixed-step ones on a uniform grid, and on uneven grids they
// integrate every polynomial of degree below the number of nodes exactly
// over the step, as an Adams formula must (to rounding in the sum's
// terms).
func TestAdamsUnevenCoefficients(t *testing.T) {
	for k := 1; k <= adamsMaxOrder; k++ {
		x := make([]float64, k)
		for j := range x {
			x[j] = -float64(j)
		}
		if d := cmp.Diff(bashforth[k], lagrangeWeights(nil, x), cmpopts.EquateApprox(1e-12, 1e-12)); d != "" {
			t.Errorf("Adams–Bashforth order %d on a uniform grid (-table +uneven):\n%s", k, d)
		}
		z := append([]float64{1}, x...)[:k]
		if d := cmp.Diff(moulton[k], lagrangeWeights(nil, z), cmpopts.EquateApprox(1e-12, 1e-12)); d != "" {
			t.Errorf("Adams–Moulton order %d on a uniform grid (-table +uneven):\n%s", k, d)
		}
	}
	// On a uniform history (times accumulated by adding the step, as a
	// solve does) the tables themselves are used: torchdiffeq's numbers.
	for _, h := range []float64{0.03, -0.001} {
		w := &adamsWork[float64]{}
		ti := 7.0
		for range adamsMaxOrder {
			w.at = append(w.at, ti)
			ti -= h
		}
		for k := 3; k < adamsMaxOrder; k++ {
			beta, mu := w.coefficients(k, h, true)
			if &beta[0] != &bashforth[k][0] || &mu[0] != &moulton[k+1][0] {
				t.Errorf("step %g, order %d: a uniform history did not take the fixed-step tables", h, k)
			}
		}
		w.at[1] -= 0.01 * h // uneven
		if beta, _ := w.coefficients(5, h, false); &beta[0] == &bashforth[5][0] {
			t.Errorf("step %g: an uneven history took the fixed-step tables", h)
		}
	}
	for _, x := range [][]float64{
		{0, -1.0 / 3, -2.0 / 3, -5.0 / 3},
		{0, -3, -6, -9, -12, -15, -18},
		{1, 0, -0.2, -1.2, -2.2, -3.2, -4.2, -5.2, -6.2, -7.2, -8.2, -9.2},
	} {
		w := lagrangeWeights(nil, x)
		for deg := range len(x) {
			var got, size float64
			for j, xj := range x {
				got += w[j] * math.Pow(xj, float64(deg))
				size += math.Abs(w[j] * math.Pow(xj, float64(deg)))
			}
			if want := 1 / float64(deg+1); math.Abs(got-want) > 1e-14*size {
				t.Errorf("nodes %v: Σ w_j·x_j^%d = %.15g, want ∫₀¹ x^%d = %.15g", x, deg, got, deg, want)
			}
		}
	}
}

// TestAdamsCorrectorRelativeScale: the Adams–Moulton corrector's
// convergence is measured against atol + rtol·|y|, so a large state
// converges in the iterations a unit one takes (with a scale of atol
// alone, or rtol/|y|, the corrections of a state of 10⁶ never fall
// below it in four iterations).
func TestAdamsCorrectorRelativeScale(t *testing.T) {
	decay := func(_ float64, y, dy []float64) error { dy[0] = -y[0]; return nil }
	opt := Options{Method: "implicit_adams", Step: 0.05, RTol: 1e-3, ATol: 1e-300}
	var nfe []int
	for _, y0 := range []float64{1, 1e6} {
		out, st, err := Solve(decay, []float64{y0}, []float64{0, 1}, opt)
		if err != nil {
			t.Fatalf("y0 = %g: %v", y0, err)
		}
		if got, want := out[1][0], y0*math.Exp(-1); math.Abs(got-want) > 1e-4*want {
			t.Errorf("y0 = %g: y(1) = %g, want %g", y0, got, want)
		}
		nfe = append(nfe, st.NFE)
	}
	if nfe[0] != nfe[1] {
		t.Errorf("evaluations from y0 = 1 and 1e6: %v, want the same (the corrector's scale is relative)", nfe)
	}
}
