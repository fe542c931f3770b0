package train_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/distributed"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/train"
)

// odeNet is a small continuous-depth classifier: Linear(32, 4), a NODE
// block with the field tanh(h·W) on a fixed rk4 grid (so that a shard's
// solve takes the steps the whole batch's would), Linear(4, 3). From its
// failAt-th training step on (if failAt > 0) the field is NaN, and the
// block's solve fails.
type odeNet struct {
	in, out       *layers.Linear[float64]
	w             *autograd.Param[float64]
	block         *odeblock.Block[float64]
	steps, failAt int
}

func newODENet(seed uint64) *odeNet {
	rng := rand.New(rand.NewPCG(seed, 2))
	m := &odeNet{in: layers.NewLinear[float64](rng, 2*4*4, 4), out: layers.NewLinear[float64](rng, 4, 3)}
	layers.Prefix("in", m.in)
	layers.Prefix("out", m.out)
	w := tensor.New[float64](4, 4)
	for i := range w.Data() {
		w.Data()[i] = rng.NormFloat64() * 0.5
	}
	m.w = autograd.NewParam("f.w", w)
	field := odeblock.FieldFunc([]*autograd.Param[float64]{m.w}, func(tp *autograd.Tape[float64], t float64, h autograd.Var[float64]) autograd.Var[float64] {
		y := autograd.Tanh(autograd.MatMul(h, tp.Param(m.w)))
		if m.failAt > 0 && m.steps >= m.failAt {
			y = autograd.Scale(y, math.NaN())
		}
		return y
	})
	m.block = &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Mode: odeblock.Adjoint{},
		Solver: odeblock.Options{Method: "rk4", Step: 0.25}}
	return m
}

func (m *odeNet) Forward(tp *autograd.Tape[float64], x autograd.Var[float64]) (autograd.Var[float64], error) {
	if !tp.NoGrad() {
		m.steps++
	}
	z, err := m.block.Forward(tp, m.in.Forward(tp, autograd.Flatten(x)))
	if err != nil {
		return z, err
	}
	return m.out.Forward(tp, z), nil
}

func (m *odeNet) Params() []*autograd.Param[float64] {
	return append(append(m.in.Params(), m.w), m.out.Params()...)
}

func (m *odeNet) NFE() (forward, backward int) { return m.block.NFE() }

