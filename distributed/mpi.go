//go:build mpi

package distributed

/*
#cgo pkg-config: ompi
#include <mpi.h>
#include <stdlib.h>

static int adn_init(void) {
	int inited = 0;
	MPI_Initialized(&inited);
	if (inited) return MPI_SUCCESS;
	return MPI_Init(NULL, NULL);
}
static int adn_rank(int *r) { return MPI_Comm_rank(MPI_COMM_WORLD, r); }
static int adn_size(int *s) { return MPI_Comm_size(MPI_COMM_WORLD, s); }
static int adn_allreduce(double *buf, int n) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
static int adn_allreduce_f32(float *buf, int n) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}
static int adn_bcast(double *buf, int n, int root) { return MPI_Bcast(buf, n, MPI_DOUBLE, root, MPI_COMM_WORLD); }
static int adn_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }
static int adn_abort(int code) { return MPI_Abort(MPI_COMM_WORLD, code); }
static int adn_finalize(void) {
	int inited = 0, done = 0;
	MPI_Initialized(&inited);
	MPI_Finalized(&done);
	if (!inited || done) return MPI_SUCCESS;
	return MPI_Finalize();
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Comm is MPI_COMM_WORLD of an initialised MPI.
type Comm struct{ rank, size int }

// Init initialises MPI (once per process) and returns the world.
func Init() (*Comm, error) {
	if rc := C.adn_init(); rc != C.MPI_SUCCESS {
		return nil, fmt.Errorf("distributed: MPI_Init: error %d", int(rc))
	}
	var r, s C.int
	if rc := C.adn_rank(&r); rc != C.MPI_SUCCESS {
		return nil, fmt.Errorf("distributed: MPI_Comm_rank: error %d", int(rc))
	}
	if rc := C.adn_size(&s); rc != C.MPI_SUCCESS {
		return nil, fmt.Errorf("distributed: MPI_Comm_size: error %d", int(rc))
	}
	return &Comm{rank: int(r), size: int(s)}, nil
}

// Rank returns this process's rank, from 0.
func (c *Comm) Rank() int { return c.rank }

// Size returns the number of processes.
func (c *Comm) Size() int { return c.size }

// AllReduce replaces buf with the elementwise sum of every rank's buf.
func (c *Comm) AllReduce(buf []float64) error {
	if len(buf) == 0 {
		return nil
	}
	if rc := C.adn_allreduce((*C.double)(unsafe.Pointer(&buf[0])), C.int(len(buf))); rc != C.MPI_SUCCESS {
		return fmt.Errorf("distributed: MPI_Allreduce of %d numbers: error %d", len(buf), int(rc))
	}
	return nil
}

// AllReduceFloat32 replaces buf with the elementwise sum, in float32, of
// every rank's buf: half the traffic of AllReduce.
func (c *Comm) AllReduceFloat32(buf []float32) error {
	if len(buf) == 0 {
		return nil
	}
	if rc := C.adn_allreduce_f32((*C.float)(unsafe.Pointer(&buf[0])), C.int(len(buf))); rc != C.MPI_SUCCESS {
		return fmt.Errorf("distributed: MPI_Allreduce of %d float32: error %d", len(buf), int(rc))
	}
	return nil
}

// Broadcast replaces buf on every rank with root's.
func (c *Comm) Broadcast(buf []float64, root int) error {
	if len(buf) == 0 {
		return nil
	}
	if rc := C.adn_bcast((*C.double)(unsafe.Pointer(&buf[0])), C.int(len(buf)), C.int(root)); rc != C.MPI_SUCCESS {
		return fmt.Errorf("distributed: MPI_Bcast of %d numbers: error %d", len(buf), int(rc))
	}
	return nil
}

// Barrier waits for every rank.
func (c *Comm) Barrier() error {
	if rc := C.adn_barrier(); rc != C.MPI_SUCCESS {
		return fmt.Errorf("distributed: MPI_Barrier: error %d", int(rc))
	}
	return nil
}

// Abort ends every rank with code (for a failure the others cannot learn
// of through a collective call).
func (c *Comm) Abort(code int) { C.adn_abort(C.int(code)) }

// Finalize shuts MPI down, after the last collective call; later calls do
// nothing.
func (c *Comm) Finalize() error {
	if rc := C.adn_finalize(); rc != C.MPI_SUCCESS {
		return fmt.Errorf("distributed: MPI_Finalize: error %d", int(rc))
	}
	return nil
}
