// A stand-in for the CUDA driver API (see standin_rt.c): the functions
// package cuda binds, with the driver's signatures and status codes, over
// the stand-in runtime's device memory (cuMemAlloc is its cudaMalloc, so
// the host cannot touch it either).
//
// Strict where the real driver is, and where a mistake would pass
// unnoticed on the CPU: nothing works before cuInit; every call that needs
// a context fails with CUDA_ERROR_INVALID_CONTEXT unless the calling thread
// made the device's primary context current (contexts are per thread, as
// on a GPU); a module image must be an ELF object (the stand-in NVRTC's
// "CUBIN", a shared object); a launch checks its grid and block and the
// number of its arguments, and refuses any pointer argument that is
// neither null nor device memory.
//
// A launch runs the grid on the CPU with the device pages open: the blocks
// one after another, the threads of a block as coroutines (ucontext) that
// run until they reach __syncthreads or return, in an order shuffled each
// time, so that a missing barrier shows as a wrong result.
// A barrier not every thread reaches fails the launch.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

int cudaMalloc(void **ptr, size_t size);
int cudaFree(void *ptr);
int cudaMemcpy(void *dst, const void *src, size_t count, int kind);
void standin_enter(void);
void standin_leave(void);
int standin_device(const void *p, size_t n);

enum {
	ok = 0,
	errInvalidValue = 1,
	errOutOfMemory = 2,
	errNotInitialized = 3,
	errInvalidDevice = 101,
	errInvalidImage = 200,
	errInvalidContext = 201,
	errInvalidHandle = 400,
	errNotFound = 500,
	errIllegalAddress = 700,
	errLaunchOutOfResources = 701,
	errLaunchFailed = 719,
};

// The stand-in device: a compute capability 9.0 GPU with 4 multiprocessors.
enum { ccMajor = 9, ccMinor = 0, smCount = 4, maxThreads = 1024 };

static int initialized;
static struct ctx {
	unsigned magic;
	int refs;
} primary;
#define CTX_MAGIC 0xc7c7u
static __thread struct ctx *current;

const char *standin_cu_name(int r) {
	switch (r) {
	case ok: return "CUDA_SUCCESS";
	case errInvalidValue: return "CUDA_ERROR_INVALID_VALUE";
	case errOutOfMemory: return "CUDA_ERROR_OUT_OF_MEMORY";
	case errNotInitialized: return "CUDA_ERROR_NOT_INITIALIZED";
	case errInvalidDevice: return "CUDA_ERROR_INVALID_DEVICE";
	case errInvalidImage: return "CUDA_ERROR_INVALID_IMAGE";
	case errInvalidContext: return "CUDA_ERROR_INVALID_CONTEXT";
	case errInvalidHandle: return "CUDA_ERROR_INVALID_HANDLE";
	case errNotFound: return "CUDA_ERROR_NOT_FOUND";
	case errIllegalAddress: return "CUDA_ERROR_ILLEGAL_ADDRESS";
	case errLaunchOutOfResources: return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
	case errLaunchFailed: return "CUDA_ERROR_LAUNCH_FAILED";
	}
	return NULL;
}

int cuGetErrorString(int r, const char **s) {
	if (!s) return errInvalidValue;
	*s = standin_cu_name(r);
	return *s ? ok : errInvalidValue;
}

int cuInit(unsigned flags) {
	if (flags != 0) return errInvalidValue;
	initialized = 1;
	return ok;
}

int cuDriverGetVersion(int *v) {
	if (!v) return errInvalidValue;
	*v = 12040;
	return ok;
}

int cuDeviceGetCount(int *n) {
	if (!initialized) return errNotInitialized;
	if (!n) return errInvalidValue;
	*n = 1;
	return ok;
}

int cuDeviceGet(int *d, int ordinal) {
	if (!initialized) return errNotInitialized;
	if (!d) return errInvalidValue;
	if (ordinal != 0) return errInvalidDevice;
	*d = 0;
	return ok;
}

int cuDeviceGetAttribute(int *v, int attr, int dev) {
	if (!initialized) return errNotInitialized;
	if (!v) return errInvalidValue;
	if (dev != 0) return errInvalidDevice;
	switch (attr) {
	case 1: *v = maxThreads; return ok; // MAX_THREADS_PER_BLOCK
	case 16: *v = smCount; return ok;   // MULTIPROCESSOR_COUNT
	case 75: *v = ccMajor; return ok;   // COMPUTE_CAPABILITY_MAJOR
	case 76: *v = ccMinor; return ok;   // COMPUTE_CAPABILITY_MINOR
	}
	return errInvalidValue;
}

int cuDevicePrimaryCtxRetain(struct ctx **c, int dev) {
	if (!initialized) return errNotInitialized;
	if (!c) return errInvalidValue;
	if (dev != 0) return errInvalidDevice;
	primary.magic = CTX_MAGIC;
	primary.refs++;
	*c = &primary;
	return ok;
}

