//go:build openblas

// Package openblas holds the one cgo call of the OpenBLAS build: setting
// OpenBLAS to a single thread. It is a package of its own because a Go
// package may not hold both cgo and Go assembly, and package tensor holds
// assembly kernels.
package openblas

/*
#cgo LDFLAGS: -lopenblas
void openblas_set_num_threads(int);
*/
import "C"

import "sync"

var once sync.Once

// SingleThreaded sets OpenBLAS to one thread, once per process: the tensor
// backend parallelises over its own workers.
func SingleThreaded() { once.Do(func() { C.openblas_set_num_threads(1) }) }
