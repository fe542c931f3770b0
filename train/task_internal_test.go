package train

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/tensor"
	"github.com/google/go-cmp/cmp"
)

// TestEvalRow: an evaluation's sums become the test row: the mean loss
// and accuracy per example, the NFE per batch; no example is an error.
func TestEvalRow(t *testing.T) {
	got, err := Eval{LossSum: 6, Correct: 3, N: 4, NFE: 10, Batches: 2}.row(1.5)
	if err != nil {
		t.Fatal(err)
	}
	want := Row{Split: "test", Loss: 1.5, Accuracy: 0.75, FwdNFE: 5, Seconds: 1.5}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("row (-want +got):\n%s", diff)
	}
	if got, err := (Eval{LossSum: 1, N: 2}).row(0); err != nil || got.FwdNFE != 0 {
		t.Errorf("no batches counted: %+v, %v; want NFE 0", got, err)
	}
	if _, err := (Eval{}).row(0); err == nil {
		t.Error("an evaluation of no examples gave a row")
	}
}

// TestLogLines: the log's line of an epoch and the progress bar's text
// show the accuracy only for a task that reports it, the test numbers only
// for an Evaluator and the NFE only when counted, with the right numbers.
func TestLogLines(t *testing.T) {
	tr := Row{Loss: 0.5, Accuracy: 0.25, FwdNFE: 26, BwdNFE: 0, Seconds: 1.5, Epoch: 2}
	ev := Row{Loss: 0.75, Accuracy: 0.5, Seconds: 2}
	p := progressSums{Batches: 2, LossSum: 3, Correct: 2, Seen: 4, FwdNFE: 0, BwdNFE: 6}
	classify := &run[float64, *data.Batch]{cfg: Config{Name: "c", Epochs: 3}, task: classifier[float64]{}, showAccuracy: true}
	plain := &run[float64, int]{cfg: Config{Name: "r", Epochs: 3}, task: &Sampled[float64, int]{}}
	for _, c := range []struct{ got, want string }{
		{classify.epochLine(tr, ev), "c epoch 2/3: train loss 0.5 acc 25.00% | test loss 0.75 acc 50.00% | NFE fwd 26.0 bwd 0.0 (test 0.0) | 3.5 s"},
		{plain.epochLine(tr, Row{}), "r epoch 2/3: train loss 0.5 | NFE fwd 26.0 bwd 0.0 | 1.5 s"},
		{plain.epochLine(Row{Loss: 2, Epoch: 1, BwdNFE: 3}, Row{}), "r epoch 1/3: train loss 2 | NFE fwd 0.0 bwd 3.0 | 0.0 s"},
		{plain.epochLine(Row{Loss: 2, Epoch: 1}, Row{}), "r epoch 1/3: train loss 2 | 0.0 s"},
		{classify.barText(1, p), "c 2/3 loss 0.75 acc  50.0% NFE 0+3"},
		{plain.barText(0, progressSums{Batches: 2, LossSum: 3, Seen: 4, FwdNFE: 5}), "r 1/3 loss 0.75 NFE 2+0"},
		{plain.barText(0, progressSums{Batches: 2, LossSum: 3, Seen: 4}), "r 1/3 loss 0.75"},
	} {
		if c.got != c.want {
			t.Errorf("got  %q\nwant %q", c.got, c.want)
		}
	}
}

// flat is a classifier of 2×4×4 images: flatten, then Linear.
type flat struct{ fc *layers.Linear[float64] }

func (m flat) Forward(tp *autograd.Tape[float64], x autograd.Var[float64]) (autograd.Var[float64], error) {
	return m.fc.Forward(tp, autograd.Flatten(x)), nil
}
func (m flat) Params() []*autograd.Param[float64] { return m.fc.Params() }

// TestClassifierEvaluateShards: the shards of a classifier's evaluation
// (batches i ≡ shard mod shards) add up to the whole, batch by batch.
func TestClassifierEvaluateShards(t *testing.T) {
	te, err := data.NewLoader(data.FakeImages(10, 2, 4, 4, 3, 2), data.LoaderOptions{BatchSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	c := classifier[float64]{m: flat{layers.NewLinear[float64](rand.New(rand.NewPCG(1, 2)), 32, 3)}, te: te}
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	tp.SetNoGrad(true)
	whole, err := c.Evaluate(context.Background(), tp, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if whole.N != 10 || whole.Batches != 4 {
		t.Fatalf("whole evaluation %+v, want 10 images in 4 batches", whole)
	}
	var sum Eval
	for shard, want := range []struct{ n, batches int }{{4, 2}, {3, 1}, {3, 1}} {
		e, err := c.Evaluate(context.Background(), tp, shard, 3)
		if err != nil {
			t.Fatal(err)
		}
		if e.N != want.n || e.Batches != want.batches {
			t.Errorf("shard %d: %+v, want %d images in %d batches", shard, e, want.n, want.batches)
		}
		sum.LossSum += e.LossSum
		sum.Correct += e.Correct
		sum.N += e.N
		sum.Batches += e.Batches
	}
	if d := sum.LossSum - whole.LossSum; d > 1e-12 || d < -1e-12 || sum.Correct != whole.Correct || sum.N != whole.N {
		t.Errorf("the shards' sums %+v differ from the whole's %+v", sum, whole)
	}
}

// countedModel is a Model that reports fixed counts.
type countedModel struct {
	Model[float64]
	fwd, bwd int
}

func (m countedModel) NFE() (forward, backward int) { return m.fwd, m.bwd }

// TestClassifierNFE: a classification task reports its model's counts
// when the model is Counted, and none when it is not.
func TestClassifierNFE(t *testing.T) {
	for _, tc := range []struct {
		name     string
		m        Model[float64]
		fwd, bwd int
	}{
		{"counted", countedModel{fwd: 12, bwd: 31}, 12, 31},
		{"not counted", Model[float64](nil), 0, 0},
	} {
		fwd, bwd := classifier[float64]{m: tc.m}.NFE()
		if fwd != tc.fwd || bwd != tc.bwd {
			t.Errorf("%s: NFE %d + %d, want %d + %d", tc.name, fwd, bwd, tc.fwd, tc.bwd)
		}
	}
}
