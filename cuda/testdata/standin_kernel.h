// The emulation header of the stand-in NVRTC (standin_nvrtc.c): with it,
// the C compiler builds package cuda's CUDA kernel sources as C, and the
// stand-in driver (standin_cuda.c) runs them on the CPU.
//
// What it emulates: threadIdx, blockIdx, blockDim and gridDim (set by the
// driver for the thread it runs), __global__ and __device__ functions,
// static __shared__ memory (one copy, which the blocks, run one after
// another, share as a GPU's block shares its own), and __syncthreads (each
// thread of a block runs as a coroutine on a stack of its own until it
// reaches the barrier or returns; a barrier that not every thread of the
// block reaches fails the launch). What it does not: warp intrinsics,
// atomics, dynamic (extern) shared memory, anything of the C++ language —
// a kernel source using them does not build here.
#include <math.h>

typedef struct {
	unsigned x, y, z;
} dim3;

extern dim3 threadIdx, blockIdx, blockDim, gridDim;
void standin_syncthreads(void);

#define __syncthreads() standin_syncthreads()
#ifndef __global__
#define __global__
#endif
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __restrict__ __restrict
