// Package tensor provides dense, contiguous, row-major tensors over float32 and
// float64 and the kernels that continuous-depth models need: elementwise maps,
// reductions, GEMM through a BLAS, and NCHW convolution through im2col + GEMM
// (stride-1 3×3 convolutions with enough channels — C·Co/(C + Co) ≥ 6
// for float32 on the avx512 kernel path, 16 otherwise — through
// Winograd's F(2×2, 3×3): 16 GEMMs of 4/9 the multiplications,
// winograd.go; the results differ from im2col's by rounding).
//
// # Element types
//
// Tensor is generic over Float (float32 | float64). Models train in float32; the
// gradient checks run the very same code in float64.
//
// # Storage and views
//
// A tensor is a shape and a contiguous slice of elements in row-major order.
// Reshape and Slice (a range along the leading axis) return views that share
// the receiver's storage; writes through a view are seen by the original.
// Clone copies. FromSlice uses the caller's slice as storage without copying.
//
// A storage counts its writes (Storage.Version): every method that stores
// into a tensor changes it, and so does Data, which hands out writable
// memory; ReadData reads without counting, and MarkChanged records a write
// through a slice kept from an earlier Data. Engines that keep copies of
// tensors elsewhere (package cuda's device memory) re-copy a tensor only
// when its version changed — the rule PyTorch's version counter follows.
//
// # Where results go
//
// As in math/big, kernels are methods whose receiver is the result:
//
//	z.Add(x, y) // z = x + y, returns z
//
// The receiver must already have the right shape; operands may alias the
// receiver for elementwise kernels (z.Add(z, y) is fine) but not for GEMM or
// convolution, whose destinations must not overlap their inputs. Nothing is
// allocated by these methods, so a training loop that reuses its buffers runs
// with no allocation in steady state. Package-level functions of the same name
// (Add, MatMul, Conv2D, ...) allocate the result and call the kernel.
//
// # Errors
//
// Misuse is a programming error and panics, as in gonum: a shape mismatch panics
// with a *ShapeError whose message names the operation and both shapes. Use
// Recover at an API edge to turn such a panic back into an error. Failures of
// data or numerics are never panics; other packages return them as errors.
//
// # Backends
//
// GEMM and the three convolution passes run on an Engine, obtained from a
// Backend value. A Backend names a BLAS implementation and a number of worker
// goroutines. The pure-Go gonum BLAS is always available; OpenBLAS (through
// gonum.org/v1/netlib) is compiled in with the build tag "openblas". Default
// picks the fastest compiled-in backend once, at first use; nothing swaps a
// backend while running, and tests construct each backend explicitly.
//
// The engine's workers are its parallelism: the OpenBLAS backend runs
// OpenBLAS single-threaded and splits large GEMMs into bands and the
// convolution passes over the batch (the bias added, and its gradient
// summed, in the same passes); Engine.Parallel lends the workers to other
// bandwise work, such as autograd's elementwise ops on large tensors. The
// elementwise methods of Tensor themselves run on the calling goroutine.
// GEMMs are split by bands of rows or columns, or along k when k is at
// least twice both (a weight gradient: each part then reads the rows of
// the batch its core wrote, and the partial products are summed).
// Workers(e) says how many workers an engine has; Serial(e) is the same
// kernels on the calling goroutine alone, for code that runs its own
// parallelism above them (autograd.RowShards runs a shard of a batch on
// each worker, each shard's kernels serial).
//
// A worker that runs out of work, and a caller waiting for the other parts
// of its call, poll for up to 200 µs before they block, as OpenMP runtimes
// do: the solvers call the engine every few to few hundred microseconds,
// and waking a blocked thread costs tens of microseconds under a
// hypervisor (on a 2-core KVM guest a split GEMM ran slower than on one
// core while the workers blocked). So a process computing on an engine of
// N workers shows up to N busy cores for 200 µs after its last call; a
// pool idle for longer costs nothing. On Linux the polling stops while the
// machine has more runnable threads than cores (counted every 2 ms from
// /proc/loadavg, off for 50 ms after 5 counts above the cores in a row),
// so that processes sharing the cores do not burn each other's time.
//
// On the avx512 and avx2 kernel paths (see Kernel paths), float32 GEMM
// runs on tensor/internal/sgemm, in both backends and split over the
// workers: the Goto/BLIS blocked algorithm around 12×32 and 12×16
// micro-kernels in Go assembly (6×16 and 6×8 in YMM registers on avx2),
// A read in place where the packing would not pay. The OpenBLAS backend
// keeps OpenBLAS for the shapes where it measured faster (C 17 to
// 31 wide or under 24 rows, a transposed B under 97 rows, small products:
// see hybridSgemm) — when OpenBLAS runs AVX2 or AVX-512 kernels: on a CPU
// newer than itself a build of OpenBLAS for several CPUs falls back to
// generic SSE3 ones (Debian's 0.3.21 on an Intel Xeon of 2023: 13–28
// GFLOP/s; OpenBLASCore names them, OPENBLAS_CORETYPE=SkylakeX or Haswell
// overrides the choice), and then sgemm takes every float32 shape. float64
// GEMM runs on tensor/internal/dgemm, in both backends, the same algorithm
// around 12×16, 12×8 and 12×4 float64 kernels, split over the workers
// (34–50 GFLOP/s on one core of a Zen 4 at the MLP shapes of batch 512,
// whose float64 peak is 57, against gonum's 4–9 and OpenBLAS's 31–46; an
// AdamNODE of width 64 in float64 trains 3.7× faster than on gonum's
// Dgemm, 12% faster than on OpenBLAS's: see float64Gemm); on avx2 its
// kernels are 6×8 in YMM registers. On the neon path both GEMMs run NEON
// kernels (12×8 float32, 6×8 float64, every panel packed), split over the
// workers, as above (the OpenBLAS backend's hybridSgemm table was measured
// on amd64): tested under emulation, their speed not measured on an arm64
// CPU yet. On the generic path it stays on the BLAS (even generic OpenBLAS beats gonum's Dgemm, 10.6 against 4.1
// GFLOP/s at n = 256 there). float32 GFLOP/s on one core of the
// Zen 5 (BenchmarkSgemm, sgemm / OpenBLAS 0.3.21; the kernel alone peaks at
// 117; gonum's Sgemm, on two cores, 5–27):
//
//	MLP batch×in→out   fwd x·Wᵀ      dx g·W        dw gᵀ·x
//	512×17→64          92 / 78       53 / 101      45 / 106
//	512×64→64          103 / 95      107 / 96      94 / 94
//	512×64→16          99 / 81       97 / 107      60 / 109
//	512×256→256        107 / 102     111 / 103     106 / 102
//	2048×64→64         108 / 92      107 / 92      92 / 91
//	128×64→64          83 / 89       95 / 115      94 / 112
//	conv 50×459×784    92 / 94       100 / 96      56 / 84
//	square 256, 1024   106 / 102,  101 / 103
//
// # Vector math
//
// Exp, Log, Sqrt, Tanh, Sigmoid, Softplus, ReLU and LeakyReLU on float32
// tensors, and the activations' backward maps (TanhBackward,
// SigmoidBackward, SoftplusBackward, ReLUBackward, LeakyReLUBackward), run
// on float32 slice kernels, one set per "path": on amd64, Go assembly for
// AVX-512 (16 lanes in ZMM registers) or AVX2 with FMA (8 lanes in YMM),
// as the kernel path says (see Kernel paths below); on arm64, Go assembly
// for NEON (4 lanes in the 128-bit V registers, with the AVX2 kernels'
// algorithms and order of operations); elsewhere, and with
// the build tag "purego", portable Go kernels of the same algorithms and
// constants (see vecmath.go). The tests run every path the kernel path
// allows against the math package on edge values and
// random values over all exponents: within 2 ulps of the correctly rounded
// result (3 for tanh and sigmoid; sqrt exact). On the machine the paths
// were written on, the assembly was also checked on every float32 input: 2
// ulps at most (tanh, sigmoid, softplus), 1 for exp and log. The backward
// maps are tested against float64 on pairs of edge values and random pairs:
// g·(1 − y²) and g·(y − y²) within 1 ulp of the exact product (the
// derivative is rounded once, by a fused multiply-add or from y² in
// float64), g·(1 − e⁻ʸ) within 2; the ReLU kernels are exact; with
// accumulate every path adds exactly the value it would have set.
//
// float64 tensors have kernels of their own for Exp, Log, Sqrt, Tanh,
// Sigmoid, Softplus and the backward maps of Tanh, Sigmoid and Softplus
// (vecmath64.go): AVX-512 (8 lanes) or AVX2+FMA (4 lanes) assembly, or
// NEON (2 lanes) on arm64, chosen the same way, or portable Go, with the
// float32 algorithms carried to float64 precision (a degree-13 Taylor polynomial for eʳ − 1, the atanh
// series for ln(1 + f)). Their tests compare every path with results
// correctly rounded in math/big, on edge values and random values over all
// exponents: within 2 ulps (exp and log within 1, sqrt exact; the math
// package's own exp overflows early on amd64, from 709.44, and its log is
// far off for denormals, where these kernels are not). The backward maps
// are within an ulp of the exact product (tanh′, σ′: one fused multiply-add
// for the derivative) or 2 (softplus′). So the gradient checks of float64
// models run on these kernels, not on the math package; the named float
// types (a type T float64) still go through the math package.
//
// Measured with BenchmarkVec64Kernel (32768 elements, ns per element,
// medians of 6, one core of a 2-core AMD EPYC Zen 4 shared with a training
// job; "math" calls the math package's scalar functions element by
// element, as the float64 maps did before):
//
//	path    exp    tanh   sigmoid  softplus  log
//	math    10.1   19.6   12.2     28.3      10.3
//	avx512  0.66   1.27   0.89     2.03      1.06
//	avx2    1.28   1.99   1.40     3.95      1.90
//	go      11.9   18.0   12.2     29.1      11.7
//
// Go assembly was chosen over SLEEF called through cgo because it serves
// the pure-Go build as well (no C toolchain, as with the gonum backend),
// and it needs no cgo call per slice, where many of a model's maps are on
// small tensors. (In a package that uses cgo, .s files go to the C
// compiler, so the OpenBLAS binding's cgo lives in tensor/internal/openblas.)
//
// Measured with BenchmarkVecKernel (32768 elements, ns per element, one
// core of an AMD EPYC Zen 5, a machine shared with other work):
//
//	path    exp    tanh   sigmoid  softplus  log    sqrt
//	avx512  0.17   0.26   0.25     0.50      0.30   0.17
//	avx2    0.35   0.39   0.45     0.82      0.47   0.17
//	go      2.8    5.7    4.5      11.7      4.0    1.4
//
// and BenchmarkVecBwdKernel (the same size; relu and leaky read one
// slice, the backward maps two, g and y; set, not accumulated, which
// costs about the same):
//
//	path    relu   leaky  tanh′  σ′     softplus′  ReLU′  LeakyReLU′
//	avx512  0.08   0.07   0.11   0.11   0.21       0.11   0.15
//	avx2    0.10   0.10   0.12   0.11   0.31       0.11   0.11
//	go      0.65   0.76   0.55   0.55   4.1        0.97   0.91
//
// # Slice kernels
//
// AxpySlice, LinearCombination (a Runge–Kutta stage sum, y0 + Σ c_j·k_j in
// one pass), AddColumnSums (a bias gradient) and SumSlice run in assembly
// on the avx512 and avx2 kernel paths (AVX-512 or AVX2: AxpySlice and
// LinearCombination for float32 and float64, the other two for float32, as
// are float64's ReLU and LeakyReLU), and as Go loops otherwise.
// AxpySlice and LinearCombination round as the Go loops do (each product
// rounded, then added, in the same order; the loops convert each product,
// so that no GOARCH's compiler fuses it into a multiply-add), so all
// agree bit for bit; AddColumnSums sums even and odd rows apart and
// SumSlice sums in 32 float64 lanes, the same sums on avx512 and avx2,
// within float64's rounding of the Go loops' sums.
//
// # Kernel paths
//
// This module's own kernels — the vector maps above, the slice kernels,
// Winograd's transforms, the float32 and float64 GEMMs
// (tensor/internal/sgemm and dgemm), odeblock's AdamNODE kernels and the
// integrator's error scaling — take one instruction-set path, decided once
// at start-up and reported by KernelPath:
//
//	avx512   amd64 with AVX-512 F, CD, BW, DQ and VL (x86-64-v4: Intel
//	         since Skylake-SP, AMD since Zen 4): every kernel in assembly
//	avx2     amd64 with AVX2 and FMA (Intel since Haswell, AMD since Zen 1):
//	         every kernel in assembly too, 8 lanes (4 for float64)
//	sse2     every amd64 CPU (SSE2 is its baseline; the fastest path of
//	         those without AVX2 and FMA): the GEMMs and Winograd's
//	         elementwise transforms in assembly on XMM registers, 4 lanes
//	         (2 for float64), multiply and add rounded apart; the other
//	         kernels run their Go loops
//	neon     arm64 (every ARMv8-A CPU: Apple silicon, Graviton, Ampere):
//	         the vector maps and the GEMMs in assembly (Advanced SIMD), 4
//	         lanes (2 for float64); the other kernels run their Go loops
//	generic  everything in portable Go, GEMM the backend's BLAS: other
//	         GOARCHes and the build tag purego
//
// The path is the fastest the CPU and the build run, unless the
// environment variable ADAMNODE_CPU names a slower one (avx512, avx2, sse2
// or generic on amd64, neon or generic on arm64; case is ignored): ADAMNODE_CPU=avx2 runs an AVX-512 machine as
// an AVX2-only one would, for tests and benchmarks. It is read once, when
// the program starts; a value naming a path this CPU or build does not run
// gives the fastest it runs, and a value naming no path the fastest there
// is, each with one line on standard error saying so (TestKernelPathFromEnv
// fails on the latter, so a mistyped value in a test run is noticed). The
// build tag purego makes generic the only path. make test runs the tests of
// the packages with kernels once more for each path below the machine's
// (make test-paths).
package tensor
