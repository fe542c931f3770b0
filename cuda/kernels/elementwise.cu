// The elementwise kernels of package cuda, compiled at run time by NVRTC
// (and, in the tests, by the C compiler under the stand-in's emulation
// header; the package doc says why they follow the rules below).
//
// Every kernel walks its elements in a grid-stride loop, so any grid runs
// them all; the launch picks the grid. The reductions reduce each block in
// static shared memory with __syncthreads, blocks of exactly NORM_THREADS
// threads, and write one record per block; a second kernel of one block
// reduces the records. No warp intrinsics, no atomics, no dynamic shared
// memory. Pointers that a kernel's doc lets alias (in place) are not
// __restrict__. Sizes are long long. The source is C as well as CUDA C++:
// kernels have C linkage, and no helper is overloaded (float and double
// versions come from one macro, suffixed _f32 and _f64).

#ifdef __cplusplus
extern "C" {
#endif

// isnan_d and notfinite_d, without the math headers: NaN is the one value
// unequal to itself, and x − x is NaN exactly when x is NaN or ±Inf.
__device__ static inline int isnan_d(double x) { return x != x; }
__device__ static inline int notfinite_d(double x) {
	double d = x - x;
	return d != d;
}

#define ANK_ELEMENTWISE(S, T, EXP, LOG1P, EXPM1, TANH, FMA, LOG, SQRT, FABS)                                              \
	__device__ static inline T abs_##S(T x) { return x < 0 ? -x : x; }                                     \
	/* max of a and b, NaN when either is */                                                               \
	__device__ static inline T maxnan_##S(T a, T b) { return (a != a || a > b) ? a : b; }                   \
                                                                                                               \
	__global__ void fill_##S(T *__restrict__ y, T v, long long n) {                                         \
		for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;                       \
		     i += (long long)gridDim.x * blockDim.x)                                                    \
			y[i] = v;                                                                              \
	}                                                                                                      \
                                                                                                               \
	__global__ void copy_##S(T *__restrict__ y, const T *__restrict__ x, long long n) {                     \
		for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;                       \
		     i += (long long)gridDim.x * blockDim.x)                                                    \
			y[i] = x[i];                                                                           \
	}                                                                                                      \
                                                                                                               \
	/* y = base + c0·k0 + … + c(m−1)·k(m−1), each product rounded, the terms added in order        \
	   (base null: 0 + …). y may be base; no k may overlap y. */                                        \
	__global__ void lincomb_##S(T *y, const T *base, long long m, const T *k0, const T *k1,                \
				    const T *k2, const T *k3, const T *k4, const T *k5, const T *k6, T c0,     \
				    T c1, T c2, T c3, T c4, T c5, T c6, long long n) {                         \
		for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;                       \
		     i += (long long)gridDim.x * blockDim.x) {                                                  \
			T s = base ? base[i] : (T)0;                                                           \
			T p;                                                                                   \
			if (m > 0) { p = c0 * k0[i]; s = s + p; }                                              \
			if (m > 1) { p = c1 * k1[i]; s = s + p; }                                              \
			if (m > 2) { p = c2 * k2[i]; s = s + p; }                                              \
			if (m > 3) { p = c3 * k3[i]; s = s + p; }                                              \
			if (m > 4) { p = c4 * k4[i]; s = s + p; }                                              \
			if (m > 5) { p = c5 * k5[i]; s = s + p; }                                              \
			if (m > 6) { p = c6 * k6[i]; s = s + p; }                                              \
			y[i] = s;                                                                              \
		}                                                                                              \
	}                                                                                                      \
                                                                                                               \
	/* Strided blocks: for b in [0, count) and j in [0, len), with i = b·len + j over n = count·len,  \
	   z[zoff + b·zstride + j] = a·x[xoff + b·xstride + j], or z[…] + a·x[…] (acc ≠ 0), the product   \
	   rounded, then added. z's blocks do not overlap one another or x. */                          \
	__global__ void blocks_##S(T *__restrict__ z, const T *__restrict__ x, T a, int acc, long long len,   \
				   long long zoff, long long zstride, long long xoff, long long xstride,       \
				   long long n) {                                                              \
		for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;                       \
		     i += (long long)gridDim.x * blockDim.x) {                                                  \
			long long b = i / len, j = i - b * len;                                                \
			T p = a * x[xoff + b * xstride + j];                                                   \
			T *d = z + zoff + b * zstride + j;                                                     \
			*d = acc ? *d + p : p;                                                                 \
		}                                                                                              \
	}                                                                                                      \
                                                                                                               \
	__device__ static inline T sigmoid_##S(T x) {                                                          \
		if (x >= 0) return (T)1 / ((T)1 + EXP(-x));                                                    \
		T e = EXP(x);                                                                                  \
		return e / ((T)1 + e);                                                                         \
	}                                                                                                      \
	__device__ static inline T softplus_##S(T x) {                                                         \
		if (x > 0) return x + LOG1P(EXP(-x));                                                          \
		return LOG1P(EXP(x));                                                                          \
	}                                                                                                      \
	/* Go's max and min: NaN if either is, +0 the larger zero (x + y of zeros is −0 only when both \
	   are). */                                                                                     \
	__device__ static inline T gomax_##S(T x, T y) {                                                       \
		if (x != x || y != y) return x + y;                                                            \
		return x > y ? x : (y > x ? y : (x == 0 ? x + y : x));                                          \
	}                                                                                                      \
	__device__ static inline T gomin_##S(T x, T y) {                                                       \
		if (x != x || y != y) return x + y;                                                            \
		return x < y ? x : (y < x ? y : (x == 0 ? -(-x - y) : x));                                      \
	}                                                                                                      \
	/* max(x, 0) with NaN kept and −0 made +0 */                                                           \
	__device__ static inline T relu_##S(T x) { return x > 0 ? x : (x != x ? x : (T)0); }                   \
                                                                                                               \
	/* y = f(x) for op (the MapOp values, then the maps with parameters a, b): 0 tanh, 1 sigmoid,  \
	   2 exp, 3 relu, 4 softplus, 5 log, 6 sqrt, 7 x², 8 −x, 9 |x|, 10 sin, 11 cos, 12 leaky relu   \
	   (x > 0 ? x : a·x), 13 hardtanh and 16 clamp min(max(x, a), b) (Go's min and max), 14 a·x,    \
	   15 x + a, 17 elu (x > 0 ? x : a·expm1(x)), 18 x^a. sin, cos, expm1 and pow in double for     \
	   both types, rounded to T: as autograd's maps, which call the math package. */                 \
	__global__ void map_##S(T *y, const T *x, int op, T a, T b, long long n) {                             \
		for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;                       \
		     i += (long long)gridDim.x * blockDim.x) {                                                  \
			T v = x[i];                                                                            \
			switch (op) {                                                                          \
			case 0: v = TANH(v); break;                                                            \
			case 1: v = sigmoid_##S(v); break;                                                     \
			case 2: v = EXP(v); break;                                                             \
			case 3: v = relu_##S(v); break;                                                        \
			case 4: v = softplus_##S(v); break;                                                    \
			case 5: v = LOG(v); break;                                                             \
			case 6: v = SQRT(v); break;                                                            \
			case 7: v = v * v; break;                                                              \
			case 8: v = -v; break;                                                                 \
			case 9: v = FABS(v); break;                                                            \
			case 10: v = (T)sin((double)v); break;                                                 \
			case 11: v = (T)cos((double)v); break;                                                 \
			case 12: v = v > 0 ? v : a * v; break;                                                 \
			case 13:                                                                               \
			case 16: v = gomin_##S(gomax_##S(v, a), b); break;                                     \
			case 14: v = a * v; break;                                                             \
			case 15: v = v + a; break;                                                             \
			case 17: v = v > 0 ? v : a * (T)expm1((double)v); break;                               \
			default: v = (T)pow((double)v, (double)a); break;                                      \
			}                                                                                      \
			y[i] = v;                                                                              \
		}                                                                                              \
	}                                                                                                      \
                                                                                                               \
	/* z = g·f′ (or z += it, acc ≠ 0), f′ from u, the map's output y or input x as the op needs:    \
	   0 tanh 1 − y², 1 sigmoid y − y² (each rounded once), 2 exp y, 3 relu [y > 0] (+0 elsewhere,   \
	   whatever g), 4 softplus −expm1(−y), 5 log 1/x, 6 sqrt 1/(2y), 7 square 2x, 8 neg −1 (u not   \
	   read), 9 abs sign x (0 at 0 and NaN), 10 sin cos x, 11 cos −sin x, 12 leaky relu g where     \
	   u > 0, else a·g, 13 hardtanh [a < x < b], 16 clamp [a ≤ x ≤ b] (each as a product: g·0      \
	   outside), 17 elu from y (a ≥ 0): g where y > 0, else g·(y + a), 18 pow a·x^(a−1) (0 for      \
	   a = 0) in double. Each factor rounded, then the product. */                                  \
	__global__ void mapbwd_##S(T *z, const T *g, const T *u, int op, T a, T b, int acc, long long n) {       \
		for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;                       \
		     i += (long long)gridDim.x * blockDim.x) {                                                  \
			T v = op == 8 ? (T)0 : u[i], gi = g[i], d;                                             \
			switch (op) {                                                                          \
			case 0: d = gi * FMA(-v, v, (T)1); break;                                              \
			case 1: d = gi * FMA(-v, v, v); break;                                                 \
			case 2: d = gi * v; break;                                                             \
			case 3: d = v > 0 ? gi : (T)0; break;                                                  \
			case 4: d = gi * -EXPM1(-v); break;                                                    \
			case 5: d = gi * ((T)1 / v); break;                                                    \
			case 6: d = gi * ((T)1 / ((T)2 * v)); break;                                           \
			case 7: d = gi * ((T)2 * v); break;                                                    \
			case 8: d = (T)-1 * gi; break;                                                         \
			case 9: d = gi * (v > 0 ? (T)1 : (v < 0 ? (T)-1 : (T)0)); break;                       \
			case 10: d = gi * (T)cos((double)v); break;                                            \
			case 11: d = gi * (T)(-sin((double)v)); break;                                         \
			case 12: d = v > 0 ? gi : a * gi; break;                                               \
			case 13: d = gi * (v > a && v < b ? (T)1 : (T)0); break;                               \
			case 16: d = gi * (v >= a && v <= b ? (T)1 : (T)0); break;                             \
			case 17: d = gi * (v > 0 ? (T)1 : v + a); break;                                       \
			default: d = gi * (a == 0 ? (T)0 : (T)((double)a * pow((double)v, (double)a - 1))); break; \
			}                                                                                      \
			z[i] = acc ? z[i] + d : d;                                                             \
		}                                                                                              \
	}                                                                                                      \
                                                                                                               \
	/* One record per block of the scaled error r = e/(atol + rtol·max(|y0|, |y1|)), formed in T    \
	   (in double where that overflows from finite e and w):                                        \
	   part[4b..4b+3] = Σ (scale·r)² over the finite r, max |r| over them, the count of NaN r, the   \
	   count of ±Inf r. Blocks of NORM_THREADS threads. */                                              \
	__global__ void errnorm_##S(double *__restrict__ part, const T *__restrict__ e,                         \
				    const T *__restrict__ y0, const T *__restrict__ y1, T atol, T rtol,        \
				    double scale, long long n) {                                               \
		__shared__ double sh[4 * NORM_THREADS];                                                        \
		double sum = 0, mx = 0, nnan = 0, ninf = 0;                                                      \
		for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;                       \
		     i += (long long)gridDim.x * blockDim.x) {                                                  \
			T w = atol + rtol * maxnan_##S(abs_##S(y0[i]), abs_##S(y1[i]));                         \
			double r = (double)(e[i] / w);                                                         \
			/* a float ratio of finite e and w that overflows: formed in double instead */         \
			if (notfinite_d(r) && !notfinite_d((double)e[i]) && !notfinite_d((double)w))            \
				r = (double)e[i] / (double)w;                                                  \
			if (isnan_d(r)) {                                                                      \
				nnan += 1;                                                                      \
			} else if (notfinite_d(r)) {                                                           \
				ninf += 1;                                                                      \
			} else {                                                                               \
				r = r < 0 ? -r : r;                                                            \
				mx = r > mx ? r : mx;                                                          \
				r *= scale;                                                                    \
				sum += r * r;                                                                  \
			}                                                                                      \
		}                                                                                              \
		reduce4(sh, sum, mx, nnan, ninf);                                                                \
		if (threadIdx.x == 0)                                                                          \
			for (int j = 0; j < 4; j++) part[4 * blockIdx.x + j] = sh[j * NORM_THREADS];             \
	}

