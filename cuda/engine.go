package cuda

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/adamnode/adamnode/tensor"
)

// Backend returns the GPU backend on the given device (from 0): a
// tensor.Backend whose engines run GEMM on cuBLAS and the three
// convolution passes (with the bias) on cuDNN, NCHW, with fixed
// deterministic algorithms whose descriptors and workspace sizes are set
// up once per shape and cached. The parallel split of elementwise work
// runs on a CPU engine (gonum). It fails when the libraries do not load
// (see Available), the device does not exist, or cuBLAS or cuDNN does not
// start.
//
// Where the data lives: tensors live in host memory, and every kernel's
// result is copied back to it (the elementwise work that follows runs
// there). The backend also keeps a device copy of every tensor a kernel
// read or wrote, found by the tensor's storage and view and tagged with
// the storage version it holds (see tensor.Storage): a kernel uploads an
// operand only when its version changed since, so the parameters stay on
// the device from one evaluation to the next until the optimizer writes
// them, and a pass's result, or an operand shared by two passes (dy by the
// data and filter passes), is not uploaded again. The copies take at most
// CacheEnv's limit (2 GiB by default), the least recently used dropped
// first, and go when their tensors are garbage collected. Tensor.Gemm
// goes through GemmTensors; Gemm on bare slices copies every call. A CUDA
// error inside an engine call panics with the *Error naming the call
// (tensor.Engine's methods return no error).
func Backend(device int) (tensor.Backend, error) {
	l, err := loaded()
	if err != nil {
		return nil, err
	}
	// The handles belong to the device current on this thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var n int32
	if err := l.rtCheck("cudaGetDeviceCount", l.cudaGetDeviceCount(&n)); err != nil {
		return nil, err
	}
	if device < 0 || device >= int(n) {
		return nil, fmt.Errorf("%w: device %d of %d", ErrNoDevice, device, n)
	}
	if err := l.rtCheck("cudaSetDevice", l.cudaSetDevice(int32(device))); err != nil {
		return nil, err
	}
	var h uintptr
	if err := blasCheck("cublasCreate_v2", l.cublasCreate(&h)); err != nil {
		return nil, err
	}
	var dnn uintptr
	if err := l.dnnCheck("cudnnCreate", l.cudnnCreate(&dnn)); err != nil {
		return nil, err
	}
	cpu := tensor.Gonum(0)
	b := &backend{device: device, devices: int(n), l: l, handle: h, dnn: dnn, cpu: cpu, plans: map[convKey]*convPlan{}, cache: newCache()}
	b.mark = tensor.NewDeviceMark(b)
	b.f32 = &engine[float32]{b: b, cpu: cpu.Float32()}
	b.f64 = &engine[float64]{b: b, cpu: cpu.Float64()}
	return b, nil
}

// backend is the GPU backend of one device.
type backend struct {
	device  int
	devices int // on the machine: with more than one, every call sets device on its thread
	l       *lib
	handle  uintptr
	cpu     tensor.Backend
	f32     *engine[float32]
	f64     *engine[float64]
	dnn     uintptr      // the cuDNN handle
	mu      sync.Mutex   // one kernel at a time: the device buffers are shared
	bufs    [5]deviceBuf // Gemm's A, B, C (of slices); the workspace; a byte for empty tensors
	plans   map[convKey]*convPlan
	cache   cache // the device copies of tensors

	mark *tensor.DeviceMark // marks the storages whose newer values are on the device

	kernOnce sync.Once // makes kern (elementwise.go)
	kern     *Kernels  // the elementwise kernels; nil when they do not load
	// kernLoaded is kern once made, for StatsOf to read without making it.
	kernLoaded atomic.Pointer[Kernels]
	kernErr    error // why kern is nil
}

func (b *backend) Name() string                    { return "cuda" }
func (b *backend) Workers() int                    { return b.cpu.Workers() }
func (b *backend) Float32() tensor.Engine[float32] { return b.f32 }
func (b *backend) Float64() tensor.Engine[float64] { return b.f64 }
func (b *backend) String() string                  { return fmt.Sprintf("cuda(device %d)", b.device) }

// deviceBuf is device memory the backend reuses.
type deviceBuf struct {
	ptr  uintptr
	size uintptr
}

// ensure returns the buffer with room for size bytes.
func (b *backend) ensure(i int, size uintptr) uintptr {
	d := &b.bufs[i]
	if d.size >= size && d.ptr != 0 {
		return d.ptr
	}
	if d.ptr != 0 {
		must(b.l.rtCheck("cudaFree", b.l.cudaFree(d.ptr)))
		d.ptr, d.size = 0, 0
	}
	var p uintptr
	must(b.l.rtCheck("cudaMalloc", b.l.cudaMalloc(&p, size)))
	d.ptr, d.size = p, size
	b.notePeak()
	return p
}

// must panics with a CUDA error (see Backend).
// lock takes the backend for one call: its mutex and, on a machine with
// more than one device, the calling goroutine's thread with the backend's
// device made current on it (the runtime's current device is per thread,
// and goroutines move between threads; cuBLAS's and cuDNN's handles
// belong to the device they were made on).
func (b *backend) lock() {
	b.mu.Lock()
	if b.devices > 1 {
		runtime.LockOSThread()
		if err := b.l.rtCheck("cudaSetDevice", b.l.cudaSetDevice(int32(b.device))); err != nil {
			runtime.UnlockOSThread()
			b.mu.Unlock()
			panic(err)
		}
	}
}

