package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/tensor/enginetest"
)

// standinDir is where TestMain built the stand-in libraries ("" without
// gcc: the tests that need them skip).
var standinDir string

// TestMain builds the stand-in CUDA runtime, cuBLAS, cuDNN, driver and
// NVRTC (testdata/*.c) with gcc into a temporary directory and points
// DirEnv at it, unless DirEnv is already set (a machine with the real
// libraries). The compiled kernels go to a disk cache of the run's own.
func TestMain(m *testing.M) {
	code := func() int {
		// Every reuse of a device copy is checked against the host values:
		// a write the storage version missed fails the test that made it.
		os.Setenv(VerifyEnv, "1")
		// (A child process of a test inherits both settings.)
		if os.Getenv(DirEnv) != "" && os.Getenv(KernelCacheEnv) != "" {
			return m.Run()
		}
		dir, err := os.MkdirTemp("", "cuda-standin")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		if os.Getenv(KernelCacheEnv) == "" {
			os.Setenv(KernelCacheEnv, filepath.Join(dir, "kernel-cache"))
		}
		if os.Getenv(DirEnv) == "" {
			if err := buildStandin(dir); err != nil {
				fmt.Fprintln(os.Stderr, "cuda tests: no stand-in:", err)
			} else {
				standinDir = dir
				os.Setenv(DirEnv, dir)
				// The stand-in's device memory is the host's; a small limit
				// also has the models' tests drop copies under the verify mode.
				os.Setenv(CacheEnv, "32")
			}
		}
		return m.Run()
	}()
	os.Exit(code)
}

