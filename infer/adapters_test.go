package infer_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/infer"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/sde"
	"github.com/adamnode/adamnode/tensor"
)

// mlpAdam returns a build of AdamNODE blocks over a tanh MLP field on
// [B, d], every call the same weights (seed).
func mlpAdam[T tensor.Float](d int, opt odeblock.Options, times []float64) func() *odeblock.Block[T] {
	return func() *odeblock.Block[T] {
		rng := rand.New(rand.NewPCG(4, 4))
		f := layers.NewSequential[T](layers.TimeConcat[T]{}, layers.NewLinear[T](rng, d+1, 16), layers.Tanh[T]{}, layers.NewLinear[T](rng, 16, d))
		layers.Prefix("f", f)
		fam, _ := odeblock.FamilyNamed("adamnode")
		dyn, _ := odeblock.NewFamily[T](fam, f, odeblock.PaperScalars())
		return &odeblock.Block[T]{Dynamics: dyn, Solver: opt, Times: times}
	}
}

// randomRows returns n rows of width w, row r scaled by e^(2·N(0,1)).
func randomRows[T tensor.Float](n, w int, seed uint64) *tensor.Tensor[T] {
	rng := rand.New(rand.NewPCG(seed, 9))
	x := tensor.New[T](n, w)
	d := x.Data()
	for r := range n {
		s := math.Exp(2 * rng.NormFloat64())
		for j := range w {
			d[r*w+j] = T(s * rng.NormFloat64())
		}
	}
	return x
}

