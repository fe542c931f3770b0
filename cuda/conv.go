package cuda

import (
	"unsafe"

	"github.com/adamnode/adamnode/tensor"
)

// The algorithms the engine asks cuDNN for: implicit GEMM forward
// (CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM) and the deterministic
// backward ones (CUDNN_CONVOLUTION_BWD_DATA_ALGO_1,
// CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1), all supported for float and
// double NCHW.
const (
	algoFwd       = 0
	algoBwdData   = 1
	algoBwdFilter = 1
)

// fmaMath is CUDNN_FMA_MATH: float32 convolutions in float32 arithmetic.
// cuDNN's default (CUDNN_DEFAULT_MATH) lets float32 convolutions run on
// the tensor cores in TF32 on Ampere and newer GPUs, whose 10-bit
// mantissa put the MNIST model's gradients 1.4e-4 (relative) from the
// CPU engines' on an H100; PyTorch's torch.backends.cudnn.allow_tf32 is
// the same switch, and this engine keeps float32 float32.
const fmaMath = 3

// convKey identifies a convolution's shapes, element type and parameters.
type convKey struct {
	dtype                  int32 // 0 float, 1 double (cudnnDataType_t)
	b, c, h, w, co, kh, kw int
	oh, ow, stride, pad    int
}

// convPlan is what the engine sets up once per convKey: the descriptors
// and each pass's workspace size.
type convPlan struct {
	x, y, bias, w, conv   uintptr
	wsFwd, wsData, wsFilt uintptr
}

// plan returns the plan of the convolution y = w ⋆ x (under b.mu),
// making it the first time.
func (b *backend) plan(k convKey) *convPlan {
	if p, ok := b.plans[k]; ok {
		return p
	}
	l := b.l
	p := new(convPlan)
	tensor4 := func(d *uintptr, n, c, h, w int) {
		must(l.dnnCheck("cudnnCreateTensorDescriptor", l.cudnnCreateTensorDescriptor(d)))
		must(l.dnnCheck("cudnnSetTensor4dDescriptor", l.cudnnSetTensor4dDescriptor(*d, 0, k.dtype, int32(n), int32(c), int32(h), int32(w))))
	}
	tensor4(&p.x, k.b, k.c, k.h, k.w)
	tensor4(&p.y, k.b, k.co, k.oh, k.ow)
	tensor4(&p.bias, 1, k.co, 1, 1)
	must(l.dnnCheck("cudnnCreateFilterDescriptor", l.cudnnCreateFilterDescriptor(&p.w)))
	must(l.dnnCheck("cudnnSetFilter4dDescriptor", l.cudnnSetFilter4dDescriptor(p.w, k.dtype, 0, int32(k.co), int32(k.c), int32(k.kh), int32(k.kw))))
	must(l.dnnCheck("cudnnCreateConvolutionDescriptor", l.cudnnCreateConvolutionDescriptor(&p.conv)))
	// Cross-correlation (mode 1), as tensor.Engine's Conv2D.
	must(l.dnnCheck("cudnnSetConvolution2dDescriptor", l.cudnnSetConvolution2dDescriptor(p.conv, int32(k.pad), int32(k.pad), int32(k.stride), int32(k.stride), 1, 1, 1, k.dtype)))
	must(l.dnnCheck("cudnnSetConvolutionMathType", l.cudnnSetConvolutionMathType(p.conv, fmaMath)))
	must(l.dnnCheck("cudnnGetConvolutionForwardWorkspaceSize", l.cudnnGetConvFwdWorkspace(b.dnn, p.x, p.w, p.conv, p.y, algoFwd, &p.wsFwd)))
	must(l.dnnCheck("cudnnGetConvolutionBackwardDataWorkspaceSize", l.cudnnGetConvBwdDataWorkspace(b.dnn, p.w, p.y, p.conv, p.x, algoBwdData, &p.wsData)))
	must(l.dnnCheck("cudnnGetConvolutionBackwardFilterWorkspaceSize", l.cudnnGetConvBwdFilterWorkspace(b.dnn, p.x, p.y, p.conv, p.w, algoBwdFilter, &p.wsFilt)))
	b.plans[k] = p
	return p
}

// The backend's scratch device buffers after Gemm's three (the tensors
// themselves live in the cache): the convolutions' workspace, and a byte
// that stands for an empty tensor.
const (
	bufWS = 3 + iota
	bufEmpty
)

