// Package cuda is a tensor.Backend that runs GEMMs on cuBLAS and the three
// convolution passes on cuDNN, on an NVIDIA GPU.
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
// result back; the elementwise work runs on the CPU. float32 stays float32
// on the device: cuBLAS's default math mode, and cuDNN asked for
// CUDNN_FMA_MATH (no TF32). The convolutions use fixed, deterministic
// algorithms. With VerifyEnv=1 every reuse of a device copy is compared
// with the host values, and a write its version missed panics.
//
// A failed CUDA, cuBLAS or cuDNN call inside a kernel panics with an
// *Error naming the call and its status; errors at setup are returned.
package cuda
