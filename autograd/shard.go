package autograd

import (
	"fmt"
	"sync"

	"github.com/adamnode/adamnode/tensor"
)

// RowFunc is a function of a batch x recorded on tp, with a scalar argument
// passed through unchanged (an ODE field's time). Its output's leading axis
// is x's: row i of the output depends on row i of x alone.
type RowFunc[T tensor.Float] func(tp *Tape[T], arg float64, x Var[T]) Var[T]

// ShardFunc is the function RowShards.ApplyShards evaluates on shard i of a
// batch, x being that shard's rows, recorded on tp. Its output's leading
// axis is x's.
type ShardFunc[T tensor.Float] func(tp *Tape[T], shard int, x Var[T]) Var[T]

// The sizes between which RowShards shards a batch by itself (shards ≤ 0),
// measured on MLP fields on 2 cores (bench/benchstat/shard-ab.txt):
//
//   - at least autoShardRows rows a shard, and at least autoShardWork
//     parameter reads a call (rows times the parameters' elements: a
//     dense layer's multiply–adds). Smaller calls, whose products the
//     engine does not split either, ran up to 27% slower sharded (width
//     78, three layers, batch 149: shards of 74 rows), for the
//     synchronisation and the shards' smaller products.
//   - fewer than autoShardLayer reads of the largest parameter (rows
//     times its elements: its layer's multiply–adds). From there each
//     product is large enough for the engine's own split to keep both
//     cores busy, and sharding gained nothing (widths 128 and 256 at batch
//     512, width 64 at batch 2048: within ±7%) or cost the shards'
//     gradient sum (width 159 at batch 1177: 7% slower).
const (
	autoShardRows  = 128
	autoShardWork  = 1 << 21
	autoShardLayer = 1 << 23
)

// RowShards evaluates a function of a batch whose rows are independent —
// output row i depends on input row i alone, as for an MLP or a
// convolution net applied to each sample — on shards of the batch at once.
// This is PyTorch's DataParallel within one process: the rows are cut into
// one shard per worker of the tape's engine, each shard is recorded on a
// tape of its own that computes with tensor.Serial of the engine, and the
// shards run concurrently over the engine's workers (Engine.Parallel).
// The result is one node on the
// caller's tape, the shards' outputs stacked in row order; its backward
// runs the shards' backward passes concurrently too, and returns the
// input's gradient and the parameters' gradients summed over the shards.
//
// It pays where the engine would otherwise split each product and map of
// the function over its workers: a single synchronisation per call instead
// of one per op, and each core keeps its own rows in its cache (an
// AdamNODE whose field is an MLP of width 64, batch 512, on 2 cores: a
// training iteration 21–24% faster). Asked for a number of shards, it uses
// that many (at most one per worker and one per row); asked for 0, it
// shards only batches of at least 128 rows a shard where rows × parameter
// elements is at least 2²¹ and rows × the largest parameter's elements
// below 2²³: where that paid on MLP fields (a convolution net does far more
// work per parameter, and is better given its number of shards).
// Otherwise, and always with one worker, Apply records f on the caller's
// tape as it is.
//
// f must be safe to call on several tapes at once (the layers package's
// modules are, but not Dropout, which draws from one generator, nor
// BatchNorm, which couples the rows), and must read its parameters through
// tp.Param from the list given to NewRowShards: reading an unlisted one
// panics with *UnlistedParamError. The gradients equal those of f on the
// whole batch up to float rounding (the parameter gradients are summed in
// a different order).
//
// A RowShards keeps the shards' tapes and buffers from call to call; a
// call's set returns to it when the caller's tape runs backward through the
// node, or is Reset. It is safe for concurrent use.
type RowShards[T tensor.Float] struct {
	shards int
	params []*Param[T]
	size   int // the parameters' elements
	widest int // the largest parameter's elements

	mu    sync.Mutex
	free  []*shardSet[T]
	token uint64
}

// NewRowShards returns a RowShards cutting batches into the given number of
// shards (at most one per worker of the engine and one per row), or, when
// shards ≤ 0, into one per worker where the batch is large enough to pay
// (see RowShards), for functions that read the parameters params.
func NewRowShards[T tensor.Float](shards int, params []*Param[T]) *RowShards[T] {
	s := &RowShards[T]{shards: shards, params: append([]*Param[T](nil), params...)}
	for _, p := range params {
		s.size += p.Value.Len()
		s.widest = max(s.widest, p.Value.Len())
	}
	return s
}

