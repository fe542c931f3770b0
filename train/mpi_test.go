//go:build mpi

package train_test

import (
	"context"
	"encoding/json"
	"github.com/adamnode/adamnode/internal/mpitest"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/adamnode/adamnode/distributed"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/train"
)

// mpirun runs TestMPIRank on np ranks with ADAMNODE_MPI_CASE=which, each
// rank writing its result into dir.
func mpirun(t *testing.T, np int, which, dir string) {
	t.Helper()
	mpitest.Run(t, np, "TestMPIRank", "ADAMNODE_MPI_CASE="+which, "ADAMNODE_MPI_DIR="+dir)
}

// mpiResult is what a rank of TestMPIRank writes.
type mpiResult struct {
	Params []float64
	Rows   []train.Row
	Err    string
}

// TestMPIRank is one rank of the MPI tests below (run by them under
// mpirun): it trains newODENet(5) for three epochs on its shard of a
// global batch of 32 and writes its parameters, rows and error to
// ADAMNODE_MPI_DIR/rankN.json. In the case "fail" rank 1's solve fails
// at its fourth step; in "epochs" rank 1 is given two epochs, in "lr" a
// learning rate of 1e-2.
func TestMPIRank(t *testing.T) {
	which, dir := os.Getenv("ADAMNODE_MPI_CASE"), os.Getenv("ADAMNODE_MPI_DIR")
	if which == "" {
		t.Skip("run by TestMPIMatchesOneProcess and TestMPIFailure under mpirun")
	}
	c, err := distributed.Init()
	if err != nil {
		t.Fatal(err)
	}
	tr, te := shardedLoaders(t, c.Rank(), c.Size())
	m := newODENet(5)
	if which == "fail" && c.Rank() == 1 {
		m.failAt = 4
	}
	cfg := train.Config{Name: "ode", Epochs: 3, Quiet: true, Clip: 1, Distributed: c}
	adam := optim.AdamDefaults()
	switch {
	case which == "epochs" && c.Rank() == 1:
		cfg.Epochs = 2
	case which == "lr" && c.Rank() == 1:
		adam.LR = 1e-2
	}
	opt := optim.NewAdam(m.Params(), adam)
	res, err := train.Run[float64](context.Background(), cfg, m, opt, tr, te)
	var out mpiResult
	if err != nil {
		out.Err = err.Error()
	}
	for _, p := range m.Params() {
		out.Params = append(out.Params, p.Value.Data()...)
	}
	for _, row := range res.Rows {
		row.Seconds, row.Elapsed = 0, 0
		out.Rows = append(out.Rows, row)
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rank"+strconv.Itoa(c.Rank())+".json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.Finalize(); err != nil {
		t.Fatal(err)
	}
}

func readRank(t *testing.T, dir string, rank int) mpiResult {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "rank"+strconv.Itoa(rank)+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var r mpiResult
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestMPIMatchesOneProcess: two MPI processes with batch 16 each end
// three epochs of Adam (nine steps) with the parameters and rows of one
// process with batch 32, to 1e-12 (float64).
func TestMPIMatchesOneProcess(t *testing.T) {
	if os.Getenv("ADAMNODE_MPI_CASE") != "" {
		t.Skip("a rank")
	}
	one := runRanks(t, context.Background(), 0, train.Config{Name: "ode", Epochs: 3, Quiet: true, Clip: 1}, nil)[0]
	if one.err != nil {
		t.Fatal(one.err)
	}
	dir := t.TempDir()
	mpirun(t, 2, "equal", dir)
	for rank := range 2 {
		r := readRank(t, dir, rank)
		if r.Err != "" {
			t.Fatalf("rank %d: %s", rank, r.Err)
		}
		for i := range r.Params {
			if d := math.Abs(r.Params[i] - one.params[i]); d > 1e-12 {
				t.Fatalf("rank %d: parameter %d is %.17g, one process %.17g", rank, i, r.Params[i], one.params[i])
			}
		}
		closeRows(t, "rank "+strconv.Itoa(rank), r.Rows, one.rows, 1e-12)
	}
}

// TestMPIFailure: when rank 1's solve fails at its fourth step, both MPI
// processes return from Run at that step — rank 1 with its solve's
// error, rank 0 saying another rank failed — and mpirun ends.
func TestMPIFailure(t *testing.T) {
	if os.Getenv("ADAMNODE_MPI_CASE") != "" {
		t.Skip("a rank")
	}
	dir := t.TempDir()
	mpirun(t, 2, "fail", dir)
	for rank, want := range []string{"another rank", "rank 1: "} {
		r := readRank(t, dir, rank)
		if !strings.Contains(r.Err, "epoch 2, batch 1 of 3") || !strings.Contains(r.Err, want) {
			t.Errorf("rank %d: error %q, want one at epoch 2, batch 1 saying %q", rank, r.Err, want)
		}
		if len(r.Rows) != 2 {
			t.Errorf("rank %d: %d rows, want the first epoch's two", rank, len(r.Rows))
		}
	}
}

// TestMPISettingsMismatch: two MPI processes given a different number of
// epochs, or a different learning rate, both stop before training with
// the same error naming the setting and both values (rather than rank 0
// finishing while rank 1 waits for it forever, or both training a model
// that matches neither).
func TestMPISettingsMismatch(t *testing.T) {
	if os.Getenv("ADAMNODE_MPI_CASE") != "" {
		t.Skip("a rank")
	}
	for _, tc := range []struct{ which, want string }{
		{"epochs", `Config.Epochs is "3" on rank 0 but "2" on rank 1`},
		{"lr", `optimizer adam.lr is "0.001" on rank 0 but "0.01" on rank 1`},
	} {
		t.Run(tc.which, func(t *testing.T) {
			dir := t.TempDir()
			start := time.Now()
			mpirun(t, 2, tc.which, dir)
			if s := time.Since(start); s > time.Minute {
				t.Errorf("mpirun took %v to report the mismatch", s)
			}
			for rank := range 2 {
				r := readRank(t, dir, rank)
				if !strings.Contains(r.Err, tc.want) {
					t.Errorf("rank %d: error %q, want one saying %q", rank, r.Err, tc.want)
				}
				if len(r.Rows) != 0 {
					t.Errorf("rank %d: %d rows, want none: no training", rank, len(r.Rows))
				}
			}
		})
	}
}
