package odeblock

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// TestAdjointWorkParts: a part is a view of its elements in its shape,
// the same tensor for the same tensor, first element and kind, another
// for any of them different; the cache starts over past 4096 parts.
func TestAdjointWorkParts(t *testing.T) {
	w := &adjointWork[float64]{parts: map[partKey[float64]]*tensor.Tensor[float64]{}}
	x := tensor.FromSlice([]float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	p := w.part(x, 2, 1, []int{2, 2})
	if !p.HasShape(2, 2) {
		t.Errorf("part's shape %v, want [2 2]", p.Shape())
	}
	if d := cmp.Diff([]float64{2, 3, 4, 5}, p.ReadData()); d != "" {
		t.Errorf("part's elements (-want +got):\n%s", d)
	}
	x.Data()[3] = 30 // a view: the part sees its tensor's writes
	if got := p.ReadData()[1]; got != 30 {
		t.Errorf("the part reads %g after a write of 30 to its tensor", got)
	}
	if w.part(x, 2, 1, []int{2, 2}) != p {
		t.Error("the same part was made again")
	}
	y := tensor.New[float64](10)
	for _, c := range []struct {
		name string
		q    *tensor.Tensor[float64]
	}{
		{"another first element", w.part(x, 3, 1, []int{2, 2})},
		{"another kind", w.part(x, 2, 0, []int{4})},
		{"another tensor", w.part(y, 2, 1, []int{2, 2})},
	} {
		if c.q == p {
			t.Errorf("%s: the part of [2, 6) kind 1 of x", c.name)
		}
	}
	clear(w.parts)
	for i := range 4097 {
		w.part(tensor.New[float64](1), 0, i, []int{1})
	}
	if len(w.parts) != 4097 {
		t.Errorf("%d parts cached after 4097, want all", len(w.parts))
	}
	w.part(x, 0, 0, []int{1})
	if len(w.parts) != 1 {
		t.Errorf("%d parts cached after the 4098th, want the cache started over (1)", len(w.parts))
	}
}

// TestRowCache: the rows of a tensor [L, …] as flat views of n elements,
// made once for the tensor: the same rows again for it, new ones for
// another tensor or another row length.
func TestRowCache(t *testing.T) {
	var c rowCache[float64]
	x := tensor.FromSlice([]float64{0, 1, 2, 3, 4, 5}, 3, 2)
	rows := c.get(x, 2)
	var got [][]float64
	for _, r := range rows {
		if !r.HasShape(2) {
			t.Errorf("a row of shape %v, want [2]", r.Shape())
		}
		got = append(got, r.ReadData())
	}
	if d := cmp.Diff([][]float64{{0, 1}, {2, 3}, {4, 5}}, got); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
	if again := c.get(x, 2); &again[0] != &rows[0] {
		t.Error("the rows of the same tensor were made again")
	}
	y := tensor.FromSlice([]float64{6, 7, 8, 9, 10, 11}, 3, 2)
	if r := c.get(y, 2); r[1].ReadData()[0] != 8 {
		t.Errorf("another tensor's second row starts with %g, want 8", r[1].ReadData()[0])
	}
	if r := c.get(y, 3); len(r) != 2 || r[1].ReadData()[0] != 9 {
		t.Errorf("rows of 3: %d rows, the second from %g; want 2, from 9", len(r), r[1].ReadData()[0])
	}
}

// TestCheckDriftNamesColumns: a drift the check finds names its columns
// (for the recovery's report) from states in host memory; one on a device
// names none, and a check that passes leaves none.
func TestCheckDriftNamesColumns(t *testing.T) {
	z0 := []float64{3, 4}
	a := driftChecker(Adjoint{MaxDrift: 0.05}, nil, 2, 1e-9)
	if err := checkDrift(a, []float64{3, 4}, z0, z0, 1e-6); err != nil || a.drifted != nil {
		t.Errorf("no drift: %v, columns %v; want none", err, a.drifted)
	}
	if err := checkDrift(a, []float64{3, 5}, z0, z0, 1e-6); err == nil || len(a.drifted) == 0 {
		t.Errorf("a drift on the host: %v, columns %v; want an error and columns", err, a.drifted)
	}
	a = driftChecker(Adjoint{MaxDrift: 0.05}, nil, 2, 1e-9)
	a.onDev = true // the host's arithmetic standing in for a device's
	if err := checkDrift(a, []float64{3, 5}, z0, z0, 1e-6); err == nil || a.drifted != nil {
		t.Errorf("a drift on a device: %v, columns %v; want an error and no columns", err, a.drifted)
	}
}

// TestAdjointWorkDropsStaleParts: the part cache is emptied when the slab
// it views moves, and kept while it stays.
func TestAdjointWorkDropsStaleParts(t *testing.T) {
	w := &adjointWork[float64]{parts: map[partKey[float64]]*tensor.Tensor[float64]{}}
	slab1, slab2 := make([]float64, 4), make([]float64, 4)
	x := tensor.FromSlice(slab1)
	w.part(x, 0, 0, []int{2})
	w.dropStaleParts(slab1)
	if len(w.parts) != 0 {
		t.Errorf("%d parts kept when the slab was first seen", len(w.parts))
	}
	p := w.part(x, 0, 0, []int{2})
	w.dropStaleParts(slab1)
	if w.part(x, 0, 0, []int{2}) != p {
		t.Error("the parts were dropped while the slab stayed")
	}
	w.dropStaleParts(slab2)
	if len(w.parts) != 0 {
		t.Errorf("%d parts kept after the slab moved", len(w.parts))
	}
	w.part(x, 0, 0, []int{2})
	w.dropStaleParts(nil)
	if len(w.parts) != 0 {
		t.Errorf("%d parts kept after the slab went", len(w.parts))
	}
}

// TestAdjointForwardKeeps: the Adjoint mode's forward hook keeps, as
// copies, the state of every AnchorEvery-th accepted step, or with a
// budget every every-th accepted step's, halving them (the odd positions
// kept, every doubled) whenever they exceed the budget; rejected steps
// count for nothing.
func TestAdjointForwardKeeps(t *testing.T) {
	// want returns the steps whose states are kept, by the rule above.
	want := func(anchorEvery, budget, steps int) []int {
		var kept []int
		every := 1
		for s := 1; s <= steps; s++ {
			if anchorEvery > 0 && s%anchorEvery == 0 {
				kept = append(kept, s)
			}
			if budget > 0 && s%every == 0 {
				if kept = append(kept, s); len(kept) > budget {
					var odd []int
					for i := 1; i < len(kept); i += 2 {
						odd = append(odd, kept[i])
					}
					kept, every = odd, every*2
				}
			}
		}
		return kept
	}
	eng := tensor.EngineFor[float64](tensor.Gonum(1))
	field := FieldFunc[float64](nil, func(tp *autograd.Tape[float64], _ float64, h autograd.Var[float64]) autograd.Var[float64] { return h })
	for _, c := range []struct {
		name                      string
		anchorEvery, budget, step int
	}{
		{"every third step", 3, 0, 10},
		{"a budget of 3", 0, 3, 12},
		{"a budget of 3, halved once", 0, 3, 7},
		{"nothing kept", 0, 0, 5},
	} {
		b := &Block[float64]{Dynamics: &NODE[float64]{F: field}}
		p := &pass[float64]{b: b, eng: eng, shape: []int{2}, n: 2, ts: []float64{0, 1}, params: []*autograd.Param[float64]{}}
		if err := p.forwardSolver(false); err != nil {
			t.Fatal(err)
		}
		a := &adjoint[float64]{p: p, opt: Adjoint{AnchorEvery: c.anchorEvery}, budget: c.budget}
		hook := a.forward()
		y := make([]float64, 2) // the solver's buffer, reused
		yt := tensor.FromSlice(y)
		for s := 1; s <= c.step; s++ {
			y[0], y[1] = float64(s), -float64(s)
			end := float64(s) / float64(c.step)
			if err := hook(StepInfo[float64]{Accepted: false, End: end, Y1: []float64{99, 99}, State1: tensor.FromSlice([]float64{99, 99})}); err != nil {
				t.Fatal(err)
			}
			if err := hook(StepInfo[float64]{Accepted: true, End: end, Y1: y, State1: yt}); err != nil {
				t.Fatal(err)
			}
		}
		var got, wantStates [][]float64
		for _, an := range a.anchors {
			got = append(got, append([]float64{an.t}, an.z.ReadData()...))
		}
		for _, s := range want(c.anchorEvery, c.budget, c.step) {
			wantStates = append(wantStates, []float64{float64(s) / float64(c.step), float64(s), -float64(s)})
		}
		if d := cmp.Diff(wantStates, got); d != "" {
			t.Errorf("%s: the kept states [t, z...] (-want +got):\n%s", c.name, d)
		}
		if seen := a.seen[0]; seen.steps != c.step || seen.norm2 != 2*float64(c.step*c.step) {
			t.Errorf("%s: the forward saw %+v, want %d steps, largest ‖z‖² %d", c.name, seen, c.step, 2*c.step*c.step)
		}
	}
}

// TestAdjointGuard: the backward piece's guard lets a reconstructed state
// as large as four times the largest squared norm the forward saw there
// (its steps' or the two anchors', at least n·ATol²) pass, exactly at that
// bound included, and stops one past it, or NaN, with ErrAdjointDrift; it
// stops the solve at the first step past 4 × the forward's steps + 20.
func TestAdjointGuard(t *testing.T) {
	zero := anchor[float64]{t: 0, z: tensor.New[float64](2)}
	three := anchor[float64]{t: 1, z: tensor.FromSlice([]float64{3, 0})}
	for _, c := range []struct {
		name   string
		seen   stretchSeen
		hi, lo anchor[float64]
		atol   float64
		state  []float64
		drift  bool
	}{
		{"below the forward's states", stretchSeen{3, 1}, three, zero, 1e-9, []float64{1, 1}, false},
		{"at 4 × the forward's states", stretchSeen{3, 1}, zero, zero, 1e-9, []float64{2, 0}, false},
		{"past 4 × the forward's states", stretchSeen{3, 1}, zero, zero, 1e-9, []float64{2, 1e-3}, true},
		{"NaN", stretchSeen{3, 1}, zero, zero, 1e-9, []float64{math.NaN(), 0}, true},
		{"at 4 × the anchor's", stretchSeen{3, 1}, three, zero, 1e-9, []float64{6, 0}, false},
		{"past 4 × the anchor's", stretchSeen{3, 1}, zero, three, 1e-9, []float64{6, 1e-3}, true},
		{"at n·ATol²", stretchSeen{3, 0}, zero, zero, 1, []float64{1, 1}, false},
		{"past n·ATol²", stretchSeen{3, 0}, zero, zero, 1, []float64{1, 1.01}, true},
	} {
		a := &adjoint[float64]{p: &pass[float64]{n: 2}, bopt: Options{ATol: c.atol}, w: &adjointWork[float64]{flat: []int{2}, parts: map[partKey[float64]]*tensor.Tensor[float64]{}}}
		a.setPhase(false)
		err := a.guard(c.seen, c.hi, c.lo)(StepInfo[float64]{Accepted: true, End: 0.5, Y1: c.state, State1: tensor.FromSlice(c.state)})
		if got := errors.Is(err, ErrAdjointDrift); got != c.drift {
			t.Errorf("%s: %v; want ErrAdjointDrift %v", c.name, err, c.drift)
		}
	}
	a := &adjoint[float64]{p: &pass[float64]{n: 2}, bopt: Options{ATol: 1e-9}, w: &adjointWork[float64]{flat: []int{2}, parts: map[partKey[float64]]*tensor.Tensor[float64]{}}}
	a.setPhase(false)
	hook := a.guard(stretchSeen{3, 1}, zero, zero)
	si := StepInfo[float64]{End: 0.5, Y1: []float64{1, 0}, State1: tensor.FromSlice([]float64{1, 0})}
	for i := 1; i <= 4*3+20; i++ {
		if err := hook(si); err != nil {
			t.Fatalf("step %d of at most %d: %v", i, 4*3+20, err)
		}
	}
	if err := hook(si); !errors.Is(err, ErrAdjointDrift) {
		t.Errorf("step %d past 4 × 3 + 20: %v; want ErrAdjointDrift", 4*3+21, err)
	}
}

// TestAdjointWorkFronts: a front of a buffer (the solver's stage input
// handed without its quadratures: a view sharing the whole buffer's
// storage), flat or shaped, has the whole buffer's parts, the same
// tensors; a tensor of its own over the same memory has its own, and so
// has another buffer.
func TestAdjointWorkFronts(t *testing.T) {
	w := &adjointWork[float64]{parts: map[partKey[float64]]*tensor.Tensor[float64]{}}
	x := []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	whole := tensor.FromSlice(x, 2, 5)
	front := whole.Reshape(10).Slice(0, 6)
	for _, lo := range []int{0, 3} {
		p := w.part(front, lo, 1, []int{3})
		if p != w.part(whole, lo, 1, []int{3}) {
			t.Errorf("the part from %d of the front is not the whole buffer's", lo)
		}
		if !p.HasShape(3) || p.ReadData()[0] != float64(lo) {
			t.Errorf("the part from %d of the front has shape %v and starts with %g", lo, p.Shape(), p.ReadData()[0])
		}
	}
	if w.part(tensor.FromSlice(x), 3, 1, []int{3}) == w.part(whole, 3, 1, []int{3}) {
		t.Error("a tensor of its own over the buffer's memory has the buffer's part")
	}
	y := tensor.FromSlice([]float64{10, 11, 12, 13, 14, 15, 16, 17, 18, 19})
	if got := w.part(y.Slice(0, 6), 3, 1, []int{3}).ReadData(); got[0] != 13 || w.part(y, 3, 1, []int{3}) == w.part(whole, 3, 1, []int{3}) {
		t.Errorf("another buffer's part from 3 starts with %g or is x's, want 13 and its own", got[0])
	}
}
