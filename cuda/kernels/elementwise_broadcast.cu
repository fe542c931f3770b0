// Binary operations with broadcasting over up to 4 dimensions, and the
// gradients of their operands (elementwise.cu says the kernels' rules).
//
// Shapes come as the output's sizes d0…d3 (right-aligned, leading sizes
// 1) and, per operand, its element stride along each of the output's
// axes: 0 along an axis it is broadcast on (a size 1 against a larger
// one). Operation op: 0 x + y, 1 x − y, 2 x·y, 3 x/y.

#ifdef __cplusplus
extern "C" {
#endif

#define ANK_BROADCAST(S, T)                                                                                    \
	/* z[i] = x[ix] op y[iy] over the output's n = d0·d1·d2·d3 elements. z may be x or y when that   \
	   operand is not broadcast. */                                                                 \
	__global__ void binary_##S(T *z, const T *x, const T *y, int op, long long n, long long d1, long long d2, \
				   long long d3, long long sx0, long long sx1, long long sx2, long long sx3,    \
				   long long sy0, long long sy1, long long sy2, long long sy3) {                \
		for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;                       \
		     i += (long long)gridDim.x * blockDim.x) {                                                  \
			long long r = i, i3 = r % d3, i2, i1, i0;                                              \
			r /= d3;                                                                               \
			i2 = r % d2;                                                                           \
			r /= d2;                                                                               \
			i1 = r % d1;                                                                           \
			i0 = r / d1;                                                                           \
			T a = x[i0 * sx0 + i1 * sx1 + i2 * sx2 + i3 * sx3];                                    \
			T b = y[i0 * sy0 + i1 * sy1 + i2 * sy2 + i3 * sy3];                                    \
			T v;                                                                                   \
			switch (op) {                                                                          \
			case 0: v = a + b; break;                                                              \
			case 1: v = a - b; break;                                                              \
			case 2: v = a * b; break;                                                              \
			default: v = a / b; break;                                                             \
			}                                                                                      \
			z[i] = v;                                                                              \
		}                                                                                              \
	}                                                                                                      \
                                                                                                               \
	/* The gradient of operand side (0 x, 1 y) of binary op, set (acc = 0) or added to d: for each of \
	   its m elements, one thread sums in T, in the output's row-major order, the terms c of the    \
	   output elements it reaches, from d[j] (acc) or 0: Add c = g, Sub g or −g, Mul g·y or g·x, Div \
	   g/y or −g·z/y ((−g·z)/y), z the output. The order of the CPU's (autograd's broadcast rule). \
	   The operand's shape is e0…e3 (each the output's size or 1); w, of strides sw, is the one     \
	   operand the terms read (Mul: the other one; Div: y), null for Add and Sub. */                              \
	__global__ void binbwd_##S(T *d, const T *g, const T *w, const T *z, int op, int side, int acc, long long m, \
				   long long d0, long long d1, long long d2, long long d3, long long e1,        \
				   long long e2, long long e3, long long sw0, long long sw1, long long sw2,     \
				   long long sw3) {                                                             \
		for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < m;                       \
		     j += (long long)gridDim.x * blockDim.x) {                                                  \
			long long r = j, j3 = r % e3, j2, j1, j0;                                              \
			r /= e3;                                                                               \
			j2 = r % e2;                                                                           \
			r /= e2;                                                                               \
			j1 = r % e1;                                                                           \
			j0 = r / e1;                                                                           \
			/* the output's indices along each axis: the operand's, or all where broadcast */     \
			long long e0 = m / (e1 * e2 * e3);                                                     \
			long long lo0 = e0 == d0 ? j0 : 0, hi0 = e0 == d0 ? j0 + 1 : d0;                       \
			long long lo1 = e1 == d1 ? j1 : 0, hi1 = e1 == d1 ? j1 + 1 : d1;                       \
			long long lo2 = e2 == d2 ? j2 : 0, hi2 = e2 == d2 ? j2 + 1 : d2;                       \
			long long lo3 = e3 == d3 ? j3 : 0, hi3 = e3 == d3 ? j3 + 1 : d3;                       \
			T s = acc ? d[j] : (T)0;                                                               \
			for (long long i0 = lo0; i0 < hi0; i0++)                                               \
				for (long long i1 = lo1; i1 < hi1; i1++)                                       \
					for (long long i2 = lo2; i2 < hi2; i2++)                               \
						for (long long i3 = lo3; i3 < hi3; i3++) {                     \
							long long o = ((i0 * d1 + i1) * d2 + i2) * d3 + i3;    \
							T gi = g[o], c;                                        \
							if (op == 0 || (op == 1 && side == 0)) {               \
								c = gi;                                        \
							} else if (op == 1) {                                  \
								c = -gi;                                       \
							} else {                                               \
								T wi = w[i0 * sw0 + i1 * sw1 + i2 * sw2 + i3 * sw3]; \
								if (op == 2) {                                 \
									c = gi * wi;                           \
								} else if (side == 0) {                        \
									c = gi / wi;                           \
								} else {                                       \
									T p = -gi * z[o];                      \
									c = p / wi;                            \
								}                                              \
							}                                                      \
							s = s + c;                                             \
						}                                                              \
			d[j] = s;                                                                              \
		}                                                                                              \
	}

ANK_BROADCAST(f32, float)
ANK_BROADCAST(f64, double)

#ifdef __cplusplus
}
#endif
