package odeblock_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/interp"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// The holes of issue 48: user input that panicked deep inside the package
// or reported the wrong cause.

// holeField is f(z) = tanh(z·W) for W [n, n·m] (a CDE's [B, H] → [B, H·C]
// with m = C; m = 1 for an ODE's field).
func holeField(n, m int) (odeblock.Field[float64], *autograd.Param[float64]) {
	w := autograd.NewParam("w", tensor.Full[float64](0.1, n, n*m))
	return odeblock.FieldFunc([]*autograd.Param[float64]{w}, func(tp *autograd.Tape[float64], _ float64, z autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Tanh(autograd.Linear(z, tp.Param(w), autograd.Var[float64]{}))
	}), w
}

// noPanic runs f, failing the test with what it panicked with.
func noPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s panicked: %v", what, r)
		}
	}()
	f()
}

// TestHole48CDEWithoutControl: a CDE without its control (and every
// dynamics of the package without a field or parameter it needs, or as a
// nil pointer) makes Forward and Trajectory return an error naming the
// dynamics and the missing field, where Forward of a CDE without X was a
// nil-pointer panic in Eval; Block.Params lists nothing for them instead
// of panicking, and CDE.Span without a control is nil.
func TestHole48CDEWithoutControl(t *testing.T) {
	f, _ := holeField(1, 1)
	x, err := interp.NewNaturalCubic(cdeTimes, cdeTape().Const(tensor.Full[float64](0.5, 1, len(cdeTimes), 1)))
	if err != nil {
		t.Fatal(err)
	}
	gamma := autograd.NewParam("g", tensor.New[float64](1))
	for _, c := range []struct {
		dyn   odeblock.Dynamics[float64]
		parts int
		want  []string // in the error
	}{
		{&odeblock.CDE[float64]{F: f}, 1, []string{"CDE", "X is nil", "control"}},
		{&odeblock.CDE[float64]{X: x}, 1, []string{"CDE", "F is nil", "field"}},
		{&odeblock.NODE[float64]{}, 1, []string{"NODE", "F is nil"}},
		{&odeblock.SONODE[float64]{}, 2, []string{"SONODE", "F is nil"}},
		{&odeblock.HBNODE[float64]{F: f}, 2, []string{"HBNODE", "GammaRaw is nil", "NewHBNODE"}},
		{&odeblock.HBNODE[float64]{GammaRaw: gamma}, 2, []string{"HBNODE", "F is nil"}},
		{&odeblock.GHBNODE[float64]{F: f, GammaRaw: gamma}, 2, []string{"GHBNODE", "XiRaw is nil", "NewGHBNODE"}},
		{&odeblock.GHBNODE[float64]{F: f, XiRaw: gamma}, 2, []string{"GHBNODE", "GammaRaw is nil"}},
		{&odeblock.AdamNODE[float64]{F: f, R1: gamma}, 3, []string{"AdamNODE", "R2 is nil", "NewAdamNODE"}},
		{&odeblock.AdamNODE[float64]{F: f, R2: gamma}, 3, []string{"AdamNODE", "R1 is nil"}},
		{&odeblock.AdamNODE[float64]{R1: gamma, R2: gamma}, 3, []string{"AdamNODE", "F is nil"}},
		{&odeblock.CNF[float64]{}, 1, []string{"CNF", "F is nil"}},
		{(*odeblock.NODE[float64])(nil), 1, []string{"nil pointer to a NODE"}},
		{(*odeblock.SONODE[float64])(nil), 2, []string{"nil pointer to a SONODE"}},
		{(*odeblock.HBNODE[float64])(nil), 2, []string{"nil pointer to an HBNODE"}},
		{(*odeblock.GHBNODE[float64])(nil), 2, []string{"nil pointer to a GHBNODE"}},
		{(*odeblock.AdamNODE[float64])(nil), 3, []string{"nil pointer to an AdamNODE"}},
		{(*odeblock.CDE[float64])(nil), 1, []string{"nil pointer to a CDE"}},
		{(*odeblock.CNF[float64])(nil), 1, []string{"nil pointer to a CNF"}},
	} {
		name := fmt.Sprintf("%T%+v", c.dyn, c.dyn)
		for _, traj := range []bool{false, true} {
			for _, mode := range []odeblock.GradMode{nil, odeblock.Backprop{}} {
				b := &odeblock.Block[float64]{Dynamics: c.dyn, Mode: mode, Shards: 2}
				tp := cdeTape()
				var err error
				noPanic(t, name, func() {
					if traj {
						_, err = b.Trajectory(tp, tp.Const(tensor.Full[float64](0.5, c.parts, 2)))
					} else {
						_, err = b.Forward(tp, tp.Const(tensor.Full[float64](0.5, c.parts, 2)))
					}
				})
				for _, w := range c.want {
					if err == nil || !strings.Contains(err.Error(), w) || !strings.Contains(err.Error(), "Block.Dynamics") {
						t.Errorf("%s (trajectory %v, mode %v): error %v, want one naming Block.Dynamics and %q", name, traj, mode, err, w)
						break
					}
				}
			}
		}
		noPanic(t, name+": Block.Params", func() {
			if ps := (&odeblock.Block[float64]{Dynamics: c.dyn}).Params(); ps != nil {
				t.Errorf("%s: Block.Params() = %v, want nil", name, ps)
			}
		})
	}
	noPanic(t, "CDE.Span without a control", func() {
		if s := (&odeblock.CDE[float64]{F: f}).Span(); s != nil {
			t.Errorf("CDE.Span() without a control = %v, want nil", s)
		}
	})
	// Complete dynamics still solve, and list their parameters.
	fc, wc := holeField(1, 1)
	cde := &odeblock.CDE[float64]{F: fc, X: x}
	b := &odeblock.Block[float64]{Dynamics: cde, Times: cde.Span()}
	if ps := b.Params(); len(ps) != 1 || ps[0] != wc {
		t.Errorf("Block.Params() of a complete CDE = %v, want [w]", ps)
	}
	tp := cdeTape()
	if _, err := b.Forward(tp, tp.Const(tensor.Full[float64](0.5, 1, 1))); err != nil {
		t.Errorf("a complete CDE: %v", err)
	}
	for _, d := range []odeblock.Dynamics[float64]{odeblock.NewHBNODE(f, -3), odeblock.NewGHBNODE(f, -3, 2), odeblock.NewAdamNODE(f, -5, 5, odeblock.ScaleSqrt)} {
		if ps := (&odeblock.Block[float64]{Dynamics: d}).Params(); len(ps) < 2 {
			t.Errorf("Block.Params() of %T = %v, want the field's and the family's", d, ps)
		}
	}
}

