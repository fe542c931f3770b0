package cuda

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"unsafe"
)

// The driver API and NVRTC, by the names a CUDA 13, 12 or 11 installation
// (or the PyTorch wheels' nvidia packages) gives them, newest first. The
// driver comes with the GPU's kernel driver, not the toolkit.
var (
	nvrtcNames  = []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"}
	driverNames = []string{"libcuda.so.1", "libcuda.so"}
)

// nvrtcLib holds the bound functions of NVRTC.
type nvrtcLib struct {
	version        func(major, minor *int32) int32
	getErrorString func(result int32) string
	createProgram  func(prog *uintptr, src, name string, numHeaders int32, headers, includeNames uintptr) int32
	compileProgram func(prog uintptr, numOptions int32, options uintptr) int32
	getLogSize     func(prog uintptr, size *uintptr) int32
	getLog         func(prog uintptr, log *byte) int32
	getCUBINSize   func(prog uintptr, size *uintptr) int32
	getCUBIN       func(prog uintptr, cubin *byte) int32
	getPTXSize     func(prog uintptr, size *uintptr) int32
	getPTX         func(prog uintptr, ptx *byte) int32
	// Since NVRTC 11.2; nil when the library lacks them.
	getNumSupportedArchs func(n *int32) int32
	getSupportedArchs    func(archs *int32) int32
	destroyProgram       func(prog *uintptr) int32
}

// driverLib holds the bound functions of the driver API.
type driverLib struct {
	cuInit                   func(flags uint32) int32
	cuGetErrorString         func(status int32, str **byte) int32
	cuDeviceGetCount         func(n *int32) int32
	cuDeviceGet              func(dev *int32, ordinal int32) int32
	cuDeviceGetAttribute     func(v *int32, attr int32, dev int32) int32
	cuDevicePrimaryCtxRetain func(ctx *uintptr, dev int32) int32
	cuDevicePrimaryCtxRel    func(dev int32) int32
	cuCtxSetCurrent          func(ctx uintptr) int32
	cuCtxSynchronize         func() int32
	cuModuleLoadData         func(mod *uintptr, image *byte) int32
	cuModuleUnload           func(mod uintptr) int32
	cuModuleGetFunction      func(fn *uintptr, mod uintptr, name string) int32
	cuLaunchKernel           func(fn uintptr, gx, gy, gz, bx, by, bz, shared uint32, stream, params, extra uintptr) int32
	cuMemAlloc               func(p *uintptr, size uintptr) int32
	cuMemFree                func(p uintptr) int32
	cuMemcpyHtoD             func(dst uintptr, src unsafe.Pointer, size uintptr) int32
	cuMemcpyDtoH             func(dst unsafe.Pointer, src uintptr, size uintptr) int32
	cuMemcpyDtoD             func(dst, src uintptr, size uintptr) int32
}

// kernelLibs is NVRTC and the driver API, loaded.
type kernelLibs struct {
	nvrtc        nvrtcLib
	drv          driverLib
	nvrtcVersion string // "12.4"
}

// The kernel libraries, loaded once per process.
var loadedKernelLibs = sync.OnceValues(func() (*kernelLibs, error) { return loadKernelLibs(os.Getenv(DirEnv)) })