// shardedLoaders are rank's loaders of a run on size ranks with global
// batch 32: its shard of every training batch, and the whole test set.
func shardedLoaders(t *testing.T, rank, size int) (tr, te *data.Loader) {
	t.Helper()
	tr, err := data.NewLoader(data.FakeImages(96, 2, 4, 4, 3, 1), data.LoaderOptions{BatchSize: 32 / size, Shuffle: true, Seed: 3, Shard: rank, Shards: size})
	if err != nil {
		t.Fatal(err)
	}
	te, err = data.NewLoader(data.FakeImages(20, 2, 4, 4, 3, 2), data.LoaderOptions{BatchSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	return tr, te
}

// rankResult is what one rank's run ends with.
type rankResult struct {
	params []float64
	rows   []train.Row
	err    error
}

// resumedLikeStraight fails t unless every rank of a resumed run ended
// without error with a straight run's parameters, bit for bit, and rows.
func resumedLikeStraight(t *testing.T, resumed, straight []rankResult) {
	t.Helper()
	for rank, r := range resumed {
		if r.err != nil {
			t.Fatalf("rank %d resumed: %v", rank, r.err)
		}
		for i := range r.params {
			if r.params[i] != straight[rank].params[i] {
				t.Fatalf("rank %d resumed: parameter %d is %g, a straight run's %g", rank, i, r.params[i], straight[rank].params[i])
			}
		}
		closeRows(t, "resumed rows", r.rows, straight[rank].rows, 0)
	}
}

// runRanks trains newODENet(5) on size ranks of an in-process group (size
// 0: one process, no communicator) and returns each rank's result.
// setup, if set, adjusts rank's model, configuration and context first.
func runRanks(t *testing.T, ctx context.Context, size int, cfg train.Config, setup func(rank int, m *odeNet, cfg *train.Config, ctx *context.Context)) []rankResult {
	t.Helper()
	n := max(size, 1)
	var comms []*distributed.Local
	if size > 0 {
		comms = distributed.NewLocal(size)
	}
	res := make([]rankResult, n)
	var wg sync.WaitGroup
	for rank := range n {
		tr, te := shardedLoaders(t, rank, n)
		m := newODENet(5)
		c, rctx := cfg, ctx
		if size > 0 {
			c.Distributed = comms[rank]
		}
		if setup != nil {
			setup(rank, m, &c, &rctx)
		}
		opt := optim.NewAdam(m.Params(), optim.AdamDefaults())
		wg.Go(func() {
			r, err := train.Run[float64](rctx, c, m, opt, tr, te)
			res[rank].err = err
			for _, p := range m.Params() {
				res[rank].params = append(res[rank].params, p.Value.Data()...)
			}
			if r != nil {
				for _, row := range r.Rows {
					row.Seconds, row.Elapsed = 0, 0
					res[rank].rows = append(res[rank].rows, row)
				}
			}
		})
	}
	wg.Wait()
	return res
}

// closeRows fails unless the rows agree to tol.
func closeRows(t *testing.T, what string, got, want []train.Row, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		for _, d := range [][2]float64{{g.Loss, w.Loss}, {g.Accuracy, w.Accuracy}, {g.FwdNFE, w.FwdNFE}, {g.BwdNFE, w.BwdNFE}} {
			if math.Abs(d[0]-d[1]) > tol*(1+math.Abs(d[1])) {
				t.Fatalf("%s: row %d is %+v, want %+v", what, i, g, w)
			}
		}
		if g.Split != w.Split || g.Epoch != w.Epoch || g.Model != w.Model {
			t.Fatalf("%s: row %d is %+v, want %+v", what, i, g, w)
		}
	}
}

// TestDistributedMatchesOneProcess: two and four ranks of a global batch
// of 32 end with one process's parameters and rows after three epochs of
// Adam (nine steps), to 1e-12; so do all ranks among themselves.
func TestDistributedMatchesOneProcess(t *testing.T) {
	cfg := train.Config{Name: "ode", Epochs: 3, Quiet: true, Clip: 1}
	one := runRanks(t, context.Background(), 0, cfg, nil)[0]
	if one.err != nil {
		t.Fatal(one.err)
	}
	for _, size := range []int{2, 4} {
		for rank, r := range runRanks(t, context.Background(), size, cfg, nil) {
			if r.err != nil {
				t.Fatalf("%d ranks: rank %d: %v", size, rank, r.err)
			}
			for i := range r.params {
				if d := math.Abs(r.params[i] - one.params[i]); d > 1e-12 {
					t.Fatalf("%d ranks: rank %d: parameter %d is %.17g, one process %.17g", size, rank, i, r.params[i], one.params[i])
				}
			}
			closeRows(t, "rank rows", r.rows, one.rows, 1e-12)
		}
	}
}

// TestDistributedStartsFromRankZero: ranks whose models start differently
// (other seeds) train rank 0's model.
func TestDistributedStartsFromRankZero(t *testing.T) {
	cfg := train.Config{Name: "ode", Epochs: 1, Quiet: true}
	one := runRanks(t, context.Background(), 0, cfg, nil)[0]
	res := runRanks(t, context.Background(), 2, cfg, func(rank int, m *odeNet, _ *train.Config, _ *context.Context) {
		if rank == 1 {
			*m = *newODENet(99)
		}
	})
	for rank, r := range res {
		if r.err != nil {
			t.Fatal(r.err)
		}
		for i := range r.params {
			if math.Abs(r.params[i]-one.params[i]) > 1e-12 {
				t.Fatalf("rank %d: parameter %d is %g, rank 0's model trained alone gives %g", rank, i, r.params[i], one.params[i])
			}
		}
	}
}

// TestDistributedFailure: a rank whose solve fails at its fourth step
// stops every rank at that step — with its error on it, and with one
// saying another rank failed on the others; nothing hangs.
func TestDistributedFailure(t *testing.T) {
	for _, failing := range []int{0, 1} {
		res := runRanks(t, context.Background(), 2, train.Config{Name: "ode", Epochs: 3, Quiet: true}, func(rank int, m *odeNet, _ *train.Config, _ *context.Context) {
			if rank != failing {
				return
			}
			m.failAt = 4
		})
		for rank, r := range res {
			if r.err == nil {
				t.Fatalf("rank %d of 2 (rank %d failing): no error", rank, failing)
			}
			msg := r.err.Error()
			if !strings.Contains(msg, "epoch 2, batch 1 of 3") {
				t.Errorf("rank %d: error %q does not name the failing step (epoch 2, batch 1)", rank, msg)
			}
			if rank == failing && !strings.Contains(msg, "rank 1") && !strings.Contains(msg, "rank 0") {
				t.Errorf("failing rank %d: error %q does not name it", rank, msg)
			}
			if rank != failing && !strings.Contains(msg, "another rank") {
				t.Errorf("rank %d: error %q does not say another rank failed", rank, msg)
			}
		}
	}
}

// TestDistributedInterrupted: cancelling one rank's context stops every
// rank after the same step with an InterruptedError; rank 0 saves the
// checkpoint, and a resumed two-rank run ends where a straight one does.
func TestDistributedInterrupted(t *testing.T) {
	cfg := train.Config{Name: "ode", Epochs: 3, Quiet: true}
	straight := runRanks(t, context.Background(), 2, cfg, nil)
	dir := t.TempDir()
	cfg.Dir, cfg.Resume = dir, true
	res := runRanks(t, context.Background(), 2, cfg, func(rank int, m *odeNet, c *train.Config, rctx *context.Context) {
		if rank == 1 {
			ctx, cancel := context.WithCancel(*rctx)
			*rctx = ctx
			steps := 0
			c.OnBatch = func(epoch, batches int) {
				if steps++; steps == 4 {
					cancel()
				}
			}
		}
	})
	for rank, r := range res {
		var ie *train.InterruptedError
		if !errors.As(r.err, &ie) {
			t.Fatalf("rank %d: error %v, want an InterruptedError", rank, r.err)
		}
	}
	resumedLikeStraight(t, runRanks(t, context.Background(), 2, cfg, nil), straight)
}

// TestDistributedBadRank: a rank whose configuration is wrong (a loader
// that is not its shard, a missing test loader) fails with an error saying
// so, and the other ranks stop with one saying another rank failed to
// begin; nothing hangs.
func TestDistributedBadRank(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(tr, te **data.Loader)
		want  string
	}{
		{"unsharded", func(tr, _ **data.Loader) {
			*tr, _ = data.NewLoader(data.FakeImages(96, 2, 4, 4, 3, 1), data.LoaderOptions{BatchSize: 16})
		}, "shard 0 of 1"},
		{"no test loader", func(_, te **data.Loader) { *te = nil }, "both loaders"},
		{"rank 0's shard", func(tr, _ **data.Loader) {
			*tr, _ = data.NewLoader(data.FakeImages(96, 2, 4, 4, 3, 1), data.LoaderOptions{BatchSize: 16, Shard: 0, Shards: 2})
		}, "shard 0 of 2"},
	} {
		comms := distributed.NewLocal(2)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for rank := range 2 {
			tr, te := shardedLoaders(t, rank, 2)
			if rank == 1 {
				tc.spoil(&tr, &te)
			}
			m := newODENet(5)
			wg.Go(func() {
				_, errs[rank] = train.Run[float64](context.Background(), train.Config{Name: "ode", Epochs: 1, Quiet: true, Distributed: comms[rank]},
					m, optim.NewAdam(m.Params(), optim.AdamDefaults()), tr, te)
			})
		}
		wg.Wait()
		if errs[1] == nil || !strings.Contains(errs[1].Error(), tc.want) {
			t.Errorf("%s: rank 1: %v, want an error containing %q", tc.name, errs[1], tc.want)
		}
		if errs[0] == nil || !strings.Contains(errs[0].Error(), "another rank failed to begin") {
			t.Errorf("%s: rank 0: %v, want one saying another rank failed to begin", tc.name, errs[0])
		}
	}
}

