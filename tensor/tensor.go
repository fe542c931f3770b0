package tensor

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
)

// Float is the set of element types a Tensor can hold.
type Float interface {
	~float32 | ~float64
}

// Tensor is a dense, contiguous, row-major n-dimensional array.
//
// The zero value is an empty rank-0 tensor of no elements; use New, Full,
// FromSlice or the random constructors to make one.
//
// Every tensor has a Storage shared with its views (Reshape, Slice), whose
// version counts the writes to the elements; engines that keep copies of
// tensors in their own memory (package cuda) use it to know when a copy is
// out of date. See Storage for what counts as a write.
type Tensor[T Float] struct {
	shape []int
	data  []T
	st    *Storage // a view's: the storage it shares; nil when it is own
	own   Storage

	mark any // Mark's tag, for a package above this one
}

// Mark tags t with an opaque value, for a package built on this one:
// autograd marks the value of a Var that it hands out while a tape records
// gradients with that tape, so that a vector–Jacobian product taken at
// that value can tell that its result would drop a derivative. The tag is
// the tensor's own, not its views'; this package never reads it.
func (t *Tensor[T]) Mark(tag any) { t.mark = tag }

// Marked returns the tag Mark set (nil if none).
func (t *Tensor[T]) Marked() any { return t.mark }

// Storage identifies the elements a tensor shares with its views and
// counts the writes to them: its version changes on every write by a
// method of this package (the destination of Add, Gemm, Copy, Set, Fill,
// an engine's convolution pass and every other method that stores into a
// tensor) and on every call of Data, which hands out writable memory.
// Writes through a slice that Data returned earlier are not seen: call
// MarkChanged after them (or call Data again before writing). ReadData
// returns the elements for reading without counting as a write.
//
// A tensor made by FromSlice gets a new Storage even when its slice is
// another tensor's memory; writes through one are then not seen by the
// other's version.
//
// An engine that computes in device memory (package cuda's) may leave the
// newer values there: it marks the storage (MarkDeviceNewer), and every
// method of this package that reads or writes the elements — Data and
// ReadData among them — first has the engine copy them to host memory
// (Sync). Reading a tensor's values on the host is what copies them. So a
// slice that Data or ReadData returned holds the values of that moment: a
// later write by such an engine is seen by calling ReadData again. The
// memory of a tensor made by FromSlice is its caller's, who may read it at
// any time: an engine copies results written into it back at once
// (Shared).
type Storage struct {
	version atomic.Uint64
	device  atomic.Pointer[DeviceMark] // non-nil: a device holds newer values
	shared  bool                       // FromSlice's: the caller holds the memory
}

// Version returns the storage's write count: equal values mean no write
// (that this package saw) happened in between.
func (s *Storage) Version() uint64 { return s.version.Load() }

// view returns a tensor sharing t's storage.
func (t *Tensor[T]) view(shape []int, data []T) *Tensor[T] {
	return &Tensor[T]{shape: shape, data: data, st: t.storage()}
}

// storage returns t's storage: the one it views, else its own.
func (t *Tensor[T]) storage() *Storage {
	if t.st == nil {
		return &t.own
	}
	return t.st
}

// wrote records a write to t's elements, after bringing the host copy up
// to date (a write may cover only part of them).
func (t *Tensor[T]) wrote() {
	s := t.storage()
	if s.device.Load() != nil {
		s.Sync()
	}
	s.version.Add(1)
}

// host returns t's elements for reading, after bringing the host copy up
// to date.
func (t *Tensor[T]) host() []T {
	t.sync()
	return t.data
}

// sync brings t's host copy up to date.
func (t *Tensor[T]) sync() {
	if s := t.storage(); s.device.Load() != nil {
		s.Sync()
	}
}

// Storage returns the storage t shares with its views.
func (t *Tensor[T]) Storage() *Storage { return t.storage() }

// Version returns the version of t's storage (see Storage).
func (t *Tensor[T]) Version() uint64 { return t.storage().Version() }

// MarkChanged records that t's elements were written through a slice that
// Data returned earlier (see Storage).
func (t *Tensor[T]) MarkChanged() { t.wrote() }

