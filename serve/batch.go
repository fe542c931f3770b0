package serve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/adamnode/adamnode/tensor"
)

// Predictor runs a model on a batch: x's first axis is the batch, and row
// i of the answer must depend on row i of x only (not on the other rows it
// was batched with). Predict must be safe for concurrent use. The infer
// package's Pool is one; a Batcher is another.
type Predictor[T tensor.Float] interface {
	Predict(ctx context.Context, x *tensor.Tensor[T]) (*tensor.Tensor[T], error)
}

// PredictorFunc is a function that is a Predictor.
type PredictorFunc[T tensor.Float] func(ctx context.Context, x *tensor.Tensor[T]) (*tensor.Tensor[T], error)

// Predict calls f.
func (f PredictorFunc[T]) Predict(ctx context.Context, x *tensor.Tensor[T]) (*tensor.Tensor[T], error) {
	return f(ctx, x)
}

// ErrClosed is returned by Batcher.Predict after Close.
var ErrClosed = errors.New("serve: the batcher is closed")

// PanicError is a panic of a Predictor, turned into the error of the
// requests it was running (the process goes on).
type PanicError struct{ Value any }

// Error formats the panic's value.
func (e *PanicError) Error() string { return fmt.Sprintf("serve: the model panicked: %v", e.Value) }

// Defaults of BatchOptions.
const (
	DefaultMaxBatch    = 64
	DefaultMaxWait     = 2 * time.Millisecond
	DefaultMaxInFlight = 2
)

// BatchOptions configure a Batcher. Zero values mean the defaults.
type BatchOptions struct {
	// MaxBatch is the most rows one Predict call gets (default 64). A
	// request of more rows runs alone, as one batch.
	MaxBatch int
	// MaxWait is how long the first request of a batch waits for others
	// to join it (default 2 ms). It waits only while another batch is
	// running or when the previous batch had more than one request: a
	// request that finds the Batcher idle after a lone one (one client,
	// light traffic) runs at once, with what has queued up by then, and
	// under load, where requests come in company, batches form as they
	// arrive. Negative: no waiting; a batch is what has queued up by the
	// time it is taken, plus what arrives while it waits for a free slot
	// (see MaxInFlight).
	MaxWait time.Duration
	// MaxInFlight is the number of batches that may run at once (default
	// 2). While all are busy, requests queue and the next batch keeps
	// filling up to MaxBatch, so a slow batch does not block the next one
	// from forming, and one in flight does not hold the others back.
	MaxInFlight int
	// NoRetry: when a batch of several requests fails, every request in it
	// gets the error. By default each of its requests is run again alone,
	// so that only the ones that fail alone get an error (a solver error
	// caused by one request's input fails that request only); a failed
	// batch of k requests then costs 1 + k calls of Predict.
	NoRetry bool
	// Observe, if set, is called after every call of the Predictor with
	// the rows it ran, how long it took and its error (metrics).
	Observe func(rows int, took time.Duration, err error)
}

// BatchStats counts what a Batcher did.
type BatchStats struct {
	Requests int64 // requests taken (Predict calls that were queued)
	Batches  int64 // calls of the Predictor for a batch (retries not counted)
	Rows     int64 // rows in those calls
	Dropped  int64 // requests dropped from their batch because their context was done before it ran
	Retried  int64 // requests run again alone after their batch failed
}

// Batcher collects concurrent requests into batches: requests that arrive
// within MaxWait of a batch's first one (when it waits: see
// BatchOptions.MaxWait; and fit within MaxBatch rows, with the same shape
// of row) run as one call of the Predictor, and each
// gets its own rows of the answer back. A request whose context is done
// before its batch runs is left out of the batch; if it was already
// running, its answer is discarded. The context a batch runs under is
// cancelled when every request in it has been cancelled. A panic of the
// Predictor becomes a *PanicError of the requests it was running.
//
// A Batcher is safe for concurrent use and is itself a Predictor. Close
// stops it.
type Batcher[T tensor.Float] struct {
	p    Predictor[T]
	opts BatchOptions

	mu     sync.RWMutex // guards closed against sends on reqs
	closed bool
	reqs   chan *request[T]
	sem    chan struct{} // a slot per batch in flight
	wg     sync.WaitGroup
	done   chan struct{} // closed when the collector and every batch have finished

	requests, batches, rows, dropped, retried atomic.Int64
}

type request[T tensor.Float] struct {
	ctx  context.Context
	x    *tensor.Tensor[T]
	rows int
	res  chan result[T] // capacity 1: the answer never blocks its sender
}

type result[T tensor.Float] struct {
	y   *tensor.Tensor[T]
	err error
}

