package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/adamnode/adamnode/bench/mnistnode"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// TestRun runs one warm-up and one timed step of two replicas with both
// profiles and the weights file, and checks the files are written.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("trains the MNIST model")
	}
	dir := t.TempDir()
	cpuProfile, memProfile = filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof")
	defer func() { cpuProfile, memProfile = "", "" }()
	weights := filepath.Join(dir, "w.safetensors")
	if err := run(tensor.Default(), 1, odeblock.Adjoint{}, "adjoint", weights, 1, 1, 1, 32, 2); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{cpuProfile, memProfile, weights} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestProfileErrors: a profile that cannot be created is an error.
func TestProfileErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "no", "such", "dir", "p.prof")
	if err := writeHeapProfile(bad); err == nil {
		t.Error("writeHeapProfile into a missing directory")
	}
	stop, err := startCPUProfile(bad)
	stop()
	if err == nil {
		t.Error("startCPUProfile into a missing directory")
	}
}

// TestBatch: -batch n over k replicas gives each its share of
// mnistnode.Batch(seed, n), in order; a batch that does not split is
// refused.
func TestBatch(t *testing.T) {
	for _, c := range []struct{ n, k int }{{8, 1}, {8, 2}, {6, 3}, {1, 1}} {
		reps, err := newReplicas(tensor.Default(), 3, odeblock.Adjoint{}, "", 1, c.n, c.k)
		if err != nil {
			t.Fatal(err)
		}
		x, labels := mnistnode.Batch(3, c.n)
		var gotX []float32
		var gotLabels []int
		for _, r := range reps {
			if s := r.x.Shape(); s[0] != c.n/c.k || len(r.labels) != c.n/c.k {
				t.Errorf("batch %d over %d: a replica's images %v and %d labels", c.n, c.k, s, len(r.labels))
			}
			gotX = append(gotX, r.x.Data()...)
			gotLabels = append(gotLabels, r.labels...)
			r.tp.Release()
		}
		if !slices.Equal(gotX, x.Data()) || !slices.Equal(gotLabels, labels) {
			t.Errorf("batch %d over %d: the replicas' shares are not mnistnode.Batch's", c.n, c.k)
		}
	}
	for _, c := range []struct{ n, k int }{{0, 1}, {-32, 1}, {32, 0}, {32, 3}, {256, 5}} {
		if err := checkBatch(c.n, c.k); err == nil {
			t.Errorf("checkBatch(%d, %d): no error", c.n, c.k)
		}
	}
	for _, c := range []struct{ n, k int }{{32, 1}, {32, 2}, {256, 4}, {1, 1}} {
		if err := checkBatch(c.n, c.k); err != nil {
			t.Errorf("checkBatch(%d, %d): %v", c.n, c.k, err)
		}
	}
}
