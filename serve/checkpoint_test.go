package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/models"
	"github.com/adamnode/adamnode/tensor"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// smallConfig is what adamnode train --model adamnode --dataset mnist
// --nhid 4 --tol 1e-3 builds.
func smallConfig() models.Config {
	cfg := models.Paper(models.AdamNODE, models.MNIST)
	cfg.NHid = 4
	cfg.Solver.RTol, cfg.Solver.ATol = 1e-3, 1e-3
	return cfg
}

// writeCheckpoint saves a classifier of cfg drawn from seed with meta,
// and returns the file and the classifier.
func writeCheckpoint(t *testing.T, cfg models.Config, seed uint64, meta map[string]string) (string, *models.Classifier[float32]) {
	t.Helper()
	m, err := models.New[float32](rand.New(rand.NewPCG(seed, 7)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "adamnode.safetensors")
	if err := layers.SaveParams(path, m.Params(), meta); err != nil {
		t.Fatal(err)
	}
	return path, m
}

func goodMeta() map[string]string {
	return map[string]string{"model": "adamnode", "dataset": "mnist", "nhid": "4", "nhid_scale": "1", "method": "dopri5", "tol": "0.001"}
}

// TestLoadCheckpoint: the served model answers each image as the saved
// classifier does on it alone, from concurrent callers, alone or in a
// batch (infer's RowErrors: within the solver's tolerance), with the
// checkpoint's name and shape.
func TestLoadCheckpoint(t *testing.T) {
	path, orig := writeCheckpoint(t, smallConfig(), 3, goodMeta())
	m, err := LoadCheckpoint(path, CheckpointOptions{Replicas: 2})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{"adamnode", []int{1, 28, 28}}, []any{m.Name, m.Input}); diff != "" {
		t.Errorf("name and input (-want +got):\n%s", diff)
	}
	const n = 3
	x := tensor.RandU[float32](rand.New(rand.NewPCG(5, 5)), 0, 1, n, 1, 28, 28)
	tp := autograd.NewTape(tensor.EngineFor[float32](tensor.Default()))
	tp.SetNoGrad(true)
	var want []float32
	for i := range n {
		tp.Reset()
		y, err := orig.Forward(tp, tp.Const(x.Slice(i, i+1)))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, y.Value().ReadData()...)
	}
	var wg sync.WaitGroup
	for _, tc := range []struct {
		name string
		opt  cmp.Option
		run  func() ([]float32, error)
	}{
		{"alone", cmpopts.EquateApprox(1e-5, 1e-6), func() ([]float32, error) {
			var got []float32
			for i := range n {
				y, err := m.Predictor.Predict(context.Background(), x.Slice(i, i+1))
				if err != nil {
					return nil, err
				}
				got = append(got, y.ReadData()...)
			}
			return got, nil
		}},
		{"batched", cmpopts.EquateApprox(0, 1e-2), func() ([]float32, error) {
			y, err := m.Predictor.Predict(context.Background(), x)
			if err != nil {
				return nil, err
			}
			return y.ReadData(), nil
		}},
	} {
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := tc.run()
				if err != nil {
					t.Errorf("%s: %v", tc.name, err)
					return
				}
				if diff := cmp.Diff(want, got, tc.opt); diff != "" {
					t.Errorf("%s: served scores (-saved model alone +served):\n%s", tc.name, diff)
				}
			}()
		}
	}
	wg.Wait()
}

