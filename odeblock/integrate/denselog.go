package integrate

import (
	"math"
	"slices"
	"sort"

	"github.com/adamnode/adamnode/tensor"
)

// denseLog keeps the dense output of every accepted step of a solve, so
// that the solution can be evaluated anywhere in its span afterwards (the
// Interpolated gradient mode reads the state from it).
type denseLog[T tensor.Float] struct {
	tb    *Tableau
	steps []denseStep[T]
	last  int // the step the last lookup found

	ew   tensor.Elementwise[T] // the device the steps of a device solve are kept on
	comb tensorCombiner[T]     // AtTensor's sums there
	w    [16]float64           // the dense output's weights
}

// denseStep is what one step's interpolant needs: its start, size and
// end, the states and f at its ends, the stages its interpolant weighs
// (none for a cubic Hermite), or, for bdf, the differences and order.
type denseStep[T tensor.Float] struct {
	t, h, end      float64
	y0, y1, f0, f1 []T
	ks             [][]T
	d              [][]float64
	order          int
	bdf            bool // d and order, not y0, f0, f1 and ks, define the interpolant
	// The same in a device's memory, flat, for a step of a device solve
	// (on set; y0, y1, f0, f1 and ks are then not the step's).
	on                 bool
	y0t, y1t, f0t, f1t *tensor.Tensor[T]
	kst                []*tensor.Tensor[T]
}

// next returns the log's next step, reusing the buffers of a step kept
// earlier in the slice's capacity (the steps of an earlier pass, see
// passPools.takeLog).
func (l *denseLog[T]) next() *denseStep[T] {
	n := len(l.steps)
	if n < cap(l.steps) {
		l.steps = l.steps[:n+1]
	} else {
		l.steps = append(l.steps, denseStep[T]{})
	}
	return &l.steps[n]
}

// keep returns a copy of src in dst's memory when it is large enough.
func keep[E any](dst, src []E) []E {
	if cap(dst) < len(src) {
		return slices.Clone(src)
	}
	dst = dst[:len(src)]
	copy(dst, src)
	return dst
}

// add keeps the step g of method tb (copies of what its interpolant reads).
func (l *denseLog[T]) add(tb *Tableau, g stepGeom, y0, y1 []T, ks [][]T, f0, f1 []T) {
	l.tb = tb
	st := l.next()
	st.t, st.h, st.end, st.bdf, st.on = g.t, g.h, g.end, false, false
	st.y0, st.y1 = keep(st.y0, y0), keep(st.y1, y1)
	st.f0, st.f1 = st.f0[:0], st.f1[:0]
	if tb.Dense == nil { // the quartic and the Hermite use f at the ends
		st.f0, st.f1 = keep(st.f0, f0), keep(st.f1, f1)
	}
	st.ks = st.ks[:0]
	if tb.Dense != nil || tb.Mid != nil {
		st.ks = st.ks[:cap(st.ks)]
		for len(st.ks) < len(ks) {
			st.ks = append(st.ks, nil)
		}
		st.ks = st.ks[:len(ks)]
		for i, k := range ks {
			st.ks[i] = keep(st.ks[i], k)
		}
	}
}

// keepOn returns a copy of src made by ew in dst when it has src's
// length, else in a new tensor.
func keepOn[T tensor.Float](ew tensor.Elementwise[T], dst, src *tensor.Tensor[T]) *tensor.Tensor[T] {
	if dst == nil || dst.Len() != src.Len() {
		dst = tensor.New[T](src.Len())
	}
	ew.Copy(dst, src)
	return dst
}

