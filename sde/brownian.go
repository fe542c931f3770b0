package sde

import (
	"container/list"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/adamnode/adamnode/tensor"
)

// Path is a Brownian sample path that a solver reads its increments from.
// Brownian implements it; so can a caller's own type that replays given
// increments (say, to compare with another library on the same noise).
type Path[T tensor.Float] interface {
	// Increment writes W(t) − W(s) into dst (shaped like Shape()). It
	// returns an error for s > t or an interval outside the path's span.
	Increment(dst *tensor.Tensor[T], s, t float64) error
	// Shape is the shape of one increment.
	Shape() []int
}

// AreaPath is a Path that also gives the space-time Lévy area of an
// interval (Brownian.IncrementArea), as the order-1.5 method SRI2 needs.
type AreaPath[T tensor.Float] interface {
	Path[T]
	IncrementArea(dW, dH *tensor.Tensor[T], s, t float64) error
}

// ErrOutsideSpan is wrapped by the errors of queries on a Brownian path
// outside its span [t0, t1].
var ErrOutsideSpan = errors.New("outside the Brownian path's span")

// ErrReversedInterval is wrapped by the errors of queries W(s, t) with s > t.
var ErrReversedInterval = errors.New("interval with s > t")

// BrownianOptions configures NewBrownian. The zero value is usable.
type BrownianOptions struct {
	// Seed selects the sample path: the same seed, span, shape and Tol give
	// the same path, bit for bit, whatever order it is queried in.
	Seed uint64
	// Tol is the time resolution: times closer than Tol to a node of the
	// tree are read at that node (and times within Tol of t0 or t1 at the
	// span's ends), so a step end computed as 0.1+0.2 and an output time
	// given as 0.3 read the same W. 0 means (t1 − t0)·2⁻⁴⁰ (about
	// 1e-12 of the span); it bounds the depth of the tree at
	// ⌈log₂((t1 − t0)/Tol)⌉ (at most 60).
	Tol float64
	// CacheSize is the number of tree nodes kept (least recently used
	// evicted), each two increments' worth of float64s (its left half's W
	// and Lévy area; with NoArea one, W at its midpoint). 0 means as many
	// as fit in 32 MiB, at least 128 and at most 65536 (for an increment
	// of 500 elements, 4096 nodes). Memory is bounded by CacheSize × the
	// increment's size × 16 bytes whatever the number of queries (and, with
	// areas, scratch of as much per level of the tree that queries reach);
	// an evicted node is recomputed, with the same value, when it is
	// needed again.
	//
	// A query at a time t0 + k(t1 − t0)/2^d computes at most d nodes, any
	// other time about log₂((t1 − t0)/Tol) (40 by default), so steps of
	// (t1 − t0)/2^d are cheapest; a cache that holds a solve's nodes makes
	// the solves that follow on the same path (a backward pass, training
	// on a fixed path) read them instead of drawing them again.
	CacheSize int
	// NoArea leaves the space-time Lévy areas out: every node is drawn from
	// the plain Brownian bridge, half the normal draws and half the cache's
	// memory per node, for methods that read increments only (all but
	// sri2; torchsde's levy_area_approximation "none"). Its W is another
	// sample path than the same seed's with areas, and IncrementArea is an
	// error.
	NoArea bool
}