// TestLoadCheckpointErrors: a checkpoint that cannot be served is an
// error naming the file and what is wrong.
func TestLoadCheckpointErrors(t *testing.T) {
	with := func(k, v string) map[string]string {
		m := goodMeta()
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	for _, tc := range []struct {
		name string
		meta map[string]string
		o    CheckpointOptions
		want string
	}{
		{"no model", with("model", ""), CheckpointOptions{}, `metadata "model"`},
		{"unknown dataset", with("dataset", "imagenet"), CheckpointOptions{}, `metadata "dataset": "imagenet"`},
		{"bad nhid", with("nhid", "four"), CheckpointOptions{}, `metadata "nhid": "four" is not a number`},
		{"other width", with("nhid", "8"), CheckpointOptions{}, "shape"},
		{"bad tol", with("tol", "2"), CheckpointOptions{}, "tolerance must be in (0, 1)"},
		{"bad method", goodMeta(), CheckpointOptions{Method: "rk99"}, `solver method "rk99"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, _ := writeCheckpoint(t, smallConfig(), 3, tc.meta)
			_, err := LoadCheckpoint(path, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "adamnode.safetensors") {
				t.Errorf("LoadCheckpoint: %v, want an error naming the file and containing %q", err, tc.want)
			}
		})
	}
	path, _ := writeCheckpoint(t, smallConfig(), 3, nil)
	if _, err := LoadCheckpoint(path, CheckpointOptions{}); err == nil || !strings.Contains(err.Error(), "adamnode serve --model --dataset --nhid") {
		t.Errorf("a file without metadata: %v, want an error saying which options describe the model", err)
	}
	if _, err := LoadCheckpoint(filepath.Join(t.TempDir(), "none.safetensors"), CheckpointOptions{}); err == nil || !strings.Contains(err.Error(), "none.safetensors") {
		t.Errorf("a missing file: %v", err)
	}
}

// TestServedAloneAndInAFullBatch: through the batched HTTP server, each
// of 64 concurrent requests for a checkpoint's model, inputs of scales
// from 1/64 to 8, gets the answer it gets alone to within the solver's
// tolerance, and they ran in a few batches.
func TestServedAloneAndInAFullBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("64 solves of an MNIST-shaped AdamNODE")
	}
	path, _ := writeCheckpoint(t, smallConfig(), 4, goodMeta())
	m, err := LoadCheckpoint(path, CheckpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The first batch is held until every request has been queued, so
	// that the others form one full batch whatever the machine's speed
	// (the goroutines below may reach the Batcher far apart: a lone
	// request that finds it idle runs at once).
	queued := make(chan struct{})
	var gate sync.Once
	alonePredictor := m.Predictor
	m.Predictor = predictorFunc[float32](func(ctx context.Context, x *tensor.Tensor[float32]) (*tensor.Tensor[float32], error) {
		gate.Do(func() {
			select {
			case <-queued:
			case <-time.After(time.Minute):
				t.Error("the 64 requests were not all queued within a minute")
			}
		})
		return alonePredictor.Predict(ctx, x)
	})
	var rows []int
	var mu sync.Mutex
	s, err := New([]Model[float32]{m}, Options{Batch: &BatchOptions{MaxBatch: 64, MaxWait: time.Second, MaxInFlight: 1,
		Observe: func(n int, _ time.Duration, _ error) { mu.Lock(); rows = append(rows, n); mu.Unlock() }}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 64
	// Rows unlike each other: image i scaled by 8^(i/16 - 2), from
	// near zero to 8, so that the rows need different steps.
	x := tensor.RandU[float32](rand.New(rand.NewPCG(9, 9)), 0, 1, n, 1, 28, 28)
	d := x.Data()
	for i := range n {
		f := float32(math.Pow(8, float64(i)/16-2))
		for j := range 28 * 28 {
			d[i*28*28+j] *= f
		}
	}
	alone := make([][]float32, n)
	for i := range n {
		y, err := alonePredictor.Predict(context.Background(), x.Slice(i, i+1))
		if err != nil {
			t.Fatal(err)
		}
		alone[i] = y.ReadData()
	}
	served := make([][]float32, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body, _ := json.Marshal(map[string]any{"input": x.Slice(i, i+1).ReadData()})
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/predict", bytes.NewReader(body)))
			var got struct{ Output []float32 }
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 {
				t.Errorf("request %d: %d %s", i, rec.Code, rec.Body.String())
			}
			served[i] = got.Output
		}()
	}
	go func() {
		b := s.models[m.Name].batcher
		for b.Stats().Requests < n {
			time.Sleep(time.Millisecond)
		}
		close(queued)
	}()
	wg.Wait()
	// The scores are a linear head of h(1), solved at rtol = atol = 1e-3:
	// a global error of a few tolerances in h, summed by the head over
	// 3920 elements with weights of about ±1/√3920, moves a score by
	// about as much (measured: at most 0.0067 on scores up to 20). That
	// the per-row error control is what keeps the rows apart is infer's
	// test (TestRowsModes); this one checks the server's path: split back
	// right, nothing mixed up between requests.
	if diff := cmp.Diff(alone, served, cmpopts.EquateApprox(1e-2, 1e-2)); diff != "" {
		t.Errorf("scores (-alone +in the batch):\n%s", diff)
	}
	worst := 0.0
	for i := range alone {
		for j := range alone[i] {
			if j < len(served[i]) {
				worst = max(worst, math.Abs(float64(alone[i][j]-served[i][j])))
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("64 requests in batches of %v; largest difference from alone %.2g", rows, worst)
	// The first batch is what had queued when the Batcher took it (one
	// request, or more on a loaded machine); the rest all queued while it
	// was held, so they run as one batch.
	if len(rows) > 2 || sum(rows) != n {
		t.Errorf("64 requests ran in batches of %v, want at most two: what had queued when the first was taken, then all the others", rows)
	}
}

// TestLoadCheckpointWithoutMetadata: a file of parameters alone (a
// PyTorch state_dict under this module's names, say) is served when the
// options give the model, the dataset and the width.
func TestLoadCheckpointWithoutMetadata(t *testing.T) {
	cfg := smallConfig()
	path, orig := writeCheckpoint(t, cfg, 8, nil)
	m, err := LoadCheckpoint(path, CheckpointOptions{Model: "adamnode", Dataset: "fashion-mnist", NHid: 4, Tol: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	x := tensor.RandU[float32](rand.New(rand.NewPCG(6, 6)), 0, 1, 1, 1, 28, 28)
	tp := autograd.NewTape(tensor.EngineFor[float32](tensor.Default()))
	tp.SetNoGrad(true)
	want, err := orig.Forward(tp, tp.Const(x))
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Predictor.Predict(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{"adamnode", want.Value().ReadData()}, []any{m.Name, got.ReadData()}, cmpopts.EquateApprox(1e-5, 1e-6)); diff != "" {
		t.Errorf("name and scores (-saved model +served):\n%s", diff)
	}
	if _, err := LoadCheckpoint(path, CheckpointOptions{Model: "adamnode", Dataset: "mnist", NHid: 5}); err == nil || !strings.Contains(err.Error(), "shape") {
		t.Errorf("another width: %v, want an error naming the tensor's shape", err)
	}
}

// predictorFunc is a function as a Predictor.
type predictorFunc[T tensor.Float] func(context.Context, *tensor.Tensor[T]) (*tensor.Tensor[T], error)

func (f predictorFunc[T]) Predict(ctx context.Context, x *tensor.Tensor[T]) (*tensor.Tensor[T], error) {
	return f(ctx, x)
}
