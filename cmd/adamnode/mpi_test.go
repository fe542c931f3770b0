//go:build mpi

package main

import (
	"github.com/adamnode/adamnode/internal/mpitest"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMPICommandRank is one rank of TestMPITrain: it runs the command line
// in ADAMNODE_MPI_ARGS (or, if set, in ADAMNODE_MPI_ARGS_N on rank N) and
// exits with its code.
func TestMPICommandRank(t *testing.T) {
	args := os.Getenv("ADAMNODE_MPI_ARGS")
	if args == "" {
		t.Skip("run by TestMPITrain under mpirun")
	}
	if mine := os.Getenv("ADAMNODE_MPI_ARGS_" + os.Getenv("OMPI_COMM_WORLD_RANK")); mine != "" {
		args = mine
	}
	os.Exit(run(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
}

// mpirunCommand runs the command line args on np ranks under mpirun and
// returns its output; it fails the test if mpirun fails or hangs.
func mpirunCommand(t *testing.T, np int, args ...string) string {
	t.Helper()
	return mpitest.Run(t, np, "TestMPICommandRank", "ADAMNODE_MPI_ARGS="+strings.Join(args, "\x1f"))
}

// TestMPITrain: mpirun -np 2 adamnode train --distributed trains as one
// process does (its CSV's losses within float32 and solver tolerance),
// rank 0 alone reports, and --resume continues a distributed run.
func TestMPITrain(t *testing.T) {
	if os.Getenv("ADAMNODE_MPI_ARGS") != "" {
		t.Skip("a rank")
	}
	dir, one, two := t.TempDir(), t.TempDir(), t.TempDir()
	writeIDX(t, dir, 48, 16)
	args := func(out string, extra ...string) []string {
		return append([]string{"train", "--model", "node", "--subset", "48", "--test-subset", "16", "--batch", "16", "--test-batch", "8",
			"--dataset", "mnist", "--data", dir, "--out", out, "--nhid", "4", "--lr", "1e-3", "--quiet"}, extra...)
	}
	if code, _, stderr := runCmd(args(one, "--epochs", "2")...); code != 0 {
		t.Fatalf("one process: exit %d: %s", code, stderr)
	}
	out := mpirunCommand(t, 2, args(two, "--epochs", "1", "--distributed")...)
	if n := strings.Count(out, "wrote "); n != 1 {
		t.Errorf("%d ranks reported the files they wrote, want rank 0 only:\n%s", n, out)
	}
	mpirunCommand(t, 2, args(two, "--epochs", "2", "--distributed", "--resume")...)
	want, got := readCSV(t, filepath.Join(one, "node.csv")), readCSV(t, filepath.Join(two, "node.csv"))
	if len(got) != len(want) {
		t.Fatalf("%d CSV lines on 2 ranks, %d in one process", len(got), len(want))
	}
	for i := 1; i < len(want); i++ {
		for _, col := range []int{3, 4} { // loss, accuracy
			g, _ := strconv.ParseFloat(got[i][col], 64)
			w, _ := strconv.ParseFloat(want[i][col], 64)
			if math.Abs(g-w) > 1e-4*(1+math.Abs(w)) {
				t.Errorf("row %d column %d: %g on 2 ranks, %g in one process", i, col, g, w)
			}
		}
	}
}

// TestMPISettingsMismatch: mpirun -np 2 adamnode train --distributed with
// another --epochs, --lr, --seed or --clip on rank 1 fails on both ranks
// within seconds with a usage error (exit code 2) naming the flag and both
// values, instead of rank 1 waiting forever or both training a model that
// matches neither rank's flags.
func TestMPISettingsMismatch(t *testing.T) {
	if os.Getenv("ADAMNODE_MPI_ARGS") != "" {
		t.Skip("a rank")
	}
	dir, out := t.TempDir(), t.TempDir()
	writeIDX(t, dir, 48, 16)
	args := func(extra ...string) string {
		return strings.Join(append([]string{"train", "--model", "node", "--subset", "48", "--test-subset", "16", "--batch", "16", "--test-batch", "8",
			"--dataset", "mnist", "--data", dir, "--out", out, "--nhid", "4", "--lr", "1e-3", "--epochs", "2", "--quiet", "--distributed"}, extra...), "\x1f")
	}
	for _, tc := range []struct {
		name  string
		rank1 []string // rank 1's flags after rank 0's
		want  string
	}{
		{"epochs", []string{"--epochs", "1"}, `--epochs is "2" on rank 0 but "1" on rank 1`},
		{"lr", []string{"--lr", "1e-2"}, `--lr is "0.001" on rank 0 but "0.01" on rank 1`},
		{"seed", []string{"--seed", "7"}, `--seed is "1" on rank 0 but "7" on rank 1`},
		{"clip", []string{"--clip", "0"}, `--clip is "10" on rank 0 but "0" on rank 1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			got, err := mpitest.RunErr(t, 2, "TestMPICommandRank", "ADAMNODE_MPI_ARGS="+args(), "ADAMNODE_MPI_ARGS_1="+args(tc.rank1...))
			if s := time.Since(start); s > time.Minute {
				t.Errorf("mpirun took %v to stop", s)
			}
			if err == nil {
				t.Fatalf("mpirun succeeded:\n%s", got)
			}
			if n := strings.Count(got, tc.want); n != 2 {
				t.Errorf("%d ranks said %q, want both:\n%s", n, tc.want, got)
			}
			if strings.Contains(got, "wrote ") {
				t.Errorf("a rank trained:\n%s", got)
			}
		})
	}
}
