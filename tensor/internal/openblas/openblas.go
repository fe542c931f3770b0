//go:build openblas

// Package openblas holds the cgo calls of the OpenBLAS build: setting
// OpenBLAS to a single thread and asking which CPU's kernels it chose. It is
// a package of its own because a Go package may not hold both cgo and Go
// assembly, and package tensor holds assembly kernels.
package openblas

/*
#cgo LDFLAGS: -lopenblas
void openblas_set_num_threads(int);
char* openblas_get_corename(void);
*/
import "C"

import "sync"

var once sync.Once

// SingleThreaded sets OpenBLAS to one thread, once per process: the tensor
// backend parallelises over its own workers.
func SingleThreaded() { once.Do(func() { C.openblas_set_num_threads(1) }) }

// CoreName is the name of the CPU whose kernels OpenBLAS runs, as
// openblas_get_corename reports it ("SkylakeX", "Haswell", "Zen",
// "Prescott", …). A build of OpenBLAS for several CPUs (Debian's) picks it
// when the library loads, from the CPU's features or the environment
// variable OPENBLAS_CORETYPE; on a CPU newer than the library it falls back
// to a generic one (Prescott: SSE3).
var CoreName = sync.OnceValue(func() string { return C.GoString(C.openblas_get_corename()) })
