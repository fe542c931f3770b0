//go:build !mpi

package main

import (
	"os"
	"strings"
	"testing"
)

// TestDistributedNeedsMPI: without the tag mpi, train --distributed is a
// usage error saying how to build with MPI, and creates nothing.
func TestDistributedNeedsMPI(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()+"/out"
	writeIDX(t, dir, 16, 8)
	code, _, stderr := runCmd(append([]string{"train", "--distributed"}, tinyArgs(dir, out)...)...)
	if code != 2 || !strings.Contains(stderr, "-tags mpi") {
		t.Fatalf("exit %d, stderr %q: want 2 and a message naming -tags mpi", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("--out %s exists after the usage error", out)
	}
}
