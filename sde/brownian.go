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
	// evicted), each two increments' worth of float64s (W and ∫W). 0 means
	// as many as fit in 32 MiB, at least 128 and at most 65536 (for an
	// increment of 500 elements, 4096 nodes). Memory is bounded by
	// CacheSize × the increment's size × 16 bytes whatever the number of
	// queries; an evicted node is recomputed, with the same value, when it
	// is needed again.
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
// W(t1) is drawn from N(0, (t1 − t0)·I). Every other value is found by
// bisection from the root interval [t0, t1]: the value at the midpoint m of
// a node [a, b] whose ends are known is drawn from the Brownian bridge,
//
//	W(m) = (W(a) + W(b))/2 + √((b − a)/4) · Z,  Z ~ N(0, I),
//
// conditioned further on the node's space-time Lévy area, which the tree
// carries along with W (as the running integral ∫W; see node), so that
// IncrementArea gives the area of any interval consistently with the
// increments. The draws come from a generator seeded by the node's own
// seed, which is split from its parent's (a left and a right child seed per
// node), so that W at any node is a fixed function of the seed and the
// node: the values do not depend on which queries came before, and a path
// read backward in time (an adjoint or reversible solve) sees exactly the
// increments the forward solve saw. A query time t descends until it is
// within Tol of a node, and reads W there; a tree of depth d makes W exact
// at the dyadic times t0 + k(t1 − t0)/2^d, so a fixed-step solve with
// (t1 − t0)/2^d steps reads the exact Brownian increments of that grid,
// and any other step size reads them to within Tol in time.
//
// Values are computed in float64 and W(t) − W(s) rounded once to T.
// Each query descends from the root, and the nodes it computes are kept in
// a least-recently-used cache, so consecutive queries near one another
// (the steps of a solve) cost about two new nodes each. A Brownian is safe
// for concurrent use (a mutex guards the cache).
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
	seed     uint64 // the root node's seed
	root     []float64
	noArea   bool // nodes hold W only

	mu    sync.Mutex
	cache map[nodeKey]*list.Element
	lru   *list.List // of *cacheEntry, most recent at the front
	cap   int
	ws    []float64 // scratch: W(s)
	wt    []float64 // scratch: W(t)
	zero  []float64
	pcg   *rand.PCG
	rng   *rand.Rand // draws from pcg, reseeded per node
}

type nodeKey struct {
	depth int
	index uint64
}

