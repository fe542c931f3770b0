package cuda

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/adamnode/adamnode/tensor"
)

// The reductions add in float64 whatever T is, each block in a fixed tree
// (its thread t first takes elements t, t + 256, …; short axes one thread
// in order), and round the result to T once. The order depends on the sizes alone (the number of blocks of
// a whole-buffer sum is a function of its length), so a reduction gives the
// same bits on every run and every device. It is not the CPU's order: the
// tensor package sums float64 sequentially (Sum, Dot) and float32 axes in
// float32 (SumAxis); so float64 results agree with the CPU's to the
// rounding of the float64 sums (n·2⁻⁵³·Σ|x|), float32 ones within an ulp
// of the exact sum where the CPU's float64 sums are, and more closely than
// the CPU's float32 axis sums.

// axisBlockMin is the axis length above which an axis reduction takes a
// block of threads per output (a tree over the axis); up to it, a thread
// per output adds along the axis in order.
const axisBlockMin = blockThreads

// axisReduce checks x's shape and axis and launches the axis reduction op
// (0 sum, 1 mean, 2 max).
func axisReduce[T tensor.Float](k *Kernels, name string, op int, dst, x Buffer[T], shape []int, axis int) error {
	if len(shape) > MaxDims || len(shape) == 0 {
		return fmt.Errorf("cuda: %s: shape %v: 1 to %d dimensions", name, shape, MaxDims)
	}
	if axis < 0 {
		axis += len(shape)
	}
	if axis < 0 || axis >= len(shape) {
		return fmt.Errorf("cuda: %s: axis %d out of range for shape %v", name, axis, shape)
	}
	outer, inner, all := 1, 1, 1
	for i, d := range shape {
		if d < 0 {
			return fmt.Errorf("cuda: %s: shape %v: a negative size", name, shape)
		}
		switch {
		case i < axis:
			outer *= d
		case i > axis:
			inner *= d
		}
		all *= d
	}
	n := shape[axis]
	if x.n != all || dst.n != outer*inner {
		return fmt.Errorf("cuda: %s: lengths %d and %d for shape %v reduced over axis %d", name, x.n, dst.n, shape, axis)
	}
	if op == 2 && n == 0 && dst.n > 0 {
		return fmt.Errorf("cuda: %s: the max over axis %d of size 0 (shape %v)", name, axis, shape)
	}
	if dst.n == 0 {
		return nil
	}
	if err := k.enter(); err != nil {
		return err
	}
	defer k.leave()
	block, grid := uint64(0), k.gridFor(dst.n)
	if n > axisBlockMin {
		block, grid = 1, max(1, min(dst.n, blocksPerSM*k.sms))
	}
	return k.launch(kernelIndex[T](kAxisReduce), grid, uint64(dst.ptr), uint64(x.ptr), uint64(op), block, uint64(outer), uint64(n), uint64(inner))
}

// SumAxis sets dst to the sum of x along axis: x row-major of shape
// (1 to MaxDims dimensions; a negative axis counts from the end), dst of
// that shape without the axis (tensor.SumAxis). Added in float64 and
// rounded to T once: along axes of up to 256 elements by one thread per
// element of dst, in order; along longer ones by a block of threads per
// element of dst, in a fixed tree (see the reductions above). A sum over
// no elements is 0.
func SumAxis[T tensor.Float](k *Kernels, dst, x Buffer[T], shape []int, axis int) error {
	return axisReduce(k, "SumAxis", 0, dst, x, shape, axis)
}

// MeanAxis sets dst to the mean of x along axis, the float64 sum of
// SumAxis divided by the axis's size and rounded once (NaN over no
// elements).
func MeanAxis[T tensor.Float](k *Kernels, dst, x Buffer[T], shape []int, axis int) error {
	return axisReduce(k, "MeanAxis", 1, dst, x, shape, axis)
}