// TestDistributedResumeWithoutSharedFiles: ranks whose directories differ
// (no shared file system: rank 1's holds nothing, or a stale checkpoint of
// another run) resume from rank 0's checkpoint, which it sends them, and
// end where a straight run does.
func TestDistributedResumeWithoutSharedFiles(t *testing.T) {
	cfg := train.Config{Name: "ode", Epochs: 3, Quiet: true}
	straight := runRanks(t, context.Background(), 2, cfg, nil)
	dirs := []string{t.TempDir(), t.TempDir()}
	// A stale checkpoint in rank 1's directory, from a one-epoch run.
	if r := runRanks(t, context.Background(), 0, train.Config{Name: "ode", Epochs: 1, Quiet: true, Dir: dirs[1]}, nil); r[0].err != nil {
		t.Fatal(r[0].err)
	}
	cfg.Resume = true
	setup := func(cancelAt int) func(int, *odeNet, *train.Config, *context.Context) {
		return func(rank int, _ *odeNet, c *train.Config, rctx *context.Context) {
			c.Dir = dirs[rank]
			if rank == 0 && cancelAt > 0 {
				ctx, cancel := context.WithCancel(*rctx)
				*rctx = ctx
				steps := 0
				c.OnBatch = func(int, int) {
					if steps++; steps == cancelAt {
						cancel()
					}
				}
			}
		}
	}
	for rank, r := range runRanks(t, context.Background(), 2, cfg, setup(4)) {
		if !errors.As(r.err, new(*train.InterruptedError)) {
			t.Fatalf("rank %d: %v, want an InterruptedError", rank, r.err)
		}
	}
	resumedLikeStraight(t, runRanks(t, context.Background(), 2, cfg, setup(0)), straight)
}
