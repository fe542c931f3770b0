// Package distributed is data-parallel training across processes with
// MPI: the few MPI calls it needs (init and finalize, rank and size,
// all-reduce and broadcast of float64 buffers, barrier, abort), bound with
// cgo against Open MPI (Debian's libopenmpi-dev) under the build tag
// "mpi". Without the tag the package builds with no MPI and Init returns
// an error saying so.
//
// A Comm is what package train's Config.Distributed takes: each rank
// trains its shard of every batch (data.LoaderOptions.Shard), the
// parameters start from rank 0's, the gradients are averaged with one
// all-reduce per step (all parameters in one buffer), and only rank 0
// writes the CSV and the checkpoint. Launch with
//
//	mpirun -np 4 adamnode train … --distributed
package distributed