int cuDevicePrimaryCtxRelease_v2(int dev) {
	if (!initialized) return errNotInitialized;
	if (dev != 0) return errInvalidDevice;
	if (primary.refs == 0) return errInvalidContext;
	primary.refs--;
	return ok;
}

int cuCtxSetCurrent(struct ctx *c) {
	if (!initialized) return errNotInitialized;
	if (c && (c != &primary || primary.refs == 0)) return errInvalidContext;
	current = c;
	return ok;
}

// ready reports the status of a call that needs a current context.
static int ready(void) {
	if (!initialized) return errNotInitialized;
	if (!current || current->magic != CTX_MAGIC || current->refs == 0) return errInvalidContext;
	return ok;
}

int cuCtxSynchronize(void) { return ready(); }

int cuMemAlloc_v2(unsigned long long *p, size_t n) {
	int r = ready();
	if (r) return r;
	if (!p || n == 0) return errInvalidValue;
	void *q;
	if (cudaMalloc(&q, n) != 0) return errOutOfMemory;
	*p = (unsigned long long)q;
	return ok;
}

int cuMemFree_v2(unsigned long long p) {
	int r = ready();
	if (r) return r;
	return cudaFree((void *)p) == 0 ? ok : errInvalidValue;
}

int cuMemcpyHtoD_v2(unsigned long long dst, const void *src, size_t n) {
	int r = ready();
	if (r) return r;
	return cudaMemcpy((void *)dst, src, n, 1) == 0 ? ok : errInvalidValue;
}

int cuMemcpyDtoH_v2(void *dst, unsigned long long src, size_t n) {
	int r = ready();
	if (r) return r;
	return cudaMemcpy(dst, (const void *)src, n, 2) == 0 ? ok : errInvalidValue;
}

int cuMemcpyDtoD_v2(unsigned long long dst, unsigned long long src, size_t n) {
	int r = ready();
	if (r) return r;
	return cudaMemcpy((void *)dst, (const void *)src, n, 3) == 0 ? ok : errInvalidValue;
}

// Modules and functions.
#define MOD_MAGIC 0x30d0u
#define FN_MAGIC 0xf00du
typedef struct {
	unsigned magic;
	void *dl;
} module;
typedef struct {
	unsigned magic;
	module *mod;
	void (*entry)(void **);
	const char *sig;
} function;

// imageSize returns the size of an ELF image from its header (the section
// headers come last in the objects the stand-in NVRTC makes), or 0 if it
// is not an ELF image.
static size_t imageSize(const unsigned char *img) {
	const Elf64_Ehdr *h = (const Elf64_Ehdr *)img;
	if (memcmp(h->e_ident, ELFMAG, SELFMAG) != 0 || h->e_ident[EI_CLASS] != ELFCLASS64) return 0;
	return (size_t)h->e_shoff + (size_t)h->e_shnum * h->e_shentsize;
}

int cuModuleLoadData(module **m, const void *image) {
	int r = ready();
	if (r) return r;
	if (!m || !image) return errInvalidValue;
	size_t n = imageSize(image);
	if (n == 0) return errInvalidImage;
	char path[] = "/tmp/standin-module-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0) return errOutOfMemory;
	int wrote = write(fd, image, n) == (ssize_t)n;
	close(fd);
	void *dl = wrote ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
	unlink(path);
	if (!dl) return errInvalidImage;
	module *mod = malloc(sizeof *mod);
	mod->magic = MOD_MAGIC, mod->dl = dl;
	*m = mod;
	return ok;
}

int cuModuleUnload(module *m) {
	int r = ready();
	if (r) return r;
	if (!m || m->magic != MOD_MAGIC) return errInvalidHandle;
	m->magic = 0;
	dlclose(m->dl);
	free(m);
	return ok;
}

int cuModuleGetFunction(function **f, module *m, const char *name) {
	int r = ready();
	if (r) return r;
	if (!f || !name) return errInvalidValue;
	if (!m || m->magic != MOD_MAGIC) return errInvalidHandle;
	char sym[300];
	snprintf(sym, sizeof sym, "standin_entry_%s", name);
	void *entry = dlsym(m->dl, sym);
	snprintf(sym, sizeof sym, "standin_sig_%s", name);
	const char *sig = dlsym(m->dl, sym);
	if (!entry || !sig) return errNotFound;
	function *fn = malloc(sizeof *fn);
	fn->magic = FN_MAGIC, fn->mod = m, fn->entry = (void (*)(void **))entry, fn->sig = sig;
	*f = fn;
	return ok;
}

// The emulation's built-in variables (standin_kernel.h).
typedef struct {
	unsigned x, y, z;
} dim3;
dim3 threadIdx, blockIdx, blockDim, gridDim;