// buildStandin compiles the stand-in libraries into dir.
func buildStandin(dir string) error {
	emu, err := filepath.Abs("testdata/standin_kernel.h")
	if err != nil {
		return err
	}
	// Read by the test itself, the sources count for go test's cache (gcc
	// reading them does not).
	srcs, _ := filepath.Glob("testdata/standin_*")
	for _, s := range srcs {
		if _, err := os.ReadFile(s); err != nil {
			return err
		}
	}
	for _, args := range [][]string{
		{"-shared", "-fPIC", "-O1", "-o", filepath.Join(dir, "libcudart.so"), "testdata/standin_rt.c", "-lpthread"},
		{"-shared", "-fPIC", "-O1", "-o", filepath.Join(dir, "libcublas.so"), "testdata/standin_blas.c", "-L" + dir, "-lcudart", "-Wl,-rpath,$ORIGIN"},
		{"-shared", "-fPIC", "-O1", "-o", filepath.Join(dir, "libcudnn.so"), "testdata/standin_dnn.c", "-L" + dir, "-lcudart", "-Wl,-rpath,$ORIGIN"},
		// The driver and NVRTC under their first names, ahead of a real
		// NVRTC (Debian's libnvrtc11.2) on the loader's path.
		{"-shared", "-fPIC", "-O1", "-o", filepath.Join(dir, "libcuda.so.1"), "testdata/standin_cuda.c", "-L" + dir, "-lcudart", "-Wl,-rpath,$ORIGIN", "-ldl"},
		{"-shared", "-fPIC", "-O1", "-o", filepath.Join(dir, "libnvrtc.so.13"), "testdata/standin_nvrtc.c", "-DSTANDIN_EMU=\"" + emu + "\""},
	} {
		if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("gcc %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

func gpu(t *testing.T) tensor.Backend {
	t.Helper()
	if ok, err := Available(); !ok {
		t.Skipf("no CUDA libraries and no stand-in: %v", err)
	}
	b, err := Backend(0)
	if err != nil {
		t.Fatal(err)
	}
	// The stand-in opens and closes every page of its device memory at
	// each call: leave none behind for the next test.
	t.Cleanup(func() { FreeCache(b) })
	return b
}

// TestUnavailable: without the libraries the package says which it could
// not load, and nothing panics.
func TestUnavailable(t *testing.T) {
	if os.Getenv(unavailableChildEnv) == "" {
		// In a fresh process: once another test has loaded the stand-in,
		// the loader finds it by its soname wherever it is asked to look.
		cmd := exec.Command(os.Args[0], "-test.run=^TestUnavailable$", "-test.v")
		cmd.Env = append(os.Environ(), unavailableChildEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the child process: %v\n%s", err, out)
		}
		if bytes.Contains(out, []byte("--- SKIP")) {
			t.Skipf("the child process skipped:\n%s", out)
		}
		if !bytes.Contains(out, []byte("--- PASS: TestUnavailable")) {
			t.Fatalf("the child process ran no TestUnavailable:\n%s", out)
		}
		return
	}
	_, err := load(t.TempDir())
	if err == nil && standinDir == "" {
		t.Skip("the real CUDA runtime is on the loader's path")
	}
	if err != nil && !strings.Contains(err.Error(), "libcudart.so") {
		t.Errorf("error %q does not name the runtime library", err)
	}
}

// unavailableChildEnv, set, has TestUnavailable run its check in this
// process (its child's).
const unavailableChildEnv = "ADAMNODE_CUDA_TEST_UNAVAILABLE_CHILD"

// TestDirList: DirEnv may list several directories, as PATH does; the
// libraries load from whichever holds them.
func TestDirList(t *testing.T) {
	if standinDir == "" {
		t.Skip("no stand-in libraries")
	}
	empty := t.TempDir()
	list := strings.Join([]string{empty, "", standinDir}, string(os.PathListSeparator))
	if _, err := load(list); err != nil {
		t.Errorf("load(%q): %v", list, err)
	}
	if _, err := load(empty); err == nil {
		t.Skip("the real CUDA runtime is on the loader's path")
	} else if !strings.Contains(err.Error(), empty+string(filepath.Separator)+"lib") {
		t.Errorf("error %q does not name the directory tried", err)
	}
}

// TestConformance runs the CPU engines' conformance suite on the GPU
// engines: GEMM with every transpose, stride and scaling; the three
// convolution passes with and without bias and accumulation, on cuDNN;
// the elementwise suite on the engines' Elementwise, the kernels.
func TestConformance(t *testing.T) {
	b := gpu(t)
	elementwiseOf[float64](t, b) // Run checks the engine's Elementwise too: it must have one
	t.Run("float64", func(t *testing.T) { enginetest.Run(t, tensor.EngineFor[float64](b)) })
	t.Run("float32", func(t *testing.T) { enginetest.Run(t, tensor.EngineFor[float32](b)) })
}

// TestErrorsNameTheCall: a device that does not exist, and a copy in the
// wrong direction, are errors naming what failed.
func TestErrorsNameTheCall(t *testing.T) {
	gpu(t)
	if _, err := Backend(3); !errors.Is(err, ErrNoDevice) {
		t.Errorf("device 3: %v", err)
	}
	l, _ := loaded()
	host := make([]float32, 4)
	err := l.rtCheck("cudaMemcpy", l.cudaMemcpy(addr(host), addr(host), 16, hostToDevice))
	var ce *Error
	if !errors.As(err, &ce) || ce.Call != "cudaMemcpy" || ce.Status == 0 {
		t.Errorf("host-to-host copy as host-to-device: %v", err)
	}
}

// TestKernelErrorsNameTheCall: a convolution whose output shape does not
// fit (a caller's bug the CPU engines catch as a ShapeError) fails inside
// cuDNN; the engine panics with the *Error naming the cuDNN call and its
// status.
func TestKernelErrorsNameTheCall(t *testing.T) {
	e := tensor.EngineFor[float32](gpu(t))
	x, w := tensor.New[float32](1, 2, 5, 5), tensor.New[float32](3, 2, 3, 3)
	y := tensor.New[float32](1, 3, 4, 4) // should be 3×3
	defer func() {
		var ce *Error
		err, _ := recover().(error)
		if !errors.As(err, &ce) || !strings.HasPrefix(ce.Call, "cudnn") || !strings.Contains(ce.Msg, "BAD_PARAM") {
			t.Errorf("recovered %v, want a cuDNN *Error", err)
		}
	}()
	e.Conv2D(y, x, w, nil, tensor.ConvParams{})
}

// TestHostDereferenceCrashes: the stand-in's device memory cannot be read
// from the host — the helper below, run in a child process, dereferences a
// device pointer and must die of it. This is what makes the conformance
// suite's passing mean that the engine never touches device memory
// directly.
func TestHostDereferenceCrashes(t *testing.T) {
	if os.Getenv("CUDA_TEST_DEREF") == "1" {
		l, err := loaded()
		if err != nil {
			t.Fatal(err)
		}
		var p uintptr
		if err := l.rtCheck("cudaMalloc", l.cudaMalloc(&p, 64)); err != nil {
			t.Fatal(err)
		}
		v := *(*float32)(unsafe.Add(nil, p)) // the planted host dereference
		fmt.Println("read", v, "from device memory")
		return
	}
	gpu(t)
	if standinDir == "" {
		t.Skip("real CUDA libraries: device memory is not host memory at all")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostDereferenceCrashes$", "-test.v")
	cmd.Env = append(os.Environ(), "CUDA_TEST_DEREF=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "unexpected fault address") {
		t.Fatalf("the dereference of a device pointer did not fault (%v):\n%s", err, out)
	}
}

// devicesChildEnv, set, has TestDeviceOnEveryThread run its check in this
// process (its child's, whose stand-in has two devices).
const devicesChildEnv = "ADAMNODE_CUDA_TEST_DEVICES_CHILD"

// TestDeviceOnEveryThread: the backend of device 1 on a machine of two
// works from every thread — the runtime's current device is per thread,
// and the stand-in's cuBLAS handle, made on device 1, refuses a call from
// a thread whose current device is 0 — and its results are right.
func TestDeviceOnEveryThread(t *testing.T) {
	if standinDir == "" && os.Getenv(devicesChildEnv) == "" {
		t.Skip("needs the stand-in (two devices)")
	}
	if os.Getenv(devicesChildEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDeviceOnEveryThread$", "-test.v")
		cmd.Env = append(os.Environ(), devicesChildEnv+"=1", "STANDIN_DEVICES=2")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the child process: %v\n%s", err, out)
		}
		if !bytes.Contains(out, []byte("--- PASS: TestDeviceOnEveryThread")) {
			t.Fatalf("the child process ran no TestDeviceOnEveryThread:\n%s", out)
		}
		return
	}
	b, err := Backend(1)
	if err != nil {
		t.Fatal(err)
	}
	e, cpu := tensor.EngineFor[float64](b), tensor.EngineFor[float64](tensor.Gonum(1))
	rng := rand.New(rand.NewPCG(9, 10))
	a, w := tensor.RandN[float64](rng, 0, 1, 4, 3), tensor.RandN[float64](rng, 0, 1, 3, 5)
	want := tensor.New[float64](4, 5).MatMul(cpu, a, false, w, false)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // a thread of its own, whose current device is 0
			defer runtime.UnlockOSThread()
			defer func() {
				if r := recover(); r != nil {
					errs <- fmt.Sprint(r)
				}
			}()
			for range 4 {
				z := tensor.New[float64](4, 5).MatMul(e, a, false, w, false)
				if d := cmp.Diff(want.ReadData(), z.ReadData(), cmpopts.EquateApprox(1e-12, 0)); d != "" {
					errs <- d
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
}