// TestHole48CDENilDerivative: a control whose DerivativeAt returns nil
// makes Eval panic with a *tensor.ShapeError naming the control's
// derivative, not a nil-pointer dereference.
func TestHole48CDENilDerivative(t *testing.T) {
	f, _ := holeField(1, 1)
	cde := &odeblock.CDE[float64]{F: f, X: nilControl{}}
	tp := cdeTape()
	defer func() {
		r := recover()
		if _, ok := r.(*tensor.ShapeError); !ok || !strings.Contains(fmt.Sprint(r), "DerivativeAt(0.25) returned nil") {
			t.Errorf("Eval with a nil control derivative: panic %v, want a *tensor.ShapeError naming DerivativeAt", r)
		}
	}()
	cde.Eval(tp, 0.25, tp.Const(tensor.New[float64](2, 1)))
}

type nilControl struct{}

func (nilControl) DerivativeAt(float64) *tensor.Tensor[float64] { return nil }
func (nilControl) Times() []float64                             { return []float64{0, 1} }

// TestHole48CNFLogProbRank1: every CNF entry point given a state or
// samples of the wrong shape — LogProb of a rank-1 state among them, once
// an index out of range — panics with a *tensor.ShapeError naming the
// shape, as Augment did; the right shapes still work.
func TestHole48CNFLogProbRank1(t *testing.T) {
	f, _ := holeField(2, 1)
	c := &odeblock.CNF[float64]{F: f}
	tp := cdeTape()
	v := func(s ...int) autograd.Var[float64] { return tp.Const(tensor.Full[float64](0.5, s...)) }
	for _, s := range [][]int{{3}, {2, 1}, {2, 3, 1}, {}} {
		for _, e := range []struct {
			name, op string
			f        func(autograd.Var[float64])
		}{
			{"LogProb", "odeblock.CNF.LogProb", func(x autograd.Var[float64]) { c.LogProb(x) }},
			{"Eval", "odeblock.CNF", func(x autograd.Var[float64]) { c.Eval(tp, 0, x) }},
		} {
			wantPanic(t, fmt.Sprintf("%s of shape %v", e.name, s), e.op, s, func() { e.f(v(s...)) })
		}
	}
	for _, s := range [][]int{{3}, {2, 0}, {2, 3, 1}, {}} {
		wantPanic(t, fmt.Sprintf("Augment of shape %v", s), "odeblock.CNF.Augment", s, func() { c.Augment(v(s...)) })
	}
	for _, s := range [][]int{{3}, {2, 3, 1}, {}} {
		wantPanic(t, fmt.Sprintf("StandardNormalLogProb of shape %v", s), "odeblock.StandardNormalLogProb", s, func() { odeblock.StandardNormalLogProb(v(s...)) })
	}
	// The right shapes: [B, D] samples, [B, D+1] states, D = 1 included.
	for _, d := range []int{1, 2} {
		s0 := c.Augment(v(3, d))
		if got := s0.Shape(); len(got) != 2 || got[0] != 3 || got[1] != d+1 {
			t.Errorf("Augment([3 %d]) has shape %v, want [3 %d]", d, got, d+1)
		}
		if got := c.LogProb(s0).Shape(); len(got) != 2 || got[0] != 3 || got[1] != 1 {
			t.Errorf("LogProb([3 %d]) has shape %v, want [3 1]", d+1, got)
		}
	}
	if got := odeblock.StandardNormalLogProb(v(3, 0)).Shape(); len(got) != 2 || got[0] != 3 || got[1] != 1 {
		t.Errorf("StandardNormalLogProb([3 0]) has shape %v, want [3 1]", got)
	}
}