// Params returns the parameters the functions read.
func (s *RowShards[T]) Params() []*Param[T] { return s.params }

// count returns the number of shards for a batch of rows on eng.
func (s *RowShards[T]) count(eng tensor.Engine[T], rows int) int {
	w := tensor.Workers(eng)
	if s.shards > 0 {
		return min(w, s.shards, rows)
	}
	if k := min(w, rows/autoShardRows); k >= 2 && rows*s.size >= autoShardWork && rows*s.widest < autoShardLayer {
		return k
	}
	return 1
}

// Apply records y = f(x) on x's tape, f evaluated on shards of x's rows
// concurrently (see RowShards). x must have rank 1 or more.
func (s *RowShards[T]) Apply(x Var[T], arg float64, f RowFunc[T]) Var[T] {
	t, xe, rows := batchInput(x)
	k := s.count(t.eng, rows)
	if k <= 1 {
		return f(t, arg, x)
	}
	c := s.acquire(t.eng, k)
	c.f, c.arg = f, arg
	for i := range c.lo {
		c.lo[i] = rows * i / k
	}
	return s.run(x, t, xe, c)
}

// ApplyShards records y = f(x) on x's tape as Apply does, with the shards
// the caller chose: shard i is rows [cuts[i], cuts[i+1]) of x, evaluated
// as f(tape_i, i, rows) on a tape of its own, whatever the engine's worker
// count (shards beyond it take turns). cuts must start at 0, rise
// strictly and end at x's leading dimension; with one shard f is recorded
// on x's tape as it is.
func (s *RowShards[T]) ApplyShards(x Var[T], cuts []int, f ShardFunc[T]) Var[T] {
	t, xe, rows := batchInput(x)
	if !risingCuts(cuts, rows) {
		panic(&tensor.ShapeError{Op: "autograd.RowShards.ApplyShards", Msg: fmt.Sprintf("cuts %v do not split %d rows into shards: they must rise strictly from 0 to %d", cuts, rows, rows)})
	}
	k := len(cuts) - 1
	if k == 1 {
		return f(t, 0, x)
	}
	c := s.acquire(t.eng, k)
	c.sf = f
	copy(c.lo, cuts)
	return s.run(x, t, xe, c)
}

// batchInput returns x's tape, entry and leading dimension, panicking
// for a scalar, which has no batch axis.
func batchInput[T tensor.Float](x Var[T]) (*Tape[T], *entry[T], int) {
	t, xe := use1("RowShards", x)
	if xe.value.Rank() == 0 {
		panic(&tensor.ShapeError{Op: "autograd.RowShards", Msg: "input is a scalar; it needs a leading batch axis"})
	}
	return t, xe, xe.value.Dim(0)
}

// risingCuts reports whether cuts rise strictly from 0 to rows.
func risingCuts(cuts []int, rows int) bool {
	if len(cuts) < 2 || cuts[0] != 0 || cuts[len(cuts)-1] != rows {
		return false
	}
	for i := 1; i < len(cuts); i++ {
		if cuts[i] <= cuts[i-1] {
			return false
		}
	}
	return true
}

// run evaluates the call set up in c (its function and row cuts) on x's
// shards and records the node.
func (s *RowShards[T]) run(x Var[T], t *Tape[T], xe *entry[T], c *shardSet[T]) Var[T] {
	c.x = xe.value
	c.grad = !t.noGrad
	c.retry = t.noGrad && t.retryGrad
	c.xReq, c.pReq = c.grad && xe.requires, false
	c.pdst = c.pdst[:0]
	if c.grad {
		for _, p := range s.params {
			e := t.entryAt(int(t.Param(p).i))
			c.pReq = c.pReq || e.requires
			c.pdst = append(c.pdst, e.grad)
		}
		c.grad = c.xReq || c.pReq
	}
	if c.xReq {
		c.gx = t.arena.like(xe.value)
	}
	t.eng.Parallel(len(c.tapes), c.fwd)
	c.f, c.sf, c.x = nil, nil, nil
	if r := c.failure(); r != nil {
		s.release(c, c.token)
		panic(r)
	}
	value := c.stack(t)
	if !c.grad {
		s.release(c, c.token)
		return t.Const(value)
	}
	t.held = append(t.held, shardHold[T]{set: c, token: c.token})
	c.outer = t
	return Custom("RowShards", value, c.back, x)
}

