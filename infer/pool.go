package infer

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/models"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// Model is one replica of a trained model, as a Pool runs it.
// *models.Classifier is one as it is; ODE, ODETrajectory, SDE and Func
// make one of an ODE block, an SDE block or a function.
type Model[T tensor.Float] interface {
	// Forward records the output for the batch x on tp, a tape of the
	// pool's in no-grad mode; the output's first axis is the batch's.
	Forward(tp *autograd.Tape[T], x autograd.Var[T]) (autograd.Var[T], error)
	// Params lists every parameter Forward reads, in the same order for
	// every model the pool's build makes.
	Params() []*autograd.Param[T]
}

// Rows says how a Pool keeps a row's answer independent of the rows it
// is batched with (see the package documentation).
type Rows int

const (
	// RowErrors solves the batch at once with each row's error controlled
	// separately (odeblock.Block.RowErrors on every ODE block the pool
	// can reach): a row's answer agrees with its answer alone to the
	// solver's tolerances, and the batch costs little more than one solve
	// of it. The default.
	RowErrors Rows = iota
	// RowsAlone runs each row of a batch as a batch of its own, one after
	// the other on one replica: a row's answer is its answer alone, to the
	// bit, for any model (SDEs included), with none of batching's gain.
	RowsAlone
	// RowsAsBuilt runs the batch as the model was built (an ODE block's
	// default: one RMS norm over the whole state): a row's answer then
	// depends on the rows it is batched with, up to several times the
	// tolerance.
	RowsAsBuilt
)

// String names the mode as its constant.
func (r Rows) String() string {
	switch r {
	case RowErrors:
		return "RowErrors"
	case RowsAlone:
		return "RowsAlone"
	case RowsAsBuilt:
		return "RowsAsBuilt"
	}
	return fmt.Sprintf("Rows(%d)", int(r))
}

// Options configure a Pool. The zero value is the default.
type Options struct {
	// Replicas is the most forward passes run at once, each on a replica
	// of its own; 0 means runtime.GOMAXPROCS(0). Replicas are built when
	// first needed and kept.
	Replicas int
	// Backend computes the passes; nil means tensor.Default(). With more
	// than one replica each computes serially (tensor.Serial): the
	// replicas are the parallelism.
	Backend tensor.Backend
	// Input is the shape of one row of the input (the input without its
	// batch axis: [1, 28, 28] for MNIST images), checked at every
	// Predict. Nil: a *models.Classifier's from its Config; other models
	// must set it.
	Input []int
	// Rows is how a batched row's answer is kept from depending on its
	// neighbours; the zero value is RowErrors.
	Rows Rows
	// Seed seeds the Brownian paths of SDE models in calls whose context
	// carries no seed of its own (WithSeed).
	Seed uint64
}

// Pool runs forward passes of a trained model from any number of
// goroutines at once, at most Options.Replicas at a time, each on a
// replica of the model that reads the trained model's parameter tensors
// (shared, read-only) and keeps its own work buffers and tape. No
// gradients are recorded.
type Pool[T tensor.Float] struct {
	build func() (Model[T], error)
	opt   Options
	eng   tensor.Engine[T]
	input []int

	params []*autograd.Param[T] // the trained model's
	prints []fingerprint[T]     // and what they were when the pool was made

	slots chan struct{} // one token per replica that may run
	mu    sync.Mutex
	free  []*replica[T]
	seen  map[*odeblock.Block[T]]bool
}

// replica is one model of the pool with its tape.
type replica[T tensor.Float] struct {
	m  Model[T]
	tp *autograd.Tape[T]
}

