package cuda

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// KernelCacheEnv names the environment variable holding the directory of
// the compiled kernels' disk cache (default: adamnode/cuda-kernels in
// os.UserCacheDir); "off" turns the disk cache off.
const KernelCacheEnv = "ADAMNODE_CUDA_KERNEL_CACHE"

//go:embed kernels/*.cu
var kernelFiles embed.FS

// kernelSource returns the package's kernel source: the files of kernels/
// in name order, as one program.
func kernelSource() string {
	names, err := fs.Glob(kernelFiles, "kernels/*.cu")
	if err != nil {
		panic(err) // a bad pattern: a bug here
	}
	var b strings.Builder
	for _, n := range names {
		s, err := kernelFiles.ReadFile(n)
		if err != nil {
			panic(err)
		}
		b.Write(s)
		b.WriteByte('\n')
	}
	return b.String()
}

// nvrtcOptions are the options every program is compiled with, besides
// the architecture. They make the kernels' arithmetic that of the CPU
// kernels: no multiply-add contraction (--fmad=false: a·b + c rounds the
// product, as Go does on amd64, so the linear combinations and the error
// ratios are the CPU's bit for bit; a kernel that wants one rounding calls
// fma itself), subnormals kept (--ftz=false), division and square root
// correctly rounded; never --use_fast_math.
var nvrtcOptions = []string{"--fmad=false", "--ftz=false", "--prec-div=true", "--prec-sqrt=true"}

// ImageSource says where a Kernels' compiled image came from.
type ImageSource int

const (
	FromNVRTC        ImageSource = iota // compiled by NVRTC in this call
	FromProcessCache                    // compiled earlier in this process
	FromDiskCache                       // read from the disk cache
)

func (s ImageSource) String() string {
	switch s {
	case FromNVRTC:
		return "nvrtc"
	case FromProcessCache:
		return "process cache"
	case FromDiskCache:
		return "disk cache"
	}
	return fmt.Sprintf("ImageSource(%d)", int(s))
}

// CompileError is a kernel source that NVRTC did not compile: its status,
// and its log (the compiler's messages).
type CompileError struct {
	Arch   string // e.g. "sm_90"
	NVRTC  string // NVRTC's version, e.g. "12.4"
	Status int32
	Msg    string // NVRTC's name of the status
	Log    string
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("cuda: nvrtcCompileProgram (NVRTC %s, %s): status %d: %s\n%s", e.NVRTC, e.Arch, e.Status, e.Msg, strings.TrimRight(e.Log, "\n"))
}

// cMemory is memory outside the Go heap (an anonymous mapping), for what C
// code reads as pointers: the kernels' parameter block, NVRTC's options.
// newCMemory maps n bytes (dl_unix.go) and free unmaps them.
type cMemory []byte

func (m cMemory) addr(off int) uintptr { return uintptr(unsafe.Pointer(&m[off])) }

// cStrings returns memory holding the array of pointers to NUL-terminated
// copies of ss that C's const char *const * is.
func cStrings(ss []string) (cMemory, error) {
	n := 8 * len(ss)
	for _, s := range ss {
		n += len(s) + 1
	}
	m, err := newCMemory(n)
	if err != nil {
		return nil, err
	}
	off := 8 * len(ss)
	for i, s := range ss {
		*(*uintptr)(unsafe.Pointer(&m[8*i])) = m.addr(off)
		off += copy(m[off:], s) + 1
	}
	return m, nil
}

// target returns the --gpu-architecture option for a device of compute
// capability cc (10·major + minor) given the architectures NVRTC
// compiles CUBIN for (nil: unknown), and whether the image is PTX: CUBIN
// for the device's own architecture when NVRTC has it (or does not say),
// else PTX for the newest virtual architecture NVRTC has that the device
// runs, for the driver to compile when it loads it; "" when NVRTC has
// none.
func target(cc int, supported []int) (opt string, ptx bool) {
	if supported == nil || slices.Contains(supported, cc) {
		return fmt.Sprintf("--gpu-architecture=sm_%d", cc), false
	}
	best := 0
	for _, a := range supported {
		if a <= cc && a > best {
			best = a
		}
	}
	if best == 0 {
		return "", false
	}
	return fmt.Sprintf("--gpu-architecture=compute_%d", best), true
}