// wantPanic runs f and fails unless it panics with a *tensor.ShapeError of
// op whose message names the shape.
func wantPanic(t *testing.T, what, op string, shape []int, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		se, ok := r.(*tensor.ShapeError)
		if !ok || se.Op != op || !strings.Contains(se.Error(), fmt.Sprint(shape)) {
			t.Errorf("%s: panic %#v, want a *tensor.ShapeError of %s naming %v", what, r, op, shape)
		}
	}()
	f()
}

// gatedField is f(z) = tanh(z·W) whose next evaluation, once hold is set,
// signals entered and waits for release: a pass of a block over it stays
// in the block (its forward solve, or its backward's) until the test lets
// it go.
type gatedField struct {
	w                 *autograd.Param[float64]
	hold              atomic.Bool
	entered, released chan struct{}
}

func newGatedField() *gatedField {
	return &gatedField{w: autograd.NewParam("w", tensor.FromSlice([]float64{0.3, -0.2, 0.1, 0.4}, 2, 2)),
		entered: make(chan struct{}), released: make(chan struct{})}
}

func (g *gatedField) ForwardT(tp *autograd.Tape[float64], _ float64, z autograd.Var[float64]) autograd.Var[float64] {
	if g.hold.CompareAndSwap(true, false) {
		g.entered <- struct{}{}
		<-g.released
	}
	return autograd.Tanh(autograd.Linear(z, tp.Param(g.w), autograd.Var[float64]{}))
}