// addOn is add for a step of a device solve (d): the copies are made in
// the device's memory.
func (l *denseLog[T]) addOn(d *devMode[T], tb *Tableau, g stepGeom, y0, y1 []T, ks [][]T, f0, f1 []T) {
	l.tb, l.ew, l.comb.ew = tb, d.ew, d.ew
	st := l.next()
	st.t, st.h, st.end, st.bdf, st.on = g.t, g.h, g.end, false, true
	st.y0t, st.y1t = keepOn(d.ew, st.y0t, d.view(y0)), keepOn(d.ew, st.y1t, d.view(y1))
	if tb.Dense == nil {
		st.f0t, st.f1t = keepOn(d.ew, st.f0t, d.view(f0)), keepOn(d.ew, st.f1t, d.view(f1))
	}
	st.kst = st.kst[:0]
	if tb.Dense != nil || tb.Mid != nil {
		// The tensors of an earlier pass's step where its capacity holds
		// them, else nil.
		st.kst = slices.Grow(st.kst, len(ks))[:len(ks)]
		for i, k := range ks {
			st.kst[i] = keepOn(d.ew, st.kst[i], d.view(k))
		}
	}
}

// AtTensor writes the solution at time tq into dst (flat, of the state's
// length): by the device's engine when the step holding tq was kept on
// one (the dense output as LinCombs of its states and stages, as a device
// solve forms it), else At on dst's host memory.
func (l *denseLog[T]) AtTensor(tq float64, dst *tensor.Tensor[T]) {
	st := &l.steps[l.find(tq)]
	if !st.on {
		l.At(tq, dst.Data())
		return
	}
	if tq == st.end {
		l.ew.Copy(dst, st.y1t)
		return
	}
	denseOutput[*tensor.Tensor[T]](&l.comb, &l.w, l.tb, dst, st.y0t, st.y1t, st.kst, st.t, st.h, tq, st.f0t, st.f1t)
}

// addBDF keeps a bdf step ending at end of size h and order k, whose
// differences D[0…k] define its interpolant.
func (l *denseLog[T]) addBDF(tb *Tableau, t, h, end float64, k int, D [][]float64, y1 []T) {
	l.tb = tb
	st := l.next()
	st.t, st.h, st.end, st.order, st.bdf, st.on = t, h, end, k, true, false
	st.y1 = keep(st.y1, y1)
	st.d = st.d[:cap(st.d)]
	for len(st.d) < k+1 {
		st.d = append(st.d, nil)
	}
	st.d = st.d[:k+1]
	for j := range k + 1 {
		st.d[j] = keep(st.d[j], D[j])
	}
}

// at writes the solution at time tq into dst; tq must lie in the span the
// steps cover.
func (l *denseLog[T]) At(tq float64, dst []T) {
	st := &l.steps[l.find(tq)]
	switch {
	case tq == st.end:
		copy(dst, st.y1)
	case st.bdf:
		bdfInterpolate(dst, st.d, st.order, st.end, st.h, tq)
	default:
		interpolateStep(&l.w, l.tb, dst, st.y0, st.y1, st.ks, st.t, st.h, tq, st.f0, st.f1)
	}
}

// find returns the index of the step whose span holds tq (the nearest
// at the ends): first the last one found and its neighbours, as the
// backward solve moves steadily, then by bisection.
func (l *denseLog[T]) find(tq float64) int {
	inside := func(i int) bool {
		st := &l.steps[i]
		return (tq-st.t)*st.h >= 0 && (st.end-tq)*st.h >= 0
	}
	for _, i := range []int{l.last, l.last - 1, l.last + 1} {
		if i >= 0 && i < len(l.steps) && inside(i) {
			l.last = i
			return i
		}
	}
	n := len(l.steps)
	dir := math.Copysign(1, l.steps[0].h)
	i := sort.Search(n, func(i int) bool { return (l.steps[i].end-tq)*dir >= 0 })
	l.last = min(i, n-1)
	return l.last
}

// newDenseLog returns an empty log that reuses the steps, and their
// buffers, in steps' capacity (those Release returned).
func newDenseLog[T tensor.Float](steps []denseStep[T]) *denseLog[T] {
	return &denseLog[T]{steps: steps[:0]}
}

// Release returns the log's steps, emptied, for a later newDenseLog, and
// forgets them.
func (l *denseLog[T]) Release() []denseStep[T] {
	st := l.steps[:0]
	l.steps = nil
	return st
}

// Len returns the number of steps kept.
func (l *denseLog[T]) Len() int { return len(l.steps) }

// Reset empties the log, keeping its steps' buffers.
func (l *denseLog[T]) Reset() { l.steps, l.last = l.steps[:0], 0 }