// New returns a pool serving trained: build must return a new model of
// the same configuration at each call (its parameter values are
// replaced by trained's tensors, its names and shapes checked against
// them). trained itself is not run: it may not be trained further while
// the pool serves (Predict then fails naming the parameter). New builds
// one replica, so that a build that cannot make a matching model fails
// here.
func New[T tensor.Float, M Model[T]](trained M, build func() (M, error), opt Options) (*Pool[T], error) {
	if any(trained) == nil || isNilPointer(trained) || build == nil {
		return nil, errors.New("infer: New needs a trained model and a build function")
	}
	if opt.Replicas < 0 {
		return nil, fmt.Errorf("infer: Options.Replicas must not be negative, got %d", opt.Replicas)
	}
	if opt.Rows < RowErrors || opt.Rows > RowsAsBuilt {
		return nil, fmt.Errorf("infer: Options.Rows is %v, not one of RowErrors, RowsAlone, RowsAsBuilt", opt.Rows)
	}
	if opt.Replicas == 0 {
		opt.Replicas = runtime.GOMAXPROCS(0)
	}
	input := slices.Clone(opt.Input)
	if input == nil {
		c, ok := any(trained).(interface{ Config() models.Config })
		if !ok {
			return nil, fmt.Errorf("infer: Options.Input must give the shape of an input row for a model of type %T", trained)
		}
		cfg := c.Config()
		input = []int{cfg.InC, cfg.H, cfg.W}
	}
	backend := opt.Backend
	if backend == nil {
		backend = tensor.Default()
	}
	p := &Pool[T]{
		build: func() (Model[T], error) { return build() },
		opt:   opt,
		eng:   tensor.EngineFor[T](backend),
		input: input,
		slots: make(chan struct{}, opt.Replicas),
		seen:  map[*odeblock.Block[T]]bool{},
	}
	if opt.Replicas > 1 {
		p.eng = tensor.Serial(p.eng)
	}
	p.params = slices.Clone(trained.Params())
	for i, prm := range p.params {
		if prm == nil || prm.Value == nil {
			return nil, fmt.Errorf("infer: the trained model's parameter %d has no value", i)
		}
	}
	p.prints = make([]fingerprint[T], len(p.params))
	for i, prm := range p.params {
		p.prints[i].take(prm.Value)
	}
	for _, b := range blocksOf(Model[T](trained)) {
		p.seen[b] = true
	}
	r, err := p.newReplica()
	if err != nil {
		return nil, err
	}
	p.free = append(p.free, r)
	return p, nil
}

// Replicas returns the most forward passes the pool runs at once.
func (p *Pool[T]) Replicas() int { return p.opt.Replicas }

// Input returns the shape of one row of the input.
func (p *Pool[T]) Input() []int { return slices.Clone(p.input) }

// newReplica builds a replica and binds its parameters to the trained
// model's, checking that they match and that it shares no parameter or
// ODE block with the trained model or another replica.
func (p *Pool[T]) newReplica() (*replica[T], error) {
	m, err := p.build()
	if err != nil {
		return nil, fmt.Errorf("infer: build: %w", err)
	}
	if m == nil || isNilPointer(m) {
		return nil, errors.New("infer: build returned a nil model")
	}
	ps := m.Params()
	if len(ps) != len(p.params) {
		return nil, fmt.Errorf("infer: build made a model of %d parameters, the trained model has %d", len(ps), len(p.params))
	}
	for i, q := range ps {
		src := p.params[i]
		switch {
		case q == src:
			return nil, fmt.Errorf("infer: build returned a model sharing parameter %q with the trained model: it must make a new model at each call", src.Name)
		case q == nil || q.Value == nil:
			return nil, fmt.Errorf("infer: build made a model whose parameter %d has no value", i)
		case q.Name != src.Name:
			return nil, fmt.Errorf("infer: build made a model whose parameter %d is %q, the trained model's is %q", i, q.Name, src.Name)
		case !q.Value.SameShape(p.prints[i].value):
			return nil, fmt.Errorf("infer: build made a model whose parameter %q has shape %v, the trained model's %v", q.Name, q.Value.Shape(), p.prints[i].value.Shape())
		}
	}
	blocks := blocksOf(m)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range blocks {
		if p.seen[b] {
			return nil, fmt.Errorf("infer: build returned a model whose ODE block is the trained model's or another replica's: a Block keeps work buffers, so each replica needs its own (build must make a new model at each call)")
		}
	}
	for _, b := range blocks {
		p.seen[b] = true
		if p.opt.Rows == RowErrors {
			b.RowErrors = true
		}
	}
	for i, q := range ps {
		q.Value, q.Grad = p.prints[i].value, nil
	}
	tp := autograd.NewTape(p.eng)
	tp.SetNoGrad(true)
	return &replica[T]{m: m, tp: tp}, nil
}

