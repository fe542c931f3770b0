// Package mpitest runs a test binary's own test under mpirun, for the
// tests of the MPI build (build tag mpi) in several packages.
package mpitest

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// Run runs the test named test of this test binary on np ranks under
// mpirun on this machine, with env added to each rank's environment, and
// returns the combined output. It fails t if mpirun is missing, fails, or
// is still running after two minutes (a hang). The Open MPI settings let
// it run as root, oversubscribed, without a shared-memory single-copy
// mechanism (which containers often forbid).
func Run(t *testing.T, np int, test string, env ...string) string {
	t.Helper()
	out, err := RunErr(t, np, test, env...)
	if err != nil {
		t.Fatalf("mpirun -np %d %s %v: %v\n%s", np, test, env, err, out)
	}
	return out
}

// RunErr is Run for ranks that may fail: it returns mpirun's error (an
// *exec.ExitError when a rank exited with a nonzero code) with the
// output, and fails t only if mpirun is missing or hangs.
func RunErr(t *testing.T, np int, test string, env ...string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Fatalf("mpirun not found (install openmpi-bin): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "mpirun", "--oversubscribe", "--bind-to", "none", "-np", strconv.Itoa(np), os.Args[0], "-test.run", "^"+test+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_btl_vader_single_copy_mechanism=none",
		"OMPI_MCA_btl=self,tcp,vader", "OMPI_MCA_rmaps_base_oversubscribe=1")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("mpirun -np %d %s %v: still running after two minutes (a hang):\n%s", np, test, env, out)
	}
	return string(out), err
}
