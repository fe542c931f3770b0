// A stand-in for cuDNN (see standin_rt.c): the convolution functions package
// cuda binds, with cuDNN's signatures and status codes, on NCHW tensors of
// float or double, computed with plain loops on the stand-in's device
// memory. Handles and descriptors are checked (created, set, of the right
// kind), shapes must agree, every operand and the workspace must lie in
// device memory, and dilations other than 1 are refused.
#include <stdlib.h>

void standin_enter(void);
void standin_leave(void);
int standin_device(const void *p, size_t n);

enum { ok = 0, notInitialized = 1, badParam = 3, executionFailed = 8, notSupported = 9 };
enum { kHandle = 0x11, kTensor, kFilter, kConv };

typedef struct { int kind, set, dtype, n, c, h, w; int pad[2], stride[2]; } obj;

static int create(obj **o, int kind) {
	if (!o) return badParam;
	*o = calloc(1, sizeof(obj));
	(*o)->kind = kind;
	return ok;
}
static int destroy(obj *o, int kind) {
	if (!o || o->kind != kind) return badParam;
	o->kind = 0;
	free(o);
	return ok;
}
static int valid(const obj *o, int kind) { return o && o->kind == kind && (kind == kHandle || o->set); }

int cudnnCreate(obj **h) { return create(h, kHandle); }
int cudnnDestroy(obj *h) { return destroy(h, kHandle); }
int cudnnCreateTensorDescriptor(obj **d) { return create(d, kTensor); }
int cudnnDestroyTensorDescriptor(obj *d) { return destroy(d, kTensor); }
int cudnnCreateFilterDescriptor(obj **d) { return create(d, kFilter); }
int cudnnDestroyFilterDescriptor(obj *d) { return destroy(d, kFilter); }
int cudnnCreateConvolutionDescriptor(obj **d) { return create(d, kConv); }
int cudnnDestroyConvolutionDescriptor(obj *d) { return destroy(d, kConv); }

static int set4(obj *d, int kind, int format, int dtype, int n, int c, int h, int w) {
	if (!d || d->kind != kind || format != 0 || (dtype != 0 && dtype != 1) || n <= 0 || c <= 0 || h <= 0 || w <= 0)
		return badParam;
	d->dtype = dtype, d->n = n, d->c = c, d->h = h, d->w = w, d->set = 1;
	return ok;
}
int cudnnSetTensor4dDescriptor(obj *d, int format, int dtype, int n, int c, int h, int w) {
	return set4(d, kTensor, format, dtype, n, c, h, w);
}
int cudnnSetFilter4dDescriptor(obj *d, int dtype, int format, int k, int c, int h, int w) {
	return set4(d, kFilter, format, dtype, k, c, h, w);
}
int cudnnSetConvolution2dDescriptor(obj *d, int ph, int pw, int u, int v, int dh, int dw, int mode, int dtype) {
	if (!d || d->kind != kConv || ph < 0 || pw < 0 || u <= 0 || v <= 0 || mode != 1 || (dtype != 0 && dtype != 1)) return badParam;
	if (dh != 1 || dw != 1) return notSupported;
	d->pad[0] = ph, d->pad[1] = pw, d->stride[0] = u, d->stride[1] = v, d->dtype = dtype, d->set = 1;
	return ok;
}

// The engine asks for CUDNN_FMA_MATH (3): float32 in float32, no TF32.
int cudnnSetConvolutionMathType(obj *d, int math) {
	if (!d || d->kind != kConv || math < 0 || math > 3) return badParam;
	if (math != 3) return notSupported;
	return ok;
}

static size_t bytes(const obj *d) { return (size_t)d->n * d->c * d->h * d->w * (d->dtype ? 8 : 4); }