// loadKernelLibs opens NVRTC and the driver API from dirs (a list as in
// PATH) or the search path and binds the functions the kernels need.
func loadKernelLibs(dirs string) (*kernelLibs, error) {
	nv, err := open(dirs, nvrtcNames)
	if err != nil {
		return nil, err
	}
	dr, err := open(dirs, driverNames)
	if err != nil {
		return nil, err
	}
	k := new(kernelLibs)
	if err := k.bindNVRTC(nv); err != nil {
		return nil, err
	}
	d := &k.drv
	for _, b := range []struct {
		fptr any
		name string
	}{
		{&d.cuInit, "cuInit"},
		{&d.cuGetErrorString, "cuGetErrorString"},
		{&d.cuDeviceGetCount, "cuDeviceGetCount"},
		{&d.cuDeviceGet, "cuDeviceGet"},
		{&d.cuDeviceGetAttribute, "cuDeviceGetAttribute"},
		{&d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"},
		{&d.cuDevicePrimaryCtxRel, "cuDevicePrimaryCtxRelease_v2"},
		{&d.cuCtxSetCurrent, "cuCtxSetCurrent"},
		{&d.cuCtxSynchronize, "cuCtxSynchronize"},
		{&d.cuModuleLoadData, "cuModuleLoadData"},
		{&d.cuModuleUnload, "cuModuleUnload"},
		{&d.cuModuleGetFunction, "cuModuleGetFunction"},
		{&d.cuLaunchKernel, "cuLaunchKernel"},
		{&d.cuMemAlloc, "cuMemAlloc_v2"},
		{&d.cuMemFree, "cuMemFree_v2"},
		{&d.cuMemcpyHtoD, "cuMemcpyHtoD_v2"},
		{&d.cuMemcpyDtoH, "cuMemcpyDtoH_v2"},
		{&d.cuMemcpyDtoD, "cuMemcpyDtoD_v2"},
	} {
		if err := bind(dr, "libcuda", b.fptr, b.name); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// bindNVRTC binds the NVRTC functions of the library h and reads its
// version.
func (k *kernelLibs) bindNVRTC(h uintptr) error {
	n := &k.nvrtc
	for _, b := range []struct {
		fptr any
		name string
	}{
		{&n.version, "nvrtcVersion"},
		{&n.getErrorString, "nvrtcGetErrorString"},
		{&n.createProgram, "nvrtcCreateProgram"},
		{&n.compileProgram, "nvrtcCompileProgram"},
		{&n.getLogSize, "nvrtcGetProgramLogSize"},
		{&n.getLog, "nvrtcGetProgramLog"},
		{&n.getCUBINSize, "nvrtcGetCUBINSize"},
		{&n.getCUBIN, "nvrtcGetCUBIN"},
		{&n.getPTXSize, "nvrtcGetPTXSize"},
		{&n.getPTX, "nvrtcGetPTX"},
		{&n.destroyProgram, "nvrtcDestroyProgram"},
	} {
		if err := bind(h, "libnvrtc", b.fptr, b.name); err != nil {
			return err
		}
	}
	if bind(h, "libnvrtc", &n.getNumSupportedArchs, "nvrtcGetNumSupportedArchs") != nil ||
		bind(h, "libnvrtc", &n.getSupportedArchs, "nvrtcGetSupportedArchs") != nil {
		n.getNumSupportedArchs, n.getSupportedArchs = nil, nil
	}
	var major, minor int32
	if st := n.version(&major, &minor); st != 0 {
		return k.nvrtcError("nvrtcVersion", st)
	}
	k.nvrtcVersion = fmt.Sprintf("%d.%d", major, minor)
	return nil
}

// supportedArchs returns the architectures NVRTC compiles CUBIN for, as
// 10·major + minor, ascending; nil when it does not say (before 11.2).
func (k *kernelLibs) supportedArchs() []int {
	n := &k.nvrtc
	if n.getNumSupportedArchs == nil {
		return nil
	}
	var c int32
	if n.getNumSupportedArchs(&c) != 0 || c <= 0 || c > 1024 {
		return nil
	}
	a := make([]int32, c)
	if n.getSupportedArchs(&a[0]) != 0 {
		return nil
	}
	out := make([]int, c)
	for i, v := range a {
		out[i] = int(v)
	}
	slices.Sort(out)
	return out
}

// check returns nil for a successful driver call, else its *Error with the
// driver's name of the status.
func (k *kernelLibs) check(call string, status int32) error {
	if status == 0 {
		return nil
	}
	var s *byte
	msg := ""
	if k.drv.cuGetErrorString(status, &s) == 0 && s != nil {
		msg = cString(s)
	}
	return &Error{Call: call, Status: status, Msg: msg}
}

// nvrtcError returns the *Error of a failed NVRTC call.
func (k *kernelLibs) nvrtcError(call string, status int32) error {
	return &Error{Call: call, Status: status, Msg: k.nvrtc.getErrorString(status)}
}

// cString returns the NUL-terminated C string at p (memory of the C
// library, not Go's).
func cString(p *byte) string {
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}
