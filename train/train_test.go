package train_test

import (
	"context"
	"errors"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/train"
)

// linear is a tiny classifier: flatten, then Linear.
type linear[T tensor.Float] struct{ fc *layers.Linear[T] }

func newLinear[T tensor.Float](seed uint64) *linear[T] {
	fc := layers.NewLinear[T](rand.New(rand.NewPCG(seed, 1)), 2*4*4, 3)
	layers.Prefix("fc", fc)
	return &linear[T]{fc}
}

func (m *linear[T]) Forward(tp *autograd.Tape[T], x autograd.Var[T]) (autograd.Var[T], error) {
	return m.fc.Forward(tp, autograd.Flatten(x)), nil
}

func (m *linear[T]) Params() []*autograd.Param[T] { return m.fc.Params() }

func loaders(t *testing.T) (tr, te *data.Loader) {
	t.Helper()
	tr, err := data.NewLoader(data.FakeImages(40, 2, 4, 4, 3, 1), data.LoaderOptions{BatchSize: 8, Shuffle: true, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	te, err = data.NewLoader(data.FakeImages(16, 2, 4, 4, 3, 2), data.LoaderOptions{BatchSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	return tr, te
}

// run trains a fresh model in dir and returns its parameters and rows
// (times zeroed).
func run(t *testing.T, ctx context.Context, cfg train.Config) ([][]float32, []train.Row, error) {
	t.Helper()
	tr, te := loaders(t)
	m := newLinear[float32](7)
	opt := optim.NewAdam(m.Params(), optim.AdamDefaults())
	res, err := train.Run[float32](ctx, cfg, m, opt, tr, te)
	var ps [][]float32
	for _, p := range m.Params() {
		ps = append(ps, append([]float32(nil), p.Value.Data()...))
	}
	var rows []train.Row
	if res != nil {
		for _, r := range res.Rows {
			r.Seconds, r.Elapsed = 0, 0
			rows = append(rows, r)
		}
	}
	return ps, rows, err
}

// TestResumeBitExact: a run interrupted in its second epoch (context
// cancelled) and resumed ends with the parameters and rows of a straight
// run, bit for bit; the interruption is an InterruptedError naming the
// batch.
func TestResumeBitExact(t *testing.T) {
	straight, rows, err := run(t, context.Background(), train.Config{Name: "lin", Dir: t.TempDir(), Epochs: 3, Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cfg := train.Config{Name: "lin", Dir: dir, Epochs: 3, Quiet: true, OnBatch: func(epoch, batches int) {
		if epoch == 1 && batches == 3 {
			cancel()
		}
	}}
	_, _, err = run(t, ctx, cfg)
	var ie *train.InterruptedError
	if !errors.As(err, &ie) || ie.Epoch != 1 || ie.Batch != 3 || ie.Checkpoint != filepath.Join(dir, "lin.safetensors") {
		t.Fatalf("interrupted run: %v", err)
	}
	cfg.OnBatch, cfg.Resume = nil, true
	resumed, rrows, err := run(t, context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(resumed, straight) || !reflect.DeepEqual(rrows, rows) || len(rows) != 6 {
		t.Errorf("resumed run differs from the straight one:\n%v\n%v", rrows, rows)
	}
	// More epochs done than asked for: a mismatch, not a silent no-op.
	cfg.Epochs = 2
	if _, _, err := run(t, context.Background(), cfg); !errors.As(err, new(*train.MismatchError)) {
		t.Errorf("resuming 3 epochs with Epochs 2: %v, want a MismatchError", err)
	}
}

// TestEarlyStop: OnEpoch returning ErrStop ends the run after that epoch,
// with its files written; another error ends it with that error.
func TestEarlyStop(t *testing.T) {
	dir := t.TempDir()
	seen := 0
	_, rows, err := run(t, context.Background(), train.Config{Name: "lin", Dir: dir, Epochs: 5, Quiet: true,
		OnEpoch: func(tr, te train.Row) error {
			if seen++; tr.Epoch == 2 {
				return train.ErrStop
			}
			return nil
		}})
	if err != nil || len(rows) != 4 || seen != 2 {
		t.Fatalf("early stop: %v, %d rows, %d epochs seen", err, len(rows), seen)
	}
	boom := errors.New("boom")
	if _, _, err := run(t, context.Background(), train.Config{Name: "lin", Epochs: 2, Quiet: true,
		OnEpoch: func(train.Row, train.Row) error { return boom }}); !errors.Is(err, boom) {
		t.Errorf("OnEpoch's error: %v", err)
	}
}

// TestFloat64Model: the loop trains a float64 model on the loader's
// float32 images, and the loss falls.
func TestFloat64Model(t *testing.T) {
	tr, te := loaders(t)
	m := newLinear[float64](7)
	res, err := train.Run[float64](context.Background(), train.Config{Name: "lin64", Epochs: 4, Quiet: true},
		m, optim.NewAdam(m.Params(), optim.AdamConfig{LR: 0.05, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}), tr, te)
	if err != nil {
		t.Fatal(err)
	}
	if first, last := res.Rows[0].Loss, res.Rows[len(res.Rows)-2].Loss; !(last < first) {
		t.Errorf("training loss %v → %v: did not fall", first, last)
	}
	if res.CSVPath != "" || res.WroteCSV {
		t.Errorf("no Dir, yet files: %+v", res)
	}
}

// TestConfigChecked: settings Run cannot work with are errors naming them,
// before anything is trained or written.
func TestConfigChecked(t *testing.T) {
	tr, te := loaders(t)
	m := newLinear[float32](1)
	opt := optim.NewAdam(m.Params(), optim.AdamDefaults())
	for _, c := range []struct {
		cfg  train.Config
		want string
	}{
		{train.Config{Name: "x", Epochs: 0}, "Epochs"},
		{train.Config{Name: "x", Epochs: 1, Clip: -1}, "Clip"},
		{train.Config{Name: "", Epochs: 1}, "Name"},
		{train.Config{Name: "a/b", Epochs: 1}, "Name"},
		{train.Config{Name: "x", Epochs: 1, Resume: true}, "Resume needs"},
	} {
		if _, err := train.Run[float32](context.Background(), c.cfg, m, opt, tr, te); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %s", c.cfg, err, c.want)
		}
	}
	for _, c := range []struct {
		name   string
		m      train.Model[float32]
		opt    optim.Optimizer[float32]
		tr, te *data.Loader
	}{
		{"model", nil, opt, tr, te},
		{"optimizer", m, nil, tr, te},
		{"training loader", m, opt, nil, te},
		{"test loader", m, opt, tr, nil},
	} {
		if _, err := train.Run[float32](context.Background(), train.Config{Name: "x", Epochs: 1}, c.m, c.opt, c.tr, c.te); err == nil || !strings.Contains(err.Error(), "needs a model, an optimizer and both loaders") {
			t.Errorf("no %s: %v, want an error saying what Run needs", c.name, err)
		}
	}
}

// TestResumeChecksParametersAndOptimizer: a checkpoint whose parameter
// count or optimizer hyperparameters are not the run's, or that lacks the
// count, is refused with an error naming the field, before anything loads.
func TestResumeChecksParametersAndOptimizer(t *testing.T) {
	dir := t.TempDir()
	tr, te := loaders(t)
	m := newLinear[float32](7)
	opt := optim.NewAdam(m.Params(), optim.AdamDefaults())
	cfg := train.Config{Name: "lin", Dir: dir, Epochs: 1, Quiet: true}
	if _, err := train.Run[float32](context.Background(), cfg, m, opt, tr, te); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "lin.safetensors")
	st, err := layers.ReadSafetensorsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	base := map[string]string{}
	for k, v := range st.Metadata {
		if !strings.HasPrefix(k, optim.Prefix) {
			base[k] = v
		}
	}
	for _, c := range []struct {
		name  string
		spoil func(meta map[string]string) optim.Optimizer[float32]
		want  string
	}{
		{"parameter count", func(meta map[string]string) optim.Optimizer[float32] {
			meta["parameters"] = "5"
			return opt
		}, `"parameters" = "5": the model has 99`},
		{"no parameter count", func(meta map[string]string) optim.Optimizer[float32] {
			delete(meta, "parameters")
			return opt
		}, `"parameters" is missing`},
		{"learning rate", func(map[string]string) optim.Optimizer[float32] {
			return optim.NewAdam(m.Params(), optim.AdamConfig{LR: 0.5, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
		}, "lr"},
	} {
		meta := maps.Clone(base)
		if err := layers.SaveCheckpoint(path, m.Params(), c.spoil(meta), meta); err != nil {
			t.Fatal(err)
		}
		cfg := cfg
		cfg.Epochs, cfg.Resume = 2, true
		if _, err := train.Run[float32](context.Background(), cfg, m, opt, tr, te); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// TestResumeAfterInterruptedEvaluation: a run interrupted during an
// epoch's evaluation (every batch trained) saves that, and resumes to the
// straight run's parameters and rows, bit for bit.
func TestResumeAfterInterruptedEvaluation(t *testing.T) {
	straight, rows, err := run(t, context.Background(), train.Config{Name: "lin", Dir: t.TempDir(), Epochs: 2, Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cfg := train.Config{Name: "lin", Dir: dir, Epochs: 2, Quiet: true, OnBatch: func(epoch, batches int) {
		if epoch == 0 && batches == 5 { // the epoch's last batch
			cancel()
		}
	}}
	_, _, err = run(t, ctx, cfg)
	var ie *train.InterruptedError
	if !errors.As(err, &ie) || ie.Epoch != 0 || ie.Batch != 5 {
		t.Fatalf("interrupted run: %v, want one interrupted after batch 5 of epoch 1", err)
	}
	cfg.OnBatch, cfg.Resume = nil, true
	resumed, rrows, err := run(t, context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(resumed, straight) || !reflect.DeepEqual(rrows, rows) {
		t.Errorf("resumed run differs from the straight one:\n%v\n%v", rrows, rows)
	}
}
