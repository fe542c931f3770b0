//go:build mpi

package distributed_test

import (
	"flag"
	"github.com/adamnode/adamnode/internal/mpitest"
	"os"
	"strconv"
	"testing"

	"github.com/adamnode/adamnode/distributed"
)

// TestMain finalises MPI if a test or benchmark initialised it: a rank
// that exits without finalising is an error to mpirun.
// Benchmarking under mpirun, only rank 0 prints.
func TestMain(m *testing.M) {
	flag.Parse()
	if r := os.Getenv("OMPI_COMM_WORLD_RANK"); r != "" && r != "0" && flag.Lookup("test.bench").Value.String() != "" {
		if null, err := os.Open(os.DevNull); err == nil {
			os.Stdout = null
		}
	}
	code := m.Run()
	if world != nil {
		if err := world.Finalize(); err != nil && code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// world is MPI's world once a test or benchmark initialised it.
var world *distributed.Comm

// initMPI initialises MPI (once) and returns the world.
func initMPI(tb testing.TB) *distributed.Comm {
	tb.Helper()
	if world == nil {
		c, err := distributed.Init()
		if err != nil {
			tb.Fatal(err)
		}
		world = c
	}
	return world
}

// TestMPICollectives runs TestMPIChild on 1, 2 and 3 ranks.
func TestMPICollectives(t *testing.T) {
	if os.Getenv("ADAMNODE_MPI_CHILD") != "" {
		t.Skip("a rank")
	}
	for _, np := range []int{1, 2, 3} {
		mpitest.Run(t, np, "TestMPIChild", "ADAMNODE_MPI_CHILD=1")
	}
}

// TestMPIChild is one rank of TestMPICollectives: all-reduce, broadcast
// and barrier over MPI give the sums and root's values.
func TestMPIChild(t *testing.T) {
	if os.Getenv("ADAMNODE_MPI_CHILD") == "" {
		t.Skip("run by TestMPICollectives under mpirun")
	}
	c := initMPI(t)
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
		f := []float32{float32(r) + 0.5, 1}
		if err := c.AllReduceFloat32(f); err != nil {
			c.Abort(1)
			t.Fatal(err)
		}
		if f[0] != float32(n*(n-1)/2)+0.5*float32(n) || f[1] != float32(n) {
			c.Abort(1)
			t.Fatalf("rank %g of %d, round %d: float32 all-reduce gave %v", r, n, round, f)
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
}

// BenchmarkAllReduce times MPI_Allreduce of float64 buffers of a model's
// size on every rank. Run it on several ranks with a fixed count, so that
// every rank runs as many (bench/mpi_scaling.sh does):
//
//	go test -c -tags mpi -o allreduce.test ./distributed
//	mpirun -np 2 ./allreduce.test -test.run '^$' -test.bench AllReduce -test.benchtime 200x
func BenchmarkAllReduce(b *testing.B) {
	c := initMPI(b)
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			buf := make([]float64, n)
			if err := c.Barrier(); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(8 * n))
			b.ResetTimer()
			for range b.N {
				if err := c.AllReduce(buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
