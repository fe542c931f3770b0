//go:build mpi

package distributed_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/adamnode/adamnode/distributed"
)

// mpirun runs this test binary's test named test on np ranks (with
// ADAMNODE_MPI_CHILD=1) under mpirun on this machine, and returns its
// output; it fails the test if the run fails or takes over a minute.
func mpirun(t *testing.T, np int, test string, env ...string) string {
	t.Helper()
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Fatalf("mpirun not found (install openmpi-bin): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "mpirun", "--oversubscribe", "-np", strconv.Itoa(np), os.Args[0], "-test.run", "^"+test+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "ADAMNODE_MPI_CHILD=1", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_btl=self,tcp,vader", "OMPI_MCA_rmaps_base_oversubscribe=1")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("mpirun -np %d %s: still running after a minute (a hang):\n%s", np, test, out)
	}
	if err != nil {
		t.Fatalf("mpirun -np %d %s: %v\n%s", np, test, err, out)
	}
	return string(out)
}

// TestMPICollectives runs TestMPIChild on 1, 2 and 3 ranks.
func TestMPICollectives(t *testing.T) {
	if os.Getenv("ADAMNODE_MPI_CHILD") != "" {
		t.Skip("a rank")
	}
	for _, np := range []int{1, 2, 3} {
		mpirun(t, np, "TestMPIChild")
	}
}

// TestMPIChild is one rank of TestMPICollectives: all-reduce, broadcast
// and barrier over MPI give the sums and root's values.
func TestMPIChild(t *testing.T) {
	if os.Getenv("ADAMNODE_MPI_CHILD") == "" {
		t.Skip("run by TestMPICollectives under mpirun")
	}
	c, err := distributed.Init()
	if err != nil {
		t.Fatal(err)
	}
	n, r := c.Size(), float64(c.Rank())
	for round := range 50 {
		buf := []float64{r, float64(round), 0.5}
		if err := c.AllReduce(buf); err != nil {
			c.Abort(1)
			t.Fatal(err)
		}
		if buf[0] != float64(n*(n-1)/2) || buf[1] != float64(n*round) || buf[2] != 0.5*float64(n) {
			c.Abort(1)
			t.Fatalf("rank %g of %d, round %d: all-reduce gave %v", r, n, round, buf)
		}
		root := round % n
		b := []float64{r * 10, float64(round)}
		if err := c.Broadcast(b, root); err != nil {
			c.Abort(1)
			t.Fatal(err)
		}
		if b[0] != float64(root*10) || b[1] != float64(round) {
			c.Abort(1)
			t.Fatalf("rank %g of %d, round %d: broadcast from %d gave %v", r, n, round, root, b)
		}
		if err := c.Barrier(); err != nil {
			c.Abort(1)
			t.Fatal(err)
		}
	}
	if err := c.Finalize(); err != nil {
		t.Fatal(err)
	}
}
