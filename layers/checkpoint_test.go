package layers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
)

func twoParams[T tensor.Float](fill T) []*autograd.Param[T] {
	return []*autograd.Param[T]{
		autograd.NewParam("f.conv2.weight", tensor.Full[T](fill, 2, 3)),
		autograd.NewParam("fc.bias", tensor.Full[T](fill, 2)),
	}
}

func setGrads[T tensor.Float](ps []*autograd.Param[T], k int) {
	for i, p := range ps {
		for j := range p.Grad.Data() {
			p.Grad.Data()[j] = T(float64((i+1)*(j+1)*(k+2)%7) - 3)
		}
	}
}

// TestCheckpointWithOptimizer saves parameters and Adam's state after two
// steps, loads them into fresh parameters and a fresh Adam, and checks that
// the next step agrees bit for bit.
func TestCheckpointWithOptimizer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ck.safetensors")
	ps := twoParams[float32](0.5)
	opt := optim.NewAdam(ps, optim.AdamConfig{LR: 0.01, Beta1: 0.9, Beta2: 0.99, Eps: 1e-8})
	for k := range 2 {
		setGrads(ps, k)
		opt.Step()
	}
	opt.SetLR(0.003)
	if err := layers.SaveCheckpoint(path, ps, opt, map[string]string{"epoch": "2"}); err != nil {
		t.Fatal(err)
	}

	s, err := layers.ReadSafetensorsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, x := range s.Tensors {
		names = append(names, x.Name)
	}
	want := "f.conv2.weight fc.bias optim.adam.exp_avg.f.conv2.weight optim.adam.exp_avg.fc.bias optim.adam.exp_avg_sq.f.conv2.weight optim.adam.exp_avg_sq.fc.bias"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("tensors %s\nwant    %s", got, want)
	}
	if s.Metadata["optim.adam.step.fc.bias"] != "2" || s.Metadata["optim.adam.lr"] != "0.003" || s.Metadata["epoch"] != "2" {
		t.Errorf("metadata %v", s.Metadata)
	}

	ps2 := twoParams[float32](0)
	opt2 := optim.NewAdam(ps2, optim.AdamConfig{LR: 1, Beta1: 0.9, Beta2: 0.99, Eps: 1e-8})
	meta, err := layers.LoadCheckpoint(path, ps2, opt2)
	if err != nil {
		t.Fatal(err)
	}
	if len(meta) != 1 || meta["epoch"] != "2" {
		t.Errorf("user metadata %v, want only epoch", meta)
	}
	if opt2.LR() != 0.003 {
		t.Errorf("lr %v after load", opt2.LR())
	}
	setGrads(ps, 2)
	setGrads(ps2, 2)
	opt.Step()
	opt2.Step()
	for i := range ps {
		a, b := ps[i].Value.Data(), ps2[i].Value.Data()
		for j := range a {
			if a[j] != b[j] {
				t.Fatalf("%s[%d]: %v after resuming, %v without a break", ps[i].Name, j, b[j], a[j])
			}
		}
	}

	// The parameters alone load from a full checkpoint.
	ps3 := twoParams[float32](0)
	if _, err := layers.LoadParams(path, ps3); err != nil {
		t.Errorf("LoadParams of a checkpoint: %v", err)
	}
}

func TestCheckpointOptimizerMismatch(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "adam.safetensors")
	bare := filepath.Join(dir, "params.safetensors")
	ps := twoParams[float64](1)
	if err := layers.SaveCheckpoint(full, ps, optim.NewAdam(ps, optim.AdamDefaults()), nil); err != nil {
		t.Fatal(err)
	}
	if err := layers.SaveParams(bare, ps, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		opt        layers.Stateful[float64]
		want       string
	}{
		{"other optimizer", full, optim.NewSGD(ps, optim.SGDConfig{LR: 0.1, Momentum: 0.9}), `optimizer state: optim: sgd state: the state is of a "adam" optimizer`},
		{"no optimizer state", bare, optim.NewAdam(ps, optim.AdamDefaults()), `optimizer state: optim: adam state: no "optim.type"`},
		{"adamw from adam", full, optim.NewAdamW(ps, optim.AdamWDefaults()), `"adam" optimizer`},
	} {
		for _, p := range ps {
			p.Value.Fill(9)
		}
		_, err := layers.LoadCheckpoint(tc.path, ps, tc.opt)
		if err == nil || !strings.HasPrefix(err.Error(), "layers: "+tc.path+": ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want the file and %q", tc.name, err, tc.want)
		}
		if ps[0].Value.Data()[0] != 9 {
			t.Errorf("%s: a failed load changed the parameters", tc.name)
		}
	}
	// A float64 file's parameters and optimizer state load into float32,
	// rounded — unless narrowing is refused.
	p32 := twoParams[float32](1)
	if _, err := layers.LoadCheckpoint(full, p32, optim.NewAdam(p32, optim.AdamDefaults())); err != nil {
		t.Errorf("float64 into float32: %v", err)
	}
	_, err := layers.LoadCheckpointWith(full, p32, optim.NewAdam(p32, optim.AdamDefaults()), layers.LoadOptions{NoNarrowing: true})
	if err == nil || !strings.Contains(err.Error(), "dtype F64 in the file is wider than the parameter's F32") {
		t.Errorf("float64 into float32 with NoNarrowing: error %v", err)
	}
}

// TestRemoveTemporaries removes the leftovers of interrupted atomic writes
// of one path, even when its name holds glob characters, and nothing else.
func TestRemoveTemporaries(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run[1]*.safetensors")
	stale := []string{".run[1]*.safetensors.tmp-1", ".run[1]*.safetensors.tmp-abc"}
	keep := []string{".run1x.safetensors.tmp-1", ".other.safetensors.tmp-2", "run[1]*.safetensors"}
	for _, n := range append(append([]string{}, stale...), keep...) {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := layers.RemoveTemporaries(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != len(stale) {
		t.Errorf("removed %v, want %v", removed, stale)
	}
	for _, n := range stale {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			t.Errorf("%s is still there", n)
		}
	}
	for _, n := range keep {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s was removed", n)
		}
	}
}
