// Package distributed is data-parallel training across processes with
// MPI: the few MPI calls it needs (init and finalize, rank and size,
// all-reduce of float64 and float32 buffers, broadcast, barrier, abort),
// bound with cgo against Open MPI (Debian's libopenmpi-dev) under the
// build tag "mpi". Without the tag the package builds with no MPI and Init
// returns ErrNoMPI, saying how to rebuild.
//
// A Comm is what package train's Config.Distributed takes: each rank
// trains its shard of every global batch (data.LoaderOptions.Shard and
// Shards; the last incomplete global batch of an epoch is left out, so
// every rank takes as many steps), the parameters start as rank 0's, the
// gradients are averaged with one all-reduce per step (all parameters in
// one buffer, after the backward pass), and only rank 0 writes the CSV and
// the checkpoint. A failure on any rank stops every rank at the same step.
// Every rank must be given the same settings and data: train.Run checks
// that first (train.Agree) and fails on every rank, naming the setting
// and two ranks' values, when they differ.
// Launch with
//
//	mpirun -np 4 adamnode train … --distributed
//
// NewLocal makes the ranks of an in-process group instead (goroutines,
// the same calls): for tests, and for trying data-parallel code without
// MPI.
//
// Sums are exact to rounding: with a fixed-grid solver N ranks of batch
// B/N train as one process of batch B (to 1e-12 in float64). An adaptive
// solver picks its steps from the error of the shard it solves, so the
// ranks' solves take their own steps, and the training matches one
// process's to the solver's tolerance.
package distributed