#define NORM_THREADS 256

// reduce4 combines the four values of every thread of a block of
// NORM_THREADS threads in sh (4·NORM_THREADS doubles): sums of the first,
// third and fourth, the largest second, the results in sh[0],
// sh[NORM_THREADS], sh[2·NORM_THREADS], sh[3·NORM_THREADS].
__device__ static void reduce4(double *sh, double sum, double mx, double nnan, double ninf) {
	int t = threadIdx.x;
	sh[t] = sum;
	sh[NORM_THREADS + t] = mx;
	sh[2 * NORM_THREADS + t] = nnan;
	sh[3 * NORM_THREADS + t] = ninf;
	__syncthreads();
	for (int w = NORM_THREADS / 2; w > 0; w >>= 1) {
		if (t < w) {
			sh[t] += sh[t + w];
			double a = sh[NORM_THREADS + t], b = sh[NORM_THREADS + t + w];
			sh[NORM_THREADS + t] = b > a ? b : a;
			sh[2 * NORM_THREADS + t] += sh[2 * NORM_THREADS + t + w];
			sh[3 * NORM_THREADS + t] += sh[3 * NORM_THREADS + t + w];
		}
		__syncthreads();
	}
}

ANK_ELEMENTWISE(f32, float, expf, log1pf, expm1f, tanhf, fmaf, logf, sqrtf, fabsf)
ANK_ELEMENTWISE(f64, double, exp, log1p, expm1, tanh, fma, log, sqrt, fabs)

// errnorm_final reduces the nparts records of errnorm_* to one, in out[0..3].
// One block of NORM_THREADS threads.
__global__ void errnorm_final(double *__restrict__ out, const double *__restrict__ part, long long nparts) {
	__shared__ double sh[4 * NORM_THREADS];
	double sum = 0, mx = 0, nnan = 0, ninf = 0;
	for (long long b = threadIdx.x; b < nparts; b += blockDim.x) {
		sum += part[4 * b];
		mx = part[4 * b + 1] > mx ? part[4 * b + 1] : mx;
		nnan += part[4 * b + 2];
		ninf += part[4 * b + 3];
	}
	reduce4(sh, sum, mx, nnan, ninf);
	if (threadIdx.x == 0)
		for (int j = 0; j < 4; j++) out[j] = sh[j * NORM_THREADS];
}

#ifdef __cplusplus
}
#endif