// compile compiles src (named name) with NVRTC and returns the CUBIN (or
// the PTX, NUL-terminated, with ptx); a source that does not compile is a
// *CompileError with the log.
func (k *kernelLibs) compile(src, name string, opts []string, ptx bool) ([]byte, error) {
	n := &k.nvrtc
	var prog uintptr
	if st := n.createProgram(&prog, src, name, 0, 0, 0); st != 0 {
		return nil, k.nvrtcError("nvrtcCreateProgram", st)
	}
	defer n.destroyProgram(&prog)
	copts, err := cStrings(opts)
	if err != nil {
		return nil, err
	}
	defer copts.free()
	st := n.compileProgram(prog, int32(len(opts)), copts.addr(0))
	if st != 0 {
		arch := ""
		for _, o := range opts {
			if a, ok := strings.CutPrefix(o, "--gpu-architecture="); ok {
				arch = a
			}
		}
		return nil, &CompileError{Arch: arch, NVRTC: k.nvrtcVersion, Status: st, Msg: n.getErrorString(st), Log: k.programLog(prog)}
	}
	getSize, get, what := n.getCUBINSize, n.getCUBIN, "CUBIN"
	if ptx {
		getSize, get, what = n.getPTXSize, n.getPTX, "PTX"
	}
	var size uintptr
	if st := getSize(prog, &size); st != 0 {
		return nil, k.nvrtcError("nvrtcGet"+what+"Size", st)
	}
	if size == 0 {
		return nil, &Error{Call: "nvrtcGet" + what + "Size", Msg: "an empty image"}
	}
	img := make([]byte, size)
	if st := get(prog, &img[0]); st != 0 {
		return nil, k.nvrtcError("nvrtcGet"+what, st)
	}
	return img, nil
}

// programLog returns a program's compile log ("" if it cannot be read).
func (k *kernelLibs) programLog(prog uintptr) string {
	var size uintptr
	if k.nvrtc.getLogSize(prog, &size) != 0 || size <= 1 {
		return ""
	}
	b := make([]byte, size)
	if k.nvrtc.getLog(prog, &b[0]) != 0 {
		return ""
	}
	return string(bytes.TrimRight(b, "\x00"))
}

// imageKey identifies a compiled image: a hash of the source, the options
// (the architecture among them) and NVRTC's version.
type imageKey [sha256.Size]byte

func keyOf(src string, opts []string, nvrtcVersion string) imageKey {
	h := sha256.New()
	fmt.Fprintf(h, "adamnode cuda image 1\x00nvrtc %s\x00", nvrtcVersion)
	for _, o := range opts {
		fmt.Fprintf(h, "%s\x00", o)
	}
	h.Write([]byte(src))
	var k imageKey
	h.Sum(k[:0])
	return k
}

// imageCache is the images compiled in this process, by key. Only
// compilation's results are kept: no state that changes what a call does.
type imageCache struct {
	mu sync.Mutex
	m  map[imageKey][]byte
}

// processImages is this process's image cache.
var processImages imageCache

func (c *imageCache) get(k imageKey) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

func (c *imageCache) put(k imageKey, img []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[imageKey][]byte{}
	}
	c.m[k] = img
}

// kernelCacheDir returns the disk cache's directory, "" for none.
func kernelCacheDir() string {
	if d := os.Getenv(KernelCacheEnv); d != "" {
		if d == "off" {
			return ""
		}
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "adamnode", "cuda-kernels")
}

// A disk cache file is cacheMagic, the SHA-256 of the image, the image.
const cacheMagic = "adamnode cuda kernels 1\n"

func cachePath(dir string, k imageKey) string {
	return filepath.Join(dir, hex.EncodeToString(k[:])+".bin")
}

// readCached returns the image of key k in the disk cache dir, or nil if
// there is none or the file is not one that writeCached wrote whole.
func readCached(dir string, k imageKey) []byte {
	b, err := os.ReadFile(cachePath(dir, k))
	if err != nil || len(b) <= len(cacheMagic)+sha256.Size || string(b[:len(cacheMagic)]) != cacheMagic {
		return nil
	}
	sum, img := b[len(cacheMagic):len(cacheMagic)+sha256.Size], b[len(cacheMagic)+sha256.Size:]
	if s := sha256.Sum256(img); !bytes.Equal(s[:], sum) {
		return nil
	}
	return img
}

