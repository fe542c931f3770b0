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
// Tensors live where they were last written. A kernel uploads the
// operands whose storage version changed since their last upload
// (tensor.Storage) and keeps the device copies in a pool of at most
// CacheEnv MiB; its result stays on the device, newer than host memory,
// and the tensor's storage is marked (tensor.Storage.MarkDeviceNewer): the
// next kernel reads it there, and only a host access — Data, ReadData, At,
// any tensor method — copies it back (once; a read keeps the device copy
// current, a write makes the next kernel upload it). A copy dropped to
// make room in the pool is copied back first. The memory of a tensor made
// by tensor.FromSlice is its caller's, who may read the slice at any
// time: results into it are copied back at once. Stats counts every copy,
// and keeps the high-water mark of the device memory in use (PeakBytes,
// torch.cuda.max_memory_allocated's measure; ResetPeak starts it again).
// The engine's Elementwise (elementwise.go) runs the maps, binary ops,
// linear combinations, reductions and error norms with the kernels below
// on the same device copies; autograd calls it when the engine has one.
// The integrator's stage sums and norms, the families' right-hand sides,
// losses and optimizers still run on the host. float32 stays float32 on
// the device: cuBLAS's default math mode, and cuDNN asked for
// CUDNN_FMA_MATH (no TF32). The convolutions use fixed, deterministic
// algorithms. With VerifyEnv=1 every reuse of a device copy that the host
// also holds is compared with the host values, and a write its version
// missed panics.
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
// The kernels, each for float32 and float64 on device Buffers, through
// typed functions that return errors (wrong lengths and shapes among them;
// only Buffer.Slice panics, as slicing does):
//
//   - Fill, Copy; LinComb, y = y0 + Σ cⱼkⱼ with up to MaxTerms terms (the
//     Runge–Kutta stage sums); CopyBlocks, strided blocks of one buffer
//     set or added, scaled, into another (tensor.CopyBlocks: autograd's
//     Conv2DTime splits its filter and assembles its gradient with it).
//   - Map: Tanh, Sigmoid, Exp, ReLU, Softplus, Log, Sqrt, Square, Neg,
//     Abs, Sin, Cos; LeakyReLU, Hardtanh, Clamp, ELU, Pow, Scale and
//     AddScalar with their parameters. MapBackward (g·f′ from the map's
//     output or input, as each needs) and the backward maps of those with
//     parameters, set or accumulated. Scale's and AddScalar's gradients
//     are LinComb's.
//   - Binary: Add, Sub, Mul, Div with NumPy's broadcasting over up to
//     MaxDims dimensions; BinaryBackward, the gradient of either operand,
//     summed over what it is broadcast along.
//   - SumAxis, MeanAxis, MaxAxis along an axis of up to MaxDims
//     dimensions; ArgMaxAxis, tensor.ArgMax's indices along an axis of
//     any rank, of which only the indices are copied to the host; ChannelSums, a bias's gradient as autograd forms it;
//     Sum, SumSquares, Dot of whole buffers into one element on the
//     device.
//   - ErrorNorm, the RMS of e/(atol + rtol·max(|y0|, |y1|)), and
//     MixedErrorNorm, torchdiffeq's max over parts of each part's RMS
//     (its adjoint's norm; a seminorm passes fewer parts), each with the
//     largest ratio and the counts of NaN and infinite ones, one small
//     record (Norm) copied to the host.
//   - AdamRHS, AdamRHSBackward and AdamBand: AdamNODE's right-hand side,
//     its backward and its specialised adjoint's band, each one pass, with
//     the gradients of r1 and r2 into two elements on the device; and
//     AdamCotangent, the cotangent of that adjoint's one VJP of f.
//
// Precision. NVRTC compiles with --fmad=false --ftz=false --prec-div=true
// --prec-sqrt=true and never --use_fast_math: no multiply-add is fused
// unless the source calls fma, so a·b + c rounds the product as Go does on
// amd64, and every kernel writes the CPU's operations in the CPU's order.
// Bit for bit the CPU's, therefore: LinComb (tensor.LinearCombination);
// CopyBlocks (tensor.CopyBlocks);
// the exact maps (ReLU, Sqrt, Square, Neg, Abs, LeakyReLU, Hardtanh,
// Clamp, Scale, AddScalar) and every backward map but softplus's, sin's,
// cos's and pow's (and, in float32, tanh's and sigmoid's); Binary and BinaryBackward (autograd's
// broadcast rule, the gradient's terms added in its order); MaxAxis and
// ArgMaxAxis;
// ErrorNorm's ratios; AdamRHS, AdamRHSBackward and AdamBand with
// AdamScaleSqrt, and AdamCotangent. The transcendental maps are CUDA's (float32 tanhf, expf, log1pf within 2
// ulps, logf 1; float64 likewise), within a few ulps of the tensor
// package's (tested: CUDA's bound plus 2), and so is AdamScaleSoftplus's s.
// Sin, Cos, Pow and ELU's expm1 are computed in float64 for both types and
// rounded, as autograd's maps compute them with the math package: float32
// results are the CPU's but where the two float64 values round apart; in
// float64, CUDA's are the more accurate where Go's math.Sin and Cos
// (|x| ≥ 2²⁹: 40 ulps at 1e30) and math.Pow (16 ulps at 1e-45^−2.5) are
// not within their ulp.
// The backward maps round tanh's 1 − y² and sigmoid's y − y² once (fma),
// as the tensor package's do.
//
// Sums. Every sum is formed in float64, whatever T, and rounded to T once:
// within a block of threads in a fixed tree (thread t first takes elements
// t, t + 256, …), the blocks' records then added by one block in a tree;
// the number of blocks is a function of the length alone, so a sum has the
// same bits on every run and every device. The order is not the CPU's,
// which adds float64 sums in sequence (Sum, Dot, ErrorNorm's squares in
// float64) or float32 axis sums in float32 (SumAxis): float64 results
// agree with the CPU's to the float64 rounding of the sums (tested within
// n·2⁻⁵² of Σ|x| of the exact sum), float32 ones within an ulp of the
// exact sum. Axes of up to 256 elements are summed by one thread per
// output, in order, and a matrix's columns by ChannelSums in T in order,
// as tensor.AddColumnSums; AdamNODE's sums for r1 and r2 keep the CPU's blocks of
// 64 elements summed in T, only the blocks' float64 sums are added in a
// tree (the CPU's AVX-512 path adds them in lanes, its Go loop in order).
// Sums that overflow in the error norms are formed again scaled.
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
// How the engine uses them. The engine's Elementwise (elementwise.go)
// holds one Kernels per backend, made on first use (when NVRTC or the
// driver API does not load, Elementwise returns nil and autograd computes
// the elementwise work on the host, as before), and runs each method
// on its tensors' device copies (in, out and produced of resident.go, the
// cache's blocks are cudaMalloc memory of the primary context): Map and
// MapBackward for autograd's maps and activations, Binary and
// BinaryBackward for its broadcasting ops (broadcasts of any rank merged
// to at most MaxDims groups of axes, or split over calls), LinComb for
// scaled accumulations, the reductions for its sums and losses (Sum,
// SumSquares and Dot return one number to the host), ErrorNorm and
// MixedErrorNorm. AdamRHS, AdamRHSBackward, AdamBand and AdamCotangent
// wait for the solvers to hold their state on the device. Kernels launch
// on the default (legacy) stream, which orders them with cuBLAS and cuDNN
// calls on their default stream; a copy to the host waits for them.
package cuda