func (g *gatedField) Params() []*autograd.Param[float64] { return []*autograd.Param[float64]{g.w} }

// held runs pass on another goroutine with the field's next evaluation
// held, and returns once that evaluation has begun; the returned function
// releases it and returns pass's error (or what it panicked with).
func (g *gatedField) held(pass func() error) (release func() error) {
	done := make(chan error, 1)
	g.hold.Store(true)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("panic: %v", r)
			}
		}()
		done <- pass()
	}()
	<-g.entered
	return func() error {
		g.released <- struct{}{}
		return <-done
	}
}

// concurrentUse reports whether err is the Block's concurrent-use error,
// failing the test with what was there instead.
func concurrentUse(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), "Block used from two goroutines at once") ||
		!strings.Contains(err.Error(), "not safe for concurrent use") || strings.Contains(err.Error(), "Pullback") {
		t.Errorf("%s: error %v, want the Block's concurrent-use error", what, err)
	}
}

// TestHole48BlockConcurrentUse: one Block used from two goroutines at once
// — a Forward while another goroutine's Forward or backward pass is in
// the block, a backward pass while a Forward is — gets an error saying
// so, where it panicked with the Pullback's message about nesting; the
// pass already in the block is unharmed, and the block works afterwards.
// Used one call at a time from two goroutines it works (the loop, which
// with -race also checks that the guard orders the passes), and so does a
// sharded solve, whose shards run on several goroutines on purpose.
func TestHole48BlockConcurrentUse(t *testing.T) {
	eng := tensor.EngineFor[float64](tensor.Gonum(2))
	g := newGatedField()
	b := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: g}, Solver: odeblock.Options{RTol: 1e-6, ATol: 1e-6}}
	z0 := []float64{0.5, -0.5, 1, 0.25}
	forward := func() (autograd.Var[float64], *autograd.Tape[float64], error) {
		tp := autograd.NewTape(eng)
		var y autograd.Var[float64]
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			y, err = b.Forward(tp, tp.Const(tensor.FromSlice(slices.Clone(z0), 2, 2)))
		}()
		return y, tp, err
	}
	backward := func(tp *autograd.Tape[float64], y autograd.Var[float64]) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return tp.Backward(autograd.Sum(y))
	}
	ref, tp0, err := forward()
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(ref.Value().ReadData())
	if err := backward(tp0, ref); err != nil {
		t.Fatal(err)
	}
	wantGrad := slices.Clone(g.w.Grad.ReadData())
	g.w.ZeroGrad()
	check := func(what string, y autograd.Var[float64], err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		} else if got := y.Value().ReadData(); !slices.Equal(got, want) {
			t.Errorf("%s: z(1) = %v, want %v", what, got, want)
		}
	}

	// A Forward while another goroutine's Forward is in the block.
	var y1 autograd.Var[float64]
	release := g.held(func() (err error) { y1, _, err = forward(); return err })
	_, _, err = forward()
	concurrentUse(t, "Forward during a Forward", err)
	check("the Forward already in the block", y1, release())

	// A Forward while another goroutine's backward pass (the adjoint's
	// solve) is in the block.
	y2, tp2, err := forward()
	check("Forward", y2, err)
	release = g.held(func() error { return backward(tp2, y2) })
	_, _, err = forward()
	concurrentUse(t, "Forward during a backward pass", err)
	if err := release(); err != nil {
		t.Errorf("the backward pass already in the block: %v", err)
	} else if got := g.w.Grad.ReadData(); !slices.Equal(got, wantGrad) {
		t.Errorf("the backward pass already in the block: gradient %v, want %v", got, wantGrad)
	}
	g.w.ZeroGrad()

	// A backward pass while another goroutine's Forward is in the block.
	y3, tp3, err := forward()
	check("Forward", y3, err)
	var y4 autograd.Var[float64]
	release = g.held(func() (err error) { y4, _, err = forward(); return err })
	concurrentUse(t, "a backward pass during a Forward", backward(tp3, y3))
	check("the Forward already in the block", y4, release())
	g.w.ZeroGrad()

	// One call at a time from two goroutines: each Forward either runs
	// (to the same value) or, overlapping the other's, is refused.
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		wg.Go(func() {
			for range 25 {
				y, _, err := forward()
				if err == nil && !slices.Equal(y.Value().ReadData(), want) {
					err = fmt.Errorf("z(1) = %v, want %v", y.Value().ReadData(), want)
				}
				if err != nil && !strings.Contains(err.Error(), "Block used from two goroutines at once") {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Forward from two goroutines in turn: %v", err)
	}
	y5, tp5, err := forward()
	check("Forward after it all", y5, err)
	if err := backward(tp5, y5); err != nil {
		t.Errorf("Backward after it all: %v", err)
	}

	// A sharded solve: its shards' blocks on the engine's workers.
	sb := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: g}, Solver: b.Solver, Shards: 2, Mode: odeblock.Checkpoint{}}
	for range 2 {
		tp := autograd.NewTape(eng)
		y, err := sb.Forward(tp, tp.Const(tensor.FromSlice(slices.Clone(z0), 2, 2)))
		if err == nil {
			err = tp.Backward(autograd.Sum(y))
		}
		if err != nil {
			t.Errorf("a sharded solve: %v", err)
		}
	}
}