// NewBatcher returns a Batcher in front of p. It returns an error naming
// the field when opts has a negative MaxBatch or MaxInFlight.
func NewBatcher[T tensor.Float](p Predictor[T], opts BatchOptions) (*Batcher[T], error) {
	switch {
	case p == nil:
		return nil, errors.New("serve: NewBatcher: nil Predictor")
	case opts.MaxBatch < 0:
		return nil, fmt.Errorf("serve: BatchOptions.MaxBatch must be ≥ 0 (0: %d), got %d", DefaultMaxBatch, opts.MaxBatch)
	case opts.MaxInFlight < 0:
		return nil, fmt.Errorf("serve: BatchOptions.MaxInFlight must be ≥ 0 (0: %d), got %d", DefaultMaxInFlight, opts.MaxInFlight)
	}
	if opts.MaxBatch == 0 {
		opts.MaxBatch = DefaultMaxBatch
	}
	if opts.MaxWait == 0 {
		opts.MaxWait = DefaultMaxWait
	}
	if opts.MaxInFlight == 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	b := &Batcher[T]{
		p:    p,
		opts: opts,
		reqs: make(chan *request[T], 4*opts.MaxBatch),
		sem:  make(chan struct{}, opts.MaxInFlight),
		done: make(chan struct{}),
	}
	go b.collect()
	return b, nil
}

// Options returns the options in force (the defaults filled in).
func (b *Batcher[T]) Options() BatchOptions { return b.opts }

// Stats returns the counts so far.
func (b *Batcher[T]) Stats() BatchStats {
	return BatchStats{Requests: b.requests.Load(), Batches: b.batches.Load(), Rows: b.rows.Load(),
		Dropped: b.dropped.Load(), Retried: b.retried.Load()}
}

// Predict queues x (rows along its first axis, at least one) to run in a
// batch and returns its rows of the batch's answer. It returns ctx's error
// as soon as ctx is done, ErrClosed after Close, and the Predictor's error
// when x's batch failed (and, unless NoRetry, x failed alone too).
func (b *Batcher[T]) Predict(ctx context.Context, x *tensor.Tensor[T]) (*tensor.Tensor[T], error) {
	if x == nil || x.Rank() == 0 || x.Dim(0) == 0 {
		return nil, errors.New("serve: Batcher.Predict: x must have at least one row along its first axis")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := &request[T]{ctx: ctx, x: x, rows: x.Dim(0), res: make(chan result[T], 1)}
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		return nil, ErrClosed
	}
	select {
	case b.reqs <- r:
		b.requests.Add(1)
	case <-ctx.Done():
		b.mu.RUnlock()
		return nil, ctx.Err()
	}
	b.mu.RUnlock()
	select {
	case res := <-r.res:
		return res.y, res.err
	case <-ctx.Done():
		return nil, ctx.Err() // the batch drops r, or discards its answer
	}
}

// Close stops taking requests (Predict returns ErrClosed), runs the ones
// already queued, waits for every batch in flight and returns. It is safe
// to call more than once.
func (b *Batcher[T]) Close() error {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		close(b.reqs)
	}
	b.mu.Unlock()
	<-b.done
	return nil
}

// collect forms batches from the queue and starts each in a goroutine of
// its own when a slot is free.
func (b *Batcher[T]) collect() {
	defer func() {
		b.wg.Wait()
		close(b.done)
	}()
	var next *request[T] // a request that did not fit the batch before
	closed := false
	// lastAlone: the previous batch was one request. A lone request then
	// finds the Batcher idle and runs at once; after a batch of several,
	// the traffic comes in company and the next batch waits for it.
	lastAlone := true
	for {
		first := next
		if first == nil {
			if closed {
				return
			}
			r, ok := <-b.reqs
			if !ok {
				return
			}
			first = r
		}
		f := &forming[T]{max: b.opts.MaxBatch, batch: []*request[T]{first}, rows: first.rows, closed: closed}
		// Wait for company while a batch is running (a slot is taken)
		// or when the previous batch had company; a request that finds
		// the Batcher idle after a lone one runs at once.
		b.fill(f, b.opts.MaxWait > 0 && (b.busy() || !lastAlone))
		next, closed = f.next, f.closed
		lastAlone = len(f.batch) == 1
		b.wg.Add(1)
		go b.run(f.batch)
	}
}

// forming is a batch being collected.
type forming[T tensor.Float] struct {
	max    int           // MaxBatch
	batch  []*request[T] // its requests, the first fixing the row shape
	rows   int           // their rows
	next   *request[T]   // a request that did not fit: the next batch's first
	closed bool          // the queue was closed
}

// add takes r (received with ok) into the batch; false means the batch
// is complete.
func (f *forming[T]) add(r *request[T], ok bool) bool {
	switch {
	case !ok:
		f.closed = true
		return false
	case f.rows+r.rows > f.max || !sameRow(f.batch[0].x, r.x):
		f.next = r
		return false
	}
	f.batch, f.rows = append(f.batch, r), f.rows+r.rows
	return f.rows < f.max
}

