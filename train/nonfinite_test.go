package train_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/train"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// poisoned is the regression of task_test.go whose step number at (from
// 1, counted over the run's steps) has a finite loss but a gradient of
// parameter which (0 weight, 1 bias) whose element 0 is bad: what an op
// with an infinite derivative at a finite value does (√x at 0).
func poisoned(seed uint64, shard, shards int, at int64, which int, bad float64) (*train.Sampled[float64, points], *atomic.Int64) {
	task, fc := regression(seed, shard, shards)
	var steps atomic.Int64
	objective := task.Objective
	task.Objective = func(tp *autograd.Tape[float64], b points) (train.Loss[float64], error) {
		l, err := objective(tp, b)
		if err != nil || steps.Add(1) != at {
			return l, err
		}
		p := fc.Params()[which]
		zero := tensor.New[float64](l.Value.Shape()...)
		poison := autograd.Custom("poison", zero, func(*tensor.Tensor[float64]) ([]*tensor.Tensor[float64], error) {
			p.Grad.Data()[0] = bad // adds into Param.Grad itself (autograd.Custom)
			return []*tensor.Tensor[float64]{nil}, nil
		}, l.Value)
		l.Value = autograd.Add(l.Value, poison)
		return l, nil
	}
	return task, &steps
}

// TestFitNonFiniteGradient: a step whose loss is finite but whose gradient
// has a NaN or an infinity (at the last batch of the second epoch, with
// and without clipping) is an error naming the parameter, the element, the
// epoch and the batch; nothing is stepped (the parameters are those after
// the batch before) and nothing is written (the first epoch's checkpoint
// and CSV are as they were), and a resumed run goes on from them.
func TestFitNonFiniteGradient(t *testing.T) {
	for _, c := range []struct {
		name  string
		clip  float64
		which int
		bad   float64
		param string
	}{
		{"NaN weight", 0, 0, math.NaN(), "weight"},
		{"Inf bias, clipped", 1, 1, math.Inf(1), "bias"},
		{"-Inf weight, clipped", 1, 0, math.Inf(-1), "weight"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			task, _ := poisoned(5, 0, 1, 10, c.which, c.bad)
			var before [][]float64
			var files map[string][]byte
			cfg := train.Config{Name: "line", Dir: dir, Epochs: 2, Quiet: true, Clip: c.clip,
				OnBatch: func(epoch, batches int) {
					if epoch == 1 && batches == 4 {
						before = paramValues(task.Params())
					}
				},
				OnEpoch: func(tr, _ train.Row) error {
					files = readFiles(t, dir)
					return nil
				}}
			opt := optim.NewAdam(task.Params(), optim.AdamDefaults())
			_, err := train.Fit(context.Background(), cfg, task, opt)
			var nf *train.NonFiniteError
			if !errors.As(err, &nf) || !errors.Is(err, optim.ErrNonFinite) {
				t.Fatalf("Fit: %v, want a *NonFiniteError wrapping optim.ErrNonFinite", err)
			}
			want := &train.NonFiniteError{Param: c.param, Index: 0, Value: c.bad, Norm: math.Abs(c.bad)}
			if diff := cmp.Diff(want, nf, cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("the error (-want +got):\n%s", diff)
			}
			for _, s := range []string{"train line: epoch 2, batch 5 of 5", `parameter "` + c.param + `"`, "no step taken"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q does not say %q", err, s)
				}
			}
			if diff := cmp.Diff(before, paramValues(task.Params())); diff != "" {
				t.Errorf("the parameters changed at the refused step (-before +after):\n%s", diff)
			}
			for _, p := range task.Params() {
				if p.Grad != nil && slicesNonZero(p.Grad.Data()) {
					t.Errorf("parameter %q keeps the refused step's gradient %v", p.Name, p.Grad.Data())
				}
			}
			if diff := cmp.Diff(files, readFiles(t, dir)); diff != "" {
				t.Errorf("the files after the refused step differ from the first epoch's (-before +after):\n%s", diff)
			}
			// The checkpoint is the first epoch's, good to resume from.
			cfg.Resume, cfg.OnBatch, cfg.OnEpoch = true, nil, nil
			task2, _ := poisoned(5, 0, 1, 0, 0, 0)
			res, err := train.Fit(context.Background(), cfg, task2, optim.NewAdam(task2.Params(), optim.AdamDefaults()))
			if err != nil || len(res.Rows) != 2 {
				t.Fatalf("resuming after the refused step: %v", err)
			}
		})
	}
}

