package autograd

import "github.com/adamnode/adamnode/tensor"

// maxPooledRank is the largest rank of tensor the arena pools; larger ones
// are allocated afresh each time.
const maxPooledRank = 8

// shapeKey identifies a shape of rank ≤ maxPooledRank.
type shapeKey struct {
	rank int
	dims [maxPooledRank]int
}

// arena hands out tensors for a tape's values and gradients and takes them
// back on reset, so that a tape reused for passes of the same shapes
// allocates nothing. Tensors it hands out are dirty: they hold whatever the
// previous user wrote, and the taker must overwrite every element.
//
// Tensors are pooled per shape (a size class). A pass uses few distinct
// shapes, so classes are found by a linear search from the last one used,
// which is cheaper than hashing the shape.
type arena[T tensor.Float] struct {
	classes []sizeClass[T]
	all     []pooled[T] // every pooled tensor the arena owns
	hint    int         // the class found last

	// The tensor handed out last and its class, so that a slot can note the
	// class of its value without computing the shape's key again.
	lastT *tensor.Tensor[T]
	lastC int
}

// pooled is a tensor the arena owns and its size class.
type pooled[T tensor.Float] struct {
	t     *tensor.Tensor[T]
	class int
}

// sizeClass is the free list of one shape.
type sizeClass[T tensor.Float] struct {
	key  shapeKey
	free []*tensor.Tensor[T]
}

// keyLike returns the key of x's shape and whether it can be pooled.
func keyLike[T tensor.Float](x *tensor.Tensor[T]) (shapeKey, bool) {
	var k shapeKey
	k.rank = x.Rank()
	if k.rank > maxPooledRank {
		return k, false
	}
	for i := 0; i < k.rank; i++ {
		k.dims[i] = x.Dim(i)
	}
	return k, true
}

// keyOf returns the key of the shape dims and whether it can be pooled.
func keyOf(dims []int) (shapeKey, bool) {
	var k shapeKey
	k.rank = len(dims)
	if k.rank > maxPooledRank {
		return k, false
	}
	copy(k.dims[:], dims)
	return k, true
}

// class returns the index of the size class of k, adding it if new.
func (a *arena[T]) class(k shapeKey) int {
	n := len(a.classes)
	for j := 0; j < n; j++ {
		i := a.hint + j
		if i >= n {
			i -= n
		}
		if a.classes[i].key == k {
			a.hint = i
			return i
		}
	}
	a.classes = append(a.classes, sizeClass[T]{key: k})
	a.hint = n
	return n
}

// get returns a dirty tensor of shape dims.
func (a *arena[T]) get(dims ...int) *tensor.Tensor[T] {
	k, ok := keyOf(dims)
	if !ok {
		return tensor.New[T](append([]int(nil), dims...)...) // copied: dims must not escape
	}
	return a.getKey(k)
}

// like returns a dirty tensor shaped like x.
func (a *arena[T]) like(x *tensor.Tensor[T]) *tensor.Tensor[T] {
	t, _ := a.likeClass(x, -1)
	return t
}

// likeClass returns a dirty tensor shaped like x, whose size class is c
// when c ≥ 0 (unknown when c < 0), and the tensor's class (−1 if unpooled).
func (a *arena[T]) likeClass(x *tensor.Tensor[T], c int) (*tensor.Tensor[T], int) {
	if c < 0 {
		k, ok := keyLike(x)
		if !ok {
			return tensor.New[T](x.Shape()...), -1
		}
		c = a.class(k)
	}
	return a.take(c), c
}

func (a *arena[T]) getKey(k shapeKey) *tensor.Tensor[T] { return a.take(a.class(k)) }

// take returns a tensor of class ci.
func (a *arena[T]) take(ci int) *tensor.Tensor[T] {
	c := &a.classes[ci]
	var t *tensor.Tensor[T]
	if n := len(c.free); n > 0 {
		t = c.free[n-1]
		c.free[n-1] = nil
		c.free = c.free[:n-1]
	} else {
		// A fresh slice, so that the key (and the callers' dims) stay on
		// the stack.
		t = tensor.New[T](append([]int(nil), c.key.dims[:c.key.rank]...)...)
		a.all = append(a.all, pooled[T]{t, ci})
	}
	a.lastT, a.lastC = t, ci
	return t
}

// put gives t back before the next reset; c is its class, or −1 if unknown.
// t must have come from the arena and must not be used by its taker
// afterwards.
func (a *arena[T]) put(t *tensor.Tensor[T], c int) {
	if c < 0 {
		k, ok := keyLike(t)
		if !ok {
			return
		}
		c = a.class(k)
	}
	a.classes[c].free = append(a.classes[c].free, t)
}

// reset takes back every tensor handed out.
func (a *arena[T]) reset() {
	for i := range a.classes {
		c := &a.classes[i]
		clear(c.free)
		c.free = c.free[:0]
	}
	for _, p := range a.all {
		c := &a.classes[p.class]
		c.free = append(c.free, p.t)
	}
	a.lastT = nil
}

// release drops every tensor, for the garbage collector.
func (a *arena[T]) release() {
	clear(a.all)
	a.all = nil
	a.classes = nil
	a.hint = 0
	a.lastT = nil
}