// TestODEAdapter: ODE's and ODETrajectory's rows are the state's parts
// side by side, in and out: the same numbers as the block's own Forward
// and Trajectory of the stacked state, rearranged.
func TestODEAdapter(t *testing.T) {
	const d, batch = 3, 4
	times := []float64{0, 0.5, 1}
	newBlock := mlpAdam[float64](d, odeblock.Options{RTol: 1e-6, ATol: 1e-6}, times)
	x := randomRows[float64](batch, 3*d, 1) // [h m v] per row
	// The block's own pass on the stacked state [h; m; v].
	b := newBlock()
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Gonum(1)))
	tp.SetNoGrad(true)
	parts := autograd.Split(tp.Const(x), 1, d, d, d)
	traj, err := b.Trajectory(tp, autograd.Concat(0, parts...)) // [3, 3·batch, d]
	if err != nil {
		t.Fatal(err)
	}
	tv := traj.Value()
	// want[r][k] is row r's state at time k, [h m v].
	want := make([]float64, 0, batch*len(times)*3*d)
	for r := range batch {
		for k := range times {
			for p := range 3 {
				row := tv.Slice(k, k+1).ReadData()[(p*batch+r)*d : (p*batch+r+1)*d]
				want = append(want, row...)
			}
		}
	}
	for _, c := range []struct {
		name  string
		model func(*odeblock.Block[float64]) infer.Model[float64]
		shape []int
		want  []float64
	}{
		{"ODETrajectory", infer.ODETrajectory[float64], []int{batch, len(times), 3 * d}, want},
		{"ODE", infer.ODE[float64], []int{batch, 3 * d}, lastTimes(want, batch, len(times), 3*d)},
	} {
		p, err := infer.New[float64](c.model(newBlock()), func() (infer.Model[float64], error) { return c.model(newBlock()), nil },
			infer.Options{Replicas: 1, Backend: tensor.Gonum(1), Input: []int{3 * d}, Rows: infer.RowsAsBuilt})
		if err != nil {
			t.Fatal(err)
		}
		y, err := p.Predict(context.Background(), x)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(y.Shape(), c.shape) {
			t.Errorf("%s: shape %v, want %v", c.name, y.Shape(), c.shape)
		}
		if diff := cmp.Diff(c.want, y.ReadData()); diff != "" {
			t.Errorf("%s: (-block's own pass +adapter):\n%s", c.name, diff)
		}
	}
	// A row that does not hold three equal parts.
	p, err := infer.New[float64](infer.ODE(newBlock()), func() (infer.Model[float64], error) { return infer.ODE(newBlock()), nil },
		infer.Options{Replicas: 1, Input: []int{4}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Predict(context.Background(), tensor.New[float64](2, 4)); err == nil || !strings.Contains(err.Error(), "input of shape [2 4]: a row holds the 3 parts") {
		t.Errorf("rows of 4 for 3 parts: %v", err)
	}
}

// lastTimes returns the entries of the last time of a [b, k, w] layout.
func lastTimes(x []float64, b, k, w int) []float64 {
	var out []float64
	for r := range b {
		out = append(out, x[(r*k+k-1)*w:(r*k+k)*w]...)
	}
	return out
}

// TestRowsModes: a request's answer inside a batch of 64 is its answer
// alone to the bit with RowsAlone; with RowErrors it is within three
// times the tolerance of it among random neighbours (0.87 and 0.79 in
// float64 and float32 when written; RowsAsBuilt 1.8 and 2.1) and within
// half a tolerance among zero ones (0 when written), where RowsAsBuilt
// moves it by more than three (5.0 and 5.8): the pool's mode reaches the
// ODE adapter's block.
func TestRowsModes(t *testing.T) {
	t.Run("float64", testRowsModes[float64])
	t.Run("float32", testRowsModes[float32])
}

func testRowsModes[T tensor.Float](t *testing.T) {
	const d, batch, checked = 4, 64, 4
	opt := odeblock.Options{RTol: 1e-5, ATol: 1e-5}
	newBlock := mlpAdam[T](d, opt, nil)
	for _, c := range []struct {
		rows  infer.Rows
		quiet bool
		bound float64 // |batched − alone| / (ATol + RTol·|alone|) at most
		above float64 // and more than
	}{
		{infer.RowsAlone, false, 0, -1},
		{infer.RowErrors, false, 3, -1},
		{infer.RowsAsBuilt, false, math.Inf(1), -1},
		{infer.RowsAlone, true, 0, -1},
		{infer.RowErrors, true, 0.5, -1},
		{infer.RowsAsBuilt, true, math.Inf(1), 3},
	} {
		p, err := infer.New[T](infer.ODE(newBlock()), func() (infer.Model[T], error) { return infer.ODE(newBlock()), nil },
			infer.Options{Replicas: 1, Backend: tensor.Gonum(1), Input: []int{3 * d}, Rows: c.rows})
		if err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for r := range checked {
			x := randomRows[T](batch, 3*d, uint64(2+r))
			if c.quiet {
				clear(x.Data()[:r*3*d])
				clear(x.Data()[(r+1)*3*d:])
			}
			y, err := p.Predict(context.Background(), x)
			if err != nil {
				t.Fatal(err)
			}
			alone, err := p.Predict(context.Background(), x.Slice(r, r+1))
			if err != nil {
				t.Fatal(err)
			}
			for j, a := range alone.ReadData() {
				gap := math.Abs(float64(y.ReadData()[r*3*d+j]) - float64(a))
				worst = math.Max(worst, gap/(opt.ATol+opt.RTol*math.Abs(float64(a))))
			}
		}
		t.Logf("%v, zero neighbours %v: largest |batched − alone| / tolerance %.3g", c.rows, c.quiet, worst)
		if worst > c.bound || worst <= c.above {
			t.Errorf("%v, zero neighbours %v: a row moved %.3g tolerances from its answer alone, want in (%g, %g]", c.rows, c.quiet, worst, c.above, c.bound)
		}
	}
}

// ouSDE returns a build of an Ornstein–Uhlenbeck SDE block, dY = −θY dt
// + σ dW, θ a parameter.
func ouSDE() (*sde.Block[float64], *autograd.Param[float64]) {
	theta := autograd.NewParam("theta", tensor.FromSlice([]float64{0.7}, 1))
	s := sde.Funcs[float64]{
		F: func(tp *autograd.Tape[float64], _ float64, y autograd.Var[float64]) autograd.Var[float64] {
			return autograd.Neg(autograd.MulScalar(y, tp.Param(theta)))
		},
		G: func(tp *autograd.Tape[float64], _ float64, y autograd.Var[float64]) autograd.Var[float64] {
			return tp.Const(tensor.Full(0.5, y.Shape()...))
		},
		Parameters: []*autograd.Param[float64]{theta},
	}
	return &sde.Block[float64]{SDE: s, Options: sde.Options{Method: sde.EulerMaruyama, Step: 1.0 / 32}}, theta
}

// TestSDEAdapter: an SDE model's answer depends on the call's seed only:
// the same from every replica and call with the same seed (Options.Seed
// or WithSeed), another with another seed; with RowsAlone a row's answer
// in a batch is its answer alone.
func TestSDEAdapter(t *testing.T) {
	build := func() (infer.Model[float64], error) { b, _ := ouSDE(); return infer.SDE(b), nil }
	trained, _ := build()
	x := randomRows[float64](5, 2, 3)
	for _, rows := range []infer.Rows{infer.RowErrors, infer.RowsAlone} {
		p, err := infer.New[float64](trained, build, infer.Options{Replicas: 2, Input: []int{2}, Seed: 11, Rows: rows})
		if err != nil {
			t.Fatal(err)
		}
		predict := func(ctx context.Context, x *tensor.Tensor[float64]) []float64 {
			y, err := p.Predict(ctx, x)
			if err != nil {
				t.Fatal(err)
			}
			return y.ReadData()
		}
		first := predict(context.Background(), x)
		if again := predict(context.Background(), x); !slices.Equal(first, again) {
			t.Errorf("%v: the same seed twice: %v then %v", rows, first, again)
		}
		if seeded := predict(infer.WithSeed(context.Background(), 11), x); !slices.Equal(first, seeded) {
			t.Errorf("%v: WithSeed(11) %v, Options.Seed 11 %v", rows, seeded, first)
		}
		other := predict(infer.WithSeed(context.Background(), 12), x)
		if cmp.Equal(first, other, cmpopts.EquateApprox(0, 1e-12)) {
			t.Errorf("%v: seeds 11 and 12 gave the same answer %v", rows, first)
		}
		if rows == infer.RowsAlone {
			for r := range 5 {
				alone := predict(context.Background(), x.Slice(r, r+1))
				if !slices.Equal(alone, first[2*r:2*r+2]) {
					t.Errorf("RowsAlone: row %d in the batch %v, alone %v", r, first[2*r:2*r+2], alone)
				}
			}
		}
	}
}