// unlock ends a call that lock began.
func (b *backend) unlock() {
	if b.devices > 1 {
		runtime.UnlockOSThread()
	}
	b.mu.Unlock()
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// engine is the GPU backend's engine for one element type.
type engine[T tensor.Float] struct {
	b   *backend
	cpu tensor.Engine[T]
}

func (e *engine[T]) Name() string { return "cuda" }

func (e *engine[T]) Parallel(n int, body func(lo, hi int)) { e.cpu.Parallel(n, body) }

// extent returns how many elements a row-major matrix of rows × cols
// with row stride ld spans.
func extent(rows, cols, ld int) int {
	if rows == 0 || cols == 0 {
		return 0
	}
	return (rows-1)*ld + cols
}

// Gemm computes C = alpha·op(A)·op(B) + beta·C on cuBLAS from slices:
// they carry no version, so it copies A, B (and C when beta ≠ 0) to the
// device and C back on every call. Tensor.Gemm calls GemmTensors instead,
// which keeps device copies.
func (e *engine[T]) Gemm(transA, transB bool, m, n, k int, alpha T, a []T, lda int, bm []T, ldb int, beta T, c []T, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	ra, ca := m, k
	if transA {
		ra, ca = k, m
	}
	rb, cb := k, n
	if transB {
		rb, cb = n, k
	}
	na, nb, nc := extent(ra, ca, lda), extent(rb, cb, ldb), extent(m, n, ldc)
	b := e.b
	b.lock()
	defer b.unlock()
	size := uintptr(unsafe.Sizeof(T(0)))
	da, db, dc := b.ensure(0, uintptr(max(na, 1))*size), b.ensure(1, uintptr(max(nb, 1))*size), b.ensure(2, uintptr(nc)*size)
	l := b.l
	if na > 0 {
		must(l.rtCheck("cudaMemcpy", l.cudaMemcpy(da, addr(a[:na]), uintptr(na)*size, hostToDevice)))
	}
	if nb > 0 {
		must(l.rtCheck("cudaMemcpy", l.cudaMemcpy(db, addr(bm[:nb]), uintptr(nb)*size, hostToDevice)))
	}
	if beta != 0 {
		must(l.rtCheck("cudaMemcpy", l.cudaMemcpy(dc, addr(c[:nc]), uintptr(nc)*size, hostToDevice)))
	}
	gemmDevice(b, transA, transB, m, n, k, alpha, da, lda, db, ldb, beta, dc, ldc)
	must(l.rtCheck("cudaMemcpy", l.cudaMemcpy(addr(c[:nc]), dc, uintptr(nc)*size, deviceToHost)))
}

// gemmDevice runs the GEMM on device operands (under b.mu). Row-major C
// is column-major Cᵀ, so it asks cuBLAS for Cᵀ = op(B)ᵀ·op(A)ᵀ: the
// operands swapped, each with its own transpose flag.
func gemmDevice[T tensor.Float](b *backend, transA, transB bool, m, n, k int, alpha T, da uintptr, lda int, db uintptr, ldb int, beta T, dc uintptr, ldc int) {
	l := b.l
	op := func(t bool) int32 {
		if t {
			return 1 // CUBLAS_OP_T
		}
		return 0 // CUBLAS_OP_N
	}
	switch any(alpha).(type) {
	case float32:
		al, be := float32(alpha), float32(beta)
		must(blasCheck("cublasSgemm_v2", l.cublasSgemm(b.handle, op(transB), op(transA), int32(n), int32(m), int32(k), &al, db, int32(ldb), da, int32(lda), &be, dc, int32(ldc))))
	case float64:
		al, be := float64(alpha), float64(beta)
		must(blasCheck("cublasDgemm_v2", l.cublasDgemm(b.handle, op(transB), op(transA), int32(n), int32(m), int32(k), &al, db, int32(ldb), da, int32(lda), &be, dc, int32(ldc))))
	}
}

// GemmTensors computes z = alpha·op(a)·op(b) + beta·z on cuBLAS with the
// tensors' device copies (see tensor.TensorGemmer): a and b are uploaded
// only when their storage changed since their last upload, and z's
// device copy stays current after the result is copied back.
func (e *engine[T]) GemmTensors(z *tensor.Tensor[T], alpha T, a *tensor.Tensor[T], transA bool, bm *tensor.Tensor[T], transB bool, beta T) {
	m, n := z.Dim(0), z.Dim(1)
	k := a.Dim(1)
	if transA {
		k = a.Dim(0)
	}
	b := e.b
	b.lock()
	defer b.unlock()
	b.tick()
	da, db := in(b, a), in(b, bm)
	dc := out(b, z, beta != 0)
	gemmDevice(b, transA, transB, m, n, k, alpha, da, a.Dim(1), db, bm.Dim(1), beta, dc, n)
	produced(b, z)
}