// MaxAxis sets dst to the largest element of x along axis, as
// tensor.MaxAxis has it: the first NaN along the axis if there is one (a
// NaN propagates, as in PyTorch), else the first of equal largest
// elements (so −0 or +0 as the first zero is). Exact: the CPU's to the
// bit. An axis of size 0 is an error.
func MaxAxis[T tensor.Float](k *Kernels, dst, x Buffer[T], shape []int, axis int) error {
	return axisReduce(k, "MaxAxis", 2, dst, x, shape, axis)
}

// argMaxChunk is the number of indices ArgMaxAxis computes a launch: as
// many int32s as the error norms' records hold (their scratch memory).
const argMaxChunk = 4 * maxParts * 8 / 4

// ArgMaxAxis sets dst to tensor.ArgMax of x along axis, x row-major of
// shape (any rank; a negative axis counts from the end) and dst on the
// host, of x's length without the axis: for each position with axis
// removed, the index along axis of its largest element, the first of
// equal ones; a NaN is never larger, so only a NaN first along the axis
// gives its index, 0. Exact: the CPU's indices. Computed on the device
// (along axes of up to 256 elements one thread an index, in order; along
// longer ones a block, in a tree that keeps the first of equals) into the
// kernels' scratch memory, of which only the indices are copied to the
// host, as int32, argMaxChunk a launch. An axis of size 0, or longer than
// an int32 counts, is an error.
func ArgMaxAxis[T tensor.Float](k *Kernels, dst []int, x Buffer[T], shape []int, axis int) error {
	if len(shape) == 0 {
		return fmt.Errorf("cuda: ArgMaxAxis: shape %v: no axis", shape)
	}
	if axis < 0 {
		axis += len(shape)
	}
	if axis < 0 || axis >= len(shape) {
		return fmt.Errorf("cuda: ArgMaxAxis: axis %d out of range for shape %v", axis, shape)
	}
	outer, inner := 1, 1
	for i, d := range shape {
		if d < 0 {
			return fmt.Errorf("cuda: ArgMaxAxis: shape %v: a negative size", shape)
		}
		switch {
		case i < axis:
			outer *= d
		case i > axis:
			inner *= d
		}
	}
	n := shape[axis]
	switch {
	case x.n != outer*n*inner || len(dst) != outer*inner:
		return fmt.Errorf("cuda: ArgMaxAxis: lengths %d and %d for shape %v reduced over axis %d", x.n, len(dst), shape, axis)
	case n == 0:
		return fmt.Errorf("cuda: ArgMaxAxis: axis %d of size 0 (shape %v)", axis, shape)
	case n > math.MaxInt32:
		return fmt.Errorf("cuda: ArgMaxAxis: axis %d of %d elements, more than an int32 counts", axis, n)
	}
	if len(dst) == 0 {
		return nil
	}
	if err := k.enter(); err != nil {
		return err
	}
	defer k.leave()
	idx := make([]int32, min(len(dst), argMaxChunk))
	for lo := 0; lo < len(dst); lo += argMaxChunk {
		cnt := min(argMaxChunk, len(dst)-lo)
		block, grid := uint64(0), k.gridFor(cnt)
		if n > axisBlockMin {
			block, grid = 1, max(1, min(cnt, blocksPerSM*k.sms))
		}
		if err := k.launch(kernelIndex[T](kArgMax), grid, uint64(k.norm), uint64(x.ptr), block, uint64(n), uint64(inner), uint64(lo), uint64(cnt)); err != nil {
			return err
		}
		if err := k.libs.check("cuMemcpyDtoH_v2", k.libs.drv.cuMemcpyDtoH(unsafe.Pointer(&idx[0]), k.norm, uintptr(cnt*4))); err != nil {
			return err
		}
		for i, v := range idx[:cnt] {
			dst[lo+i] = int(v)
		}
	}
	return nil
}

// sumParts is the number of blocks of a whole-buffer sum of n elements: a
// function of n alone, so that the order of the additions is too.
func sumParts(n int) int { return max(1, min((n+blockThreads-1)/blockThreads, maxParts)) }

