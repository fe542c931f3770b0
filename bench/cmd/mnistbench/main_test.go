package main

import (
	"os"
	"path/filepath"
	"testing"

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
	if err := run(tensor.Default(), 1, odeblock.Adjoint{}, "adjoint", weights, 1, 1, 1, 2); err != nil {
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