// acquire returns a free set for k shards on eng, or a new one.
func (s *RowShards[T]) acquire(eng tensor.Engine[T], k int) *shardSet[T] {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token++
	for len(s.free) > 0 {
		c := s.free[len(s.free)-1]
		s.free[len(s.free)-1] = nil
		s.free = s.free[:len(s.free)-1]
		if c.eng == eng && len(c.tapes) == k {
			c.token, c.idle = s.token, false
			return c
		}
	}
	return newShardSet(s, eng, k, s.token)
}

// release returns c to the free list unless it was already returned since
// the call of that token.
func (s *RowShards[T]) release(c *shardSet[T], token uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.token != token || c.idle {
		return
	}
	c.idle = true
	c.outer, c.gx = nil, nil
	clear(c.pdst)
	s.free = append(s.free, c)
}

// shardHold is a set of shards a tape's node holds until the tape's
// Backward reaches it or the tape is Reset.
type shardHold[T tensor.Float] struct {
	set   *shardSet[T]
	token uint64
}

// releaseHeld returns the sets t's nodes hold.
func (t *Tape[T]) releaseHeld() {
	for i, h := range t.held {
		h.set.owner.release(h.set, h.token)
		t.held[i] = shardHold[T]{}
	}
	t.held = t.held[:0]
}

// shardSet is one call's shards: their tapes, outputs and gradient buffers.
// Shard 0 adds its parameter gradients straight into the caller's
// destinations (Param.Grad, or where the caller's tape redirects them), the
// others into buffers of their own that the node's backward then adds in:
// one pass over the parameters, not a sum and an accumulation.
type shardSet[T tensor.Float] struct {
	owner *RowShards[T]
	eng   tensor.Engine[T] // the caller's engine
	token uint64           // the call holding the set
	idle  bool             // in the free list

	tapes []*Tape[T]
	outs  []Var[T]
	pg    [][]*tensor.Tensor[T] // the parameters' gradients of shards 1, 2, ... (pg[0] unused)
	lo    []int                 // shard i has rows [lo[i], lo[i+1])
	fails []any                 // a shard's panic
	errs  []error               // a shard's backward error

	// The call.
	f                RowFunc[T]
	sf               ShardFunc[T]
	arg              float64
	x, gx, gy        *tensor.Tensor[T]
	grad, xReq, pReq bool
	retry            bool // the caller is a no-grad Pullback.Value that records again when Grad is called
	outer            *Tape[T]
	pdst             []*tensor.Tensor[T] // where the caller's tape takes the parameters' gradients

	fwd, bwd func(lo, hi int)
	back     func(gy *tensor.Tensor[T]) ([]*tensor.Tensor[T], error)
}

func newShardSet[T tensor.Float](s *RowShards[T], eng tensor.Engine[T], k int, token uint64) *shardSet[T] {
	c := &shardSet[T]{owner: s, eng: eng, token: token,
		tapes: make([]*Tape[T], k), outs: make([]Var[T], k), pg: make([][]*tensor.Tensor[T], k),
		lo: make([]int, k+1), fails: make([]any, k), errs: make([]error, k)}
	serial := tensor.Serial(eng)
	for i := range c.tapes {
		c.tapes[i] = NewTape(serial)
		c.tapes[i].gradsRecorded = true // f is differentiated as a whole
		if i == 0 {
			continue
		}
		c.pg[i] = make([]*tensor.Tensor[T], len(s.params))
		for j, p := range s.params {
			c.pg[i][j] = tensor.New[T](p.Value.Shape()...)
		}
	}
	c.fwd = func(lo, hi int) {
		for i := lo; i < hi; i++ {
			c.forward(i)
		}
	}
	c.bwd = func(lo, hi int) {
		for i := lo; i < hi; i++ {
			c.backward(i)
		}
	}
	c.back = c.backwardAll
	return c
}