// sumLaunch runs the whole-buffer sum op (0 Σx, 1 Σx², 2 Σx·y) into dst[0].
func sumLaunch[T tensor.Float](k *Kernels, name string, op int, dst, x, y Buffer[T]) error {
	if dst.n != 1 {
		return fmt.Errorf("cuda: %s: a destination of %d elements, not 1", name, dst.n)
	}
	if op == 2 {
		if err := sameLen(name, x.n, y.n); err != nil {
			return err
		}
	}
	if err := k.enter(); err != nil {
		return err
	}
	defer k.leave()
	parts := sumParts(x.n)
	if err := k.launch(kernelIndex[T](kSumParts), parts, uint64(k.norm), uint64(x.ptr), uint64(y.ptr), uint64(op), uint64(x.n)); err != nil {
		return err
	}
	return k.launch(kernelIndex[T](kSumFinal), 1, uint64(dst.ptr), uint64(k.norm), uint64(parts))
}

// Sum sets dst[0] (dst of one element) to Σ x[i], added in float64 and
// rounded to T once (tensor.Sum forms the same float64 sum in another
// order; see the reductions above). It stays on the device: Download reads
// it. 0 for no elements.
func Sum[T tensor.Float](k *Kernels, dst, x Buffer[T]) error {
	return sumLaunch(k, "Sum", 0, dst, x, Buffer[T]{})
}

// SumSquares sets dst[0] to Σ x[i]², each square formed and added in
// float64, rounded to T once.
func SumSquares[T tensor.Float](k *Kernels, dst, x Buffer[T]) error {
	return sumLaunch(k, "SumSquares", 1, dst, x, Buffer[T]{})
}

// Dot sets dst[0] to Σ x[i]·y[i], each product formed and added in
// float64, rounded to T once (tensor.Dot's terms, in another order).
func Dot[T tensor.Float](k *Kernels, dst, x, y Buffer[T]) error {
	return sumLaunch(k, "Dot", 2, dst, x, y)
}

// ChannelSums sets dst[c] = Σ_{b,i} x[b, c, i] for x of shape [batch, C,
// inner] and dst of C elements, or adds it to dst with accumulate: a
// bias's gradient, as autograd forms it (its sumPerChannelInto). With
// inner = 1 (a Linear's bias: the columns of a matrix) one thread a column
// adds the rows to dst[c] (or 0) in T, in order: tensor.AddColumnSums to
// the bit (its generic path; float32's AVX-512 path adds even and odd rows
// apart). Otherwise (a convolution's bias) a block of threads a channel
// sums in float64 in a fixed tree, rounds to T and adds to dst[c] (or 0),
// where autograd adds the batch's float64 row sums in order: the same
// float64 sum to its rounding, the same bits every run.
func ChannelSums[T tensor.Float](k *Kernels, dst, x Buffer[T], batch, channels, inner int, accumulate bool) error {
	if batch < 0 || channels < 0 || inner < 1 {
		return fmt.Errorf("cuda: ChannelSums: batch %d, %d channels, inner size %d", batch, channels, inner)
	}
	if dst.n != channels || x.n != batch*channels*inner {
		return fmt.Errorf("cuda: ChannelSums: lengths %d and %d for [%d, %d, %d]", dst.n, x.n, batch, channels, inner)
	}
	if channels == 0 {
		return nil
	}
	acc := uint64(0)
	if accumulate {
		acc = 1
	}
	if err := k.enter(); err != nil {
		return err
	}
	defer k.leave()
	grid := k.gridFor(channels)
	if inner > 1 {
		grid = max(1, min(channels, blocksPerSM*k.sms))
	}
	return k.launch(kernelIndex[T](kChanSum), grid, uint64(dst.ptr), uint64(x.ptr), uint64(batch), uint64(channels), uint64(inner), acc)
}
