package autograd_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// shardMLP is a two-layer MLP with a scalar argument, y = W2·tanh(W1·x +
// b1 + arg) + b2, that notes the tapes it is recorded on.
type shardMLP struct {
	w1, b1, w2, b2 *ag.Param[float64]

	mu    sync.Mutex
	tapes map[*ag.Tape[float64]]bool
	rows  []int
}

func newShardMLP(rng *rand.Rand, in, hidden, out int) *shardMLP {
	return &shardMLP{
		w1: ag.NewParam("w1", tensor.RandN[float64](rng, 0, 0.5, hidden, in)),
		b1: ag.NewParam("b1", tensor.RandN[float64](rng, 0, 0.5, hidden)),
		w2: ag.NewParam("w2", tensor.RandN[float64](rng, 0, 0.5, out, hidden)),
		b2: ag.NewParam("b2", tensor.RandN[float64](rng, 0, 0.5, out)),
	}
}

func (m *shardMLP) params() []*ag.Param[float64] { return []*ag.Param[float64]{m.w1, m.b1, m.w2, m.b2} }

func (m *shardMLP) eval(tp *ag.Tape[float64], arg float64, x ag.Var[float64]) ag.Var[float64] {
	m.mu.Lock()
	if m.tapes == nil {
		m.tapes = map[*ag.Tape[float64]]bool{}
	}
	m.tapes[tp] = true
	m.rows = append(m.rows, x.Shape()[0])
	m.mu.Unlock()
	h := ag.Tanh(ag.AddScalar(ag.Linear(x, tp.Param(m.w1), tp.Param(m.b1)), tp.Scalar(arg)))
	return ag.Linear(h, tp.Param(m.w2), tp.Param(m.b2))
}

func (m *shardMLP) reset() {
	m.mu.Lock()
	m.tapes, m.rows = nil, nil
	m.mu.Unlock()
}

// gradsOf runs L = Σ r ⊙ f(x) on a fresh tape over eng and returns the
// output, x's gradient and the parameters' gradients.
func gradsOf(t *testing.T, eng tensor.Engine[float64], m *shardMLP, x, r *tensor.Tensor[float64], f func(tp *ag.Tape[float64], x ag.Var[float64]) ag.Var[float64]) []*tensor.Tensor[float64] {
	t.Helper()
	for _, p := range m.params() {
		p.Grad = nil
	}
	tp := ag.NewTape(eng)
	xv := tp.Input(x)
	y := f(tp, xv)
	if err := tp.Backward(ag.Sum(ag.Mul(y, tp.Const(r)))); err != nil {
		t.Fatal(err)
	}
	out := []*tensor.Tensor[float64]{y.Value().Clone(), xv.Grad().Clone()}
	for _, p := range m.params() {
		out = append(out, p.Grad.Clone())
	}
	return out
}

func maxDiff(a, b *tensor.Tensor[float64]) float64 {
	d := 0.0
	for i, v := range a.Data() {
		d = max(d, math.Abs(v-b.Data()[i]))
	}
	return d
}

