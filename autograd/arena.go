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
type arena[T tensor.Float] struct {
	all  []*tensor.Tensor[T]              // every pooled tensor the arena owns
	free map[shapeKey][]*tensor.Tensor[T] // those not handed out
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
	k, ok := keyLike(x)
	if !ok {
		return tensor.New[T](x.Shape()...)
	}
	return a.getKey(k)
}

func (a *arena[T]) getKey(k shapeKey) *tensor.Tensor[T] {
	if l := a.free[k]; len(l) > 0 {
		t := l[len(l)-1]
		l[len(l)-1] = nil
		a.free[k] = l[:len(l)-1]
		return t
	}
	// A fresh slice, so that k (and the callers' dims) stay on the stack.
	t := tensor.New[T](append([]int(nil), k.dims[:k.rank]...)...)
	a.all = append(a.all, t)
	return t
}

// put gives t back before the next reset. t must have come from get or like
// and must not be used by its taker afterwards.
func (a *arena[T]) put(t *tensor.Tensor[T]) {
	k, ok := keyLike(t)
	if !ok {
		return
	}
	if a.free == nil {
		a.free = make(map[shapeKey][]*tensor.Tensor[T])
	}
	a.free[k] = append(a.free[k], t)
}

// reset takes back every tensor handed out.
func (a *arena[T]) reset() {
	if a.free == nil {
		a.free = make(map[shapeKey][]*tensor.Tensor[T])
	}
	for k, l := range a.free {
		clear(l)
		a.free[k] = l[:0]
	}
	for _, t := range a.all {
		k, _ := keyLike(t)
		a.free[k] = append(a.free[k], t)
	}
}

// release drops every tensor, for the garbage collector.
func (a *arena[T]) release() {
	clear(a.all)
	a.all = nil
	a.free = nil
}
