package train_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/distributed"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/train"
)

// bnNet is Linear(32, 4), BatchNorm over the 4 features, Linear(4, 3): a
// model with modes and buffers.
type bnNet struct {
	in, out *layers.Linear[float64]
	bn      *layers.BatchNorm[float64]
}

func newBNNet(seed uint64) *bnNet {
	rng := rand.New(rand.NewPCG(seed, 3))
	m := &bnNet{in: layers.NewLinear[float64](rng, 2*4*4, 4), bn: layers.NewBatchNorm[float64](4), out: layers.NewLinear[float64](rng, 4, 3)}
	layers.Prefix("in", m.in)
	layers.Prefix("bn", m.bn)
	layers.Prefix("out", m.out)
	return m
}

func (m *bnNet) Forward(tp *autograd.Tape[float64], x autograd.Var[float64]) (autograd.Var[float64], error) {
	return m.out.Forward(tp, m.bn.Forward(tp, m.in.Forward(tp, autograd.Flatten(x)))), nil
}

func (m *bnNet) Params() []*autograd.Param[float64] {
	return append(append(m.in.Params(), m.bn.Params()...), m.out.Params()...)
}

func (m *bnNet) Buffers() []*autograd.Param[float64] { return m.bn.Buffers() }

func (m *bnNet) SetTraining(training bool) { m.bn.SetTraining(training) }

// values copies the tensors' numbers.
func values(ps []*autograd.Param[float64]) []float64 {
	var out []float64
	for _, p := range ps {
		out = append(out, p.Value.Data()...)
	}
	return out
}

// testLoss is the mean cross-entropy of m over te, with m in the given mode.
func testLoss(t *testing.T, m *bnNet, te *data.Loader, training bool) float64 {
	t.Helper()
	m.SetTraining(training)
	defer m.SetTraining(true)
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	tp.SetNoGrad(true)
	sum, n := 0.0, 0
	for b, err := range te.Epoch(context.Background(), 0) {
		if err != nil {
			t.Fatal(err)
		}
		tp.Reset()
		x := tensor.New[float64](b.X.Shape()...)
		for i, v := range b.X.Data() {
			x.Data()[i] = float64(v)
		}
		logits, _ := m.Forward(tp, tp.Const(x))
		sum += layers.SoftmaxCrossEntropy(logits, b.Labels).Item() * float64(b.Len())
		n += b.Len()
	}
	return sum / float64(n)
}

// TestEvaluationMode: the test rows are computed in evaluation mode (the
// running statistics), and training goes on in training mode.
func TestEvaluationMode(t *testing.T) {
	tr, te := loaders(t)
	m := newBNNet(1)
	res, err := train.Run[float64](context.Background(), train.Config{Name: "bn", Epochs: 2, Quiet: true}, m,
		optim.NewAdam(m.Params(), optim.AdamDefaults()), tr, te)
	if err != nil {
		t.Fatal(err)
	}
	got := res.Rows[3].Loss
	eval, batch := testLoss(t, m, te, false), testLoss(t, m, te, true)
	if math.Abs(got-eval) > 1e-12 {
		t.Errorf("test row's loss %.15g, the model in evaluation mode %.15g (in training mode %.15g)", got, eval, batch)
	}
	if math.Abs(eval-batch) < 1e-6 {
		t.Fatalf("the modes give the same loss (%g): the test cannot tell them apart", eval)
	}
	before := values(m.Buffers())
	m.SetTraining(true) // what Run left: a forward in training mode moves the running statistics
	testLoss(t, m, te, true)
	if after := values(m.Buffers()); after[0] == before[0] {
		t.Error("after Run the model is not in training mode")
	}
}

// TestBuffersResumed: the checkpoint holds the running statistics, and an
// interrupted and resumed run ends with the parameters, buffers and rows
// of a straight one, bit for bit.
func TestBuffersResumed(t *testing.T) {
	runBN := func(ctx context.Context, cfg train.Config) ([]float64, []train.Row, error) {
		tr, te := loaders(t)
		m := newBNNet(1)
		res, err := train.Run[float64](ctx, cfg, m, optim.NewAdam(m.Params(), optim.AdamDefaults()), tr, te)
		var rows []train.Row
		for _, r := range res.Rows {
			r.Seconds, r.Elapsed = 0, 0
			rows = append(rows, r)
		}
		return append(values(m.Params()), values(m.Buffers())...), rows, err
	}
	straight, srows, err := runBN(context.Background(), train.Config{Name: "bn", Epochs: 3, Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := train.Config{Name: "bn", Dir: dir, Epochs: 3, Quiet: true, Resume: true, OnBatch: func(epoch, batches int) {
		if epoch == 1 && batches == 2 {
			cancel()
		}
	}}
	if _, _, err := runBN(ctx, cfg); !errors.As(err, new(*train.InterruptedError)) {
		t.Fatalf("interrupted run: %v", err)
	}
	st, err := layers.ReadSafetensorsFile(dir + "/bn.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.Tensor("bn.running_mean"); !ok {
		t.Fatal("the checkpoint lacks bn.running_mean")
	}
	cfg.OnBatch = nil
	resumed, rrows, err := runBN(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range straight {
		if resumed[i] != straight[i] {
			t.Fatalf("resumed: number %d of the parameters and buffers is %g, straight %g", i, resumed[i], straight[i])
		}
	}
	closeRows(t, "resumed", rrows, srows, 0)
}

// TestDistributedBuffers: on two ranks, every rank ends with rank 0's
// running statistics and the same parameters.
func TestDistributedBuffers(t *testing.T) {
	comms := distributed.NewLocal(2)
	ms := []*bnNet{newBNNet(1), newBNNet(1)}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		tr, err := data.NewLoader(data.FakeImages(64, 2, 4, 4, 3, 1), data.LoaderOptions{BatchSize: 8, Shuffle: true, Seed: 3, Shard: r, Shards: 2})
		if err != nil {
			t.Fatal(err)
		}
		_, te := loaders(t)
		wg.Go(func() {
			_, errs[r] = train.Run[float64](context.Background(), train.Config{Name: "bn", Epochs: 2, Quiet: true, Distributed: comms[r]},
				ms[r], optim.NewAdam(ms[r].Params(), optim.AdamDefaults()), tr, te)
		})
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	a, b := append(values(ms[0].Params()), values(ms[0].Buffers())...), append(values(ms[1].Params()), values(ms[1].Buffers())...)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("number %d of the parameters and buffers: rank 0 %g, rank 1 %g", i, a[i], b[i])
		}
	}
}
