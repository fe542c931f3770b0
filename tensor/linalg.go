package tensor

import "fmt"

// Gemm sets z = alpha·op(a)·op(b) + beta·z for matrices (rank 2) a, b and z,
// where op transposes when its flag is set, computed by e. It returns z. z
// must not overlap a or b.
func (z *Tensor[T]) Gemm(e Engine[T], alpha T, a *Tensor[T], transA bool, b *Tensor[T], transB bool, beta T) *Tensor[T] {
	m, n, k := gemmDims("Gemm", z, a, transA, b, transB)
	if g, ok := e.(TensorGemmer[T]); ok && m > 0 && n > 0 && k > 0 {
		g.GemmTensors(z, alpha, a, transA, b, transB, beta)
		return z
	}
	z.wrote()
	if m == 0 || n == 0 {
		return z
	}
	if k == 0 {
		return z.Scale(z, beta)
	}
	e.Gemm(transA, transB, m, n, k, alpha, a.host(), a.shape[1], b.host(), b.shape[1], beta, z.data, n)
	return z
}

// TensorGemmer is implemented by engines that take a GEMM's tensors rather
// than their elements, to keep copies of them in their own memory (package
// cuda's engine does, checked by the storage version): z.Gemm calls
// GemmTensors instead of Engine.Gemm when the engine has it, with the
// shapes checked and m, n and k positive. GemmTensors counts the write in
// z's version itself (z's values may stay in the engine's memory: see
// Storage).
type TensorGemmer[T Float] interface {
	// GemmTensors sets z = alpha·op(a)·op(b) + beta·z (see Tensor.Gemm).
	GemmTensors(z *Tensor[T], alpha T, a *Tensor[T], transA bool, b *Tensor[T], transB bool, beta T)
}

// GemmBias sets z = alpha·op(a)·op(b) + 1·biasᵀ, the vector bias (of
// length n, z's width) added to every row of the product, computed by e,
// and returns z; z is not read. (PyTorch's addmm with a broadcast bias, the
// affine map of a linear layer.) Engines that implement BiasGemmer add the
// bias as they store the product; an engine with an Elementwise forms the
// product and adds the bias with Binary, in its own memory; for the rest
// the bias is copied into z's rows and the product added (beta = 1).
func (z *Tensor[T]) GemmBias(e Engine[T], alpha T, a *Tensor[T], transA bool, b *Tensor[T], transB bool, bias *Tensor[T]) *Tensor[T] {
	m, n, k := gemmDims("GemmBias", z, a, transA, b, transB)
	if len(bias.shape) != 1 || bias.shape[0] != n {
		panic(&ShapeError{Op: "GemmBias", Msg: fmt.Sprintf("bias of shape %v does not fit destination %v (want [%d])", bias.shape, z.shape, n)})
	}
	if el := DeviceElementwise(e); el != nil && k > 0 {
		z.Gemm(e, alpha, a, transA, b, transB, 0)
		el.Binary(BinaryAdd, z, z, bias)
		return z
	}
	_, fused := e.(BiasGemmer[T])
	if _, ok := e.(TensorGemmer[T]); ok {
		fused = false // the engine keeps the tensors: hand it them whole
	}
	if !fused {
		copyRows(m, n, bias.host(), z.Data(), n)
		return z.Gemm(e, alpha, a, transA, b, transB, 1)
	}
	z.wrote()
	GemmBiasSlices(e, transA, transB, m, n, k, alpha, a.host(), a.shape[1], b.host(), b.shape[1], bias.host(), z.data, n)
	return z
}

// GemmBiasSlices is GemmBias on row-major slices with leading dimensions
// (as Engine.Gemm): C = alpha·op(A)·op(B) + 1·biasᵀ, bias[:n] added to
// each of C's m rows, by e's BiasGemmer when it has one, else the bias
// copied into C's rows and e.Gemm with beta = 1. C is not read.
func GemmBiasSlices[T Float](e Engine[T], transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, bias, c []T, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if g, ok := e.(BiasGemmer[T]); ok && k > 0 {
		g.GemmBias(transA, transB, m, n, k, alpha, a, lda, b, ldb, bias, c, ldc)
		return
	}
	copyRows(m, n, bias, c, ldc)
	if k > 0 {
		e.Gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, 1, c, ldc)
	}
}

// copyRows sets the first n elements of each of the m rows of c (ldc
// apart) to bias[:n].
func copyRows[T Float](m, n int, bias, c []T, ldc int) {
	for i := range m {
		copy(c[i*ldc:i*ldc+n], bias[:n])
	}
}