// TestRowShardsMatchesWhole checks that the sharded evaluation has the
// value and gradients of f on the whole batch, at several worker counts and
// batch sizes, and that it shards exactly when it should.
func TestRowShardsMatchesWhole(t *testing.T) {
	names := []string{"y", "x", "w1", "b1", "w2", "b2"}
	for _, tc := range []struct {
		workers, shards, rows, hidden, wantTapes int
	}{
		{2, 2, 130, 12, 2},
		{3, 3, 200, 12, 3},
		{4, 2, 97, 12, 2},  // the shards asked for
		{4, 9, 3, 12, 3},   // at most one a row
		{1, 2, 500, 12, 1}, // one worker
		// Chosen by size: rows·(parameter elements) ≥ 2²¹, 128 rows a
		// shard, and rows·(the largest parameter's elements) < 2²³.
		{2, 0, 512, 512, 2},  // 512·4611 elements
		{3, 0, 512, 512, 3},  // 170 rows a shard
		{4, 0, 512, 512, 4},  // 128 rows a shard
		{8, 0, 512, 512, 4},  // not 64
		{2, 0, 255, 1024, 1}, // 127 rows a shard
		{2, 0, 400, 12, 1},   // 400·111 elements
		{2, 0, 512, 3200, 2}, // 512·16000 reads of w1: 8 192 000
		{2, 0, 512, 4096, 1}, // 512·20480: 10 485 760
	} {
		rng := rand.New(rand.NewPCG(uint64(tc.rows), uint64(tc.workers)))
		m := newShardMLP(rng, 5, tc.hidden, 3)
		x := tensor.RandN[float64](rng, 0, 1, tc.rows, 5)
		r := tensor.RandN[float64](rng, 0, 1, tc.rows, 3)
		eng := tensor.EngineFor[float64](tensor.Gonum(tc.workers))
		whole := gradsOf(t, eng, m, x, r, func(tp *ag.Tape[float64], x ag.Var[float64]) ag.Var[float64] { return m.eval(tp, 0.3, x) })
		m.reset()
		rs := ag.NewRowShards(tc.shards, m.params())
		var outer *ag.Tape[float64]
		sharded := gradsOf(t, eng, m, x, r, func(tp *ag.Tape[float64], x ag.Var[float64]) ag.Var[float64] {
			outer = tp
			return rs.Apply(x, 0.3, m.eval)
		})
		if len(m.tapes) != tc.wantTapes {
			t.Errorf("%+v: f recorded on %d tapes, want %d (rows per call %v)", tc, len(m.tapes), tc.wantTapes, m.rows)
		}
		if tc.wantTapes == 1 && !m.tapes[outer] {
			t.Errorf("%+v: f not recorded on the caller's tape", tc)
		}
		sum := 0
		for _, n := range m.rows {
			sum += n
		}
		if sum != tc.rows {
			t.Errorf("%+v: shards of %v rows, want %d in all", tc, m.rows, tc.rows)
		}
		for i := range whole {
			if d := maxDiff(whole[i], sharded[i]); d > 1e-12 {
				t.Errorf("%+v: %s differs by %g", tc, names[i], d)
			}
		}
	}
}

// TestRowShardsGradients checks the sharded node, Apply's and
// ApplyShards', against central differences in float64, parameters and
// input.
func TestRowShardsGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	m := newShardMLP(rng, 4, 9, 2)
	x := ag.NewParam("x", tensor.RandN[float64](rng, 0, 1, 70, 4))
	rs := ag.NewRowShards(2, m.params())
	eng := tensor.EngineFor[float64](tensor.Gonum(2))
	f := func(tp *ag.Tape[float64]) (ag.Var[float64], error) {
		return rs.Apply(tp.Param(x), -0.2, m.eval), nil
	}
	rep, err := ag.CheckGradients(f, append(m.params(), x), ag.GradCheckOptions{Engine: eng, MaxElems: 40})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.tapes) < 2 {
		t.Fatalf("f recorded on %d tapes: not sharded", len(m.tapes))
	}
	t.Log(rep)
	// The caller's cuts: three uneven shards, each told its index.
	m.reset()
	g := func(tp *ag.Tape[float64]) (ag.Var[float64], error) {
		return rs.ApplyShards(tp.Param(x), []int{0, 9, 40, 70}, func(tp *ag.Tape[float64], i int, x ag.Var[float64]) ag.Var[float64] {
			return m.eval(tp, 0.1*float64(i), x)
		}), nil
	}
	if _, err := ag.CheckGradients(g, append(m.params(), x), ag.GradCheckOptions{Engine: eng, MaxElems: 40}); err != nil {
		t.Fatal(err)
	}
	if len(m.tapes) < 3 {
		t.Fatalf("ApplyShards recorded on %d tapes, want 3 shards", len(m.tapes))
	}
}

