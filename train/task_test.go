package train_test

import (
	"context"
	"errors"
	"iter"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/train"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// points is a regression batch: inputs x [B, 1] and targets y [B, 1].
type points struct{ x, y *tensor.Tensor[float64] }

// line draws n points of y = 2x + 1 (x uniform in [-1, 1]); shard of
// shards takes every shards-th of them.
func line(rng *rand.Rand, n, shard, shards int) points {
	var xs, ys []float64
	for i := range n {
		x := 2*rng.Float64() - 1
		if i%shards == shard {
			xs, ys = append(xs, x), append(ys, 2*x+1)
		}
	}
	return points{tensor.FromSlice(xs, len(xs), 1), tensor.FromSlice(ys, len(ys), 1)}
}

// regression is a task fitting a Linear layer to line's points by mean
// squared error, on batches of 8 points (shard of shards of them).
func regression(seed uint64, shard, shards int) (*train.Sampled[float64, points], *layers.Linear[float64]) {
	fc := layers.NewLinear[float64](rand.New(rand.NewPCG(seed, 2)), 1, 1)
	return &train.Sampled[float64, points]{
		Parameters: fc.Params(),
		PerEpoch:   5,
		Seed:       seed,
		Sample:     func(rng *rand.Rand) (points, error) { return line(rng, 8, shard, shards), nil },
		Objective: func(tp *autograd.Tape[float64], b points) (train.Loss[float64], error) {
			d := autograd.Sub(fc.Forward(tp, tp.Const(b.x)), tp.Const(b.y))
			return train.Loss[float64]{Value: autograd.Mean(autograd.Mul(d, d)), N: b.x.Shape()[0]}, nil
		},
	}, fc
}

// paramValues copies the parameters' values.
func paramValues(ps []*autograd.Param[float64]) [][]float64 {
	var out [][]float64
	for _, p := range ps {
		out = append(out, append([]float64(nil), p.Value.Data()...))
	}
	return out
}

// zeroTimes returns the rows with their times zeroed.
func zeroTimes(rows []train.Row) []train.Row {
	out := append([]train.Row(nil), rows...)
	for i := range out {
		out[i].Seconds, out[i].Elapsed = 0, 0
	}
	return out
}

// TestFitRegression: Fit trains a task that is no classifier: the loss
// falls to the fit of the line, each epoch has one row (no evaluation,
// accuracy 0), and the CSV holds them.
func TestFitRegression(t *testing.T) {
	task, fc := regression(1, 0, 1)
	dir := t.TempDir()
	var log strings.Builder
	res, err := train.Fit(context.Background(), train.Config{Name: "line", Dir: dir, Epochs: 20, Log: &log},
		task, optim.NewAdam(task.Params(), optim.AdamConfig{LR: 0.1, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 20 {
		t.Fatalf("%d rows, want one per epoch", len(res.Rows))
	}
	for i, r := range res.Rows {
		if r.Split != "train" || r.Epoch != i+1 || r.Accuracy != 0 {
			t.Errorf("row %d: %+v, want epoch %d's training row", i, r, i+1)
		}
	}
	if first, last := res.Rows[0].Loss, res.Rows[19].Loss; !(last < first/100) {
		t.Errorf("loss %g → %g: did not fall a hundredfold", first, last)
	}
	got := []float64{fc.Weight.Value.Data()[0], fc.Bias.Value.Data()[0]}
	if diff := cmp.Diff([]float64{2, 1}, got, cmpopts.EquateApprox(0, 0.05)); diff != "" {
		t.Errorf("fitted line (-want +got):\n%s", diff)
	}
	csv, err := os.ReadFile(filepath.Join(dir, "line.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(csv), "\n"); n != 21 {
		t.Errorf("the CSV has %d lines, want a header and 20 rows", n)
	}
	if strings.Contains(log.String(), "acc") || strings.Contains(log.String(), "test") || strings.Contains(log.String(), "NFE") {
		t.Errorf("the log shows an accuracy, a test or NFE for a regression without them:\n%s", log.String())
	}
}

// TestFitResumeBitExact: a Fit interrupted inside an epoch and resumed ends
// with the parameters and rows of a straight run, bit for bit (the sampled
// batches depend only on the epoch and the index).
func TestFitResumeBitExact(t *testing.T) {
	fit := func(ctx context.Context, cfg train.Config) ([][]float64, []train.Row, error) {
		task, _ := regression(3, 0, 1)
		res, err := train.Fit(ctx, cfg, task, optim.NewAdam(task.Params(), optim.AdamDefaults()))
		if res == nil {
			return nil, nil, err
		}
		return paramValues(task.Params()), zeroTimes(res.Rows), err
	}
	straight, rows, err := fit(context.Background(), train.Config{Name: "line", Dir: t.TempDir(), Epochs: 3, Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cfg := train.Config{Name: "line", Dir: dir, Epochs: 3, Quiet: true, OnBatch: func(epoch, batches int) {
		if epoch == 1 && batches == 2 {
			cancel()
		}
	}}
	if _, _, err := fit(ctx, cfg); !errors.As(err, new(*train.InterruptedError)) {
		t.Fatalf("interrupted run: %v", err)
	}
	cfg.OnBatch, cfg.Resume = nil, true
	resumed, rrows, err := fit(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(straight, resumed); diff != "" {
		t.Errorf("resumed parameters (-straight +resumed):\n%s", diff)
	}
	if diff := cmp.Diff(rows, rrows); diff != "" {
		t.Errorf("resumed rows (-straight +resumed):\n%s", diff)
	}
}

// evaluated is the regression with an evaluation on fixed points.
type evaluated struct {
	*train.Sampled[float64, points]
	fc   *layers.Linear[float64]
	test points
}

func (e evaluated) Evaluate(_ context.Context, tp *autograd.Tape[float64], shard, shards int) (train.Eval, error) {
	if shard != 0 || shards != 1 {
		return train.Eval{}, errors.New("one process, one shard")
	}
	tp.Reset()
	d := autograd.Sub(e.fc.Forward(tp, tp.Const(e.test.x)), tp.Const(e.test.y))
	n := e.test.x.Shape()[0]
	return train.Eval{LossSum: float64(autograd.Mean(autograd.Mul(d, d)).Item()) * float64(n), N: n, Batches: 1}, nil
}

// TestFitEvaluator: a task that is an Evaluator has a test row after each
// training row, with the evaluation's mean loss, and a resumed run checks
// the checkpoint's rows two per epoch.
func TestFitEvaluator(t *testing.T) {
	task, fc := regression(5, 0, 1)
	test := line(rand.New(rand.NewPCG(9, 9)), 16, 0, 1)
	ev := evaluated{task, fc, test}
	dir := t.TempDir()
	opt := optim.NewAdam(task.Params(), optim.AdamConfig{LR: 0.1, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
	res, err := train.Fit(context.Background(), train.Config{Name: "line", Dir: dir, Epochs: 2, Quiet: true}, ev, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 4 || res.Rows[1].Split != "test" || res.Rows[3].Epoch != 2 {
		t.Fatalf("rows %+v, want train and test rows of 2 epochs", res.Rows)
	}
	elapsed := 0.0
	for i, r := range res.Rows {
		if elapsed += r.Seconds; math.Abs(r.Elapsed-elapsed) > 1e-9 {
			t.Errorf("row %d: elapsed %g, want the sum of the seconds so far, %g", i, r.Elapsed, elapsed)
		}
	}
	// The last test row is the final parameters' mean squared error.
	var want float64
	for i, x := range test.x.Data() {
		d := fc.Weight.Value.Data()[0]*x + fc.Bias.Value.Data()[0] - test.y.Data()[i]
		want += d * d / 16
	}
	if got := res.Rows[3].Loss; math.Abs(got-want) > 1e-12*want {
		t.Errorf("test loss %g, want %g", got, want)
	}
	res, err = train.Fit(context.Background(), train.Config{Name: "line", Dir: dir, Epochs: 3, Quiet: true, Resume: true}, ev, opt)
	if err != nil || len(res.Rows) != 6 {
		t.Fatalf("resumed: %v, %d rows", err, len(res.Rows))
	}
	// The checkpoint of an Evaluator holds two rows per epoch: the task
	// without its evaluation cannot resume from it.
	_, err = train.Fit(context.Background(), train.Config{Name: "line", Dir: dir, Epochs: 4, Quiet: true, Resume: true}, task, opt)
	if err == nil || !strings.Contains(err.Error(), "want 1 for each of the 3 epochs") {
		t.Errorf("resuming an evaluated run's checkpoint without the evaluation: %v", err)
	}
}

// TestFitReplicas: two replicas, each on its half of every batch, train
// as one process on the whole batches (equal halves: the mean of their
// gradients is the whole batch's).
func TestFitReplicas(t *testing.T) {
	one, _ := regression(7, 0, 1)
	cfg := train.Config{Name: "line", Epochs: 2, Quiet: true}
	if _, err := train.Fit(context.Background(), cfg, one, optim.NewSGD(one.Params(), optim.SGDConfig{LR: 0.1})); err != nil {
		t.Fatal(err)
	}
	var first *train.Sampled[float64, points]
	res, err := train.FitReplicas(context.Background(), cfg, 2, func(i int) (train.Task[float64, points], optim.Optimizer[float64], error) {
		task, _ := regression(7, i, 2)
		if i == 0 {
			first = task
		}
		return task, optim.NewSGD(task.Params(), optim.SGDConfig{LR: 0.1}), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(paramValues(one.Params()), paramValues(first.Params()), cmpopts.EquateApprox(1e-12, 1e-14)); diff != "" {
		t.Errorf("replicas' parameters (-one process +replicas):\n%s", diff)
	}
	if len(res.Rows) != 2 {
		t.Errorf("%d rows, want 2", len(res.Rows))
	}
}

// TestFitReplicasResume: replicas interrupted inside an epoch and resumed
// (rank 0's checkpoint, the progress of the partial epoch over the global
// batches) end as a straight run of replicas does, bit for bit.
func TestFitReplicasResume(t *testing.T) {
	fit := func(ctx context.Context, cfg train.Config) ([][]float64, error) {
		var first *train.Sampled[float64, points]
		_, err := train.FitReplicas(ctx, cfg, 2, func(i int) (train.Task[float64, points], optim.Optimizer[float64], error) {
			task, _ := regression(11, i, 2)
			if i == 0 {
				first = task
			}
			return task, optim.NewAdam(task.Params(), optim.AdamDefaults()), nil
		})
		return paramValues(first.Params()), err
	}
	straight, err := fit(context.Background(), train.Config{Name: "line", Epochs: 3, Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cfg := train.Config{Name: "line", Dir: dir, Epochs: 3, Quiet: true, OnBatch: func(epoch, batches int) {
		if epoch == 1 && batches == 2 {
			cancel()
		}
	}}
	if _, err := fit(ctx, cfg); !errors.As(err, new(*train.InterruptedError)) {
		t.Fatalf("interrupted replicas: %v", err)
	}
	cfg.OnBatch, cfg.Resume = nil, true
	resumed, err := fit(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(straight, resumed); diff != "" {
		t.Errorf("resumed replicas (-straight +resumed):\n%s", diff)
	}
}

// miscounted is a task whose Batches yields n batches while NumBatches
// says 3.
type miscounted struct {
	*train.Sampled[float64, points]
	n int
}

func (m miscounted) NumBatches() int { return 3 }
func (m miscounted) Batches(ctx context.Context, epoch int) iter.Seq2[points, error] {
	s := *m.Sampled
	s.PerEpoch = m.n
	return s.Batches(ctx, epoch)
}

// TestFitBadTask: a task that breaks its contract is an error naming what
// is wrong, not a panic or a silently wrong epoch.
func TestFitBadTask(t *testing.T) {
	cfg := train.Config{Name: "bad", Epochs: 1, Quiet: true}
	lossWith := func(f func(tp *autograd.Tape[float64], l train.Loss[float64]) train.Loss[float64]) *train.Sampled[float64, points] {
		task, _ := regression(1, 0, 1)
		obj := task.Objective
		task.Objective = func(tp *autograd.Tape[float64], b points) (train.Loss[float64], error) {
			l, err := obj(tp, b)
			return f(tp, l), err
		}
		return task
	}
	sampleErr := errors.New("no data")
	for _, tc := range []struct {
		name string
		task train.Task[float64, points]
		want string
	}{
		{"a vector loss", lossWith(func(tp *autograd.Tape[float64], l train.Loss[float64]) train.Loss[float64] {
			l.Value = tp.Const(tensor.New[float64](2))
			return l
		}), "want a scalar"},
		{"no loss", lossWith(func(_ *autograd.Tape[float64], l train.Loss[float64]) train.Loss[float64] {
			l.Value = autograd.Var[float64]{}
			return l
		}), "the zero Var"},
		{"Correct above N", lossWith(func(_ *autograd.Tape[float64], l train.Loss[float64]) train.Loss[float64] {
			l.Correct = l.N + 1
			return l
		}), "0 ≤ Correct ≤ N"},
		{"a NaN loss", lossWith(func(tp *autograd.Tape[float64], l train.Loss[float64]) train.Loss[float64] {
			l.Value = autograd.Scale(l.Value, math.NaN())
			return l
		}), "the loss is NaN"},
		{"too few batches", miscounted{lossWith(func(_ *autograd.Tape[float64], l train.Loss[float64]) train.Loss[float64] { return l }), 2},
			"epoch 1: the task yielded 2 batches, not the 3"},
		{"too many batches", miscounted{lossWith(func(_ *autograd.Tape[float64], l train.Loss[float64]) train.Loss[float64] { return l }), 4},
			"epoch 1: the task yielded more than its 3 batches"},
		{"a failing sample", func() train.Task[float64, points] {
			task, _ := regression(1, 0, 1)
			task.Sample = func(*rand.Rand) (points, error) { return points{}, sampleErr }
			return task
		}(), "epoch 1, batch 1 of 5: sampling batch 1: no data"},
		{"no PerEpoch", func() train.Task[float64, points] {
			task, _ := regression(1, 0, 1)
			task.PerEpoch = 0
			return task
		}(), "PerEpoch is 0"},
		{"no Objective", func() train.Task[float64, points] {
			task, _ := regression(1, 0, 1)
			task.Objective = nil
			return task
		}(), "Sample and Objective"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := train.Fit(context.Background(), cfg, tc.task, optim.NewSGD(tc.task.Params(), optim.SGDConfig{LR: 0.1}))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want an error saying %q", err, tc.want)
			}
		})
	}
	if _, err := train.Fit[float64, points](context.Background(), cfg, nil, nil); err == nil || !strings.Contains(err.Error(), "needs a task") {
		t.Errorf("nil task: %v", err)
	}
}

// fixedStats is a Counted reporting the same work every call.
type fixedStats struct{ fwd, bwd int }

func (f fixedStats) NFE() (forward, backward int) {
	var s odeblock.BlockStats
	s.Forward.NFE, s.Backward.NFE = f.fwd, f.bwd
	return s.NFE()
}

// TestSampledCounter: a Sampled's Counter fills the rows' NFE columns.
func TestSampledCounter(t *testing.T) {
	task, _ := regression(1, 0, 1)
	task.Counter = fixedStats{26, 7}
	var log strings.Builder
	res, err := train.Fit(context.Background(), train.Config{Name: "line", Epochs: 1, Log: &log}, task, optim.NewSGD(task.Params(), optim.SGDConfig{LR: 0.1}))
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Rows[0]; r.FwdNFE != 26 || r.BwdNFE != 7 {
		t.Errorf("row NFE %g + %g, want 26 + 7", r.FwdNFE, r.BwdNFE)
	}
	if !strings.Contains(log.String(), "NFE fwd 26.0 bwd 7.0") {
		t.Errorf("the log does not show the NFE:\n%s", log.String())
	}
}

// TestOnStep: Config.OnStep reports every training batch, in order, with
// its mean loss and examples, whose weighted mean is the epoch's row; with
// replicas, the global batch's.
func TestOnStep(t *testing.T) {
	type rec struct {
		epoch, batches int
		s              train.Step
	}
	for _, replicas := range []int{1, 2} {
		var got []rec
		cfg := train.Config{Name: "line", Epochs: 2, Quiet: true, OnStep: func(epoch, batches int, s train.Step) {
			got = append(got, rec{epoch, batches, s})
		}}
		res, err := train.FitReplicas(context.Background(), cfg, replicas, func(i int) (train.Task[float64, points], optim.Optimizer[float64], error) {
			task, _ := regression(13, i, replicas)
			task.Counter = fixedStats{5, 7}
			return task, optim.NewSGD(task.Params(), optim.SGDConfig{LR: 0.1}), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 10 {
			t.Fatalf("%d replicas: %d steps reported, want 2 epochs of 5", replicas, len(got))
		}
		for e := range 2 {
			var sum float64
			var n int
			for b, r := range got[5*e : 5*e+5] {
				if r.epoch != e || r.batches != b+1 || r.s.N != 8 || r.s.FwdNFE != 5 || r.s.BwdNFE != 7 || !(r.s.Loss > 0) || !(r.s.Seconds >= 0) {
					t.Errorf("%d replicas: step %+v, want epoch %d, batch %d of 8 examples, NFE 5 + 7", replicas, r, e, b+1)
				}
				sum += r.s.Loss * float64(r.s.N)
				n += r.s.N
			}
			if row := res.Rows[e].Loss; math.Abs(sum/float64(n)-row) > 1e-12*row {
				t.Errorf("%d replicas, epoch %d: the steps' mean loss %g, the row's %g", replicas, e+1, sum/float64(n), row)
			}
		}
	}
}

// plainTask is a Task of its own methods, none of Sampled's promoted.
type plainTask struct {
	s *train.Sampled[float64, points]
}

func (p plainTask) Params() []*autograd.Param[float64] { return p.s.Params() }
func (p plainTask) NumBatches() int                    { return p.s.NumBatches() }
func (p plainTask) Batches(ctx context.Context, epoch int) iter.Seq2[points, error] {
	return p.s.Batches(ctx, epoch)
}
func (p plainTask) Loss(tp *autograd.Tape[float64], b points) (train.Loss[float64], error) {
	return p.s.Loss(tp, b)
}

// TestFitPlainTask: a task of the user's own type trains, and Fit without
// an optimizer, or with a nil task of that type, is an error.
func TestFitPlainTask(t *testing.T) {
	task, _ := regression(17, 0, 1)
	cfg := train.Config{Name: "plain", Epochs: 2, Quiet: true}
	res, err := train.Fit(context.Background(), cfg, plainTask{task}, optim.NewSGD(task.Params(), optim.SGDConfig{LR: 0.1}))
	if err != nil || len(res.Rows) != 2 || !(res.Rows[1].Loss < res.Rows[0].Loss) {
		t.Fatalf("plain task: %v, rows %+v", err, res)
	}
	if _, err := train.Fit[float64, points](context.Background(), cfg, plainTask{task}, nil); err == nil || !strings.Contains(err.Error(), "needs a task and an optimizer") {
		t.Errorf("no optimizer: %v", err)
	}
	var none *plainTask
	if _, err := train.Fit[float64, points](context.Background(), cfg, none, optim.NewSGD(task.Params(), optim.SGDConfig{LR: 0.1})); err == nil || !strings.Contains(err.Error(), "needs a task and an optimizer") {
		t.Errorf("a nil task: %v", err)
	}
}