// writeCached stores img under key k in the disk cache dir: written to a
// temporary file and renamed, so a reader sees the whole file or none.
func writeCached(dir string, k imageKey, img []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "tmp-*")
	if err != nil {
		return err
	}
	sum := sha256.Sum256(img)
	_, err = f.Write(append(append([]byte(cacheMagic), sum[:]...), img...))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), cachePath(dir, k))
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// image returns the compiled image of src for the options opts: from the
// process cache c, else the disk cache dir ("": none), else NVRTC (and
// then stored in both; a failure to write the disk cache is not an
// error: the image is compiled again next time), and where it came from.
// fresh skips both caches.
func (k *kernelLibs) image(c *imageCache, dir, src, name string, opts []string, ptx, fresh bool) ([]byte, ImageSource, error) {
	key := keyOf(src, opts, k.nvrtcVersion)
	if !fresh {
		if img := c.get(key); img != nil {
			return img, FromProcessCache, nil
		}
		if dir != "" {
			if img := readCached(dir, key); img != nil {
				c.put(key, img)
				return img, FromDiskCache, nil
			}
		}
	}
	img, err := k.compile(src, name, opts, ptx)
	if err != nil {
		return nil, FromNVRTC, err
	}
	c.put(key, img)
	if dir != "" {
		writeCached(dir, key, img)
	}
	return img, FromNVRTC, nil
}

// The kernels of kernels/*.cu, by index: each kind in float32 then float64
// (kernelIndex), then errnorm_final.
const (
	kFill = iota
	kCopy
	kLinComb
	kMap
	kMapBwd
	kErrNorm
	kBinary
	kBinBwd
	kAxisReduce
	kSumParts
	kSumFinal
	kAdamFwd
	kAdamBwd
	kAdamBand
	kAdamSums
	kAdamCot
	kChanSum
	kArgMax
	kBlocks
	numKinds
)

var kindNames = [numKinds]string{"fill", "copy", "lincomb", "map", "mapbwd", "errnorm", "binary", "binbwd", "axisreduce", "sumparts", "sumfinal",
	"adamfwd", "adambwd", "adamband", "adamsums", "adamcot", "chansum", "argmax", "blocks"}

const (
	kErrNormFinal = 2 * numKinds
	numKernels    = kErrNormFinal + 1
)

// kernelName returns the name of kernel i.
func kernelName(i int) string {
	if i == kErrNormFinal {
		return "errnorm_final"
	}
	return kindNames[i/2] + [2]string{"_f32", "_f64"}[i%2]
}

// Launch geometry: blocks of blockThreads threads (the reductions'
// NORM_THREADS), at most blocksPerSM blocks per multiprocessor (the
// grid-stride loops take the rest), at most maxParts blocks in a
// reduction.
const (
	blockThreads = 256
	blocksPerSM  = 32
	maxParts     = 1024
	maxParams    = 24 // one more than any kernel's, for the null pointer after the last
)

// Kernels is the package's kernels (kernels/*.cu) compiled for one device
// and loaded into its primary context, the one the CUDA runtime, cuBLAS
// and cuDNN use: device memory from either side serves both. Its methods
// and the functions taking it are safe for concurrent use; they run one at
// a time, each on a locked OS thread with the context made current (a
// CUDA context is current per thread, and goroutines move between
// threads). Kernels launch on the default stream, in the order called;
// Download waits for them.
type Kernels struct {
	libs   *kernelLibs
	device int32
	ctx    uintptr
	arch   string
	sms    int
	from   ImageSource
	mod    uintptr
	fns    [numKernels]uintptr

	mu     sync.Mutex
	closed bool
	params cMemory // maxParams pointers (to the 8-byte slots that follow them, or null)
	norm   uintptr // device memory: maxParts records of the error norm, then MaxNormParts results

	launches atomic.Int64 // kernels launched (Launches)
}