// geometry checks that x, w, y and the convolution agree; 0 if they do.
static int geometry(const obj *x, const obj *w, const obj *cv, const obj *y) {
	if (!valid(x, kTensor) || !valid(w, kFilter) || !valid(cv, kConv) || !valid(y, kTensor)) return badParam;
	if (x->dtype != w->dtype || x->dtype != y->dtype || x->c != w->c || y->n != x->n || y->c != w->n) return badParam;
	int oh = (x->h + 2 * cv->pad[0] - w->h) / cv->stride[0] + 1, ow = (x->w + 2 * cv->pad[1] - w->w) / cv->stride[1] + 1;
	if (oh <= 0 || ow <= 0 || y->h != oh || y->w != ow) return badParam;
	return ok;
}

static const size_t workspace = 256; // what every algorithm asks for here

#define WS(NAME, A, B, C, D)                                                                             \
	int NAME(obj *h, const obj *A, const obj *B, const obj *cv, const obj *C, int algo, size_t *size) { \
		if (!valid(h, kHandle)) return notInitialized;                                          \
		if (!size || algo < 0 || algo > 1) return badParam;                                      \
		*size = workspace;                                                                       \
		return D;                                                                                \
	}
WS(cudnnGetConvolutionForwardWorkspaceSize, x, w, y, geometry(x, w, cv, y))
WS(cudnnGetConvolutionBackwardDataWorkspaceSize, w, dy, dx, geometry(dx, w, cv, dy))
WS(cudnnGetConvolutionBackwardFilterWorkspaceSize, x, dy, dw, geometry(x, dw, cv, dy))

// run checks the handle, geometry, device extents and workspace, then runs
// the loops of direction dir (0 forward, 1 backward data, 2 backward filter).
static int run(int dir, const obj *h, const void *alpha, const obj *x, void *xp, const obj *w, void *wp,
	       const obj *cv, int algo, void *ws, size_t wsSize, const void *beta, const obj *y, void *yp) {
	if (!valid(h, kHandle)) return notInitialized;
	int g = geometry(x, w, cv, y);
	if (g) return g;
	if (algo < 0 || algo > 1 || wsSize < workspace) return badParam;
	standin_enter();
	if (!standin_device(xp, bytes(x)) || !standin_device(wp, bytes(w)) || !standin_device(yp, bytes(y)) ||
	    !standin_device(ws, workspace)) {
		standin_leave();
		return executionFailed;
	}
	int N = x->n, C = x->c, H = x->h, W = x->w, K = w->n, KH = w->h, KW = w->w, OH = y->h, OW = y->w;
	int ph = cv->pad[0], pw = cv->pad[1], sh = cv->stride[0], sw = cv->stride[1];
#define LOOPS(T)                                                                                            \
	{                                                                                                   \
		T a = *(const T *)alpha, b = *(const T *)beta, *X = xp, *Wt = wp, *Y = yp;                  \
		T *out = dir == 0 ? Y : dir == 1 ? X : Wt;                                                  \
		size_t no = dir == 0 ? bytes(y) : dir == 1 ? bytes(x) : bytes(w);                           \
		T *acc = calloc(no / sizeof(T), sizeof(T));                                                 \
		for (int n = 0; n < N; n++)                                                                 \
			for (int k = 0; k < K; k++)                                                         \
				for (int p = 0; p < OH; p++)                                                \
					for (int q = 0; q < OW; q++)                                        \
						for (int c = 0; c < C; c++)                                 \
							for (int i = 0; i < KH; i++)                        \
								for (int j = 0; j < KW; j++) {              \
									int r = p * sh - ph + i, s = q * sw - pw + j; \
									if (r < 0 || r >= H || s < 0 || s >= W) continue; \
									size_t xi = (((size_t)n * C + c) * H + r) * W + s; \
									size_t wi = (((size_t)k * C + c) * KH + i) * KW + j; \
									size_t yi = (((size_t)n * K + k) * OH + p) * OW + q; \
									if (dir == 0) acc[yi] += X[xi] * Wt[wi]; \
									else if (dir == 1) acc[xi] += Y[yi] * Wt[wi]; \
									else acc[wi] += Y[yi] * X[xi];      \
								}                                           \
		for (size_t e = 0; e < no / sizeof(T); e++) out[e] = b == 0 ? a * acc[e] : a * acc[e] + b * out[e]; \
		free(acc);                                                                                  \
	}
	if (x->dtype) LOOPS(double) else LOOPS(float)
	standin_leave();
	return ok;
}