// TestRowShardsGradInside: a function that takes Grad of part of itself
// without CreateGraph (a Hamiltonian network's ∇H) is differentiated whole
// on the shards' tapes: Grad records its gradients there, and the node's
// gradients match central differences.
func TestRowShardsGradInside(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	m := newShardMLP(rng, 4, 9, 1)
	x := ag.NewParam("x", tensor.RandN[float64](rng, 0, 1, 70, 4))
	rs := ag.NewRowShards(2, m.params())
	eng := tensor.EngineFor[float64](tensor.Gonum(2))
	gradH := func(tp *ag.Tape[float64], s float64, x ag.Var[float64]) ag.Var[float64] {
		gs, err := ag.Grad([]ag.Var[float64]{ag.Sum(m.eval(tp, s, x))}, []ag.Var[float64]{x}, ag.GradOptions[float64]{})
		if err != nil {
			panic(err)
		}
		return gs.Inputs[0]
	}
	f := func(tp *ag.Tape[float64]) (ag.Var[float64], error) {
		return rs.Apply(tp.Param(x), -0.2, gradH), nil
	}
	if _, err := ag.CheckGradients(f, append(m.params(), x), ag.GradCheckOptions{Engine: eng, MaxElems: 40}); err != nil {
		t.Fatal(err)
	}
	if len(m.tapes) < 2 {
		t.Fatalf("f recorded on %d tapes: not sharded", len(m.tapes))
	}
	// Without gradients, in a Pullback's Value (an ODE solve's forward):
	// the Grad on a shard's tape has the Value record again.
	pb := ag.NewPullback(eng)
	got := pb.Value(func(tp *ag.Tape[float64], in []ag.Var[float64]) ag.Var[float64] {
		return rs.Apply(in[0], -0.2, gradH)
	}, []*tensor.Tensor[float64]{x.Value}).Clone()
	tp := ag.NewTape(eng)
	want := gradH(tp, -0.2, tp.Input(x.Value))
	if d := maxDiff(got, want.Value()); d > 1e-12 {
		t.Errorf("Pullback.Value of the sharded ∇H differs from the whole batch's by %.3g", d)
	}
}

// TestRowShardsPullback checks the node inside a Pullback: cotangents of
// the input only (SkipParams), and with the parameters' gradients
// redirected, against the whole batch.
func TestRowShardsPullback(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := newShardMLP(rng, 6, 10, 6)
	x := tensor.RandN[float64](rng, 0, 1, 96, 6)
	cot := tensor.RandN[float64](rng, 0, 1, 96, 6)
	eng := tensor.EngineFor[float64](tensor.Gonum(2))
	rs := ag.NewRowShards(2, m.params())
	whole := func(tp *ag.Tape[float64], in []ag.Var[float64]) ag.Var[float64] { return m.eval(tp, 1, in[0]) }
	sharded := func(tp *ag.Tape[float64], in []ag.Var[float64]) ag.Var[float64] { return rs.Apply(in[0], 1, m.eval) }
	grads := func() []*tensor.Tensor[float64] {
		var g []*tensor.Tensor[float64]
		for _, p := range m.params() {
			g = append(g, tensor.New[float64](p.Value.Shape()...))
		}
		return g
	}
	pb := ag.NewPullback(eng)
	for _, skip := range []bool{true, false} {
		var want, got [2]*tensor.Tensor[float64]
		var wantG, gotG []*tensor.Tensor[float64]
		for i, f := range []ag.Func[float64]{whole, sharded} {
			dx := tensor.New[float64](x.Shape()...)
			dst := ag.VJPDest[float64]{Inputs: []*tensor.Tensor[float64]{dx}, Params: m.params(), SkipParams: skip}
			var g []*tensor.Tensor[float64]
			if !skip {
				g = grads()
				dst.ParamGrads = g
			}
			m.reset()
			y, err := pb.VJP(f, []*tensor.Tensor[float64]{x}, cot, dst)
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				want, wantG = [2]*tensor.Tensor[float64]{y.Clone(), dx}, g
			} else {
				got, gotG = [2]*tensor.Tensor[float64]{y.Clone(), dx}, g
				if len(m.tapes) != 2 {
					t.Fatalf("skip %v: f recorded on %d tapes, want 2", skip, len(m.tapes))
				}
			}
		}
		for i, name := range []string{"y", "dx"} {
			if d := maxDiff(want[i], got[i]); d > 1e-12 {
				t.Errorf("skip %v: %s differs by %g", skip, name, d)
			}
		}
		for j := range wantG {
			if d := maxDiff(wantG[j], gotG[j]); d > 1e-12 {
				t.Errorf("parameter %d's gradient differs by %g", j, d)
			}
		}
		for _, p := range m.params() {
			if p.Grad.Norm2() != 0 {
				t.Errorf("skip %v: %s.Grad written behind the pullback", skip, p.Name)
			}
		}
	}
}

