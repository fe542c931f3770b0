package odeblock

import (
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// TestPassPools: the pools hand back what fits (the same tape or buffer),
// make anew what does not, and trim to the count asked for.
func TestPassPools(t *testing.T) {
	eng := tensor.EngineFor[float64](tensor.Gonum(1))
	other := tensor.Serial(tensor.EngineFor[float64](tensor.Gonum(2)))
	var q passPools[float64]

	a := q.takeStageTape(eng, []int{2, 3})
	q.putStageTape(a)
	if b := q.takeStageTape(eng, []int{2, 3}); b != a || len(q.stages) != 0 {
		t.Errorf("a fitting stage tape was not reused")
	}
	q.putStageTape(a)
	if b := q.takeStageTape(other, []int{2, 3}); b == a || b.tp.Engine() != other || len(q.stages) != 0 {
		t.Errorf("a tape of another engine was handed out or kept")
	}
	q.putStageTape(q.takeStageTape(eng, []int{2, 3}))
	if b := q.takeStageTape(eng, []int{3, 2}); !b.y.HasShape(3, 2) || len(q.stages) != 0 {
		t.Errorf("a tape of another shape was handed out or kept")
	}
	four := []*stageTape[float64]{q.takeStageTape(eng, []int{1}), q.takeStageTape(eng, []int{1}), q.takeStageTape(eng, []int{1}), q.takeStageTape(eng, []int{1})}
	for _, st := range four {
		q.putStageTape(st)
	}
	q.trimStageTapes(2)
	if len(q.stages) != 2 {
		t.Errorf("%d stage tapes after trimming to 2", len(q.stages))
	}

	ts := q.restageTapes(eng, []int{2}, 3)
	if again := q.restageTapes(eng, []int{2}, 3); &again[0] != &ts[0] {
		t.Error("restaging tapes that fit were made anew")
	}
	for _, c := range []struct {
		eng   tensor.Engine[float64]
		shape []int
		s     int
	}{{other, []int{2}, 3}, {eng, []int{3}, 3}, {eng, []int{2}, 4}} {
		prev := q.restageTapes(eng, []int{2}, 3)
		got := q.restageTapes(c.eng, c.shape, c.s)
		if &got[0] == &prev[0] || len(got) != c.s || got[0].tp.Engine() != c.eng || !got[0].y.HasShape(c.shape...) {
			t.Errorf("restaging tapes for %v, %d stages: the old ones kept, or not made to fit", c.shape, c.s)
		}
	}

	l := q.takeLog() // none pooled: a new, empty log
	if l == nil || l.Len() != 0 || q.log != nil {
		t.Errorf("takeLog with none pooled: log %v, the pool %v", l, q.log)
	}
	q.giveLog(l)
	if l.Len() != 0 || q.log == nil || q.log == l {
		t.Errorf("giveLog: the log keeps %d steps, the pool %v", l.Len(), q.log)
	}
	kept := q.log
	if m := q.takeLog(); m != kept || q.log != nil {
		t.Error("takeLog did not hand out the pooled log")
	}
}

// TestAdjointSlabSized: an Adjoint pass's forward sizes the Block's slab
// for the backward solve of [z, a, g_θ] (2n + m values), so that the
// backward pass carves its buffers from the same slab instead of making a
// larger one.
func TestAdjointSlabSized(t *testing.T) {
	w := autograd.NewParam("w", tensor.FromSlice([]float64{0.5, -0.3, 0.8}, 3))
	field := FieldFunc([]*autograd.Param[float64]{w}, func(tp *autograd.Tape[float64], _ float64, h autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Mul(autograd.Tanh(h), tp.Param(w))
	})
	opt := Options{Method: "rk4", Step: 0.25}
	b := &Block[float64]{Dynamics: &NODE[float64]{F: field}, Times: []float64{0, 1}, Mode: Adjoint{}, Solver: opt}
	x := tensor.FromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Gonum(1)))
	z, err := b.Forward(tp, tp.Const(x))
	if err != nil {
		t.Fatal(err)
	}
	var none []float64
	s := hk[float64]().NewShared(&none)
	if err := s.Configure(opt); err != nil {
		t.Fatal(err)
	}
	want := hk[float64]().SlabLen(s, 2*x.Len()+w.Value.Len())
	if len(b.slab) < want {
		t.Fatalf("after the forward the slab holds %d values, the backward solve needs %d", len(b.slab), want)
	}
	before := &b.slab[0]
	if err := tp.Backward(autograd.Sum(autograd.Square(z))); err != nil {
		t.Fatal(err)
	}
	if &b.slab[0] != before {
		t.Error("the backward pass replaced the slab the forward sized for it")
	}
}
