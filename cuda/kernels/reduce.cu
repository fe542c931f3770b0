// Reductions: along an axis, and of whole buffers (elementwise.cu says the
// kernels' rules). Each block reduces in static shared memory with
// __syncthreads, in a fixed tree over its NORM_THREADS threads, so the
// order of the additions depends only on the sizes (and, for the whole
// buffers, on the number of blocks, which the launch takes from the length
// alone): the same bits every run, on every device.

#ifdef __cplusplus
extern "C" {
#endif

// reduce_sum leaves in sh[0] the sum of the NORM_THREADS values v of the
// block's threads, added in a tree: sh[t] += sh[t + w] for w = 128, 64, …, 1.
__device__ static void reduce_sum(double *sh, double v) {
	int t = threadIdx.x;
	sh[t] = v;
	__syncthreads();
	for (int w = NORM_THREADS / 2; w > 0; w >>= 1) {
		if (t < w) sh[t] += sh[t + w];
		__syncthreads();
	}
}

// reduce_first_max leaves in v[0] and ix[0] the largest of the block's
// values v and the smallest index ix among those equal to it (−1: none),
// as a sequential scan keeping the first of equal values would.
__device__ static void reduce_first_max(double *v, double *ix, double mv, double mi) {
	int t = threadIdx.x;
	v[t] = mv;
	ix[t] = mi;
	__syncthreads();
	for (int w = NORM_THREADS / 2; w > 0; w >>= 1) {
		if (t < w) {
			double a = v[t], ia = ix[t], b = v[t + w], ib = ix[t + w];
			if (ia < 0 || (ib >= 0 && (b > a || (b == a && ib < ia)))) {
				v[t] = b;
				ix[t] = ib;
			}
		}
		__syncthreads();
	}
}

#define ANK_REDUCE(S, T)                                                                                       \
	/* Along the axis of x, seen as [outer, n, inner]: dst[o·inner + i] for op 0 the sum of          \
	   x[(o·n + k)·inner + i] over k, 1 the mean (the sum / n), 2 the max as tensor.MaxAxis has it  \
	   (the first NaN along the axis if any, else the first of equal largest elements).             \
	   Sums in double, rounded to T once. With block = 0, one thread an output, k in order; else    \
	   one block an output, thread t taking k = t, t + NORM_THREADS, …, then a tree. */             \
	__global__ void axisreduce_##S(T *__restrict__ dst, const T *__restrict__ x, int op, int block,        \
				       long long outer, long long n, long long inner) {                       \
		__shared__ double sh[NORM_THREADS], shi[NORM_THREADS];                                         \
		if (!block) {                                                                                  \
			for (long long out = blockIdx.x * (long long)blockDim.x + threadIdx.x; out < outer * inner; \
			     out += (long long)gridDim.x * blockDim.x) {                                        \
				const T *p = x + out / inner * n * inner + out % inner;                        \
				if (op == 2) {                                                                 \
					T m = p[0];                                                            \
					for (long long k = 1; k < n; k++) {                                    \
						T v = p[k * inner];                                            \
						if (v > m || (v != v && m == m)) m = v;                        \
					}                                                                      \
					dst[out] = m;                                                          \
				} else {                                                                       \
					double s = 0;                                                          \
					for (long long k = 0; k < n; k++) s += (double)p[k * inner];            \
					dst[out] = (T)(op == 1 ? s / (double)n : s);                           \
				}                                                                              \
			}                                                                                      \
			return;                                                                                \
		}                                                                                              \
		for (long long out = blockIdx.x; out < outer * inner; out += gridDim.x) {                      \
			const T *p = x + out / inner * n * inner + out % inner;                                \
			if (op == 2) {                                                                         \
				double m = 0, mi = -1, ni = -1;                                                \
				for (long long k = threadIdx.x; k < n; k += blockDim.x) {                      \
					double v = (double)p[k * inner];                                       \
					if (v != v) {                                                          \
						if (ni < 0) ni = (double)k;                                    \
					} else if (mi < 0 || v > m) {                                          \
						m = v;                                                         \
						mi = (double)k;                                                \
					}                                                                      \
				}                                                                              \
				reduce_first_max(sh, shi, m, mi);                                              \
				double best = sh[0];                                                           \
				__syncthreads();                                                               \
				/* the first NaN: the smallest index among the threads' first ones */          \
				reduce_first_max(sh, shi, 0, ni);                                              \
				if (threadIdx.x == 0) dst[out] = shi[0] >= 0 ? p[(long long)shi[0] * inner] : (T)best; \
			} else {                                                                               \
				double s = 0;                                                                  \
				for (long long k = threadIdx.x; k < n; k += blockDim.x) s += (double)p[k * inner]; \
				reduce_sum(sh, s);                                                             \
				if (threadIdx.x == 0) dst[out] = (T)(op == 1 ? sh[0] / (double)n : sh[0]);       \
			}                                                                                      \
			__syncthreads();                                                                       \
		}                                                                                              \
	}                                                                                                      \
                                                                                                               \
	/* tensor.ArgMax along the axis of x, seen as [outer, n, inner], for the outputs             \
	   out = lo, …, lo + cnt − 1: dst[out − lo] = the index k of the largest x[(o·n + k)·inner + i] \
	   (out = o·inner + i), the first of equal ones; a NaN is never larger, so a NaN at k = 0 gives  \
	   0 and a later one is passed over. With block = 0, one thread an output, k in order, as    \
	   tensor.ArgMax; else one block an output, thread t taking k = t, t + NORM_THREADS, … (the    \
	   first largest non-NaN of its share), then a tree keeping the smallest index of equals. */   \
	__global__ void argmax_##S(int *__restrict__ dst, const T *__restrict__ x, int block, long long n,     \
				   long long inner, long long lo, long long cnt) {                               \
		__shared__ double sh[NORM_THREADS], shi[NORM_THREADS];                                         \
		if (!block) {                                                                                  \
			for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < cnt;             \
			     j += (long long)gridDim.x * blockDim.x) {                                          \
				long long out = lo + j;                                                        \
				const T *p = x + out / inner * n * inner + out % inner;                        \
				T m = p[0];                                                                    \
				long long bi = 0;                                                              \
				for (long long k = 1; k < n; k++) {                                            \
					T v = p[k * inner];                                                    \
					if (v > m) {                                                           \
						m = v;                                                         \
						bi = k;                                                        \
					}                                                                      \
				}                                                                              \
				dst[j] = (int)bi;                                                              \
			}                                                                                      \
			return;                                                                                \
		}                                                                                              \
		for (long long j = blockIdx.x; j < cnt; j += gridDim.x) {                                      \
			long long out = lo + j;                                                                \
			const T *p = x + out / inner * n * inner + out % inner;                                \
			double m = 0, mi = -1;                                                                 \
			for (long long k = threadIdx.x; k < n; k += blockDim.x) {                              \
				double v = (double)p[k * inner];                                               \
				if (v == v && (mi < 0 || v > m)) {                                             \
					m = v;                                                                 \
					mi = (double)k;                                                        \
				}                                                                              \
			}                                                                                      \
			reduce_first_max(sh, shi, m, mi);                                                      \
			if (threadIdx.x == 0) dst[j] = p[0] != p[0] || shi[0] < 0 ? 0 : (int)shi[0];           \
			__syncthreads();                                                                       \
		}                                                                                              \
	}                                                                                                      \
                                                                                                               \
	/* A bias's gradient, autograd's sumPerChannelInto: for x of [batch, C, inner],                  \
	   dst[c] = (acc ? dst[c] : 0) + Σ_{b,i} x[(b·C + c)·inner + i]. With inner = 1 (a matrix's      \
	   columns, tensor.AddColumnSums) one thread a column adds the rows in T in order, from dst[c]   \
	   or 0; else one block a channel sums in double in a tree (thread t taking the channel's        \
	   elements t, t + NORM_THREADS, … in (b, i) order), rounded to T and added to dst[c] or 0. */    \
	__global__ void chansum_##S(T *__restrict__ dst, const T *__restrict__ x, long long batch, long long C,    \
				    long long inner, int acc) {                                                \
		__shared__ double sh[NORM_THREADS];                                                            \
		if (inner == 1) {                                                                              \
			for (long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x; c < C;                   \
			     c += (long long)gridDim.x * blockDim.x) {                                          \
				T s = acc ? dst[c] : (T)0;                                                     \
				for (long long b = 0; b < batch; b++) s = s + x[b * C + c];                    \
				dst[c] = s;                                                                    \
			}                                                                                      \
			return;                                                                                \
		}                                                                                              \
		for (long long c = blockIdx.x; c < C; c += gridDim.x) {                                        \
			double s = 0;                                                                          \
			for (long long j = threadIdx.x; j < batch * inner; j += blockDim.x)                    \
				s += (double)x[(j / inner * C + c) * inner + j % inner];                       \
			reduce_sum(sh, s);                                                                     \
			if (threadIdx.x == 0) dst[c] = (acc ? dst[c] : (T)0) + (T)sh[0];                       \
			__syncthreads();                                                                       \
		}                                                                                              \
	}                                                                                                      \
                                                                                                               \
	/* One record per block of a whole buffer: part[b] = Σ x (op 0), Σ x² (op 1) or Σ x·y (op 2)    \
	   over the block's elements, in double (each product of two doubles of T values rounded once  \
	   in double). Blocks of NORM_THREADS threads. */                                               \
	__global__ void sumparts_##S(double *__restrict__ part, const T *__restrict__ x, const T *__restrict__ y, \
				     int op, long long n) {                                                   \
		__shared__ double sh[NORM_THREADS];                                                            \
		double s = 0;                                                                                  \
		for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;                       \
		     i += (long long)gridDim.x * blockDim.x) {                                                  \
			double v = (double)x[i];                                                               \
			s += op == 0 ? v : (op == 1 ? v * v : v * (double)y[i]);                               \
		}                                                                                              \
		reduce_sum(sh, s);                                                                             \
		if (threadIdx.x == 0) part[blockIdx.x] = sh[0];                                                \
	}                                                                                                      \
                                                                                                               \
	/* dst[0] = the sum of the nparts records of sumparts_*, rounded to T. One block. */             \
	__global__ void sumfinal_##S(T *__restrict__ dst, const double *__restrict__ part, long long nparts) {  \
		__shared__ double sh[NORM_THREADS];                                                            \
		double s = 0;                                                                                  \
		for (long long b = threadIdx.x; b < nparts; b += blockDim.x) s += part[b];                     \
		reduce_sum(sh, s);                                                                             \
		if (threadIdx.x == 0) dst[0] = (T)sh[0];                                                       \
	}

ANK_REDUCE(f32, float)
ANK_REDUCE(f64, double)

#ifdef __cplusplus
}
#endif
