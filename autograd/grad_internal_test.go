package autograd

import (
	"math"
	"slices"
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

// TestGradNeeded: the slots a Grad walk computes gradients for are those
// on a path to an input or a listed parameter's leaf that passes no
// stopped slot.
func TestGradNeeded(t *testing.T) {
	tp := NewTape(tensor.EngineFor[float64](tensor.Default()))
	p := NewParam("p", tensor.FromSlice([]float64{2}, 1))
	a := tp.Input(tensor.FromSlice([]float64{3}, 1)) // 0
	w := tp.Param(p)                                 // 1
	tw := Tanh(w)                                    // 2
	h := Mul(a, tw)                                  // 3
	s := Mul(h, w)                                   // 4
	Sum(s)                                           // 5
	_ = tp.Const(tensor.New[float64](1))             // 6
	for _, c := range []struct {
		name   string
		inputs []Var[float64]
		params []*Param[float64]
		stop   map[int32]bool
		want   []bool
	}{
		{"input", []Var[float64]{a}, nil, nil, []bool{true, false, false, true, true, true, false}},
		{"param", nil, []*Param[float64]{p}, nil, []bool{false, true, true, true, true, true, false}},
		{"param, stop at h", nil, []*Param[float64]{p}, map[int32]bool{3: true}, []bool{false, true, true, false, true, true, false}},
		{"input h, stop at h", []Var[float64]{h}, nil, map[int32]bool{3: true}, []bool{false, false, false, true, true, true, false}},
		{"intermediate", []Var[float64]{tw}, nil, nil, []bool{false, false, true, true, true, true, false}},
	} {
		if got := tp.needed(0, 6, c.inputs, c.params, c.stop); !slices.Equal(got, c.want) {
			t.Errorf("%s: needed %v, want %v", c.name, got, c.want)
		}
	}
	// From slot 2 on, slots below are not looked at.
	if got, want := tp.needed(2, 5, []Var[float64]{tw}, nil, nil), []bool{true, true, true, true}; !slices.Equal(got, want) {
		t.Errorf("from slot 2: needed %v, want %v", got, want)
	}
}

// TestPoolArgMaxTieOutside: the first maximum is looked for inside the
// window only, even where an element just right of it ties.
func TestPoolArgMaxTieOutside(t *testing.T) {
	g := poolGeom{kind: poolMax, k: 2, s: 2, h: 2, w: 3, oh: 1, ow: 1, planes: 1}
	in := []float64{1, 2, 4, 0, 4, 1} // window rows 0–1, columns 0–1: max 4 at (1, 1)
	if got := poolArgMax(g, in, 4, 0, 2, 0, 2); got != 4 {
		t.Errorf("argmax index %d, want 4", got)
	}
}