// key returns the convKey of the convolution from x [B, C, H, W] by
// w [Co, C, KH, KW] into y [B, Co, OH, OW].
func key[T tensor.Float](x, w, y *tensor.Tensor[T], p tensor.ConvParams) convKey {
	xs, ws, ys := x.Shape(), w.Shape(), y.Shape()
	var dtype int32
	if unsafe.Sizeof(T(0)) == 8 {
		dtype = 1
	}
	return convKey{dtype: dtype, b: xs[0], c: xs[1], h: xs[2], w: xs[3], co: ws[0], kh: ws[2], kw: ws[3],
		oh: ys[2], ow: ys[3], stride: max(p.Stride, 1), pad: p.Pad}
}

// scalars returns pointers to alpha = 1 and beta (1 to accumulate, else 0)
// in T.
func scalars[T tensor.Float](accumulate bool) (alpha, beta unsafe.Pointer) {
	a, z := new(T), new(T)
	*a = 1
	if accumulate {
		*z = 1
	}
	return unsafe.Pointer(a), unsafe.Pointer(z)
}

// Conv2D computes y = w ⋆ x + bias on cuDNN (see tensor.Engine).
func (e *engine[T]) Conv2D(y, x, w, bias *tensor.Tensor[T], p tensor.ConvParams) {
	b := e.b
	b.lock()
	defer b.unlock()
	b.tick()
	pl := b.plan(key(x, w, y, p))
	l := b.l
	dx, dw := in(b, x), in(b, w)
	dy := out(b, y, false)
	ws := b.ensure(bufWS, max(pl.wsFwd, 1))
	one, zero := scalars[T](false)
	must(l.dnnCheck("cudnnConvolutionForward", l.cudnnConvolutionForward(b.dnn, one, pl.x, dx, pl.w, dw, pl.conv, algoFwd, ws, pl.wsFwd, zero, pl.y, dy)))
	if bias != nil {
		db := in(b, bias)
		one1, _ := scalars[T](true)
		must(l.dnnCheck("cudnnAddTensor", l.cudnnAddTensor(b.dnn, one, pl.bias, db, one1, pl.y, dy)))
	}
	produced(b, y)
}

// Conv2DBackwardData computes dx (+)= ∂L/∂x on cuDNN.
func (e *engine[T]) Conv2DBackwardData(dx, dy, w *tensor.Tensor[T], p tensor.ConvParams, accumulate bool) {
	b := e.b
	b.lock()
	defer b.unlock()
	b.tick()
	pl := b.plan(key(dx, w, dy, p))
	l := b.l
	ddy, dw := in(b, dy), in(b, w)
	ddx := out(b, dx, accumulate)
	ws := b.ensure(bufWS, max(pl.wsData, 1))
	one, beta := scalars[T](accumulate)
	must(l.dnnCheck("cudnnConvolutionBackwardData", l.cudnnConvolutionBackwardData(b.dnn, one, pl.w, dw, pl.y, ddy, pl.conv, algoBwdData, ws, pl.wsData, beta, pl.x, ddx)))
	produced(b, dx)
}

// Conv2DBackwardFilter computes dw (+)= ∂L/∂w and, unless db is nil,
// db (+)= ∂L/∂b on cuDNN.
func (e *engine[T]) Conv2DBackwardFilter(dw, db, dy, x *tensor.Tensor[T], p tensor.ConvParams, accumulate bool) {
	b := e.b
	b.lock()
	defer b.unlock()
	b.tick()
	pl := b.plan(key(x, dw, dy, p))
	l := b.l
	dx, ddy := in(b, x), in(b, dy)
	ddw := out(b, dw, accumulate)
	ws := b.ensure(bufWS, max(pl.wsFilt, 1))
	one, beta := scalars[T](accumulate)
	must(l.dnnCheck("cudnnConvolutionBackwardFilter", l.cudnnConvolutionBackwardFilter(b.dnn, one, pl.x, dx, pl.y, ddy, pl.conv, algoBwdFilter, ws, pl.wsFilt, beta, pl.w, ddw)))
	produced(b, dw)
	if db != nil {
		ddb := out(b, db, accumulate)
		must(l.dnnCheck("cudnnConvolutionBackwardBias", l.cudnnConvolutionBackwardBias(b.dnn, one, pl.y, ddy, beta, pl.bias, ddb)))
		produced(b, db)
	}
}