// TestRowShardsNoGrad checks evaluation without gradients: the value of
// the whole batch, nothing recorded.
func TestRowShardsNoGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	m := newShardMLP(rng, 3, 8, 3)
	x := tensor.RandN[float64](rng, 0, 1, 80, 3)
	eng := tensor.EngineFor[float64](tensor.Gonum(2))
	tp := ag.NewTape(eng)
	tp.SetNoGrad(true)
	want := m.eval(tp, 0, tp.Const(x)).Value().Clone()
	tp.Reset()
	rs := ag.NewRowShards(2, m.params())
	for range 3 {
		m.reset()
		got := rs.Apply(tp.Input(x), 0, m.eval)
		if d := maxDiff(want, got.Value()); d > 1e-12 {
			t.Fatalf("value differs by %g", d)
		}
		if got.RequiresGrad() || tp.Len() != 0 {
			t.Fatalf("no-grad evaluation recorded %d ops", tp.Len())
		}
		if len(m.tapes) != 2 {
			t.Fatalf("f recorded on %d tapes, want 2", len(m.tapes))
		}
		tp.Reset()
	}
}

// TestRowShardsFailures checks that a panic in a shard reaches the caller
// with its value, that a function that drops rows is named, and that a
// failing backward inside a shard is the tape's error.
func TestRowShardsFailures(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	eng := tensor.EngineFor[float64](tensor.Gonum(2))
	x := tensor.RandN[float64](rng, 0, 1, 64, 4)
	panicMsg := func(f func()) (msg string) {
		defer func() {
			if r := recover(); r != nil {
				if e, ok := r.(error); ok {
					msg = e.Error()
				} else {
					msg = "non-error panic"
				}
			}
		}()
		f()
		return ""
	}
	rs := ag.NewRowShards[float64](2, nil)

	// A shape error in the function, on its tapes.
	msg := panicMsg(func() {
		tp := ag.NewTape(eng)
		rs.Apply(tp.Input(x), 0, func(tp *ag.Tape[float64], _ float64, x ag.Var[float64]) ag.Var[float64] {
			return ag.Add(x, tp.Const(tensor.New[float64](3, 3)))
		})
	})
	if msg == "" || !strings.Contains(msg, "Add") {
		t.Errorf("shape error in a shard: panic %q, want the op's shape error", msg)
	}

	// A function that sums over the batch axis.
	msg = panicMsg(func() {
		tp := ag.NewTape(eng)
		rs.Apply(tp.Input(x), 0, func(tp *ag.Tape[float64], _ float64, x ag.Var[float64]) ag.Var[float64] {
			return ag.Sum(x)
		})
	})
	if !strings.Contains(msg, "leading (batch) axis") {
		t.Errorf("batch axis dropped: panic %q", msg)
	}

	// A parameter the RowShards was not given.
	w := ag.NewParam("w", tensor.RandN[float64](rng, 0, 1, 4))
	msg = panicMsg(func() {
		tp := ag.NewTape(eng)
		rs.Apply(tp.Input(x), 0, func(tp *ag.Tape[float64], _ float64, x ag.Var[float64]) ag.Var[float64] {
			return ag.Mul(x, tp.Param(w))
		})
	})
	if !strings.Contains(msg, `"w"`) {
		t.Errorf("unlisted parameter: panic %q, want it named", msg)
	}

	// A custom node that fails in one shard's backward.
	boom := errors.New("boom")
	tp := ag.NewTape(eng)
	second := &x.Data()[32*4] // the first element of the second shard
	y := rs.Apply(tp.Input(x), 0, func(tp *ag.Tape[float64], _ float64, xs ag.Var[float64]) ag.Var[float64] {
		fails := &xs.Value().Data()[0] == second
		return ag.Custom("flaky", xs.Value().Clone(), func(gy *tensor.Tensor[float64]) ([]*tensor.Tensor[float64], error) {
			if fails {
				return nil, boom
			}
			return []*tensor.Tensor[float64]{gy}, nil
		}, xs)
	})
	err := tp.Backward(ag.Sum(y))
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "shard") {
		t.Errorf("failing backward: %v, want boom naming the shard", err)
	}
}

