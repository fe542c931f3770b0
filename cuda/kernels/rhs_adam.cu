// AdamNODE's right-hand side fused: its forward, its backward and the
// specialised adjoint's elementwise band, each one pass (elementwise.cu
// says the kernels' rules; odeblock's rhs.go and families.go hold the CPU
// loops these follow operation for operation, no operation fused).
//
// s(v) and s′(v): with sp ≠ 0, s = √softplus(v) + ε and s′ = σ(v)·(0.5/√softplus(v)) (0 where
// softplus(v) is 0); else s = √(v + ε), s′ = 1/(2s).
//
// The sums for r1's and r2's gradients are those of the CPU: over blocks
// of RHS_BLOCK elements, each block's terms added in T in order; the
// blocks' sums are then added in double, in a fixed tree (one record per
// block of threads, then adamsums_*), where the CPU adds them in order.

#ifdef __cplusplus
extern "C" {
#endif

#define RHS_BLOCK 64

#define ANK_ADAM(S, T, SQRT)                                                                                   \
	__device__ static inline void adam_scale_##S(T v, T eps, int sp, T *s, T *ds) {                        \
		if (sp) {                                                                                      \
			T r = SQRT(softplus_##S(v)), d = sigmoid_##S(v);                                       \
			*ds = r > 0 ? d * ((T)0.5 / r) : (T)0;                                                 \
			*s = r + eps;                                                                          \
		} else {                                                                                       \
			T r = SQRT(v + eps);                                                                   \
			*ds = (T)1 / ((T)2 * r);                                                               \
			*s = r;                                                                                \
		}                                                                                              \
	}                                                                                                      \
                                                                                                               \
	/* dh = −m/s, dm = a1·(−g − m), dv = a2·(g² − v) (adamRHS's loop). */                            \
	__global__ void adamfwd_##S(T *__restrict__ dh, T *__restrict__ dm, T *__restrict__ dv, const T *__restrict__ g, \
				    const T *__restrict__ m, const T *__restrict__ v, T a1, T a2, T eps, int sp, \
				    long long n) {                                                             \
		for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;                       \
		     i += (long long)gridDim.x * blockDim.x) {                                                  \
			T gi = g[i], mi = m[i], s, ds;                                                         \
			adam_scale_##S(v[i], eps, sp, &s, &ds);                                                \
			dh[i] = -mi / s;                                                                       \
			dm[i] = a1 * (-gi - mi);                                                               \
			T sq = gi * gi;                                                                        \
			dv[i] = a2 * (sq - v[i]);                                                              \
		}                                                                                              \
	}                                                                                                      \
                                                                                                               \
	/* Tiles of NORM_THREADS elements, a thread an element: body sets the outputs of element i and   \
	   its terms t1, t2 of the sums; then the RHS_BLOCK blocks of the tile are summed in T, in      \
	   order, by a thread each, into acc1, acc2 (double); one record of the block's sums in         \
	   part[2·blockIdx.x], part[2·blockIdx.x + 1]. */                                              \
	__device__ static inline void adam_tile_sums_##S(T *s1, T *s2, long long base, long long n, double *acc1, \
							 double *acc2) {                                          \
		__syncthreads();                                                                               \
		int t = threadIdx.x;                                                                           \
		long long lo = base + (long long)t * RHS_BLOCK;                                                \
		if (t < NORM_THREADS / RHS_BLOCK && lo < n) {                                                  \
			T b1 = 0, b2 = 0;                                                                      \
			long long hi = n - lo < RHS_BLOCK ? n - lo : RHS_BLOCK;                                \
			for (long long j = 0; j < hi; j++) {                                                   \
				b1 = b1 + s1[t * RHS_BLOCK + j];                                               \
				b2 = b2 + s2[t * RHS_BLOCK + j];                                               \
			}                                                                                      \
			*acc1 += (double)b1;                                                                   \
			*acc2 += (double)b2;                                                                   \
		}                                                                                              \
		__syncthreads();                                                                               \
	}                                                                                                      \
                                                                                                               \
	/* adamRHS's backward (adamRHSBwdLoop), for the cotangent (ch, cm, cv): gg = −a1·cm + 2·a2·g·cv, \
	   gm = −ch/s − a1·cm (as −ch·(1/s) − a1·cm), gv = ch·m·s′·(1/s)·(1/s) − a2·cv; the sums         \
	   Σ cm·(−g − m) and Σ cv·(g² − v). */                                                          \
	__global__ void adambwd_##S(T *__restrict__ gg, T *__restrict__ gm, T *__restrict__ gv, double *__restrict__ part, \
				    const T *__restrict__ g, const T *__restrict__ m, const T *__restrict__ v,   \
				    const T *__restrict__ ch, const T *__restrict__ cm, const T *__restrict__ cv, \
				    T a1, T a2, T eps, int sp, long long n) {                                  \
		__shared__ T s1[NORM_THREADS], s2[NORM_THREADS];                                               \
		__shared__ double sh[NORM_THREADS];                                                            \
		double acc1 = 0, acc2 = 0;                                                                     \
		for (long long base = blockIdx.x * (long long)NORM_THREADS; base < n;                          \
		     base += (long long)gridDim.x * NORM_THREADS) {                                          \
			long long i = base + threadIdx.x;                                                      \
			T t1 = 0, t2 = 0;                                                                      \
			if (i < n) {                                                                           \
				T gi = g[i], mi = m[i], chi = ch[i], cmi = cm[i], cvi = cv[i], s, ds;          \
				adam_scale_##S(v[i], eps, sp, &s, &ds);                                        \
				T inv = (T)1 / s;                                                              \
				T p1 = -a1 * cmi, p2 = (T)2 * a2 * gi * cvi;                                   \
				gg[i] = p1 + p2;                                                               \
				p1 = -chi * inv;                                                               \
				p2 = a1 * cmi;                                                                 \
				gm[i] = p1 - p2;                                                               \
				p1 = chi * mi * ds * inv * inv;                                                \
				p2 = a2 * cvi;                                                                 \
				gv[i] = p1 - p2;                                                               \
				t1 = cmi * (-gi - mi);                                                         \
				p1 = gi * gi;                                                                  \
				t2 = cvi * (p1 - v[i]);                                                        \
			}                                                                                      \
			s1[threadIdx.x] = t1;                                                                  \
			s2[threadIdx.x] = t2;                                                                  \
			adam_tile_sums_##S(s1, s2, base, n, &acc1, &acc2);                                      \
		}                                                                                              \
		reduce_sum(sh, acc1);                                                                          \
		if (threadIdx.x == 0) part[2 * blockIdx.x] = sh[0];                                            \
		__syncthreads();                                                                               \
		reduce_sum(sh, acc2);                                                                          \
		if (threadIdx.x == 0) part[2 * blockIdx.x + 1] = sh[0];                                        \
	}                                                                                                      \
                                                                                                               \
	/* The specialised adjoint's band (adamWork.band): dh = −m·(1/s), dm = a1·(−g − m),             \
	   dv = a2·(g² − v), dam = ah·(1/s) + a1·am, dav = −ah·m·s′·(1/s)·(1/s) + a2·av; the sums        \
	   Σ am·(g + m) and Σ av·(g² − v). */                                                           \
	__global__ void adamband_##S(T *__restrict__ dh, T *__restrict__ dm, T *__restrict__ dv, T *__restrict__ dam, \
				     T *__restrict__ dav, double *__restrict__ part, const T *__restrict__ g,    \
				     const T *__restrict__ m, const T *__restrict__ v, const T *__restrict__ ah, \
				     const T *__restrict__ am, const T *__restrict__ av, T a1, T a2, T eps,      \
				     int sp, long long n) {                                                    \
		__shared__ T s1[NORM_THREADS], s2[NORM_THREADS];                                               \
		__shared__ double sh[NORM_THREADS];                                                            \
		double acc1 = 0, acc2 = 0;                                                                     \
		for (long long base = blockIdx.x * (long long)NORM_THREADS; base < n;                          \
		     base += (long long)gridDim.x * NORM_THREADS) {                                          \
			long long i = base + threadIdx.x;                                                      \
			T t1 = 0, t2 = 0;                                                                      \
			if (i < n) {                                                                           \
				T gi = g[i], mi = m[i], vi = v[i], ahi = ah[i], ami = am[i], avi = av[i], s, ds; \
				adam_scale_##S(vi, eps, sp, &s, &ds);                                          \
				T inv = (T)1 / s, p1, p2;                                                      \
				dh[i] = -mi * inv;                                                             \
				dm[i] = a1 * (-gi - mi);                                                       \
				p1 = gi * gi;                                                                  \
				dv[i] = a2 * (p1 - vi);                                                        \
				p1 = ahi * inv;                                                                \
				p2 = a1 * ami;                                                                 \
				dam[i] = p1 + p2;                                                              \
				p1 = -ahi * mi * ds * inv * inv;                                               \
				p2 = a2 * avi;                                                                 \
				dav[i] = p1 + p2;                                                              \
				t1 = ami * (gi + mi);                                                          \
				p1 = gi * gi;                                                                  \
				t2 = avi * (p1 - vi);                                                          \
			}                                                                                      \
			s1[threadIdx.x] = t1;                                                                  \
			s2[threadIdx.x] = t2;                                                                  \
			adam_tile_sums_##S(s1, s2, base, n, &acc1, &acc2);                                      \
		}                                                                                              \
		reduce_sum(sh, acc1);                                                                          \
		if (threadIdx.x == 0) part[2 * blockIdx.x] = sh[0];                                            \
		__syncthreads();                                                                               \
		reduce_sum(sh, acc2);                                                                          \
		if (threadIdx.x == 0) part[2 * blockIdx.x + 1] = sh[0];                                        \
	}                                                                                                      \
                                                                                                               \
	/* The specialised adjoint's cotangent for f's VJP: c = a1·am − (2a2)·g·av, a2x2 = 2a2 rounded.  \
	   c may be g, am or av. */                                                                     \
	__global__ void adamcot_##S(T *c, const T *g, const T *am, const T *av, T a1, T a2x2, long long n) {       \
		for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;                       \
		     i += (long long)gridDim.x * blockDim.x) {                                                  \
			T p1 = a1 * am[i], p2 = a2x2 * g[i] * av[i];                                           \
			c[i] = p1 - p2;                                                                        \
		}                                                                                              \
	}                                                                                                      \
                                                                                                               \
	/* gr[0] = c1·S1, gr[1] = c2·S2, rounded to T: S the sums of the nparts records (pairs) of       \
	   adambwd_* or adamband_*, added in a tree. One block. */                                      \
	__global__ void adamsums_##S(T *__restrict__ gr, const double *__restrict__ part, long long nparts, double c1, \
				     double c2) {                                                              \
		__shared__ double sh[NORM_THREADS];                                                            \
		double a = 0, b = 0;                                                                           \
		for (long long k = threadIdx.x; k < nparts; k += blockDim.x) {                                 \
			a += part[2 * k];                                                                      \
			b += part[2 * k + 1];                                                                  \
		}                                                                                              \
		reduce_sum(sh, a);                                                                             \
		if (threadIdx.x == 0) gr[0] = (T)(c1 * sh[0]);                                                 \
		__syncthreads();                                                                               \
		reduce_sum(sh, b);                                                                             \
		if (threadIdx.x == 0) gr[1] = (T)(c2 * sh[0]);                                                 \
	}

ANK_ADAM(f32, float, sqrtf)
ANK_ADAM(f64, double, sqrt)

#ifdef __cplusplus
}
#endif