type cacheEntry struct {
	key nodeKey
	w   []float64
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
		per := 16 // bytes of a node per element: W and ∫W in float64
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
		ws: make([]float64, 2*n), wt: make([]float64, 2*n), zero: make([]float64, 2*n),
		pcg: rand.NewPCG(0, 0), noArea: opt.NoArea,
	}
	b.rng = rand.New(b.pcg)
	// The root: W(t1) ~ N(0, T) and, independent of it, the space-time
	// Lévy area H ~ N(0, T/12) of [t0, t1]; I(t1) = T(H + W(t1)/2).
	if opt.NoArea {
		b.root = make([]float64, n)
		b.normals(b.root, splitmix(b.seed^0xA0761D6478BD642F))
		sd := math.Sqrt(span)
		for i := range b.root {
			b.root[i] *= sd
		}
		return b, nil
	}
	b.root = make([]float64, 2*n)
	b.normals(b.root, splitmix(b.seed^0xA0761D6478BD642F))
	sd, sh := math.Sqrt(span), math.Sqrt(span/12)
	for i := range n {
		w := sd * b.root[i]
		b.root[i], b.root[n+i] = w, span*(sh*b.root[n+i]+w/2)
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
	ws, _ := b.at(s, b.ws)
	wt, _ := b.at(t, b.wt)
	d := dst.Data()
	for i := range d {
		d[i] = T(wt[i] - ws[i])
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
	ws, s := b.at(s, b.ws)
	wt, t := b.at(t, b.wt)
	n, h := b.n, t-s
	w, a := dW.Data(), dH.Data()
	for i := range w {
		dw := wt[i] - ws[i]
		w[i] = T(dw)
		if h > 0 {
			a[i] = T((wt[n+i]-ws[n+i]-h*ws[i])/h - dw/2)
		} else {
			a[i] = 0
		}
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

// at returns (W(t), I(t)), I(t) = ∫_{t0}^t W(u) du, concatenated: a cached
// slice, the root, zeros, or scratch filled in; and the time of the node it
// read (t to within Tol). The caller holds b.mu. The result is valid until
// the next call.
func (b *Brownian[T]) at(t float64, scratch []float64) ([]float64, float64) {
	a, c := b.t0, b.t1
	wa, wc := b.zero, b.root
	seed := b.seed
	var index uint64
	for depth := 0; ; depth++ {
		if math.Abs(t-a) <= b.tol {
			return wa, a
		}
		if math.Abs(t-c) <= b.tol {
			return wc, c
		}
		m := a + (c-a)/2
		wm := b.node(nodeKey{depth, index}, seed, a, c, wa, wc)
		if math.Abs(t-m) <= b.tol || depth+1 >= b.maxDepth {
			copy(scratch, wm)
			return scratch, m
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

// node returns (W, I) at the midpoint m of the node [a, c], from the cache
// or drawn given the node's ends with the node's seed. With h = c − a,
// W = W(a, c) and H the node's space-time Lévy area (from I(c) − I(a)),
// the halves' increments W₁, W₂ and areas H₁, H₂ are independent,
// N(0, h/2) and N(0, h/24), and tied to the whole by W = W₁ + W₂ and
// H = (H₁ + H₂)/2 + (W₁ − W₂)/4. Conditioned on W and H, D = W₁ − W₂ is
// N(3H, h/4), S = H₁ + H₂ = 2H − D/2, and E = H₁ − H₂ is N(0, h/12) on its
// own; so W(m) = W(a) + (W + D)/2 and I(m) = I(a) + (h/2)(W(a) + H₁ + W₁/2)
// with H₁ = (S + E)/2. Without the areas this is the Brownian bridge:
// D is N(0, h) given W alone, and W(m) has mean (W(a) + W(c))/2 and
// variance h/4.
func (b *Brownian[T]) node(k nodeKey, seed uint64, a, c float64, wa, wc []float64) []float64 {
	if e, ok := b.cache[k]; ok {
		b.lru.MoveToFront(e)
		return e.Value.(*cacheEntry).w
	}
	n := b.n
	if b.noArea {
		w := make([]float64, n)
		b.normals(w, seed)
		sd := math.Sqrt((c - a) / 4)
		for i := range w {
			w[i] = (wa[i]+wc[i])/2 + sd*w[i]
		}
		b.remember(k, w)
		return w
	}
	w := make([]float64, 2*n)
	b.normals(w, seed)
	h := c - a
	sd, se := math.Sqrt(h/4), math.Sqrt(h/12)
	for i := range n {
		wab := wc[i] - wa[i]
		hab := (wc[n+i]-wa[n+i]-h*wa[i])/h - wab/2
		d := 3*hab + sd*w[i]
		sum := 2*hab - d/2
		e := se * w[n+i]
		w1 := (wab + d) / 2
		h1 := (sum + e) / 2
		w[i], w[n+i] = wa[i]+w1, wa[n+i]+h/2*(wa[i]+h1+w1/2)
	}
	b.remember(k, w)
	return w
}

// remember caches node k's values, evicting the least recently used node
// when the cache is full.
func (b *Brownian[T]) remember(k nodeKey, w []float64) {
	if b.lru.Len() >= b.cap {
		old := b.lru.Back()
		b.lru.Remove(old)
		delete(b.cache, old.Value.(*cacheEntry).key)
	}
	b.cache[k] = b.lru.PushFront(&cacheEntry{key: k, w: w})
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