// isNilPointer reports whether m holds a nil pointer.
func isNilPointer(m any) bool {
	v := reflect.ValueOf(m)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// blocksOf returns the ODE blocks of m that the pool can reach: a
// Classifier's, an ODE adapter's, a Func's Blocks.
func blocksOf[T tensor.Float](m Model[T]) []*odeblock.Block[T] {
	switch m := m.(type) {
	case interface{ ODEBlocks() []*odeblock.Block[T] }:
		return m.ODEBlocks()
	case interface{ Block() *odeblock.Block[T] }:
		if b := m.Block(); b != nil {
			return []*odeblock.Block[T]{b}
		}
	}
	return nil
}

// Predict returns the model's output for the batch x (its first axis the
// batch, each row of the shape Options.Input). It is safe for any number
// of goroutines; it waits for a free replica, or returns ctx.Err() if ctx
// is done first. A row shape that is not the pool's, parameters of the
// trained model changed since the pool was made, and a failed solve are
// errors. The result is the caller's.
func (p *Pool[T]) Predict(ctx context.Context, x *tensor.Tensor[T]) (*tensor.Tensor[T], error) {
	if err := p.checkInput(x); err != nil {
		return nil, err
	}
	if err := p.checkParams(); err != nil {
		return nil, err
	}
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-p.slots }()
	if err := ctx.Err(); err != nil {
		return nil, err // both were ready: a done context wins
	}
	r, err := p.get()
	if err != nil {
		return nil, err
	}
	seed, ok := seedFrom(ctx)
	if !ok {
		seed = p.opt.Seed
	}
	out, err := p.run(r, x, seed)
	if err != nil {
		return nil, err
	}
	if err := p.checkParams(); err != nil {
		return nil, err // changed during the pass: its answer is not the model's
	}
	return out, nil
}

// checkInput returns an error naming x's shape and the one the pool
// takes, unless x is a batch of one or more rows of the pool's shape.
func (p *Pool[T]) checkInput(x *tensor.Tensor[T]) error {
	switch {
	case x == nil:
		return fmt.Errorf("infer: Predict of a nil tensor; want a batch of shape [B %v] (B ≥ 1)", shapeText(p.input))
	case x.Rank() == 0 || !slices.Equal(x.Shape()[1:], p.input):
		return fmt.Errorf("infer: input of shape %v, want [B %v] (a batch of rows of shape %v)", x.Shape(), shapeText(p.input), p.input)
	case x.Dim(0) == 0:
		return fmt.Errorf("infer: input of shape %v holds no rows; want [B %v] with B ≥ 1", x.Shape(), shapeText(p.input))
	}
	return nil
}

// shapeText is a shape's dimensions as fmt prints them, without brackets.
func shapeText(s []int) string {
	t := fmt.Sprint(s)
	return t[1 : len(t)-1]
}

// ParamChangedError is the error of a Predict that finds a parameter of
// the trained model changed since the pool was made: written (its
// storage's version moved on) or replaced by another tensor.
type ParamChangedError struct {
	Name     string // the parameter's name
	Index    int    // its index in the trained model's Params
	Replaced bool   // its Value is another tensor (else: written)
}

func (e *ParamChangedError) Error() string {
	how := "its values were written"
	if e.Replaced {
		how = "its Value was replaced by another tensor"
	}
	return fmt.Sprintf("infer: parameter %q (%d of the trained model's) changed while serving: %s since the pool was made; a pool serves the parameters it was made with: make a new pool after training or loading", e.Name, e.Index, how)
}

// checkParams returns a *ParamChangedError for the first parameter of
// the trained model that changed since the pool was made.
func (p *Pool[T]) checkParams() error {
	for i, prm := range p.params {
		fp := &p.prints[i]
		if prm.Value != fp.value {
			return &ParamChangedError{Name: prm.Name, Index: i, Replaced: true}
		}
		if !fp.same() {
			return &ParamChangedError{Name: prm.Name, Index: i}
		}
	}
	return nil
}

// fingerprint is what a parameter's value was when the pool was made:
// the tensor, its storage's version and a checksum of its elements.
type fingerprint[T tensor.Float] struct {
	value   *tensor.Tensor[T]
	version atomic.Uint64 // the last version whose elements had sum
	sum     uint64
}

// take records v.
func (f *fingerprint[T]) take(v *tensor.Tensor[T]) {
	f.value, f.sum = v, checksum(v.ReadData())
	f.version.Store(v.Version())
}

// same reports whether the value's elements are those it had: at once
// when its version has not moved on, else by their checksum (a version
// moves on at a write, and at a read through Data, which some passes
// make: the version that had the same elements is then kept).
func (f *fingerprint[T]) same() bool {
	v := f.value.Version()
	if v == f.version.Load() {
		return true
	}
	if checksum(f.value.ReadData()) != f.sum {
		return false
	}
	f.version.Store(v)
	return true
}

// checksum returns a 64-bit hash of x's bits: four lanes, each element
// mixed into its lane by a xor, a multiply and a rotation (the lanes
// independent, so that their chains overlap), the lanes then finalised
// and combined in order; any change of one element changes it, swapped
// elements almost surely do.
func checksum[T tensor.Float](x []T) uint64 {
	if len(x) == 0 {
		return 0
	}
	switch x := any(x).(type) {
	case []float32:
		return lanes(unsafe.Slice((*uint32)(unsafe.Pointer(&x[0])), len(x)))
	case []float64:
		return lanes(unsafe.Slice((*uint64)(unsafe.Pointer(&x[0])), len(x)))
	}
	panic("unreachable")
}