// Launches returns the number of kernels k has launched: each costs a GPU
// a few microseconds of launch latency whatever its size, the floor of a
// step made of many small kernels.
func (k *Kernels) Launches() int64 { return k.launches.Load() }

// ErrClosed is the error of a call on a closed Kernels.
var ErrClosed = errors.New("cuda: kernels closed")

// NewKernels returns the kernels on device i (from 0): compiled by NVRTC
// for the device's architecture (CUBIN for sm_XY; when NVRTC lacks it,
// PTX for the newest older architecture NVRTC has, which the driver
// compiles on loading) the first time, and then taken from the process's
// cache or the disk cache (KernelCacheEnv), whose entries are keyed by a
// hash of the source, the compile options, the architecture and NVRTC's
// version; an entry that does not read back whole, or that the driver
// does not load, is compiled again. It fails when NVRTC or the driver
// API does not load, the device does not exist, or the source does not
// compile (a *CompileError carrying NVRTC's log).
func NewKernels(device int) (*Kernels, error) {
	libs, err := loadedKernelLibs()
	if err != nil {
		return nil, err
	}
	return newKernels(libs, &processImages, kernelCacheDir(), device)
}

func newKernels(libs *kernelLibs, cache *imageCache, dir string, device int) (_ *Kernels, err error) {
	d := &libs.drv
	if err := libs.check("cuInit", d.cuInit(0)); err != nil {
		return nil, err
	}
	var n int32
	if err := libs.check("cuDeviceGetCount", d.cuDeviceGetCount(&n)); err != nil {
		return nil, err
	}
	if device < 0 || device >= int(n) {
		return nil, fmt.Errorf("%w: device %d of %d", ErrNoDevice, device, n)
	}
	k := &Kernels{libs: libs}
	if err := libs.check("cuDeviceGet", d.cuDeviceGet(&k.device, int32(device))); err != nil {
		return nil, err
	}
	var major, minor, sms int32
	for _, a := range []struct {
		v    *int32
		attr int32
	}{{&major, 75}, {&minor, 76}, {&sms, 16}} { // COMPUTE_CAPABILITY_MAJOR, _MINOR, MULTIPROCESSOR_COUNT
		if err := libs.check("cuDeviceGetAttribute", d.cuDeviceGetAttribute(a.v, a.attr, k.device)); err != nil {
			return nil, err
		}
	}
	k.arch, k.sms = fmt.Sprintf("sm_%d%d", major, minor), max(int(sms), 1)
	arch, ptx := target(int(10*major+minor), libs.supportedArchs())
	if arch == "" {
		return nil, fmt.Errorf("cuda: NVRTC %s compiles for none of the architectures a %s device runs", libs.nvrtcVersion, k.arch)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := libs.check("cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain(&k.ctx, k.device)); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			k.release()
		}
	}()
	if err := libs.check("cuCtxSetCurrent", d.cuCtxSetCurrent(k.ctx)); err != nil {
		return nil, err
	}
	opts := append(append([]string(nil), nvrtcOptions...), arch)
	src := kernelSource()
	img, from, err := libs.image(cache, dir, src, "adamnode.cu", opts, ptx, false)
	if err != nil {
		return nil, err
	}
	err = libs.check("cuModuleLoadData", d.cuModuleLoadData(&k.mod, &img[0]))
	if err != nil && from != FromNVRTC {
		// A cached image the driver refuses: compile it again.
		img, from, err = libs.image(cache, dir, src, "adamnode.cu", opts, ptx, true)
		if err != nil {
			return nil, err
		}
		err = libs.check("cuModuleLoadData", d.cuModuleLoadData(&k.mod, &img[0]))
	}
	if err != nil {
		return nil, err
	}
	k.from = from
	for i := range k.fns {
		if err := libs.check("cuModuleGetFunction "+kernelName(i), d.cuModuleGetFunction(&k.fns[i], k.mod, kernelName(i))); err != nil {
			return nil, err
		}
	}
	if err := libs.check("cuMemAlloc_v2", d.cuMemAlloc(&k.norm, (4*maxParts+4*MaxNormParts)*8)); err != nil {
		return nil, err
	}
	if k.params, err = newCMemory(2 * 8 * maxParams); err != nil {
		return nil, err
	}
	return k, nil
}