// fill adds requests to f while it has room: those arriving within
// MaxWait when wait is set, then those queued already, then those that
// arrive while it waits for a slot of MaxInFlight, which it takes.
func (b *Batcher[T]) fill(f *forming[T], wait bool) {
	open := f.rows < f.max && !f.closed
	if open && wait {
		timer := time.NewTimer(b.opts.MaxWait)
	waiting:
		for open {
			select {
			case r, ok := <-b.reqs:
				open = f.add(r, ok)
			case <-timer.C:
				break waiting
			}
		}
		timer.Stop()
	}
	for open { // what has queued up already
		select {
		case r, ok := <-b.reqs:
			open = f.add(r, ok)
			continue
		default:
		}
		break
	}
	for open {
		select {
		case b.sem <- struct{}{}:
			return
		case r, ok := <-b.reqs:
			open = f.add(r, ok)
		}
	}
	b.sem <- struct{}{}
}

// busy reports whether a batch is running (holds a slot).
func (b *Batcher[T]) busy() bool { return len(b.sem) > 0 }

// sameRow reports whether x and y have the same shape but for the first
// axis.
func sameRow[T tensor.Float](x, y *tensor.Tensor[T]) bool {
	return slices.Equal(x.Shape()[1:], y.Shape()[1:])
}

// run runs one batch, frees its slot, then answers its requests: a
// client that asks again once answered finds the slot free (with one
// client, the Batcher idle).
func (b *Batcher[T]) run(batch []*request[T]) {
	defer b.wg.Done()
	type answer struct {
		r   *request[T]
		res result[T]
	}
	var answers []answer
	defer func() {
		<-b.sem
		for _, a := range answers {
			a.r.res <- a.res
		}
	}()
	live := batch[:0:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			b.dropped.Add(1)
			answers = append(answers, answer{r, result[T]{err: err}})
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return
	}
	b.batches.Add(1)
	for _, r := range live {
		b.rows.Add(int64(r.rows))
	}
	ys, err := b.call(live)
	if err != nil && len(live) > 1 && !b.opts.NoRetry && !isContextErr(err) {
		for _, r := range live {
			if cerr := r.ctx.Err(); cerr != nil {
				answers = append(answers, answer{r, result[T]{err: cerr}})
				continue
			}
			b.retried.Add(1)
			y, err := b.call([]*request[T]{r})
			if err != nil {
				answers = append(answers, answer{r, result[T]{err: err}})
			} else {
				answers = append(answers, answer{r, result[T]{y: y[0]}})
			}
		}
		return
	}
	for i, r := range live {
		if err != nil {
			answers = append(answers, answer{r, result[T]{err: err}})
		} else {
			answers = append(answers, answer{r, result[T]{y: ys[i]}})
		}
	}
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// call runs the requests rs as one call of the Predictor and returns each
// one's rows of the answer (copies). The call's context is cancelled once
// every request's context is done.
func (b *Batcher[T]) call(rs []*request[T]) (ys []*tensor.Tensor[T], err error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	left := atomic.Int64{}
	left.Store(int64(len(rs)))
	for _, r := range rs {
		stop := context.AfterFunc(r.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
		defer stop()
	}
	x, rows := rs[0].x, rs[0].rows
	if len(rs) > 1 {
		xs := make([]*tensor.Tensor[T], len(rs))
		rows = 0
		for i, r := range rs {
			xs[i], rows = r.x, rows+r.rows
		}
		x = tensor.Concat(0, xs...)
	}
	start := time.Now()
	y, err := b.predict(ctx, x)
	if b.opts.Observe != nil {
		b.opts.Observe(rows, time.Since(start), err)
	}
	if err != nil {
		return nil, err
	}
	if y == nil || y.Rank() == 0 || y.Dim(0) != rows {
		return nil, fmt.Errorf("serve: the model answered a batch of %d rows with a tensor of shape %v", rows, shapeOf(y))
	}
	data := y.ReadData()
	inner := y.Len() / rows
	shape := y.Shape()
	off := 0
	for _, r := range rs {
		s := slices.Clone(shape)
		s[0] = r.rows
		ys = append(ys, tensor.FromSlice(slices.Clone(data[off*inner:(off+r.rows)*inner]), s...))
		off += r.rows
	}
	return ys, nil
}

func shapeOf[T tensor.Float](y *tensor.Tensor[T]) any {
	if y == nil {
		return "nil"
	}
	return y.Shape()
}

// predict calls the Predictor, turning a panic into a *PanicError.
func (b *Batcher[T]) predict(ctx context.Context, x *tensor.Tensor[T]) (*tensor.Tensor[T], error) {
	return safePredict(ctx, b.p, x)
}

// safePredict calls p, turning a panic into a *PanicError.
func safePredict[T tensor.Float](ctx context.Context, p Predictor[T], x *tensor.Tensor[T]) (y *tensor.Tensor[T], err error) {
	defer func() {
		if v := recover(); v != nil {
			y, err = nil, &PanicError{Value: v}
		}
	}()
	return p.Predict(ctx, x)
}