// TestFitSkipNonFinite: with Config.SkipNonFinite the step of a gradient
// that is not finite is skipped (the parameters stay as they were, the
// optimizer takes no step), logged, reported to OnStep and counted, and
// the run goes on; with replicas, every replica skips it alike.
func TestFitSkipNonFinite(t *testing.T) {
	for _, replicas := range []int{1, 2} {
		var log strings.Builder
		var skipped []int
		var before, after [][]float64
		var tasks [2]*train.Sampled[float64, points]
		cfg := train.Config{Name: "line", Epochs: 2, Quiet: true, Log: &log, SkipNonFinite: true,
			OnStep: func(epoch, batches int, s train.Step) {
				if s.Skipped {
					skipped = append(skipped, 5*epoch+batches)
				}
				switch 5*epoch + batches {
				case 6:
					before = paramValues(tasks[0].Params())
				case 7:
					after = paramValues(tasks[0].Params())
				}
			}}
		res, err := train.FitReplicas(context.Background(), cfg, replicas, func(i int) (train.Task[float64, points], optim.Optimizer[float64], error) {
			at := int64(7) // the second epoch's second step, on the last replica only
			if i != replicas-1 {
				at = 0
			}
			task, _ := poisoned(5, i, replicas, at, 0, math.NaN())
			tasks[i] = task
			return task, optim.NewAdam(task.Params(), optim.AdamDefaults()), nil
		})
		if err != nil {
			t.Fatalf("%d replicas: %v", replicas, err)
		}
		if diff := cmp.Diff([]int{7}, skipped); diff != "" {
			t.Errorf("%d replicas: the steps reported skipped (-want +got):\n%s", replicas, diff)
		}
		if res.Skipped != 1 || len(res.Rows) != 2 {
			t.Errorf("%d replicas: Result.Skipped %d, %d rows; want 1 and 2", replicas, res.Skipped, len(res.Rows))
		}
		if diff := cmp.Diff(before, after); diff != "" {
			t.Errorf("%d replicas: the skipped step changed the parameters (-before +after):\n%s", replicas, diff)
		}
		if want := "line: epoch 2, batch 2 of 5: step skipped (Config.SkipNonFinite): the gradient of parameter \"weight\""; !strings.Contains(log.String(), want) {
			t.Errorf("%d replicas: the log does not say %q:\n%s", replicas, want, log.String())
		}
		for _, ps := range paramValues(tasks[0].Params()) {
			for _, v := range ps {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%d replicas: parameters %v after the run", replicas, paramValues(tasks[0].Params()))
				}
			}
		}
	}
}

// TestFitNonFiniteGradientReplicas: replicas whose averaged gradient is
// not finite (one replica's is) all stop at that step with the error,
// none left waiting.
func TestFitNonFiniteGradientReplicas(t *testing.T) {
	_, err := train.FitReplicas(context.Background(), train.Config{Name: "line", Epochs: 1, Quiet: true}, 2,
		func(i int) (train.Task[float64, points], optim.Optimizer[float64], error) {
			task, _ := poisoned(5, i, 2, int64(3*i), 1, math.Inf(-1)) // replica 1's third step
			return task, optim.NewAdam(task.Params(), optim.AdamDefaults()), nil
		})
	var nf *train.NonFiniteError
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), "epoch 1, batch 3 of 5") {
		t.Fatalf("FitReplicas: %v, want a *NonFiniteError at epoch 1, batch 3", err)
	}
	want := &train.NonFiniteError{Param: "bias", Value: math.Inf(-1), Norm: math.Inf(1)}
	if diff := cmp.Diff(want, nf); diff != "" {
		t.Errorf("the error (-want +got):\n%s", diff)
	}
}

// readFiles returns the contents of the files in dir by name.
func readFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// slicesNonZero reports whether some element of x is not 0.
func slicesNonZero(x []float64) bool {
	for _, v := range x {
		if v != 0 {
			return true
		}
	}
	return false
}
