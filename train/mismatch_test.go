package train_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/train"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// shaped is a model given by its parameters' names and shapes, trained
// to zero by the sum of their squares, on batches of nothing.
func shaped(spec ...any) *train.Sampled[float64, struct{}] {
	var ps []*autograd.Param[float64]
	for i := 0; i < len(spec); i += 2 {
		ps = append(ps, autograd.NewParam(spec[i].(string), tensor.Full(0.5, spec[i+1].([]int)...)))
	}
	return &train.Sampled[float64, struct{}]{
		Parameters: ps,
		PerEpoch:   2,
		Sample:     func(*rand.Rand) (struct{}, error) { return struct{}{}, nil },
		Objective: func(tp *autograd.Tape[float64], _ struct{}) (train.Loss[float64], error) {
			var l autograd.Var[float64]
			for i, p := range ps {
				v := tp.Param(p)
				if s := autograd.Sum(autograd.Mul(v, v)); i == 0 {
					l = s
				} else {
					l = autograd.Add(l, s)
				}
			}
			return train.Loss[float64]{Value: l, N: 1}, nil
		},
	}
}

// TestResumeOtherModelMismatch: resuming the checkpoint of another model
// (of the same name) is a *MismatchError naming the first parameter that
// differs, its shape in the checkpoint and in the model, and the counts of
// parameters — whether a shape differs, the checkpoint has more or fewer,
// or others — before anything loads; the model's own checkpoint resumes.
func TestResumeOtherModelMismatch(t *testing.T) {
	w23, b3 := []int{2, 3}, []int{3}
	mine := []any{"w", w23, "b", b3}
	for _, c := range []struct {
		name  string
		other []any
		want  train.MismatchError
		says  []string
	}{
		{"another shape", []any{"w", []int{2, 4}, "b", b3},
			train.MismatchError{Param: "w", CheckpointShape: []int{2, 4}, ModelShape: w23, CheckpointParams: 2, ModelParams: 2},
			[]string{`parameter "w" has shape [2 4] in it, [2 3] in the model`}},
		{"more", []any{"w", w23, "b", b3, "w2", []int{5}},
			train.MismatchError{Param: "w2", CheckpointShape: []int{5}, CheckpointParams: 3, ModelParams: 2},
			[]string{"it holds 3 parameters, the model has 2", `its parameter "w2" [5] is not the model's`}},
		{"fewer", []any{"w", w23},
			train.MismatchError{Param: "b", ModelShape: b3, CheckpointParams: 1, ModelParams: 2},
			[]string{"it holds 1 parameter, the model has 2", `the model's parameter "b" [3] is not in it`}},
		{"others", []any{"w", w23, "c", b3},
			train.MismatchError{Param: "b", ModelShape: b3, CheckpointParams: 2, ModelParams: 2},
			[]string{`the model's parameter "b" [3] is not in it (its first tensor the model lacks is "c" [3])`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := train.Config{Name: "m", Dir: dir, Epochs: 1, Quiet: true}
			other := shaped(c.other...)
			if _, err := train.Fit(context.Background(), cfg, other, optim.NewAdam(other.Params(), optim.AdamDefaults())); err != nil {
				t.Fatal(err)
			}
			cfg.Epochs, cfg.Resume = 2, true
			task := shaped(mine...)
			_, err := train.Fit(context.Background(), cfg, task, optim.NewAdam(task.Params(), optim.AdamDefaults()))
			var me *train.MismatchError
			if !errors.As(err, &me) {
				t.Fatalf("resuming another model's checkpoint: %v, want a *MismatchError", err)
			}
			if diff := cmp.Diff(&c.want, me, cmpopts.IgnoreFields(train.MismatchError{}, "Msg")); diff != "" {
				t.Errorf("the error (-want +got):\n%s", diff)
			}
			says := append([]string{"cannot resume " + filepath.Join(dir, "m.safetensors"), "another model"}, c.says...)
			for _, s := range says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q does not say %q", err, s)
				}
			}
			for _, p := range task.Params() {
				for _, v := range p.Value.Data() {
					if v != 0.5 {
						t.Fatalf("parameter %q loaded: %v", p.Name, p.Value.Data())
					}
				}
			}
		})
	}
	// The model's own checkpoint resumes.
	dir := t.TempDir()
	cfg := train.Config{Name: "m", Dir: dir, Epochs: 1, Quiet: true}
	task := shaped(mine...)
	if _, err := train.Fit(context.Background(), cfg, task, optim.NewAdam(task.Params(), optim.AdamDefaults())); err != nil {
		t.Fatal(err)
	}
	cfg.Epochs, cfg.Resume = 2, true
	task = shaped("b", b3, "w", w23) // in another order: by name
	if res, err := train.Fit(context.Background(), cfg, task, optim.NewAdam(task.Params(), optim.AdamDefaults())); err != nil || len(res.Rows) != 2 {
		t.Errorf("resuming the model's own checkpoint: %v", err)
	}
}
