package cuda

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// DirEnv names the environment variable holding the directories to load
// the CUDA libraries from before the loader's own search path: one
// directory, or several separated as in PATH (the PyTorch wheels' nvidia
// packages put the runtime, cuBLAS and cuDNN in directories of their own).
const DirEnv = "ADAMNODE_CUDA_DIR"

// The shared libraries, by the names a CUDA 13, 12 or 11 installation (or
// the PyTorch wheels' nvidia packages) gives them, newest first.
var (
	cudartNames = []string{"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"}
	cublasNames = []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"}
	cudnnNames  = []string{"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so"}
)

// lib holds the bound functions of the CUDA runtime and cuBLAS.
type lib struct {
	cudaMalloc         func(ptr *uintptr, size uintptr) int32
	cudaFree           func(ptr uintptr) int32
	cudaMemcpy         func(dst, src uintptr, count uintptr, kind int32) int32
	cudaSetDevice      func(device int32) int32
	cudaGetDeviceCount func(count *int32) int32
	cudaGetErrorString func(code int32) string

	cublasCreate  func(handle *uintptr) int32
	cublasDestroy func(handle uintptr) int32
	cublasSgemm   func(handle uintptr, ta, tb int32, m, n, k int32, alpha *float32, a uintptr, lda int32, b uintptr, ldb int32, beta *float32, c uintptr, ldc int32) int32
	cublasDgemm   func(handle uintptr, ta, tb int32, m, n, k int32, alpha *float64, a uintptr, lda int32, b uintptr, ldb int32, beta *float64, c uintptr, ldc int32) int32

	cudnnCreate                      func(handle *uintptr) int32
	cudnnGetErrorString              func(status int32) string
	cudnnCreateTensorDescriptor      func(d *uintptr) int32
	cudnnSetTensor4dDescriptor       func(d uintptr, format, dtype, n, c, h, w int32) int32
	cudnnCreateFilterDescriptor      func(d *uintptr) int32
	cudnnSetFilter4dDescriptor       func(d uintptr, dtype, format, k, c, h, w int32) int32
	cudnnCreateConvolutionDescriptor func(d *uintptr) int32
	cudnnSetConvolution2dDescriptor  func(d uintptr, ph, pw, u, v, dh, dw, mode, dtype int32) int32
	cudnnSetConvolutionMathType      func(d uintptr, mathType int32) int32
	cudnnGetConvFwdWorkspace         func(h, x, w, conv, y uintptr, algo int32, size *uintptr) int32
	cudnnGetConvBwdDataWorkspace     func(h, w, dy, conv, dx uintptr, algo int32, size *uintptr) int32
	cudnnGetConvBwdFilterWorkspace   func(h, x, dy, conv, dw uintptr, algo int32, size *uintptr) int32
	cudnnConvolutionForward          func(h uintptr, alpha unsafe.Pointer, xd, x, wd, w, conv uintptr, algo int32, ws, wsSize uintptr, beta unsafe.Pointer, yd, y uintptr) int32
	cudnnConvolutionBackwardData     func(h uintptr, alpha unsafe.Pointer, wd, w, dyd, dy, conv uintptr, algo int32, ws, wsSize uintptr, beta unsafe.Pointer, dxd, dx uintptr) int32
	cudnnConvolutionBackwardFilter   func(h uintptr, alpha unsafe.Pointer, xd, x, dyd, dy, conv uintptr, algo int32, ws, wsSize uintptr, beta unsafe.Pointer, dwd, dw uintptr) int32
	cudnnAddTensor                   func(h uintptr, alpha unsafe.Pointer, bd, b uintptr, beta unsafe.Pointer, yd, y uintptr) int32
	cudnnConvolutionBackwardBias     func(h uintptr, alpha unsafe.Pointer, dyd, dy uintptr, beta unsafe.Pointer, dbd, db uintptr) int32
}

// The loaded libraries, once per process.
var loaded = sync.OnceValues(func() (*lib, error) { return load(os.Getenv(DirEnv)) })

// Available reports whether the CUDA runtime and cuBLAS load, and, when
// they do not, why (the libraries tried and the loader's message).
func Available() (bool, error) {
	_, err := loaded()
	return err == nil, err
}

// open returns a handle of the first of names that loads, from the
// directories of dirs (a list as in PATH; empty: none) first, then from the
// loader's search path.
func open(dirs string, names []string) (uintptr, error) {
	if !canLoad {
		return 0, unsupported(names[0])
	}
	var msgs []string
	for _, n := range names {
		var paths []string
		for _, d := range filepath.SplitList(dirs) {
			if d != "" {
				paths = append(paths, filepath.Join(d, n))
			}
		}
		paths = append(paths, n)
		for _, p := range paths {
			h, err := dlopen(p)
			if err == nil {
				return h, nil
			}
			msgs = append(msgs, err.Error())
		}
	}
	return 0, fmt.Errorf("cuda: %s not found: %s", names[0], strings.Join(msgs, "; "))
}

// unsupported is the error of loading a library, or mapping memory for C,
// where this package cannot (canLoad false: dl_other.go).
func unsupported(what string) error {
	return fmt.Errorf("cuda: loading %s is not supported on %s (Linux, macOS, FreeBSD and NetBSD only)", what, runtime.GOOS)
}

// bind sets *fptr to the function name of the library h.
func bind(h uintptr, lib string, fptr any, name string) error {
	sym, err := dlsym(h, name)
	if err != nil {
		return fmt.Errorf("cuda: %s has no %s: %w", lib, name, err)
	}
	purego.RegisterFunc(fptr, sym)
	return nil
}