// lanes is checksum of the elements' bits w.
func lanes[W uint32 | uint64](w []W) uint64 {
	const k = 0x9e3779b97f4a7c15
	n := uint64(len(w))
	h0, h1, h2, h3 := n, n+1, n+2, n+3
	i := 0
	for ; i+4 <= len(w); i += 4 {
		h0 = bits.RotateLeft64((h0^uint64(w[i]))*k, 29)
		h1 = bits.RotateLeft64((h1^uint64(w[i+1]))*k, 29)
		h2 = bits.RotateLeft64((h2^uint64(w[i+2]))*k, 29)
		h3 = bits.RotateLeft64((h3^uint64(w[i+3]))*k, 29)
	}
	for ; i < len(w); i++ {
		h0 = bits.RotateLeft64((h0^uint64(w[i]))*k, 29)
	}
	h := avalanche(h0)
	h = avalanche(h + avalanche(h1))
	h = avalanche(h + avalanche(h2))
	return avalanche(h + avalanche(h3))
}

// avalanche is splitmix64's finaliser: every bit of z moves about half
// of the result's.
func avalanche(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// get returns a free replica, building one if none is free (a slot is
// held, so at most Replicas exist).
func (p *Pool[T]) get() (*replica[T], error) {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		r := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return r, nil
	}
	p.mu.Unlock()
	return p.newReplica()
}

// put returns r to the free list.
func (p *Pool[T]) put(r *replica[T]) {
	p.mu.Lock()
	p.free = append(p.free, r)
	p.mu.Unlock()
}

// run computes the output for x on r: the whole batch at once, or row by
// row (RowsAlone), copied out of the tape's buffers.
func (p *Pool[T]) run(r *replica[T], x *tensor.Tensor[T], seed uint64) (out *tensor.Tensor[T], err error) {
	ok := false
	defer func() {
		if ok {
			p.put(r)
			return
		}
		// A pass that panicked may leave r's buffers inconsistent: r is
		// dropped, and a new replica built when one is needed.
		if v := recover(); v != nil {
			err = fmt.Errorf("infer: the model's forward pass panicked: %v", v)
		}
	}()
	if s, is := r.m.(seeded); is {
		s.setSeed(seed)
	}
	if p.opt.Rows != RowsAlone {
		out, err = p.forward(r, x)
		ok = true
		return out, err
	}
	b := x.Dim(0)
	for i := range b {
		y, err := p.forward(r, x.Slice(i, i+1))
		if err != nil {
			ok = true
			return nil, fmt.Errorf("row %d of %d: %w", i, b, err)
		}
		if out == nil {
			out = tensor.New[T](append([]int{b}, y.Shape()[1:]...)...)
		}
		copy(out.Slice(i, i+1).Data(), y.ReadData())
	}
	ok = true
	return out, nil
}

// forward runs one pass of r on x and returns a copy of its output,
// checking that its first axis is x's.
func (p *Pool[T]) forward(r *replica[T], x *tensor.Tensor[T]) (*tensor.Tensor[T], error) {
	tp := r.tp
	tp.Reset()
	defer tp.Reset() // the pass's buffers hold no caller's data past it
	y, err := r.m.Forward(tp, tp.Const(x))
	if err != nil {
		return nil, err
	}
	v := y.Value()
	if v.Rank() == 0 || v.Dim(0) != x.Dim(0) {
		return nil, fmt.Errorf("infer: the model's output has shape %v for an input of shape %v: its first axis must be the batch's", v.Shape(), x.Shape())
	}
	return v.Clone(), nil
}

// seeded is a model that draws random numbers (SDE): the pool sets its
// seed before each pass.
type seeded interface{ setSeed(uint64) }

type seedKey struct{}

// WithSeed returns a context whose Predict calls seed their SDE models'
// Brownian paths with seed (instead of Options.Seed): a call's answer is
// then the same for the same input and seed, whichever replica runs it.
func WithSeed(ctx context.Context, seed uint64) context.Context {
	return context.WithValue(ctx, seedKey{}, seed)
}

// seedFrom returns the seed WithSeed put in ctx.
func seedFrom(ctx context.Context) (uint64, bool) {
	s, ok := ctx.Value(seedKey{}).(uint64)
	return s, ok
}
