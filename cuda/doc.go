// Package cuda is a tensor.Backend that runs GEMMs on cuBLAS and the three
// convolution passes on cuDNN, on an NVIDIA GPU, and the elementwise
// kernels of its own, compiled at run time (see Kernels of our own below).
//
// The libraries are loaded at run time with purego (no cgo, no CUDA at
// build time): the runtime (libcudart.so.13, .12 or .11.0), cuBLAS
// (libcublas.so.13, .12 or .11) and cuDNN (libcudnn.so.9 or .8), from the
// directories DirEnv lists (as PATH does) and then the loader's search
// path. Available reports whether they load and, if not, which is
// missing; Backend(i) returns the backend of device i.
//
//	b, err := cuda.Backend(0)
//	if err != nil { ... }
//	tp := autograd.NewTape(tensor.EngineFor[float32](b))
//
// Tensors stay in host memory. Each kernel uploads the operands whose
// storage version changed since their last upload (tensor.Storage), keeps
// the device copies in a pool of at most CacheEnv MiB, and copies its
// result back; the engine's elementwise work runs on the CPU (the kernels
// below are not yet wired into it). float32 stays float32
// on the device: cuBLAS's default math mode, and cuDNN asked for
// CUDNN_FMA_MATH (no TF32). The convolutions use fixed, deterministic
// algorithms. With VerifyEnv=1 every reuse of a device copy is compared
// with the host values, and a write its version missed panics.
//
// A failed CUDA, cuBLAS or cuDNN call inside a kernel panics with an
// *Error naming the call and its status; errors at setup are returned.
//
// # Kernels of our own
//
// The elementwise work has kernels of the package's own, written once in
// CUDA C (kernels/*.cu, embedded in the package), compiled at run time by
// NVRTC (libnvrtc.so.13, .12 or .11.2) and launched through the driver
// API (libcuda.so.1), both loaded with purego from DirEnv's directories
// as the runtime is. NewKernels(i) compiles them for device i's
// architecture (CUBIN for sm_XY, or PTX when NVRTC lacks it) and loads
// them into its primary context — the one the runtime, cuBLAS and cuDNN
// use, so device memory from cudaMalloc and from Alloc serve both.
// Compiled images are kept for the process and on disk (KernelCacheEnv;
// by default adamnode/cuda-kernels under os.UserCacheDir), keyed by a
// hash of the source, the compile options, the architecture and NVRTC's
// version, written to a temporary file and renamed; a file that does not
// read back whole (a checksum), or whose image the driver refuses, is
// compiled again. A source that does not compile is a *CompileError
// carrying NVRTC's log. The driver must be at least as new as NVRTC's
// CUDA major version (an image it cannot load fails NewKernels with the
// cuModuleLoadData status).
//
//	k, err := cuda.NewKernels(0)
//	if err != nil { ... }
//	defer k.Close()
//	y, err := cuda.Alloc[float32](k, len(host))
//	...
//	err = cuda.Upload(k, y, host)
//	err = cuda.Map(k, cuda.Tanh, y, y)
//	err = cuda.Download(k, host, y)
//	err = cuda.Free(k, y)
//
// The kernels so far, each for float32 and float64 on device Buffers,
// through typed functions that return errors (wrong lengths among them;
// only Buffer.Slice panics, as slicing does): Fill, Copy, LinComb (y = y0 + Σ cⱼkⱼ, up to MaxTerms
// terms: the Runge–Kutta stage sums), Map and MapBackward (tanh, sigmoid,
// exp, ReLU, softplus and their gradients from the output), and
// ErrorNorm (the RMS of e/(atol + rtol·max(|y0|, |y1|)) with the largest
// ratio and the counts of NaN and infinite ones, one small record copied
// to the host).
//
// Precision. NVRTC compiles with --fmad=false --ftz=false --prec-div=true
// --prec-sqrt=true and never --use_fast_math: no multiply-add is fused
// unless the source calls fma, so a·b + c rounds the product as Go does on
// amd64. LinComb is therefore tensor.LinearCombination bit for bit, and
// ErrorNorm's ratios are the CPU solvers' bit for bit (where they do not
// overflow float32: those it forms in float64); ErrorNorm sums the
// squares in float64, in another order (tested to 1e-12 relative against
// a float64 sum; the CPU solvers sum float32 squares in float32 blocks of
// 256, so float32 norms differ from theirs by that rounding). float32 maps
// compute in float32 with CUDA's tanhf, expf, log1pf (within 2 ulps;
// tested within 4 ulps of float64 references rounded), float64 maps in
// float64; the backward maps round tanh's 1 − y² and sigmoid's y − y² once
// (fma), as the tensor package's do.
//
// Two Go traps, handled. A CUDA context is current per OS thread, and
// goroutines move between threads: every call locks its goroutine to its
// thread and makes the context current before touching the driver, and
// calls on one Kernels run one at a time. cuLaunchKernel's kernelParams is
// an array of pointers that C reads, so it must not be Go memory holding
// Go pointers: it and the argument slots it points to live in an
// anonymous mapping outside the Go heap (as do NVRTC's option strings),
// set once, written per launch.
//
// The kernel style, and how it is tested without a GPU. The tests build a
// stand-in NVRTC and driver (testdata/standin_nvrtc.c, standin_cuda.c)
// beside the stand-in runtime. The stand-in "compiler" builds the same
// kernel source as C with gcc under an emulation header
// (testdata/standin_kernel.h: threadIdx, blockIdx, blockDim, gridDim,
// __global__, __device__, static __shared__ memory and __syncthreads) into
// a shared object, its "CUBIN"; the stand-in driver loads it and runs a
// launch's grid on the CPU with the device pages open, block after block,
// each block's threads as coroutines that run to the next barrier in an
// order shuffled every time (so a missing barrier gives a wrong result),
// refusing any kernel argument that points to host memory and any call
// from a thread without the context current. So the kernels keep to what
// this emulation runs faithfully: grid-stride loops over long long
// indices; reductions within a block in static shared memory with
// __syncthreads, one record per block, then one block reducing the
// records; no warp intrinsics, atomics or dynamic shared memory; C linkage
// and a source that is C as well as CUDA C++. A test also compiles the
// source with a real NVRTC where one is on the loader's path (Debian's
// libnvrtc11.2 needs no GPU) to catch what only the CUDA compiler rejects.
//
// What builds on this. Device-resident tensors wrap their device memory
// (the backend's pool, from cudaMalloc) as Buffers and call these
// functions; the engine holds one Kernels per backend, and autograd and
// odeblock reach the kernels through the engine. Kernels launch on the
// default (legacy) stream, which orders them with cuBLAS and cuDNN calls on
// their default stream; Download waits for them.
package cuda