// load opens the runtime, cuBLAS and cuDNN from dirs (a list as in PATH)
// or the search path and binds the functions the engine calls.
func load(dirs string) (*lib, error) {
	rt, err := open(dirs, cudartNames)
	if err != nil {
		return nil, err
	}
	bl, err := open(dirs, cublasNames)
	if err != nil {
		return nil, err
	}
	dn, err := open(dirs, cudnnNames)
	if err != nil {
		return nil, err
	}
	l := new(lib)
	for _, b := range []struct {
		h    uintptr
		lib  string
		fptr any
		name string
	}{
		{rt, "libcudart", &l.cudaMalloc, "cudaMalloc"},
		{rt, "libcudart", &l.cudaFree, "cudaFree"},
		{rt, "libcudart", &l.cudaMemcpy, "cudaMemcpy"},
		{rt, "libcudart", &l.cudaSetDevice, "cudaSetDevice"},
		{rt, "libcudart", &l.cudaGetDeviceCount, "cudaGetDeviceCount"},
		{rt, "libcudart", &l.cudaGetErrorString, "cudaGetErrorString"},
		{bl, "libcublas", &l.cublasCreate, "cublasCreate_v2"},
		{bl, "libcublas", &l.cublasDestroy, "cublasDestroy_v2"},
		{bl, "libcublas", &l.cublasSgemm, "cublasSgemm_v2"},
		{bl, "libcublas", &l.cublasDgemm, "cublasDgemm_v2"},
		{dn, "libcudnn", &l.cudnnCreate, "cudnnCreate"},
		{dn, "libcudnn", &l.cudnnGetErrorString, "cudnnGetErrorString"},
		{dn, "libcudnn", &l.cudnnCreateTensorDescriptor, "cudnnCreateTensorDescriptor"},
		{dn, "libcudnn", &l.cudnnSetTensor4dDescriptor, "cudnnSetTensor4dDescriptor"},
		{dn, "libcudnn", &l.cudnnCreateFilterDescriptor, "cudnnCreateFilterDescriptor"},
		{dn, "libcudnn", &l.cudnnSetFilter4dDescriptor, "cudnnSetFilter4dDescriptor"},
		{dn, "libcudnn", &l.cudnnCreateConvolutionDescriptor, "cudnnCreateConvolutionDescriptor"},
		{dn, "libcudnn", &l.cudnnSetConvolution2dDescriptor, "cudnnSetConvolution2dDescriptor"},
		{dn, "libcudnn", &l.cudnnSetConvolutionMathType, "cudnnSetConvolutionMathType"},
		{dn, "libcudnn", &l.cudnnGetConvFwdWorkspace, "cudnnGetConvolutionForwardWorkspaceSize"},
		{dn, "libcudnn", &l.cudnnGetConvBwdDataWorkspace, "cudnnGetConvolutionBackwardDataWorkspaceSize"},
		{dn, "libcudnn", &l.cudnnGetConvBwdFilterWorkspace, "cudnnGetConvolutionBackwardFilterWorkspaceSize"},
		{dn, "libcudnn", &l.cudnnConvolutionForward, "cudnnConvolutionForward"},
		{dn, "libcudnn", &l.cudnnConvolutionBackwardData, "cudnnConvolutionBackwardData"},
		{dn, "libcudnn", &l.cudnnConvolutionBackwardFilter, "cudnnConvolutionBackwardFilter"},
		{dn, "libcudnn", &l.cudnnAddTensor, "cudnnAddTensor"},
		{dn, "libcudnn", &l.cudnnConvolutionBackwardBias, "cudnnConvolutionBackwardBias"},
	} {
		if err := bind(b.h, b.lib, b.fptr, b.name); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// Error is a failed CUDA or cuBLAS call: which, and its status.
type Error struct {
	Call   string // e.g. "cudaMemcpy", "cublasSgemm_v2"
	Status int32
	Msg    string // the runtime's message, for runtime calls
}

func (e *Error) Error() string {
	if e.Msg != "" {
		return fmt.Sprintf("cuda: %s: status %d: %s", e.Call, e.Status, e.Msg)
	}
	return fmt.Sprintf("cuda: %s: status %d", e.Call, e.Status)
}

// ErrNoDevice is the error of a backend asked for a device that does not
// exist.
var ErrNoDevice = errors.New("cuda: no such device")

// rtCheck returns nil for a successful runtime call, else its *Error.
func (l *lib) rtCheck(call string, status int32) error {
	if status == 0 {
		return nil
	}
	return &Error{Call: call, Status: status, Msg: l.cudaGetErrorString(status)}
}

// dnnCheck returns nil for a successful cuDNN call, else its *Error.
func (l *lib) dnnCheck(call string, status int32) error {
	if status == 0 {
		return nil
	}
	return &Error{Call: call, Status: status, Msg: l.cudnnGetErrorString(status)}
}

// blasCheck returns nil for a successful cuBLAS call, else its *Error.
func blasCheck(call string, status int32) error {
	if status == 0 {
		return nil
	}
	return &Error{Call: call, Status: status}
}

// Memcpy directions (cudaMemcpyKind).
const (
	hostToDevice = 1
	deviceToHost = 2
)

// addr returns the address of the first element of s (0 for an empty s).
func addr[T any](s []T) uintptr {
	if len(s) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&s[0]))
}