// Brownian is a virtual Brownian tree (Li et al. 2020, "Scalable gradients
// for stochastic differential equations"): a Brownian motion W on [t0, t1]
// with independent standard components, shaped as given, that is stored as
// a seed and produces W(s, t) = W(t) − W(s) for any t0 ≤ s ≤ t ≤ t1.
//
// W(t0, t1) is drawn from N(0, (t1 − t0)·I). Every other value is found by
// bisection from the root interval [t0, t1]: the value at the midpoint m of
// a node [a, b] whose ends are known is drawn from the Brownian bridge,
//
//	W(m) = (W(a) + W(b))/2 + √((b − a)/4) · Z,  Z ~ N(0, I),
//
// conditioned further, unless NoArea, on the node's space-time Lévy area,
// which the tree carries along with W so that IncrementArea gives the area
// of any interval consistently with the increments. With areas, each node
// holds its own interval's increment W(a, b) and area H(a, b), not W and
// ∫W from t0: as a difference of running integrals over a short interval,
// divided by its length, a deep node's area would be lost to float64
// cancellation (and W with it, which is drawn given the area), while the
// interval's own values keep float64's relative precision at any depth
// (TestBrownianShortIntervalVariance); W(s, t) and H(s, t) are put
// together from the nodes that tile [s, t] (between). Without areas, a
// node holds W(m) − W(t0), which is as precise as W itself, and W(s, t)
// is the difference of two such values.
//
// The draws come from a generator seeded by the node's own seed, which is
// split from its parent's (a left and a right child seed per node), so
// that the values at any node are a fixed function of the seed and the
// node: they do not depend on which queries came before, and a path read
// backward in time (an adjoint or reversible solve) sees exactly the
// increments the forward solve saw. A query time t descends until it is
// within Tol of a node's end or midpoint, and is read there; a tree of
// depth d makes W exact at the dyadic times t0 + k(t1 − t0)/2^d, so a
// fixed-step solve with (t1 − t0)/2^d steps reads the exact Brownian
// increments of that grid, and any other step size reads them to within
// Tol in time.
//
// Values are computed in float64 and W(s, t) rounded once to T. Each
// query descends from the root, and the nodes it halves are kept in a
// least-recently-used cache, so consecutive queries near one another (the
// steps of a solve) cost about two new nodes each. A Brownian is safe for
// concurrent use (a mutex guards the cache).
//
// Space-time Lévy areas come with IncrementArea (AreaPath); the
// space-space Lévy areas between components, which methods of strong order
// 1 for non-commuting general noise need, are not provided.
type Brownian[T tensor.Float] struct {
	t0, t1   float64
	tol      float64
	maxDepth int
	shape    []int
	n        int
	seed     uint64    // the root node's seed
	root     []float64 // W(t0, t1), then H(t0, t1) with areas
	noArea   bool      // nodes hold W(m) − W(t0) only

	mu    sync.Mutex
	cache map[nodeKey]*list.Element
	lru   *list.List // of *cacheEntry, most recent at the front
	cap   int
	pcg   *rand.PCG
	rng   *rand.Rand // draws from pcg, reseeded per node
	// Scratch. Without areas: W(s) and W(t), and zeros (W(t0)). With
	// areas: a query's way down, the values of its right halves by depth,
	// the values of the query's interval and of its part right of where s
	// and t part.
	ws, wt, zero []float64
	path         []node
	rights       [][]float64
	out, right   []float64
}

type nodeKey struct {
	depth int
	index uint64
}

// cacheEntry is a halved node: W(m) − W(t0) at its midpoint m, or with
// areas its left half's values.
type cacheEntry struct {
	key nodeKey
	v   []float64
}

// NewBrownian returns the Brownian path on [t0, t1] with increments of the
// given shape (one independent Brownian motion per element, e.g. [B, m] for
// a batch of B samples driven by m-dimensional noise). It returns an error
// for an empty or non-finite span, a shape with a negative dimension, or a
// negative Tol or CacheSize.
func NewBrownian[T tensor.Float](t0, t1 float64, shape []int, opt BrownianOptions) (*Brownian[T], error) {
	if math.IsNaN(t0) || math.IsNaN(t1) || math.IsInf(t0, 0) || math.IsInf(t1, 0) || !(t1 > t0) {
		return nil, fmt.Errorf("sde: Brownian span [%g, %g] must be finite with t0 < t1", t0, t1)
	}
	n := 1
	for _, d := range shape {
		if d < 0 {
			return nil, fmt.Errorf("sde: Brownian shape %v has a negative dimension", shape)
		}
		n *= d
	}
	if opt.Tol < 0 || math.IsNaN(opt.Tol) || opt.CacheSize < 0 {
		return nil, fmt.Errorf("sde: Brownian options Tol %g and CacheSize %d must not be negative", opt.Tol, opt.CacheSize)
	}
	span := t1 - t0
	tol := opt.Tol
	if tol == 0 {
		tol = math.Ldexp(span, -40)
	}
	depth := int(math.Ceil(math.Log2(span / tol)))
	depth = max(1, min(depth, 60))
	capacity := opt.CacheSize
	if capacity == 0 {
		per := 16 // bytes of a node per element: W and H in float64
		if opt.NoArea {
			per = 8
		}
		capacity = min(65536, max(128, (32<<20)/(per*max(n, 1))))
	}
	b := &Brownian[T]{
		t0: t0, t1: t1, tol: tol, maxDepth: depth,
		shape: append([]int(nil), shape...), n: n,
		seed:  splitmix(opt.Seed ^ 0x5DEECE66D1CE4E5B),
		cache: make(map[nodeKey]*list.Element), lru: list.New(), cap: capacity,
		pcg: rand.NewPCG(0, 0), noArea: opt.NoArea,
	}
	b.rng = rand.New(b.pcg)
	sd := math.Sqrt(span)
	if opt.NoArea {
		b.ws, b.wt, b.zero = make([]float64, n), make([]float64, n), make([]float64, n)
		b.root = make([]float64, n)
		b.normals(b.root, splitmix(b.seed^0xA0761D6478BD642F))
		for i := range b.root {
			b.root[i] *= sd
		}
		return b, nil
	}
	b.path, b.rights = make([]node, depth+1), make([][]float64, depth+1)
	b.out, b.right = make([]float64, 2*n), make([]float64, 2*n)
	// The root: W(t0, t1) ~ N(0, T) and, independent of it, the space-time
	// Lévy area H ~ N(0, T/12) of [t0, t1].
	b.root = make([]float64, 2*n)
	b.normals(b.root, splitmix(b.seed^0xA0761D6478BD642F))
	sh := math.Sqrt(span / 12)
	for i := range n {
		b.root[i], b.root[n+i] = sd*b.root[i], sh*b.root[n+i]
	}
	return b, nil
}