// TestHole48ExplicitAdamsSmallSteps pins what the docs say of
// explicit_adams (odeblock's package doc, integrate's Adams methods): on
// y' = −y over [0, 1] its error falls as h³ at MaxOrder 4 and as h⁴ at
// MaxOrder 5 and 8 (the start-up's step of order 3 caps it), as the
// method's order says, so the implementation is not at fault; at the
// default MaxOrder 12 the error grows as the step shrinks from 0.1 to
// 0.0125 (0.46 there), Adams–Bashforth 11 being stable only for
// h·|λ| ≤ 0.00338, and is small once the step is inside (0.003125).
// Over [0, 10] a step just inside each stability limit (0.3 for MaxOrder
// 5, 0.00338 for 12) stays accurate and one just outside diverges.
func TestHole48ExplicitAdamsSmallSteps(t *testing.T) {
	solve := func(lambda, t1, h float64, maxOrder int) float64 {
		t.Helper()
		f := func(_ float64, y, dy []float64) error { dy[0] = lambda * y[0]; return nil }
		out, _, err := odeblock.Solve(f, []float64{1}, []float64{0, t1}, odeblock.Options{Method: "explicit_adams", Step: h, MaxOrder: maxOrder})
		if err != nil {
			t.Fatalf("MaxOrder %d, Step %g: %v", maxOrder, h, err)
		}
		return math.Abs(out[1][0] - math.Exp(lambda*t1))
	}
	for _, c := range []struct {
		maxOrder int
		order    float64
		steps    []float64
	}{
		{4, 3, []float64{0.05, 0.025, 0.0125, 0.00625}},
		{5, 4, []float64{0.0125, 0.00625, 0.003125}},
		{8, 4, []float64{0.0125, 0.00625, 0.003125}},
	} {
		prev := solve(-1, 1, c.steps[0], c.maxOrder)
		for _, h := range c.steps[1:] {
			e := solve(-1, 1, h, c.maxOrder)
			if p := math.Log2(prev / e); math.Abs(p-c.order) > 0.3 {
				t.Errorf("MaxOrder %d: error %.3g at Step %g after %.3g at %g: order %.2f, want %g", c.maxOrder, e, h, prev, 2*h, p, c.order)
			}
			prev = e
		}
	}
	// The default: worse as the step shrinks, until it is stable.
	prev := 0.0
	for _, h := range []float64{0.1, 0.05, 0.025, 0.0125} {
		e := solve(-1, 1, h, 0)
		if e <= prev {
			t.Errorf("MaxOrder 12: error %.3g at Step %g, not above the %.3g at %g", e, h, prev, 2*h)
		}
		prev = e
	}
	if prev < 0.1 {
		t.Errorf("MaxOrder 12: error %.3g at Step 0.0125, want the documented 0.46", prev)
	}
	if e := solve(-1, 1, 0.003125, 0); e > 1e-10 {
		t.Errorf("MaxOrder 12: error %.3g at Step 0.003125, inside the stability interval", e)
	}
	for _, c := range []struct {
		maxOrder       int
		lambda, in, up float64 // h·|λ| just inside and just outside the interval
	}{
		{5, -10, 0.28, 0.32},
		{12, -1, 0.003, 0.004},
	} {
		if e := solve(c.lambda, 10, c.in/-c.lambda, c.maxOrder); e > 1e-9 {
			t.Errorf("MaxOrder %d, h·|λ| = %g: error %.3g over [0, 10], want a stable solve", c.maxOrder, c.in, e)
		}
		if e := solve(c.lambda, 10, c.up/-c.lambda, c.maxOrder); e < 1 {
			t.Errorf("MaxOrder %d, h·|λ| = %g: error %.3g over [0, 10], want it diverging", c.maxOrder, c.up, e)
		}
	}
}

