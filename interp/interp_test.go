package interp_test

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/interp"
	"github.com/adamnode/adamnode/tensor"
)

type refValues struct {
	Value [][][]float64 `json:"value"`
	Deriv [][][]float64 `json:"deriv"`
}

// reference is testdata/splines.json, written by testdata/gen_splines.py.
type reference struct {
	Times   []float64     `json:"times"`
	Obs     [][][]float64 `json:"obs"`
	Queries []float64     `json:"queries"`
	Natural refValues     `json:"natural"`
	Linear  refValues     `json:"linear"`
	Hermite refValues     `json:"hermite"`
	Long    struct {
		Times   []float64     `json:"times"`
		Obs     [][][]float64 `json:"obs"`
		Queries []float64     `json:"queries"`
		Natural refValues     `json:"natural"`
	} `json:"long"`
}

func loadReference(t *testing.T) *reference {
	t.Helper()
	raw, err := os.ReadFile("testdata/splines.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref reference
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	return &ref
}

// obsTensor flattens [B][n][C] into a tensor.
func obsTensor(obs [][][]float64) *tensor.Tensor[float64] {
	b, n, c := len(obs), len(obs[0]), len(obs[0][0])
	x := tensor.New[float64](b, n, c)
	d := x.Data()
	for i := range b {
		for j := range n {
			copy(d[(i*n+j)*c:], obs[i][j])
		}
	}
	return x
}

type constructor func(times []float64, obs autograd.Var[float64]) (interp.Interpolant[float64], error)

var constructors = []struct {
	name string
	make constructor
	ref  func(*reference) refValues
}{
	{"Linear", func(ts []float64, y autograd.Var[float64]) (interp.Interpolant[float64], error) {
		return interp.NewLinear(ts, y)
	}, func(r *reference) refValues { return r.Linear }},
	{"NaturalCubic", func(ts []float64, y autograd.Var[float64]) (interp.Interpolant[float64], error) {
		return interp.NewNaturalCubic(ts, y)
	}, func(r *reference) refValues { return r.Natural }},
	{"HermiteBackward", func(ts []float64, y autograd.Var[float64]) (interp.Interpolant[float64], error) {
		return interp.NewHermiteBackward(ts, y)
	}, func(r *reference) refValues { return r.Hermite }},
}

// TestAgainstReference compares values and first derivatives, inside the
// pieces, at every knot and outside both ends, with SciPy's natural
// CubicSpline, numpy.interp (and the end lines) and the backward Hermite
// formulas of gen_splines.py.
func TestAgainstReference(t *testing.T) {
	ref := loadReference(t)
	for _, c := range constructors {
		t.Run(c.name, func(t *testing.T) {
			tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
			x, err := c.make(ref.Times, tp.Const(obsTensor(ref.Obs)))
			if err != nil {
				t.Fatal(err)
			}
			want := c.ref(ref)
			worst := 0.0
			for q, tq := range ref.Queries {
				for _, kind := range []struct {
					name string
					got  autograd.Var[float64]
					want [][]float64
				}{
					{"value", x.Evaluate(tp, tq), want.Value[q]},
					{"derivative", x.Derivative(tp, tq), want.Deriv[q]},
				} {
					if s := kind.got.Shape(); len(s) != 2 || s[0] != 2 || s[1] != 3 {
						t.Fatalf("%s at t = %v: shape %v, want [2 3]", kind.name, tq, s)
					}
					g := kind.got.Value().ReadData()
					for b, row := range kind.want {
						for ch, w := range row {
							err := math.Abs(g[b*3+ch] - w)
							worst = max(worst, err)
							if err > 1e-12*max(1, math.Abs(w)) {
								t.Errorf("%s at t = %v [%d %d]: %.17g, want %.17g", kind.name, tq, b, ch, g[b*3+ch], w)
							}
						}
					}
				}
			}
			t.Logf("%d queries, worst error %.3g", len(ref.Queries), worst)
		})
	}
}

// TestKnots: every interpolant passes through the observations exactly.
func TestKnots(t *testing.T) {
	ref := loadReference(t)
	obs := obsTensor(ref.Obs)
	n := len(ref.Times)
	for _, c := range constructors {
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
		x, err := c.make(ref.Times, tp.Const(obs))
		if err != nil {
			t.Fatal(err)
		}
		for k, tk := range ref.Times {
			g := x.Evaluate(tp, tk).Value().ReadData()
			for b := range 2 {
				for ch := range 3 {
					w := obs.ReadData()[(b*n+k)*3+ch]
					if math.Abs(g[b*3+ch]-w) > 1e-14 {
						t.Errorf("%s at knot %d: %v, want %v", c.name, k, g[b*3+ch], w)
					}
				}
			}
		}
	}
}

// loss combines values and derivatives at knots, between them and outside
// both ends, nonlinearly (so that second derivatives are not zero).
func loss(c constructor, times []float64, p *autograd.Param[float64]) func(tp *autograd.Tape[float64]) (autograd.Var[float64], error) {
	return func(tp *autograd.Tape[float64]) (autograd.Var[float64], error) {
		x, err := c(times, tp.Param(p))
		if err != nil {
			return autograd.Var[float64]{}, err
		}
		var terms []autograd.Var[float64]
		for _, tq := range []float64{-0.5, times[0], 0.17, times[2], 0.6, times[4], 2.0, times[len(times)-1], 2.9} {
			terms = append(terms, autograd.Sum(autograd.Tanh(x.Evaluate(tp, tq))), autograd.Sum(autograd.Square(x.Derivative(tp, tq))))
		}
		w := make([]float64, len(terms))
		for i := range w {
			w[i] = 1 / float64(i+1)
		}
		return autograd.LinComb(w, terms...), nil
	}
}

// TestGradients checks gradients with respect to the observations against
// central differences, for every interpolant.
func TestGradients(t *testing.T) {
	ref := loadReference(t)
	for _, c := range constructors {
		t.Run(c.name, func(t *testing.T) {
			p := autograd.NewParam("obs", obsTensor(ref.Obs))
			rep, err := autograd.CheckGradients(loss(c.make, ref.Times, p), []*autograd.Param[float64]{p}, autograd.GradCheckOptions{AbsTol: 1e-7, RelTol: 1e-6})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Checked != 2*7*3 {
				t.Fatalf("checked %d elements", rep.Checked)
			}
		})
	}
}

// TestSecondOrder checks second derivatives through the recorded gradients
// (the spline's solve node differentiated by its backward in ops), for
// every interpolant.
func TestSecondOrder(t *testing.T) {
	ref := loadReference(t)
	for _, c := range constructors {
		t.Run(c.name, func(t *testing.T) {
			p := autograd.NewParam("obs", obsTensor(ref.Obs))
			if _, err := autograd.CheckHigherOrder(loss(c.make, ref.Times, p), []*autograd.Param[float64]{p}, 2, autograd.GradCheckOptions{AbsTol: 1e-6, RelTol: 1e-5, Seed: 3}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestBadInput: the constructors' errors name what is wrong and where.
func TestBadInput(t *testing.T) {
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	obs := func(dims ...int) autograd.Var[float64] { return tp.Const(tensor.New[float64](dims...)) }
	for _, c := range []struct {
		name  string
		times []float64
		obs   autograd.Var[float64]
		want  []string
	}{
		{"unsorted", []float64{0, 1, 0.5, 2}, obs(1, 4, 1), []string{"times[2] = 0.5", "earlier than times[1] = 1", "strictly increasing"}},
		{"duplicate", []float64{0, 1, 1, 2}, obs(1, 4, 1), []string{"times[2] = 1", "equal to times[1] = 1"}},
		{"NaN", []float64{0, math.NaN(), 2}, obs(1, 3, 1), []string{"times[1] = NaN", "not finite"}},
		{"one knot", []float64{0}, obs(1, 1, 1), []string{"1 knot times, need at least 2"}},
		{"no knots", nil, obs(1, 0, 1), []string{"0 knot times"}},
		{"time axis", []float64{0, 1, 2}, obs(2, 4, 3), []string{"shape [2 4 3]", "4 times along axis 1", "3 knot times"}},
		{"rank", []float64{0, 1, 2}, obs(3, 2), []string{"shape [3 2]", "rank 3"}},
		{"zero Var", []float64{0, 1}, autograd.Var[float64]{}, []string{"no observations"}},
	} {
		for _, k := range constructors {
			_, err := k.make(c.times, c.obs)
			if err == nil {
				t.Errorf("%s, %s: no error", c.name, k.name)
				continue
			}
			for _, w := range append(c.want, "interp: New"+k.name) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s, %s: error %q does not contain %q", c.name, k.name, err, w)
				}
			}
		}
	}
}

// TestTwoKnots: with two knots every interpolant is the straight line.
func TestTwoKnots(t *testing.T) {
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	y := tp.Const(tensor.FromSlice([]float64{1, 3}, 1, 2, 1))
	for _, c := range constructors {
		x, err := c.make([]float64{0, 2}, y)
		if err != nil {
			t.Fatal(err)
		}
		for _, tq := range []float64{-1, 0, 0.5, 2, 3} {
			if v, d := x.Evaluate(tp, tq).Item(), x.Derivative(tp, tq).Item(); math.Abs(v-(1+tq)) > 1e-15 || math.Abs(d-1) > 1e-15 {
				t.Errorf("%s at %v: %v, %v; want %v, 1", c.name, tq, v, d, 1+tq)
			}
		}
	}
}
