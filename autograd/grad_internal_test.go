package autograd

import (
	"math"
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

// countOps returns how many slots of t from slot from on were recorded by
// the op named op.
func countOps[T tensor.Float](t *Tape[T], from int, op string) int {
	n := 0
	for i := from; i < t.n; i++ {
		if t.entryAt(i).op == op {
			n++
		}
	}
	return n
}

// TestGradComputesOnlyWanted: the gradient of an MLP with respect to its
// input records no weight or bias gradient (no Transpose, no SumAxis);
// asked for the parameters too, it does.
func TestGradComputesOnlyWanted(t *testing.T) {
	eng := tensor.EngineFor[float64](tensor.Default())
	w1 := NewParam("w1", tensor.FromSlice([]float64{0.5, -0.3, 0.2, 0.8, 0.1, 0.4}, 3, 2))
	b1 := NewParam("b1", tensor.FromSlice([]float64{0.1, 0.2, -0.1}, 3))
	w2 := NewParam("w2", tensor.FromSlice([]float64{0.3, -0.6, 0.9}, 1, 3))
	for _, c := range []struct {
		params     []*Param[float64]
		transposes int
		sums       int
	}{
		{nil, 0, 0},
		{[]*Param[float64]{w1, b1, w2}, 2, 1},
	} {
		tp := NewTape(eng)
		x := tp.Input(tensor.FromSlice([]float64{0.2, -0.7, 1.1, 0.4}, 2, 2))
		y := Linear(Tanh(Linear(x, tp.Param(w1), tp.Param(b1))), tp.Param(w2), Var[float64]{})
		from := tp.n
		if _, err := Grad([]Var[float64]{Sum(y)}, []Var[float64]{x}, GradOptions[float64]{Params: c.params, CreateGraph: true}); err != nil {
			t.Fatal(err)
		}
		if got := countOps(tp, from, "Transpose"); got != c.transposes {
			t.Errorf("params %d: %d Transpose ops recorded, want %d", len(c.params), got, c.transposes)
		}
		if got := countOps(tp, from, "SumAxis"); got != c.sums {
			t.Errorf("params %d: %d SumAxis ops recorded, want %d", len(c.params), got, c.sums)
		}
	}
}

// TestPoolMaxAtNaN: a max window holding a NaN sends its gradient to the
// NaN, both ways (as poolMaxBack).
func TestPoolMaxAtNaN(t *testing.T) {
	g := poolGeom{kind: poolMax, k: 3, s: 3, h: 1, w: 3, oh: 1, ow: 1, planes: 1}
	in := []float64{1, math.NaN(), 3}
	u := []float64{10, 20, 30}
	if got := poolMaxAt(g, in, u, math.NaN(), 0, 1, 0, 3); got != 20 {
		t.Errorf("gather at a NaN maximum: %v, want 20", got)
	}
	if got := poolMaxAt(g, in, u, 3, 0, 1, 0, 3); got != 30 {
		t.Errorf("gather at the maximum 3: %v, want 30", got)
	}
	dx := make([]float64, 3)
	poolMaxBack(g, in, dx, math.NaN(), 5, 0, 1, 0, 3)
	if dx[1] != 5 || dx[0] != 0 || dx[2] != 0 {
		t.Errorf("scatter to a NaN maximum: %v", dx)
	}
}