// TestHole48ForwardEventGuarded: ForwardEvent holds the Block's guard from
// its first solve (the one finding the event) — a ForwardEvent while
// another goroutine's Forward is in the block gets the concurrent-use
// error, and a Forward while a ForwardEvent's first solve is in it too —
// and checks the dynamics first: a CDE without its control is an error
// naming it, not a nil-pointer panic in the event's solve.
func TestHole48ForwardEventGuarded(t *testing.T) {
	eng := tensor.EngineFor[float64](tensor.Gonum(2))
	g := newGatedField()
	b := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: g}, Times: []float64{0, 5}}
	z0 := func(tp *autograd.Tape[float64]) autograd.Var[float64] {
		return tp.Const(tensor.FromSlice([]float64{0.5, -0.5, 1, 0.25}, 2, 2))
	}
	// At t = 0.5 + z's sum/100.
	event := func(tp *autograd.Tape[float64], t float64, z autograd.Var[float64]) autograd.Var[float64] {
		return autograd.AddConst(autograd.Scale(autograd.Sum(z), -0.01), t-0.5)
	}
	forwardEvent := func() error {
		tp := autograd.NewTape(eng)
		_, _, err := b.ForwardEvent(tp, z0(tp), event, 0)
		return err
	}
	forward := func() error {
		tp := autograd.NewTape(eng)
		_, err := b.Forward(tp, z0(tp))
		return err
	}
	if err := forwardEvent(); err != nil {
		t.Fatalf("ForwardEvent alone: %v", err)
	}
	release := g.held(forward)
	concurrentUse(t, "ForwardEvent during a Forward", forwardEvent())
	if err := release(); err != nil {
		t.Errorf("the Forward already in the block: %v", err)
	}
	release = g.held(forwardEvent) // held in the event's first solve
	concurrentUse(t, "Forward during a ForwardEvent", forward())
	if err := release(); err != nil {
		t.Errorf("the ForwardEvent already in the block: %v", err)
	}

	cde := &odeblock.Block[float64]{Dynamics: &odeblock.CDE[float64]{F: g}, Times: []float64{0, 1}}
	tp := autograd.NewTape(eng)
	_, _, err := cde.ForwardEvent(tp, z0(tp), event, 0)
	if err == nil || !strings.Contains(err.Error(), "X is nil") {
		t.Errorf("ForwardEvent of a CDE without its control: %v, want the error naming X", err)
	}
}