// forward records f on shard i's rows.
func (c *shardSet[T]) forward(i int) {
	defer c.catch(i)
	tp := c.tapes[i]
	tp.Reset()
	tp.SetNoGrad(!c.grad)
	tp.retryGrad = c.retry // Grad in f asks the caller's Pullback.Value to record
	if c.grad {
		switch {
		case c.pReq && i == 0:
			tp.RedirectParams(c.owner.params, c.pdst)
		case c.pReq:
			for _, g := range c.pg[i] {
				g.Zero()
			}
			tp.RedirectParams(c.owner.params, c.pg[i])
		default:
			tp.redirect(c.owner.params, nil, true)
		}
	}
	r0, r1 := c.lo[i], c.lo[i+1]
	xs := c.x.Slice(r0, r1)
	var in Var[T]
	if c.xReq {
		g := c.gx.Slice(r0, r1)
		g.Zero()
		in = tp.inputInto(xs, g)
	} else {
		in = tp.Const(xs)
	}
	var out Var[T]
	if c.sf != nil {
		out = c.sf(tp, i, in)
	} else {
		out = c.f(tp, c.arg, in)
	}
	if out.t != tp {
		panic(usage("RowShards: the function must return a Var recorded on the tape it was given"))
	}
	if oe := out.use("RowShards"); oe.value.Rank() == 0 || oe.value.Dim(0) != r1-r0 {
		panic(&tensor.ShapeError{Op: "autograd.RowShards", Msg: fmt.Sprintf("the function mapped %d rows of shape %v to shape %v; it must keep the leading (batch) axis", r1-r0, xs.Shape(), oe.value.Shape())})
	}
	c.outs[i] = out
}

// catch records a panic of shard i, to be raised again on the caller.
func (c *shardSet[T]) catch(i int) {
	if r := recover(); r != nil {
		c.fails[i] = r
	}
}

// failure returns the first shard's panic value and clears them all.
func (c *shardSet[T]) failure() any {
	var first any
	for i, r := range c.fails {
		if first == nil {
			first = r
		}
		c.fails[i] = nil
	}
	return first
}

// stack returns the shards' outputs stacked in row order, in t's scratch.
func (c *shardSet[T]) stack(t *Tape[T]) *tensor.Tensor[T] {
	first := c.outs[0].use("RowShards").value
	shape := first.Shape()
	shape[0] = c.lo[len(c.lo)-1]
	value := t.Scratch(shape...)
	dst := value.Data()
	off := 0
	for i, o := range c.outs {
		ov := o.use("RowShards").value
		if !sameTail(ov, first) {
			panic(&tensor.ShapeError{Op: "autograd.RowShards", Msg: fmt.Sprintf("shard %d's output has shape %v, shard 0's %v; rows must map to the same shape", i, ov.Shape(), first.Shape())})
		}
		off += copy(dst[off:], ov.Data())
	}
	if !c.grad {
		clear(c.outs)
	}
	return value
}

// sameTail reports whether a and b agree in every axis but the first.
func sameTail[T tensor.Float](a, b *tensor.Tensor[T]) bool {
	if a.Rank() != b.Rank() {
		return false
	}
	for d := 1; d < a.Rank(); d++ {
		if a.Dim(d) != b.Dim(d) {
			return false
		}
	}
	return true
}

// backward pulls shard i's rows of gy back through its tape.
func (c *shardSet[T]) backward(i int) {
	defer c.catch(i)
	out := c.outs[i]
	if !out.use("RowShards").requires {
		return // f's output is constant on this shard: zero gradients
	}
	c.errs[i] = c.tapes[i].BackwardWith(out, c.gy.Slice(c.lo[i], c.lo[i+1]))
}

// backwardAll is the node's backward function.
func (c *shardSet[T]) backwardAll(gy *tensor.Tensor[T]) ([]*tensor.Tensor[T], error) {
	token, t := c.token, c.outer
	defer c.owner.release(c, token)
	c.gy = gy
	t.eng.Parallel(len(c.tapes), c.bwd)
	c.gy = nil
	clear(c.outs)
	if r := c.failure(); r != nil {
		panic(r)
	}
	for i, err := range c.errs {
		if err != nil {
			clear(c.errs)
			return nil, fmt.Errorf("shard %d of %d: %w", i, len(c.tapes), err)
		}
	}
	if c.pReq {
		for j, dst := range c.pdst {
			for i := 1; i < len(c.pg); i++ {
				tensor.AxpySlice(1, c.pg[i][j].Data(), dst.Data())
			}
		}
	}
	if !c.xReq {
		return []*tensor.Tensor[T]{nil}, nil
	}
	return []*tensor.Tensor[T]{c.gx}, nil
}