// gemmDims returns the m, n and k of z = op(a)·op(b), panicking with a
// ShapeError for op when the shapes are not matrices that fit.
func gemmDims[T Float](op string, z, a *Tensor[T], transA bool, b *Tensor[T], transB bool) (m, n, k int) {
	if len(a.shape) != 2 || len(b.shape) != 2 || len(z.shape) != 2 {
		panic(&ShapeError{Op: op, Msg: fmt.Sprintf("want matrices, got shapes %v, %v and destination %v", a.shape, b.shape, z.shape)})
	}
	m, k = a.shape[0], a.shape[1]
	if transA {
		m, k = k, m
	}
	kb, n := b.shape[0], b.shape[1]
	if transB {
		kb, n = n, kb
	}
	if k != kb || z.shape[0] != m || z.shape[1] != n {
		panic(&ShapeError{Op: op, Msg: fmt.Sprintf("op(a) of shape %v (%dx%d) times op(b) of shape %v (%dx%d) does not fit destination %v", a.shape, m, k, b.shape, kb, n, z.shape)})
	}
	return m, n, k
}

// BiasGemmer is implemented by engines that add a bias to every row of a
// product as they store it (the CPU engines do): z.GemmBias calls it with
// the shapes checked and m, n and k positive.
type BiasGemmer[T Float] interface {
	// GemmBias sets C = alpha·op(A)·op(B) + 1·biasᵀ, bias[:n] added to
	// each row, without reading C (see Engine.Gemm for the layout).
	GemmBias(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, bias []T, c []T, ldc int)
}

// MatMul sets z = op(a)·op(b) and returns z (see Gemm).
func (z *Tensor[T]) MatMul(e Engine[T], a *Tensor[T], transA bool, b *Tensor[T], transB bool) *Tensor[T] {
	return z.Gemm(e, 1, a, transA, b, transB, 0)
}

// MatMul returns the new matrix a·b computed by e.
func MatMul[T Float](e Engine[T], a, b *Tensor[T]) *Tensor[T] {
	if len(a.shape) != 2 || len(b.shape) != 2 {
		panic(&ShapeError{Op: "MatMul", Msg: fmt.Sprintf("want matrices, got shapes %v and %v", a.shape, b.shape)})
	}
	return New[T](a.shape[0], b.shape[1]).MatMul(e, a, false, b, false)
}

// Conv2D sets y to the convolution of x by w plus the bias b (nil for none;
// see Engine.Conv2D) computed by e, and returns y.
func (y *Tensor[T]) Conv2D(e Engine[T], x, w, b *Tensor[T], p ConvParams) *Tensor[T] {
	e.Conv2D(y, x, w, b, p)
	return y
}

// Conv2DOutputShape returns the shape [B, Co, OH, OW] of the convolution of an
// input of shape xs [B, C, H, W] by a filter of shape ws [Co, C, KH, KW].
func Conv2DOutputShape(xs, ws []int, p ConvParams) []int {
	if len(xs) != 4 || len(ws) != 4 {
		panic(&ShapeError{Op: "Conv2D", Msg: fmt.Sprintf("want input [B,C,H,W] and filter [Co,C,KH,KW], got %v and %v", xs, ws)})
	}
	return []int{xs[0], ws[0], ConvOutputSize(xs[2], ws[2], p), ConvOutputSize(xs[3], ws[3], p)}
}

// Conv2D returns the new convolution of x by w plus the bias b (nil for
// none) computed by e.
func Conv2D[T Float](e Engine[T], x, w, b *Tensor[T], p ConvParams) *Tensor[T] {
	y := New[T](Conv2DOutputShape(x.shape, w.shape, p)...)
	e.Conv2D(y, x, w, b, p)
	return y
}

// Add returns the new tensor x + y.
func Add[T Float](x, y *Tensor[T]) *Tensor[T] { return New[T](x.shape...).Add(x, y) }

// Sub returns the new tensor x − y.
func Sub[T Float](x, y *Tensor[T]) *Tensor[T] { return New[T](x.shape...).Sub(x, y) }

// Mul returns the new tensor x ⊙ y.
func Mul[T Float](x, y *Tensor[T]) *Tensor[T] { return New[T](x.shape...).Mul(x, y) }

// Div returns the new tensor x ⊘ y.
func Div[T Float](x, y *Tensor[T]) *Tensor[T] { return New[T](x.shape...).Div(x, y) }

// Scale returns the new tensor a·x.
func Scale[T Float](x *Tensor[T], a T) *Tensor[T] { return New[T](x.shape...).Scale(x, a) }