// Shape returns the shape of one increment.
func (b *Brownian[T]) Shape() []int { return append([]int(nil), b.shape...) }

// Span returns the interval [t0, t1] the path is defined on.
func (b *Brownian[T]) Span() (t0, t1 float64) { return b.t0, b.t1 }

// Increment writes W(s, t) = W(t) − W(s) into dst, which must have the
// path's shape (or at least its number of elements). It returns an error
// wrapping ErrReversedInterval for s > t and ErrOutsideSpan for s < t0 or
// t > t1 (beyond Tol); s = t gives zeros.
func (b *Brownian[T]) Increment(dst *tensor.Tensor[T], s, t float64) error {
	if err := b.check(s, t); err != nil {
		return err
	}
	if dst.Len() != b.n {
		return fmt.Errorf("sde: Brownian increment destination has shape %v, want %v", dst.Shape(), b.shape)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	d := dst.Data()
	if b.noArea {
		ws, wt := b.pointW(s, b.ws), b.pointW(t, b.wt)
		for i := range d {
			d[i] = T(wt[i] - ws[i])
		}
		return nil
	}
	v := b.between(s, t, b.n)
	for i := range d {
		d[i] = T(v[i])
	}
	return nil
}

// IncrementArea writes W(s, t) into dW and the space-time Lévy area of
// [s, t] into dH (both shaped like the path),
//
//	H(s, t) = (1/h) ∫ₛᵗ (W(s, u) − ((u − s)/h) W(s, t)) du,   h = t − s,
//
// which is N(0, h/12) and independent of W(s, t); the iterated integral
// ∫ₛᵗ W(s, u) du = h(H + W(s, t)/2) follows. For s = t both are zero.
// Errors as Increment's.
func (b *Brownian[T]) IncrementArea(dW, dH *tensor.Tensor[T], s, t float64) error {
	if err := b.check(s, t); err != nil {
		return err
	}
	if b.noArea {
		return fmt.Errorf("sde: Brownian increment W(%g, %g): the path was made with NoArea and has no Lévy areas", s, t)
	}
	if dW.Len() != b.n || dH.Len() != b.n {
		return fmt.Errorf("sde: Brownian increment destinations have shapes %v and %v, want %v", dW.Shape(), dH.Shape(), b.shape)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.n
	v := b.between(s, t, 2*n)
	w, a := dW.Data(), dH.Data()
	for i := range w {
		w[i], a[i] = T(v[i]), T(v[n+i])
	}
	return nil
}

// W returns W(s, t) = W(t) − W(s) in a new tensor of the path's shape,
// with Increment's errors.
func (b *Brownian[T]) W(s, t float64) (*tensor.Tensor[T], error) {
	dst := tensor.New[T](b.shape...)
	if err := b.Increment(dst, s, t); err != nil {
		return nil, err
	}
	return dst, nil
}

func (b *Brownian[T]) check(s, t float64) error {
	if math.IsNaN(s) || math.IsNaN(t) {
		return fmt.Errorf("sde: Brownian increment W(%g, %g): %w", s, t, ErrOutsideSpan)
	}
	if s > t {
		return fmt.Errorf("sde: Brownian increment W(%g, %g): %w", s, t, ErrReversedInterval)
	}
	if s < b.t0-b.tol || t > b.t1+b.tol {
		return fmt.Errorf("sde: Brownian increment W(%g, %g) on the span [%g, %g]: %w", s, t, b.t0, b.t1, ErrOutsideSpan)
	}
	return nil
}

// pointW returns W(t) − W(t0) of a tree without areas, read at the node
// t descends to: the root's end, zeros at t0, a cached midpoint value, or
// scratch filled in. The caller holds b.mu; the result is valid until the
// next call.
func (b *Brownian[T]) pointW(t float64, scratch []float64) []float64 {
	a, c := b.t0, b.t1
	wa, wc := b.zero, b.root
	seed := b.seed
	var index uint64
	for depth := 0; ; depth++ {
		if math.Abs(t-a) <= b.tol {
			return wa
		}
		if math.Abs(t-c) <= b.tol {
			return wc
		}
		m := a + (c-a)/2
		wm := b.midpoint(nodeKey{depth, index}, seed, a, c, wa, wc)
		if math.Abs(t-m) <= b.tol || depth+1 >= b.maxDepth {
			copy(scratch, wm)
			return scratch
		}
		if t < m {
			c, wc = m, wm
			seed = splitmix(seed + 0x9E3779B97F4A7C15)
			index = 2 * index
		} else {
			a, wa = m, wm
			seed = splitmix(seed + 0x3C6EF372FE94F82A)
			index = 2*index + 1
		}
	}
}

// midpoint returns W(m) − W(t0) at the midpoint m of the node [a, c] of a
// tree without areas, from the cache or drawn from the Brownian bridge
// given the node's ends with the node's seed: mean (W(a) + W(c))/2,
// variance (c − a)/4.
func (b *Brownian[T]) midpoint(k nodeKey, seed uint64, a, c float64, wa, wc []float64) []float64 {
	if e, ok := b.cache[k]; ok {
		b.lru.MoveToFront(e)
		return e.Value.(*cacheEntry).v
	}
	w := make([]float64, b.n)
	b.normals(w, seed)
	sd := math.Sqrt((c - a) / 4)
	for i := range w {
		w[i] = (wa[i]+wc[i])/2 + sd*w[i]
	}
	b.remember(k, w)
	return w
}

// node is a node of the tree on a query's way down (Brownian.path, one per
// depth): the interval [a, c], its key and seed, and its values v
// (W(a, c), then H(a, c) with areas). The cache holds a halved node's left
// half; a right half's values are worked out from its parent's and its
// left sibling's (left) when they are read (values).
type node struct {
	a, c float64
	key  nodeKey
	seed uint64
	v    []float64 // nil for a right half until values
	left []float64 // a right half's left sibling's values
}

// Where a query time is read, relative to a node: at its start, its end or
// its midpoint, or further down in its left or right half.
const (
	atStart = iota
	atEnd
	atMid
	inLeft
	inRight
)

// where says where the time x is read relative to path[d]: at an end or
// the midpoint m within Tol (ends first, and the midpoint at the tree's
// deepest level), else in the half that holds it (x < m: left). A time
// that descends into a half is more than Tol from its ends, so below the
// root only the midpoint is ever within Tol; and for s ≤ t, s is read no
// later than t.
func (b *Brownian[T]) where(d int, x float64) int {
	nd := &b.path[d]
	if math.Abs(x-nd.a) <= b.tol {
		return atStart
	}
	if math.Abs(x-nd.c) <= b.tol {
		return atEnd
	}
	m := nd.a + (nd.c-nd.a)/2
	if math.Abs(x-m) <= b.tol || d+1 >= b.maxDepth {
		return atMid
	}
	if x < m {
		return inLeft
	}
	return inRight
}

// descend sets path[d+1] to the left or the right half of path[d] and
// returns the left half's values.
func (b *Brownian[T]) descend(d int, right bool) []float64 {
	nd := &b.path[d]
	lv := b.children(d)
	m := nd.a + (nd.c-nd.a)/2
	i := 2 * nd.key.index
	if right {
		b.path[d+1] = node{a: m, c: nd.c, key: nodeKey{d + 1, i + 1}, seed: splitmix(nd.seed + 0x3C6EF372FE94F82A), left: lv}
	} else {
		b.path[d+1] = node{a: nd.a, c: m, key: nodeKey{d + 1, i}, seed: splitmix(nd.seed + 0x9E3779B97F4A7C15), v: lv}
	}
	return lv
}

// values returns path[d]'s values, working out a right half's from
// W₂ = W − W₁ and H₂ = 2H − H₁ − (W₁ − W₂)/2 (its parent's W, H and its
// sibling's W₁, H₁; see children) into the scratch of depth d.
func (b *Brownian[T]) values(d int) []float64 {
	nd := &b.path[d]
	if nd.v != nil {
		return nd.v
	}
	pv := b.values(d - 1)
	if b.rights[d] == nil {
		b.rights[d] = make([]float64, 2*b.n)
	}
	v, lv, n := b.rights[d], nd.left, b.n
	for i := range n {
		w1 := lv[i]
		w2 := pv[i] - w1
		v[i], v[n+i] = w2, 2*pv[n+i]-lv[n+i]-(w1-w2)/2
	}
	nd.v = v
	return v
}

// between returns the values (W, and H with areas) of [s, t] as read at
// the tree's nodes, in b.out: down to the node where s and t part (the
// deepest that holds both without either being read at it), the interval
// is the part of its left half from s (suffix) joined to the part of its
// right half up to t (prefix), each put together from whole nodes along
// s's and t's ways down. The caller holds b.mu; the result is valid until
// the next call.
func (b *Brownian[T]) between(s, t float64, k int) []float64 {
	out := b.out
	b.path[0] = node{a: b.t0, c: b.t1, seed: b.seed, v: b.root}
	for d := 0; ; d++ {
		ws, wt := b.where(d, s), b.where(d, t)
		switch {
		case ws == atStart:
			b.prefix(d, t, out, k)
			return out
		case ws == atEnd || ws == atMid && wt == atMid:
			clear(out)
			return out
		case ws == atMid: // t is in the right half or at the end
			b.descend(d, true)
			b.upTo(d+1, t, wt, out, k)
			return out
		case ws == inRight: // t is too, or at the end
			b.descend(d, true)
			if wt != inRight {
				b.suffix(d+1, s, out, k)
				return out
			}
			continue
		}
		b.descend(d, false) // s is in the left half
		if wt == inLeft {
			continue
		}
		h := b.suffix(d+1, s, out, k)
		if wt != atMid {
			b.descend(d, true)
			hr := b.upTo(d+1, t, wt, b.right, k)
			join(out, h, b.right, hr, b.n, k)
		}
		return out
	}
}

// upTo writes the values of [path[d].a, t] into out and returns its
// length, for a right half path[d] of a node where t is read at the end
// (wt == atEnd) or in that half (inRight).
func (b *Brownian[T]) upTo(d int, t float64, wt int, out []float64, k int) float64 {
	if wt == atEnd {
		copy(out, b.values(d))
		return b.path[d].c - b.path[d].a
	}
	return b.prefix(d, t, out, k)
}

// prefix writes the values of [path[d].a, t] into out and returns its
// length.
func (b *Brownian[T]) prefix(d int, t float64, out []float64, k int) float64 {
	clear(out)
	h := 0.0
	for ; ; d++ {
		nd := &b.path[d]
		switch b.where(d, t) {
		case atStart:
			return h
		case atEnd:
			return join(out, h, b.values(d), nd.c-nd.a, b.n, k)
		case atMid:
			lv := b.descend(d, false)
			return join(out, h, lv, b.path[d+1].c-nd.a, b.n, k)
		case inLeft:
			b.descend(d, false)
		default:
			lv := b.descend(d, true)
			h = join(out, h, lv, b.path[d+1].a-nd.a, b.n, k)
		}
	}
}

// suffix writes the values of [s, path[d].c] into out and returns its
// length.
func (b *Brownian[T]) suffix(d int, s float64, out []float64, k int) float64 {
	clear(out)
	h := 0.0
	for ; ; d++ {
		nd := &b.path[d]
		switch b.where(d, s) {
		case atStart:
			return joinBefore(out, h, b.values(d), nd.c-nd.a, b.n, k)
		case atEnd:
			return h
		case atMid:
			b.descend(d, true)
			return joinBefore(out, h, b.values(d+1), nd.c-b.path[d+1].a, b.n, k)
		case inLeft:
			b.descend(d, true)
			h = joinBefore(out, h, b.values(d+1), nd.c-b.path[d+1].a, b.n, k)
			b.descend(d, false)
		default:
			b.descend(d, true)
		}
	}
}

// join sets acc, the values of an interval of length h1, to those of it
// followed by the adjacent interval of length h2 with values v2, and
// returns the length h1 + h2. The increments add; the areas, with k = 2n,
// combine as
//
//	H = (h₁H₁ + h₂H₂)/h + (h₂W₁ − h₁W₂)/(2h),   h = h₁ + h₂,
//
// from ∫W(s, u)du over the whole = ∫ over the first + h₂W₁ + ∫ over the
// second and ∫ = h(H + W/2) for each.
func join(acc []float64, h1 float64, v2 []float64, h2 float64, n, k int) float64 {
	return concat(acc, acc, h1, v2, h2, n, k)
}

// joinBefore is join with the new interval (v1, of length h1) before acc's.
func joinBefore(acc []float64, h2 float64, v1 []float64, h1 float64, n, k int) float64 {
	return concat(acc, v1, h1, acc, h2, n, k)
}

// concat writes into out (which may be v1 or v2) the values of the
// interval of length h1 with values v1 followed by that of length h2 with
// values v2, and returns h1 + h2.
func concat(out, v1 []float64, h1 float64, v2 []float64, h2 float64, n, k int) float64 {
	h := h1 + h2
	if k > n {
		a1, a2 := h1/h, h2/h
		if h == 0 { // nodes narrower than float64 resolves at their times
			a1, a2 = 0.5, 0.5
		}
		for i := range n {
			out[n+i] = a1*v1[n+i] + a2*v2[n+i] + (a2*v1[i]-a1*v2[i])/2
		}
	}
	for i := range n {
		out[i] = v1[i] + v2[i]
	}
	return h
}

// children returns the values of path[d]'s left half, from the cache or
// drawn given path[d]'s own with its seed. With h = c − a, W = W(a, c) and
// H the node's space-time Lévy area, the halves' increments W₁, W₂ and
// areas H₁, H₂ are independent, N(0, h/2) and N(0, h/24), and tied to the
// whole by W = W₁ + W₂ and H = (H₁ + H₂)/2 + (W₁ − W₂)/4. Conditioned on W
// and H, D = W₁ − W₂ is N(3H, h/4), S = H₁ + H₂ = 2H − D/2, and
// E = H₁ − H₂ is N(0, h/12) on its own; so W₁ = (W + D)/2 and
// H₁ = (S + E)/2, and the right half's follow (values). Without the areas
// this would be the Brownian bridge, D ~ N(0, h) given W alone (midpoint).
func (b *Brownian[T]) children(d int) []float64 {
	nd := &b.path[d]
	if e, ok := b.cache[nd.key]; ok {
		b.lru.MoveToFront(e)
		return e.Value.(*cacheEntry).v
	}
	n := b.n
	v := make([]float64, 2*n)
	b.normals(v, nd.seed)
	pv := b.values(d)
	h := nd.c - nd.a
	sd, se := math.Sqrt(h/4), math.Sqrt(h/12)
	for i := range n {
		w, a := pv[i], pv[n+i]
		dd := 3*a + sd*v[i]
		sum := 2*a - dd/2
		v[i], v[n+i] = (w+dd)/2, (sum+se*v[n+i])/2
	}
	b.remember(nd.key, v)
	return v
}

// remember caches node k's values, evicting the least recently used node
// when the cache is full.
func (b *Brownian[T]) remember(k nodeKey, v []float64) {
	if b.lru.Len() >= b.cap {
		old := b.lru.Back()
		b.lru.Remove(old)
		delete(b.cache, old.Value.(*cacheEntry).key)
	}
	b.cache[k] = b.lru.PushFront(&cacheEntry{key: k, v: v})
}

// normals fills w with standard normal draws from the stream of seed.
func (b *Brownian[T]) normals(w []float64, seed uint64) {
	b.pcg.Seed(seed, splitmix(seed^0xE7037ED1A0B428DB))
	for i := range w {
		w[i] = b.rng.NormFloat64()
	}
}

// splitmix is SplitMix64's finaliser: a bijective mixing of 64 bits, used
// to split a node's seed into its children's.
func splitmix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}