// The threads of the block being run.
enum { stackSize = 256 << 10 };
static struct thread {
	ucontext_t uc;
	char *stack;
	int done, waiting;
} *threads;
static int nthreads, allocated, running;
static ucontext_t scheduler;
static void (*runEntry)(void **);
static void **runParams;

void standin_syncthreads(void) {
	threads[running].waiting = 1;
	swapcontext(&threads[running].uc, &scheduler);
}

static void threadMain(void) {
	runEntry(runParams);
	threads[running].done = 1;
	// returning resumes uc_link, the scheduler
}

// setThread sets threadIdx for thread t of the block.
static void setThread(int t) {
	threadIdx.x = (unsigned)t % blockDim.x;
	threadIdx.y = (unsigned)t / blockDim.x % blockDim.y;
	threadIdx.z = (unsigned)t / (blockDim.x * blockDim.y);
}

// The order threads run in, shuffled each round with a fixed-seed
// generator: a missing barrier shows as a wrong result, whichever thread
// reads what another writes.
static int *order;
static unsigned long long rng = 0x9e3779b97f4a7c15ull;

static unsigned next(void) {
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (unsigned)(rng >> 32);
}

static void shuffle(void) {
	for (int i = 0; i < nthreads; i++) order[i] = i;
	for (int i = nthreads - 1; i > 0; i--) {
		int j = (int)(next() % (unsigned)(i + 1)), t = order[i];
		order[i] = order[j], order[j] = t;
	}
}

// runBlock runs the threads of one block to their end; it returns 0, or
// errLaunchFailed when a barrier is not reached by every thread.
static int runBlock(void) {
	for (int t = 0; t < nthreads; t++) {
		struct thread *th = &threads[t];
		getcontext(&th->uc);
		th->uc.uc_stack.ss_sp = th->stack;
		th->uc.uc_stack.ss_size = stackSize;
		th->uc.uc_link = &scheduler;
		makecontext(&th->uc, threadMain, 0);
		th->done = 0, th->waiting = 0;
	}
	for (;;) {
		int left = 0, waiting = 0;
		shuffle();
		for (int k = 0; k < nthreads; k++) {
			int t = order[k];
			struct thread *th = &threads[t];
			if (th->done) continue;
			th->waiting = 0;
			running = t;
			setThread(t);
			swapcontext(&scheduler, &th->uc);
			if (!th->done) left++;
			if (th->waiting) waiting++;
		}
		if (left == 0) return ok;
		if (waiting != nthreads) return errLaunchFailed; // some returned, some wait at a barrier
	}
}

static pthread_mutex_t launchMu = PTHREAD_MUTEX_INITIALIZER;

int cuLaunchKernel(function *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shared,
		   void *stream, void **params, void **extra) {
	int r = ready();
	if (r) return r;
	if (!f || f->magic != FN_MAGIC || f->mod->magic != MOD_MAGIC) return errInvalidHandle;
	if (stream != NULL || extra != NULL) return errInvalidValue; // the stand-in has the default stream only
	if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 || gy > 65535 || gz > 65535) return errInvalidValue;
	unsigned long long nt = (unsigned long long)bx * by * bz;
	if (nt > maxThreads || bz > 64) return errInvalidValue;
	if (shared != 0) return errLaunchOutOfResources; // no dynamic shared memory
	// The argument count: package cuda ends kernelParams with a null pointer
	// (the real driver reads only as many as the kernel has), so a wrapper
	// that passes too few or too many arguments fails here.
	size_t np = strlen(f->sig);
	if (!params) return np ? errInvalidValue : ok;
	for (size_t i = 0; i < np; i++)
		if (!params[i]) return errInvalidValue;
	if (params[np]) return errInvalidValue;
	pthread_mutex_lock(&launchMu);
	standin_enter();
	for (size_t i = 0; i < np; i++)
		if (f->sig[i] == 'p') {
			void *p = *(void **)params[i];
			if (p && !standin_device(p, 0)) {
				standin_leave();
				pthread_mutex_unlock(&launchMu);
				return errIllegalAddress;
			}
		}
	if (allocated < (int)nt) {
		threads = realloc(threads, nt * sizeof *threads);
		order = realloc(order, nt * sizeof *order);
		for (int t = allocated; t < (int)nt; t++) threads[t].stack = malloc(stackSize);
		allocated = (int)nt;
	}
	nthreads = (int)nt;
	blockDim = (dim3){bx, by, bz};
	gridDim = (dim3){gx, gy, gz};
	runEntry = f->entry, runParams = params;
	r = ok;
	for (unsigned z = 0; z < gz && !r; z++)
		for (unsigned y = 0; y < gy && !r; y++)
			for (unsigned x = 0; x < gx && !r; x++) {
				blockIdx = (dim3){x, y, z};
				r = runBlock();
			}
	standin_leave();
	pthread_mutex_unlock(&launchMu);
	return r;
}