// DeviceWrote records that an engine wrote t's elements in device memory:
// it counts the write in the storage's version, as MarkChanged does, but
// does not copy anything to the host. The engine then marks the storage
// (MarkDeviceNewer) for a later Sync.
func (t *Tensor[T]) DeviceWrote() { t.storage().version.Add(1) }

// HostMemory returns t's host memory as it is, without bringing it up to
// date from a device and without counting a write: for an engine that
// copies between it and device memory. Everyone else calls Data or
// ReadData.
func (t *Tensor[T]) HostMemory() []T { return t.data }

// numel returns the product of the dimensions of shape, panicking on a
// negative dimension.
func numel(op string, shape []int) int {
	n := 1
	for _, d := range shape {
		if d < 0 {
			panic(&ShapeError{Op: op, Msg: fmt.Sprintf("negative dimension in shape %v", shape)})
		}
		n *= d
	}
	return n
}

// New returns a tensor of the given shape filled with zeros.
func New[T Float](shape ...int) *Tensor[T] {
	n := numel("New", shape)
	return &Tensor[T]{shape: cloneInts(shape), data: make([]T, n)}
}

// Full returns a tensor of the given shape with every element set to v.
func Full[T Float](v T, shape ...int) *Tensor[T] {
	t := New[T](shape...)
	t.Fill(v)
	return t
}

// FromSlice returns a tensor of the given shape that uses data as its storage
// (no copy). It panics if len(data) is not the product of shape. With no shape
// the tensor is one-dimensional of length len(data).
func FromSlice[T Float](data []T, shape ...int) *Tensor[T] {
	if len(shape) == 0 {
		shape = []int{len(data)}
	}
	if n := numel("FromSlice", shape); n != len(data) {
		panic(&ShapeError{Op: "FromSlice", Msg: fmt.Sprintf("%d elements do not fill shape %v (%d elements)", len(data), shape, n)})
	}
	t := &Tensor[T]{shape: cloneInts(shape), data: data}
	t.own.shared = true
	return t
}

// RandN returns a tensor of independent standard normal samples scaled by std
// and shifted by mean, drawn from rng.
func RandN[T Float](rng *rand.Rand, mean, std float64, shape ...int) *Tensor[T] {
	t := New[T](shape...)
	for i := range t.data {
		t.data[i] = T(mean + std*rng.NormFloat64())
	}
	return t
}

// RandU returns a tensor of independent samples uniform on [lo, hi) drawn
// from rng.
func RandU[T Float](rng *rand.Rand, lo, hi float64, shape ...int) *Tensor[T] {
	t := New[T](shape...)
	for i := range t.data {
		t.data[i] = T(lo + (hi-lo)*rng.Float64())
	}
	return t
}

// Shape returns a copy of the tensor's dimensions.
func (t *Tensor[T]) Shape() []int { return cloneInts(t.shape) }

// Rank returns the number of dimensions.
func (t *Tensor[T]) Rank() int { return len(t.shape) }

// Dim returns the size of dimension i; negative i counts from the end.
func (t *Tensor[T]) Dim(i int) int {
	if i < 0 {
		i += len(t.shape)
	}
	if i < 0 || i >= len(t.shape) {
		panic(&ShapeError{Op: "Dim", Msg: fmt.Sprintf("axis %d out of range for shape %v", i, t.shape)})
	}
	return t.shape[i]
}

// Len returns the number of elements.
func (t *Tensor[T]) Len() int { return len(t.data) }

// Data returns the tensor's elements in row-major order: its storage, not
// a copy. The call counts as a write (see Storage).
func (t *Tensor[T]) Data() []T {
	t.wrote()
	return t.data
}

// ReadData returns the tensor's elements like Data, for reading only: it
// does not count as a write, so the caller must not write through it.
func (t *Tensor[T]) ReadData() []T { return t.host() }

// SameShape reports whether t and u have identical shapes.
func (t *Tensor[T]) SameShape(u *Tensor[T]) bool { return slices.Equal(t.shape, u.shape) }

// HasShape reports whether t has exactly the given shape.
func (t *Tensor[T]) HasShape(shape ...int) bool { return slices.Equal(t.shape, shape) }

