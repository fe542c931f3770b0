// Package tensor provides dense, contiguous, row-major tensors over float32 and
// float64 and the kernels that continuous-depth models need: elementwise maps,
// reductions, GEMM through a BLAS, and NCHW convolution through im2col + GEMM.
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
//
// # float32 maps
//
// Exp, Tanh and Sigmoid on float32 tensors use a polynomial exponential
// accurate to about 2e-10 relative, computed in float64; all float32 maps
// convert blocks of elements to float64 and back rather than one element at
// a time (which chains every element to the previous one through the
// conversion's false register dependency). float64 tensors use the math
// package.
package tensor