// release frees what k holds, under a locked thread with k's context
// current (or none yet).
func (k *Kernels) release() error {
	d := &k.libs.drv
	var errs []error
	if k.ctx != 0 {
		errs = append(errs, k.libs.check("cuCtxSetCurrent", d.cuCtxSetCurrent(k.ctx)))
	}
	if k.norm != 0 {
		errs = append(errs, k.libs.check("cuMemFree_v2", d.cuMemFree(k.norm)))
		k.norm = 0
	}
	if k.mod != 0 {
		errs = append(errs, k.libs.check("cuModuleUnload", d.cuModuleUnload(k.mod)))
		k.mod = 0
	}
	if k.params != nil {
		k.params.free()
		k.params = nil
	}
	if k.ctx != 0 {
		errs = append(errs, k.libs.check("cuDevicePrimaryCtxRelease_v2", d.cuDevicePrimaryCtxRel(k.device)))
		k.ctx = 0
	}
	return errors.Join(errs...)
}

// Close unloads the kernels, frees their device memory and releases the
// device's primary context. Free the Buffers of Alloc first: when nothing
// else holds the primary context (the CUDA runtime does once it is used),
// releasing it frees all device memory in it. Calls after Close return
// ErrClosed.
func (k *Kernels) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil
	}
	k.closed = true
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return k.release()
}

// Arch returns the architecture the kernels were compiled for, e.g. "sm_90".
func (k *Kernels) Arch() string { return k.arch }

// NVRTCVersion returns the version of the NVRTC that compiles the kernels.
func (k *Kernels) NVRTCVersion() string { return k.libs.nvrtcVersion }

// Source returns where the compiled image came from when k was made.
func (k *Kernels) Source() ImageSource { return k.from }

// enter starts a call: k locked, the goroutine on a locked OS thread with
// k's context current. Every successful enter is followed by leave.
func (k *Kernels) enter() error {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return ErrClosed
	}
	runtime.LockOSThread()
	if err := k.libs.check("cuCtxSetCurrent", k.libs.drv.cuCtxSetCurrent(k.ctx)); err != nil {
		runtime.UnlockOSThread()
		k.mu.Unlock()
		return err
	}
	return nil
}

func (k *Kernels) leave() {
	runtime.UnlockOSThread()
	k.mu.Unlock()
}

// launch runs kernel fn on grid blocks of blockThreads threads with the
// arguments args (each 8 bytes: a device pointer, a long long, a double,
// or an int or float in the low bytes). The arguments go through the
// parameter block: cuLaunchKernel's kernelParams is an array of pointers
// that C reads, and must not be Go memory. A null pointer follows the last
// (the driver reads as many as the kernel has; the stand-in checks the
// count). Call between enter and leave.
func (k *Kernels) launch(fn int, grid int, args ...uint64) error {
	st := k.launchFunc(k.fns[fn], grid, args...)
	if st == 0 {
		return nil
	}
	return k.libs.check("cuLaunchKernel "+kernelName(fn), st)
}

// launchFunc launches the function f as launch does and returns the
// driver's status.
func (k *Kernels) launchFunc(f uintptr, grid int, args ...uint64) int32 {
	if len(args) >= maxParams {
		panic("cuda: too many kernel arguments") // a bug here
	}
	ptrs := (*[maxParams]uintptr)(unsafe.Pointer(&k.params[0]))
	slots := (*[maxParams]uint64)(unsafe.Pointer(&k.params[8*maxParams]))
	copy(slots[:], args)
	for i := range ptrs {
		ptrs[i] = 0
		if i < len(args) {
			ptrs[i] = k.params.addr(8 * (maxParams + i))
		}
	}
	k.launches.Add(1)
	return k.libs.drv.cuLaunchKernel(f, uint32(grid), 1, 1, blockThreads, 1, 1, 0, 0, k.params.addr(0), 0)
}

// gridFor returns the grid of an elementwise kernel over n elements.
func (k *Kernels) gridFor(n int) int {
	return max(1, min((n+blockThreads-1)/blockThreads, blocksPerSM*k.sms))
}