int cudnnConvolutionForward(obj *h, const void *alpha, const obj *xd, void *x, const obj *wd, void *w, const obj *cv,
			    int algo, void *ws, size_t wsSize, const void *beta, const obj *yd, void *y) {
	return run(0, h, alpha, xd, x, wd, w, cv, algo, ws, wsSize, beta, yd, y);
}
int cudnnConvolutionBackwardData(obj *h, const void *alpha, const obj *wd, void *w, const obj *dyd, void *dy, const obj *cv,
				 int algo, void *ws, size_t wsSize, const void *beta, const obj *dxd, void *dx) {
	return run(1, h, alpha, dxd, dx, wd, w, cv, algo, ws, wsSize, beta, dyd, dy);
}
int cudnnConvolutionBackwardFilter(obj *h, const void *alpha, const obj *xd, void *x, const obj *dyd, void *dy, const obj *cv,
				   int algo, void *ws, size_t wsSize, const void *beta, const obj *dwd, void *dw) {
	return run(2, h, alpha, xd, x, dwd, dw, cv, algo, ws, wsSize, beta, dyd, dy);
}

// channelOp is cudnnAddTensor (bias [1, C, 1, 1] added into y) and
// cudnnConvolutionBackwardBias (db = Σ dy over n, h, w).
static int channelOp(int add, const obj *h, const void *alpha, const obj *bd, void *bp, const void *beta, const obj *yd, void *yp) {
	if (!valid(h, kHandle)) return notInitialized;
	if (!valid(bd, kTensor) || !valid(yd, kTensor) || bd->n != 1 || bd->h != 1 || bd->w != 1 || bd->c != yd->c || bd->dtype != yd->dtype)
		return badParam;
	standin_enter();
	if (!standin_device(bp, bytes(bd)) || !standin_device(yp, bytes(yd))) {
		standin_leave();
		return executionFailed;
	}
	int N = yd->n, C = yd->c, HW = yd->h * yd->w;
#define CH(T)                                                                                               \
	{                                                                                                   \
		T a = *(const T *)alpha, b = *(const T *)beta, *B = bp, *Y = yp;                            \
		for (int c = 0; c < C; c++) {                                                               \
			T s = 0;                                                                            \
			for (int n = 0; n < N; n++)                                                         \
				for (int e = 0; e < HW; e++) {                                              \
					T *y = &Y[((size_t)n * C + c) * HW + e];                            \
					if (add) *y = a * B[c] + (b == 0 ? 0 : b * *y);                     \
					else s += *y;                                                       \
				}                                                                           \
			if (!add) B[c] = a * s + (b == 0 ? 0 : b * B[c]);                                   \
		}                                                                                           \
	}
	if (yd->dtype) CH(double) else CH(float)
	standin_leave();
	return ok;
}
int cudnnAddTensor(obj *h, const void *alpha, const obj *bd, void *b, const void *beta, const obj *yd, void *y) {
	return channelOp(1, h, alpha, bd, b, beta, yd, y);
}
int cudnnConvolutionBackwardBias(obj *h, const void *alpha, const obj *dyd, void *dy, const void *beta, const obj *dbd, void *db) {
	return channelOp(0, h, alpha, dbd, db, beta, dyd, dy);
}

const char *cudnnGetErrorString(int s) {
	switch (s) {
	case ok: return "CUDNN_STATUS_SUCCESS";
	case notInitialized: return "CUDNN_STATUS_NOT_INITIALIZED";
	case badParam: return "CUDNN_STATUS_BAD_PARAM";
	case executionFailed: return "CUDNN_STATUS_EXECUTION_FAILED";
	case notSupported: return "CUDNN_STATUS_NOT_SUPPORTED";
	}
	return "CUDNN_STATUS_UNKNOWN";
}