// offset returns the flat index of the element at idx.
func (t *Tensor[T]) offset(op string, idx []int) int {
	if len(idx) != len(t.shape) {
		panic(&ShapeError{Op: op, Msg: fmt.Sprintf("index %v has %d coordinates, shape %v has %d", idx, len(idx), t.shape, len(t.shape))})
	}
	off := 0
	for i, x := range idx {
		if x < 0 || x >= t.shape[i] {
			panic(&ShapeError{Op: op, Msg: fmt.Sprintf("index %v out of range for shape %v", idx, t.shape)})
		}
		off = off*t.shape[i] + x
	}
	return off
}

// At returns the element at the given coordinates.
func (t *Tensor[T]) At(idx ...int) T { return t.host()[t.offset("At", idx)] }

// Set sets the element at the given coordinates to v.
func (t *Tensor[T]) Set(v T, idx ...int) {
	t.wrote()
	t.data[t.offset("Set", idx)] = v
}

// Fill sets every element to v and returns t.
func (t *Tensor[T]) Fill(v T) *Tensor[T] {
	t.wrote()
	for i := range t.data {
		t.data[i] = v
	}
	return t
}

// Zero sets every element to 0 and returns t.
func (t *Tensor[T]) Zero() *Tensor[T] {
	t.wrote()
	clear(t.data)
	return t
}

// Clone returns a deep copy of t.
func (t *Tensor[T]) Clone() *Tensor[T] {
	return &Tensor[T]{shape: cloneInts(t.shape), data: append([]T(nil), t.host()...)}
}

// Copy copies src into t (same number of elements; shapes may differ) and
// returns t.
func (t *Tensor[T]) Copy(src *Tensor[T]) *Tensor[T] {
	if len(t.data) != len(src.data) {
		panic(newShapeError("Copy", t.shape, src.shape))
	}
	t.wrote()
	copy(t.data, src.host())
	return t
}

// Reshape returns a view of t with a new shape and the same storage. One
// dimension may be -1, inferred from the others.
func (t *Tensor[T]) Reshape(shape ...int) *Tensor[T] {
	s := cloneInts(shape)
	infer := -1
	n := 1
	for i, d := range s {
		switch {
		case d == -1 && infer < 0:
			infer = i
		case d < 0:
			panic(&ShapeError{Op: "Reshape", Msg: fmt.Sprintf("bad shape %v for tensor of shape %v", shape, t.shape)})
		default:
			n *= d
		}
	}
	if infer >= 0 {
		if n == 0 || len(t.data)%n != 0 {
			panic(&ShapeError{Op: "Reshape", Msg: fmt.Sprintf("cannot infer -1 in %v from shape %v", shape, t.shape)})
		}
		s[infer] = len(t.data) / n
		n = len(t.data)
	}
	if n != len(t.data) {
		panic(&ShapeError{Op: "Reshape", Msg: fmt.Sprintf("shape %v (%d elements) does not match shape %v (%d elements)", shape, n, t.shape, len(t.data))})
	}
	return t.view(s, t.data)
}

// Slice returns the view t[i:j] along the leading axis, sharing storage.
func (t *Tensor[T]) Slice(i, j int) *Tensor[T] {
	if len(t.shape) == 0 || i < 0 || j < i || j > t.shape[0] {
		panic(&ShapeError{Op: "Slice", Msg: fmt.Sprintf("range [%d:%d] out of bounds for shape %v", i, j, t.shape)})
	}
	inner := 1
	for _, d := range t.shape[1:] {
		inner *= d
	}
	s := cloneInts(t.shape)
	s[0] = j - i
	return t.view(s, t.data[i*inner:j*inner:j*inner])
}

// String formats the tensor's shape and, for small tensors, its elements.
func (t *Tensor[T]) String() string {
	t.sync()
	if len(t.data) <= 16 {
		return fmt.Sprintf("Tensor%v%v", t.shape, t.data)
	}
	return fmt.Sprintf("Tensor%v[%v %v ... %v]", t.shape, t.data[0], t.data[1], t.data[len(t.data)-1])
}

func cloneInts(s []int) []int { return append([]int{}, s...) }
