//go:build !mpi

package distributed

import "errors"

// ErrNoMPI is Init's error in a build without the tag "mpi".
var ErrNoMPI = errors.New("distributed: built without MPI: rebuild with -tags mpi (needs libopenmpi-dev)")

// Comm is MPI_COMM_WORLD; in this build there is none.
type Comm struct{}

// Init returns ErrNoMPI: this build has no MPI.
func Init() (*Comm, error) { return nil, ErrNoMPI }

// Rank returns 0.
func (c *Comm) Rank() int { return 0 }

// Size returns 1.
func (c *Comm) Size() int { return 1 }

// AllReduce does nothing: one process.
func (c *Comm) AllReduce([]float64) error { return nil }

// AllReduceFloat32 does nothing: one process.
func (c *Comm) AllReduceFloat32([]float32) error { return nil }

// Broadcast does nothing: one process.
func (c *Comm) Broadcast([]float64, int) error { return nil }

// Barrier does nothing.
func (c *Comm) Barrier() error { return nil }

// Abort does nothing.
func (c *Comm) Abort(int) {}

// Finalize does nothing.
func (c *Comm) Finalize() error { return nil }
