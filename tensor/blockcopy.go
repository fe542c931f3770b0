package tensor

import "fmt"

// Blocks describes a strided block copy between the row-major elements of
// two tensors, z and x: Count blocks of Len elements each, block b of z
// starting at element ZOff + b·ZStride and block b of x at
// XOff + b·XStride. A filter's input channels taken from a larger filter
// ([co, c+1, kh, kw] into [co, c, kh, kw]) are, for example, Count = co
// blocks of Len = c·kh·kw elements, with ZStride = c·kh·kw and
// XStride = (c+1)·kh·kw.
type Blocks struct {
	Count, Len    int // the number of blocks, and the elements in each
	ZOff, ZStride int // the destination's first element, and the step between its blocks
	XOff, XStride int // the source's first element, and the step between its blocks
}

// BlockCopier is implemented by an engine, or an engine's Elementwise, that
// copies blocks between tensors where it keeps their values (package
// cuda's): a part of a tensor written from a part of another without
// either leaving the device.
type BlockCopier[T Float] interface {
	// CopyBlocks sets, for b in [0, s.Count) and i in [0, s.Len),
	//
	//	z[s.ZOff + b·s.ZStride + i] = a·x[s.XOff + b·s.XStride + i]
	//
	// or, with accumulate, adds a·x[…] (the product rounded, then added)
	// to that element of z. The other elements of z are left as they are.
	// a = 1 copies exactly. The ranges must lie within the tensors, the
	// destination's blocks must not overlap, and z and x must not share
	// storage: CheckBlocks's rules, whose *ShapeError a misfit panics with.
	CopyBlocks(z, x *Tensor[T], a T, s Blocks, accumulate bool)
}

// BlockCopierOf returns e, or e's Elementwise, when it is a BlockCopier,
// and nil otherwise (the CPU engines, which copy in host memory).
func BlockCopierOf[T Float](e Engine[T]) BlockCopier[T] {
	if c, ok := e.(BlockCopier[T]); ok {
		return c
	}
	if c, ok := DeviceElementwise(e).(BlockCopier[T]); ok {
		return c
	}
	return nil
}

// CheckBlocks panics with a *ShapeError naming op, the operands' shapes and
// the ranges unless s fits z and x: a count, a length, offsets and strides
// that are not negative; every block within its tensor's elements (the
// last block of z ending at ZOff + (Count−1)·ZStride + Len ≤ z.Len(), and
// likewise for x); destination blocks that do not overlap (ZStride ≥ Len
// when Count > 1); and z and x of different storages. A copy of no
// elements (Count or Len 0) fits any tensors but z and x sharing storage.
func CheckBlocks[T Float](op string, z, x *Tensor[T], s Blocks) {
	fail := func(format string, args ...any) {
		panic(&ShapeError{Op: op, Msg: fmt.Sprintf("blocks %+v from x of shape %v into z of shape %v: ", s, x.Shape(), z.Shape()) + fmt.Sprintf(format, args...)})
	}
	if s.Count < 0 || s.Len < 0 || s.ZOff < 0 || s.ZStride < 0 || s.XOff < 0 || s.XStride < 0 {
		fail("a negative count, length, offset or stride")
	}
	if z.Storage() == x.Storage() {
		fail("z and x share storage")
	}
	if s.Count == 0 || s.Len == 0 {
		return
	}
	if s.Count > 1 && s.ZStride < s.Len {
		fail("z's blocks overlap (stride %d < length %d)", s.ZStride, s.Len)
	}
	// within reports whether blocks of length s.Len at off, off + stride, …
	// lie within n elements, without overflowing (off and n are not
	// negative, so n − off does not overflow).
	within := func(off, stride, n int) bool {
		if s.Len > n-off {
			return false
		}
		return s.Count == 1 || stride <= (n-off-s.Len)/(s.Count-1)
	}
	if !within(s.ZOff, s.ZStride, z.Len()) {
		fail("z's elements [%d, %d+%d·%d+%d) are not within its %d", s.ZOff, s.ZOff, s.Count-1, s.ZStride, s.Len, z.Len())
	}
	if !within(s.XOff, s.XStride, x.Len()) {
		fail("x's elements [%d, %d+%d·%d+%d) are not within its %d", s.XOff, s.XOff, s.Count-1, s.XStride, s.Len, x.Len())
	}
}

// CopyBlocks is BlockCopier's CopyBlocks in host memory, the reference
// for an engine's: for b in [0, s.Count) and i in [0, s.Len),
// z[s.ZOff + b·s.ZStride + i] = a·x[s.XOff + b·s.XStride + i], or with
// accumulate z[…] + a·x[…] (the product rounded to T, then added). It
// checks s with CheckBlocks first. z's other elements keep their values.
func CopyBlocks[T Float](z, x *Tensor[T], a T, s Blocks, accumulate bool) {
	CheckBlocks("CopyBlocks", z, x, s)
	if s.Count == 0 || s.Len == 0 {
		return
	}
	zd, xd := z.Data(), x.ReadData()
	for b := range s.Count {
		dst := zd[s.ZOff+b*s.ZStride : s.ZOff+b*s.ZStride+s.Len]
		src := xd[s.XOff+b*s.XStride : s.XOff+b*s.XStride+s.Len]
		switch {
		case accumulate:
			for i, v := range src {
				dst[i] += T(a * v) // the conversion keeps the product rounded (no fused multiply-add)
			}
		case a == 1:
			copy(dst, src)
		default:
			for i, v := range src {
				dst[i] = a * v
			}
		}
	}
}

// CopyBlocks is the reference's: the package function CopyBlocks.
func (hostElementwise[T]) CopyBlocks(z, x *Tensor[T], a T, s Blocks, accumulate bool) {
	CopyBlocks(z, x, a, s, accumulate)
}
