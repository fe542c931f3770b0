package tensor

import "github.com/adamnode/adamnode/tensor/internal/isa"

// KernelPath names the instruction-set path that this module's own kernels
// take: "avx512", "avx2", "sse2", "neon" or "generic". It is decided once, at start-up:
// the fastest path the CPU and the build run, or a slower one that the
// environment variable ADAMNODE_CPU forces (see "Kernel paths" in the
// package documentation). Benchmarks report it beside their figures.
func KernelPath() string { return isa.Current().String() }
