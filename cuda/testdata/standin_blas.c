// A stand-in for cuBLAS (see standin_rt.c): cublasCreate_v2,
// cublasDestroy_v2, cublasSgemm_v2 and cublasDgemm_v2 with cuBLAS's
// signatures, status codes and column-major convention, computed with plain
// loops on the stand-in's device memory. Handles are checked; so are the
// sizes, and that every matrix lies in device memory.
#include <stdlib.h>

void standin_enter(void);
void standin_leave(void);
int standin_device(const void *p, size_t n);
int standin_current_device(void);

enum { ok = 0, notInitialized = 1, invalidValue = 7, executionFailed = 13 };
enum { opN = 0, opT = 1 };

// A handle belongs to the device current when it was made, and refuses
// work from a thread whose current device is another (executionFailed).
typedef struct {
	unsigned magic;
	int device;
} handle;
#define MAGIC 0xc0b1a5u

int cublasCreate_v2(handle **h) {
	if (!h) return invalidValue;
	*h = malloc(sizeof(handle));
	(*h)->magic = MAGIC;
	(*h)->device = standin_current_device();
	return ok;
}

int cublasDestroy_v2(handle *h) {
	if (!h || h->magic != MAGIC) return notInitialized;
	h->magic = 0;
	free(h);
	return ok;
}

// bytes returns the extent of a column-major rows × cols matrix with leading
// dimension ld, in bytes of size-byte elements.
static size_t bytes(int rows, int cols, int ld, size_t size) {
	if (rows == 0 || cols == 0) return 0;
	return ((size_t)(cols - 1) * (size_t)ld + (size_t)rows) * size;
}

#define GEMM(NAME, T)                                                                                  \
	int NAME(handle *h, int ta, int tb, int m, int n, int k, const T *alpha, const T *a, int lda,     \
		 const T *b, int ldb, const T *beta, T *c, int ldc) {                                       \
		if (!h || h->magic != MAGIC) return notInitialized;                                          \
		if (h->device != standin_current_device()) return executionFailed;                           \
		if ((ta != opN && ta != opT) || (tb != opN && tb != opT) || m < 0 || n < 0 || k < 0)       \
			return invalidValue;                                                                 \
		int ra = ta == opN ? m : k, ca = ta == opN ? k : m;                                          \
		int rb = tb == opN ? k : n, cb = tb == opN ? n : k;                                          \
		if (lda < (ra > 1 ? ra : 1) || ldb < (rb > 1 ? rb : 1) || ldc < (m > 1 ? m : 1))            \
			return invalidValue;                                                                 \
		if (m == 0 || n == 0) return ok;                                                             \
		standin_enter();                                                                             \
		if ((k > 0 && (!standin_device(a, bytes(ra, ca, lda, sizeof(T))) ||                          \
			       !standin_device(b, bytes(rb, cb, ldb, sizeof(T))))) ||                        \
		    !standin_device(c, bytes(m, n, ldc, sizeof(T)))) {                                       \
			standin_leave();                                                                     \
			return executionFailed;                                                              \
		}                                                                                            \
		for (int j = 0; j < n; j++)                                                                  \
			for (int i = 0; i < m; i++) {                                                        \
				T s = 0;                                                                     \
				for (int p = 0; p < k; p++) {                                                \
					T x = ta == opN ? a[i + (size_t)p * lda] : a[p + (size_t)i * lda];   \
					T y = tb == opN ? b[p + (size_t)j * ldb] : b[j + (size_t)p * ldb];   \
					s += x * y;                                                          \
				}                                                                            \
				T *z = &c[i + (size_t)j * ldc];                                              \
				*z = *beta == 0 ? *alpha * s : *alpha * s + *beta * *z;                      \
			}                                                                                    \
		standin_leave();                                                                             \
		return ok;                                                                                   \
	}

GEMM(cublasSgemm_v2, float)
GEMM(cublasDgemm_v2, double)