// TestRowShardsReuse checks that a training loop reuses one set of shard
// tapes: its steady state allocates a bounded handful of small objects,
// also when a pass is dropped without its backward (Reset).
func TestRowShardsReuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	m := newShardMLP(rng, 8, 16, 8)
	x := tensor.RandN[float64](rng, 0, 1, 128, 8)
	eng := tensor.EngineFor[float64](tensor.Gonum(2))
	rs := ag.NewRowShards(2, m.params())
	f := func(tp *ag.Tape[float64], arg float64, x ag.Var[float64]) ag.Var[float64] {
		h := ag.Tanh(ag.Linear(x, tp.Param(m.w1), tp.Param(m.b1)))
		return ag.Linear(h, tp.Param(m.w2), tp.Param(m.b2))
	}
	tp := ag.NewTape(eng)
	step := func(backward bool) {
		tp.Reset()
		y := rs.Apply(tp.Input(x), 0, f)
		if backward {
			if err := tp.Backward(ag.Sum(y)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for range 3 {
		step(true)
		step(false)
	}
	for _, backward := range []bool{true, false} {
		if a := testing.AllocsPerRun(20, func() { step(backward) }); a > 16 {
			t.Errorf("backward %v: %.0f allocations a pass; the shards' tapes are not reused", backward, a)
		}
	}
}

// TestRowShardsApplyShards checks shards the caller cuts: uneven ones, more
// than the engine has workers, each evaluated with its index on its rows,
// against the whole batch; cuts that do not split the rows panic with a
// ShapeError.
func TestRowShardsApplyShards(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	m := newShardMLP(rng, 3, 6, 2)
	x := tensor.RandN[float64](rng, 0, 1, 11, 3)
	r := tensor.RandN[float64](rng, 0, 1, 11, 2)
	eng := tensor.EngineFor[float64](tensor.Gonum(2))
	whole := gradsOf(t, eng, m, x, r, func(tp *ag.Tape[float64], x ag.Var[float64]) ag.Var[float64] { return m.eval(tp, 0.3, x) })
	for _, cuts := range [][]int{{0, 11}, {0, 1, 11}, {0, 4, 5, 11}, {0, 2, 4, 6, 8, 11}} {
		rs := ag.NewRowShards(0, m.params())
		var mu sync.Mutex
		seen := map[int]int{}
		m.reset()
		got := gradsOf(t, eng, m, x, r, func(tp *ag.Tape[float64], x ag.Var[float64]) ag.Var[float64] {
			return rs.ApplyShards(x, cuts, func(tp *ag.Tape[float64], i int, x ag.Var[float64]) ag.Var[float64] {
				mu.Lock()
				seen[i] = x.Shape()[0]
				mu.Unlock()
				return m.eval(tp, 0.3, x)
			})
		})
		for i := range len(cuts) - 1 {
			if seen[i] != cuts[i+1]-cuts[i] {
				t.Errorf("cuts %v: shard %d saw %d rows, want %d", cuts, i, seen[i], cuts[i+1]-cuts[i])
			}
		}
		if len(seen) != len(cuts)-1 || len(m.tapes) != len(cuts)-1 {
			t.Errorf("cuts %v: %d shards on %d tapes, want %d", cuts, len(seen), len(m.tapes), len(cuts)-1)
		}
		for j := range whole {
			if d := maxDiff(got[j], whole[j]); d > 1e-12 {
				t.Errorf("cuts %v: result %d differs from the whole batch's by %.3g", cuts, j, d)
			}
		}
	}
	for _, cuts := range [][]int{nil, {0}, {1, 11}, {0, 12}, {0, 5, 5, 11}, {0, 6, 4, 11}} {
		func() {
			defer func() {
				var se *tensor.ShapeError
				if e, ok := recover().(error); !ok || !errors.As(e, &se) || !strings.Contains(se.Error(), "cuts") {
					t.Errorf("cuts %v: panic %v, want a ShapeError naming the cuts", cuts, e)
				}
			}()
			tp := ag.NewTape(eng)
			ag.NewRowShards(0, m.params()).ApplyShards(tp.Input(x), cuts, func(tp *ag.Tape[float64], i int, x ag.Var[float64]) ag.Var[float64] {
				return m.eval(tp, 0, x)
			})
		}()
	}
}
