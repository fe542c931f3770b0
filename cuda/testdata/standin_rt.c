// A stand-in for the CUDA runtime, for testing package cuda on machines
// without a GPU. It exports the runtime functions the package binds, with
// their signatures and status codes, and keeps "device" memory in pages
// the host cannot touch: every allocation is mapped PROT_NONE and made
// readable and writable only inside the stand-in's own functions
// (standin_enter / standin_leave), so a host dereference of a device
// pointer faults. Copies check their direction against the allocations.
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { ok = 0, errInvalidValue = 1, errMemoryAllocation = 2, errInvalidDevice = 101, errInvalidDirection = 21 };

#define MAXALLOC 4096
static struct { char *base; size_t size, mapped; } allocs[MAXALLOC];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static size_t pageRound(size_t n) {
	size_t p = (size_t)sysconf(_SC_PAGESIZE);
	return (n + p - 1) / p * p;
}

// standin_enter opens every device page to the stand-in (and holds the lock).
void standin_enter(void) {
	pthread_mutex_lock(&mu);
	for (int i = 0; i < MAXALLOC; i++)
		if (allocs[i].base) mprotect(allocs[i].base, allocs[i].mapped, PROT_READ | PROT_WRITE);
}

// standin_leave closes them again.
void standin_leave(void) {
	for (int i = 0; i < MAXALLOC; i++)
		if (allocs[i].base) mprotect(allocs[i].base, allocs[i].mapped, PROT_NONE);
	pthread_mutex_unlock(&mu);
}

// standin_device reports whether [p, p+n) lies inside one allocation (n = 0:
// whether p points into one). Call it between enter and leave.
int standin_device(const void *p, size_t n) {
	const char *c = p;
	for (int i = 0; i < MAXALLOC; i++) {
		char *b = allocs[i].base;
		if (b && c >= b && c + n <= b + allocs[i].size && (n > 0 || c < b + allocs[i].size)) return 1;
	}
	return 0;
}

int cudaMalloc(void **ptr, size_t size) {
	if (!ptr || size == 0) return errInvalidValue;
	size_t m = pageRound(size);
	void *b = mmap(NULL, m, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b == MAP_FAILED) return errMemoryAllocation;
	standin_enter();
	int i = 0;
	while (i < MAXALLOC && allocs[i].base) i++;
	if (i == MAXALLOC) {
		standin_leave();
		munmap(b, m);
		return errMemoryAllocation;
	}
	allocs[i].base = b, allocs[i].size = size, allocs[i].mapped = m;
	standin_leave();
	*ptr = b;
	return ok;
}

int cudaFree(void *ptr) {
	if (!ptr) return ok;
	standin_enter();
	for (int i = 0; i < MAXALLOC; i++)
		if (allocs[i].base == ptr) {
			munmap(allocs[i].base, allocs[i].mapped);
			allocs[i].base = NULL;
			standin_leave();
			return ok;
		}
	standin_leave();
	return errInvalidValue;
}

// copies counts the copies between host and device (every one passes
// through cudaMemcpy, the driver's cuMemcpy* too): the number and bytes
// to the device, then to the host. Under mu.
static unsigned long long copies[4];

// standin_copies writes the counts of copies so far to out[0..3]: copies
// to the device and their bytes, copies to the host and their bytes (a
// test's view of all traffic, whoever asked for it).
void standin_copies(unsigned long long *out) {
	pthread_mutex_lock(&mu);
	memcpy(out, copies, sizeof copies);
	pthread_mutex_unlock(&mu);
}

// cudaMemcpy copies count bytes; kind 1 is host to device, 2 device to host,
// 3 device to device. A pointer on the wrong side is an error.
int cudaMemcpy(void *dst, const void *src, size_t count, int kind) {
	if (count == 0) return ok;
	standin_enter();
	int good = 0;
	switch (kind) {
	case 1: good = standin_device(dst, count) && !standin_device(src, 0); break;
	case 2: good = standin_device(src, count) && !standin_device(dst, 0); break;
	case 3: good = standin_device(src, count) && standin_device(dst, count); break;
	}
	if (good) memcpy(dst, src, count);
	if (good && kind != 3) {
		copies[kind == 1 ? 0 : 2]++;
		copies[kind == 1 ? 1 : 3] += count;
	}
	standin_leave();
	return good ? ok : errInvalidDirection;
}

// The stand-in has STANDIN_DEVICES devices (default 1), all of them the
// same host memory; as with CUDA, the current device is the calling
// thread's (cudaSetDevice), 0 until set.
static int devices(void) {
	const char *s = getenv("STANDIN_DEVICES");
	int n = s ? atoi(s) : 1;
	return n > 0 ? n : 1;
}

static __thread int current_device;

// standin_current_device returns the calling thread's current device.
int standin_current_device(void) { return current_device; }

int cudaGetDeviceCount(int *n) {
	if (!n) return errInvalidValue;
	*n = devices();
	return ok;
}

int cudaSetDevice(int d) {
	if (d < 0 || d >= devices()) return errInvalidDevice;
	current_device = d;
	return ok;
}

const char *cudaGetErrorString(int code) {
	switch (code) {
	case ok: return "no error";
	case errInvalidValue: return "invalid argument";
	case errMemoryAllocation: return "out of memory";
	case errInvalidDirection: return "invalid copy direction for memcpy";
	case errInvalidDevice: return "invalid device ordinal";
	}
	return "unknown error";
}
