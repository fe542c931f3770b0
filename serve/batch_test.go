package serve

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adamnode/adamnode/tensor"
	"github.com/google/go-cmp/cmp"
)

// fake is a deterministic Predictor whose row i depends on row i of x
// only: [sum of the row, 3 × its first element]. It counts its calls and
// records their row counts and first elements. A row whose first element
// is negative fails the whole call (a solver error caused by one request),
// hold (if set) is waited on by the first call only, gate (if set) by
// every call before answering, and delay is slept.
type fake struct {
	mu      sync.Mutex
	calls   int
	sizes   []int
	firsts  [][]float64
	hold    chan struct{}
	gate    chan struct{}
	delay   time.Duration
	started chan struct{} // if set, receives once per call as it starts
	sawDone atomic.Bool   // a call's context was done before it answered
	panics  bool
}

func (f *fake) Predict(ctx context.Context, x *tensor.Tensor[float64]) (*tensor.Tensor[float64], error) {
	n := x.Dim(0)
	inner := x.Len() / n
	d := x.ReadData()
	f.mu.Lock()
	f.calls++
	first := f.calls == 1
	f.sizes = append(f.sizes, n)
	var firsts []float64
	for i := range n {
		firsts = append(firsts, d[i*inner])
	}
	f.firsts = append(f.firsts, firsts)
	f.mu.Unlock()
	if f.started != nil {
		f.started <- struct{}{}
	}
	if f.hold != nil && first {
		<-f.hold
	}
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			f.sawDone.Store(true)
			return nil, ctx.Err()
		}
	}
	if f.delay > 0 {
		time.Sleep(f.delay)
	}
	if f.panics {
		panic("index out of range in the model")
	}
	for i := range n {
		if d[i*inner] < 0 {
			return nil, fmt.Errorf("dopri5: step size underflow (row %d)", i)
		}
	}
	return want(x), nil
}

// want is fake's answer on x alone.
func want(x *tensor.Tensor[float64]) *tensor.Tensor[float64] {
	n := x.Dim(0)
	inner := x.Len() / n
	d := x.ReadData()
	out := make([]float64, 2*n)
	for i := range n {
		s := 0.0
		for _, v := range d[i*inner : (i+1)*inner] {
			s += v
		}
		out[2*i], out[2*i+1] = s, 3*d[i*inner]
	}
	return tensor.FromSlice(out, n, 2)
}

func (f *fake) stats() (calls int, sizes []int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls, append([]int(nil), f.sizes...)
}

// input returns a request of rows rows of width 3, its first elements
// id, id+1, ...
func input(id float64, rows int) *tensor.Tensor[float64] {
	d := make([]float64, 3*rows)
	for i := range rows {
		d[3*i], d[3*i+1], d[3*i+2] = id+float64(i), 0.5, float64(i)
	}
	return tensor.FromSlice(d, rows, 3)
}

func newBatcher(t *testing.T, p Predictor[float64], o BatchOptions) *Batcher[float64] {
	t.Helper()
	b, err := NewBatcher(p, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// holdBatch runs a request of one row (first element 1000) through b and
// returns once f, which must have hold set, has started running it: a
// batch is then in flight until the returned function is called, which
// lets it finish and checks its answer. The hold is let go at the test's
// end anyway (before the Batcher is closed). Calling it again does
// nothing.
func holdBatch(t *testing.T, b *Batcher[float64], f *fake) (release func()) {
	t.Helper()
	if f.hold == nil {
		t.Fatal("holdBatch: the fake has no hold channel")
	}
	x := input(1000, 1)
	type answer struct {
		y   *tensor.Tensor[float64]
		err error
	}
	done := make(chan answer, 1)
	go func() {
		y, err := b.Predict(context.Background(), x)
		done <- answer{y, err}
	}()
	waitFor(t, "the held batch running", func() bool { c, _ := f.stats(); return c >= 1 })
	var let, check sync.Once
	t.Cleanup(func() { let.Do(func() { close(f.hold) }) })
	return func() {
		t.Helper()
		let.Do(func() { close(f.hold) })
		check.Do(func() {
			a := <-done
			checkAnswer(t, "the held request", x, a.y, a.err)
		})
	}
}

// checkAnswer fails unless y is fake's answer on x alone.
func checkAnswer(t *testing.T, what string, x, y *tensor.Tensor[float64], err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	w := want(x)
	if diff := cmp.Diff(w.Shape(), y.Shape()); diff != "" {
		t.Errorf("%s: shape (-want +got):\n%s", what, diff)
	}
	if diff := cmp.Diff(w.ReadData(), y.ReadData()); diff != "" {
		t.Errorf("%s: rows (-want +got):\n%s", what, diff)
	}
}

// TestBatcherBatchesAndSplits: concurrent requests of several sizes run
// in fewer Predict calls than requests, no call over MaxBatch, and each
// request gets its own rows back.
func TestBatcherBatchesAndSplits(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sizes    []int
		maxBatch int
	}{
		{"64 single rows", repeat(1, 64), 16},
		{"mixed sizes", []int{1, 3, 2, 5, 1, 1, 4, 7, 2, 2, 1, 3}, 8},
		{"a request over MaxBatch", []int{2, 12, 1, 3}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{hold: make(chan struct{})}
			b := newBatcher(t, f, BatchOptions{MaxBatch: tc.maxBatch, MaxWait: 100 * time.Millisecond, MaxInFlight: 1})
			// A batch held running makes the requests below wait and batch.
			release := holdBatch(t, b, f)
			var wg sync.WaitGroup
			for i, n := range tc.sizes {
				wg.Add(1)
				go func() {
					defer wg.Done()
					x := input(float64(100*i), n)
					y, err := b.Predict(context.Background(), x)
					checkAnswer(t, fmt.Sprintf("request %d", i), x, y, err)
				}()
			}
			waitFor(t, "every request queued", func() bool { return b.Stats().Requests == int64(len(tc.sizes)+1) })
			release()
			wg.Wait()
			calls, sizes := f.stats()
			calls, sizes = calls-1, sizes[1:] // the held batch
			if calls >= len(tc.sizes) {
				t.Errorf("%d requests ran in %d Predict calls: no batching", len(tc.sizes), calls)
			}
			total := 0
			for _, s := range sizes {
				total += s
				if s > tc.maxBatch && !contains(tc.sizes, s) {
					t.Errorf("a call of %d rows: more than MaxBatch %d", s, tc.maxBatch)
				}
			}
			if want := sum(tc.sizes); total != want {
				t.Errorf("the calls ran %d rows, the requests had %d", total, want)
			}
			st := b.Stats()
			if diff := cmp.Diff(BatchStats{Requests: int64(len(tc.sizes)) + 1, Batches: int64(calls) + 1, Rows: int64(sum(tc.sizes)) + 1}, st); diff != "" {
				t.Errorf("Stats (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBatcherRowShapes: requests whose rows differ in shape never share
// a batch.
func TestBatcherRowShapes(t *testing.T) {
	f := &fake{hold: make(chan struct{})}
	b := newBatcher(t, f, BatchOptions{MaxBatch: 64, MaxWait: 50 * time.Millisecond, MaxInFlight: 1})
	release := holdBatch(t, b, f)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := 3 + i%2
			x := tensor.Full(float64(i), 1, w)
			y, err := b.Predict(context.Background(), x)
			checkAnswer(t, fmt.Sprintf("request %d (width %d)", i, w), x, y, err)
		}()
	}
	waitFor(t, "every request queued", func() bool { return b.Stats().Requests == 9 })
	release()
	wg.Wait()
	if calls, _ := f.stats(); calls-1 < 2 {
		t.Errorf("rows of widths 3 and 4 ran in %d call", calls-1)
	}
}

// TestBatcherMaxWait: a request to an idle Batcher runs at once however
// long MaxWait is, and so does each request of a client that asks again
// once answered (the slot is freed before the answer); while a batch is
// running, the next one waits MaxWait for company, unless it is full or
// MaxWait is negative. Every request has 10 s to be answered: a wait of
// MaxWait (an hour) where none is due fails it.
func TestBatcherMaxWait(t *testing.T) {
	const hour = time.Hour
	for _, tc := range []struct {
		name     string
		wait     time.Duration
		busy     bool // a batch held running while the requests arrive
		serial   bool // the requests are asked one after the other
		requests int
		maxBatch int
		min      time.Duration // the least time until every answer
	}{
		{"idle: a lone request runs at once", hour, false, false, 1, 8, 0},
		{"idle: one client's requests in turn do not wait", hour, false, true, 20, 8, 0},
		{"busy: a lone request waits", 60 * time.Millisecond, true, false, 1, 8, 60 * time.Millisecond},
		{"busy: a full batch goes at once", hour, true, false, 4, 4, 0},
		{"busy: no waiting", -1, true, false, 1, 8, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{hold: make(chan struct{})}
			b := newBatcher(t, f, BatchOptions{MaxBatch: tc.maxBatch, MaxWait: tc.wait, MaxInFlight: 2})
			release := func() {}
			if tc.busy {
				release = holdBatch(t, b, f)
			} else {
				close(f.hold)
			}
			held := int64(0)
			if tc.busy {
				held = 1
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			var wg sync.WaitGroup
			for i := range tc.requests {
				ask := func() {
					x := input(float64(i), 1)
					y, err := b.Predict(ctx, x)
					checkAnswer(t, fmt.Sprintf("request %d", i), x, y, err)
				}
				if tc.serial {
					ask()
					continue
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					ask()
				}()
			}
			wg.Wait()
			if st := b.Stats(); st.Requests != held+int64(tc.requests) {
				t.Errorf("Stats().Requests = %d, want %d", st.Requests, held+int64(tc.requests))
			}
			if took := time.Since(start); took < tc.min {
				t.Errorf("answered after %v, want at least MaxWait %v", took, tc.min)
			}
			release()
		})
	}
}

// TestBatcherWaitsAfterCompany: after a batch of several requests the
// Batcher takes its traffic to come in company, so the next request waits
// MaxWait for others even though the Batcher is idle; a lone request after
// it (whose batch was alone) runs at once again.
func TestBatcherWaitsAfterCompany(t *testing.T) {
	const wait = 60 * time.Millisecond
	f := &fake{hold: make(chan struct{})}
	b := newBatcher(t, f, BatchOptions{MaxBatch: 16, MaxWait: wait, MaxInFlight: 1})
	release := holdBatch(t, b, f)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := input(float64(10*i), 1)
			y, err := b.Predict(context.Background(), x)
			checkAnswer(t, fmt.Sprintf("request %d", i), x, y, err)
		}()
	}
	waitFor(t, "every request queued", func() bool { return b.Stats().Requests == 4 })
	release()
	wg.Wait()
	if _, got := f.stats(); !cmp.Equal(got, []int{1, 3}) {
		t.Fatalf("rows per call %v, want [1 3] (three requests batched behind the held one)", got)
	}
	for i, min := range []time.Duration{wait, 0} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		start := time.Now()
		x := input(float64(100+i), 1)
		y, err := b.Predict(ctx, x)
		took := time.Since(start)
		cancel()
		checkAnswer(t, fmt.Sprintf("lone request %d", i), x, y, err)
		if took < min {
			t.Errorf("lone request %d answered after %v, want at least MaxWait %v (the batch before it had company)", i, took, min)
		}
	}
}

// TestBatcherFormsWhileBusy: requests that arrive while a batch runs form
// the next batch, which runs when the slot is free (MaxInFlight 1: past
// MaxWait, the batch takes what arrives while it waits for the slot).
func TestBatcherFormsWhileBusy(t *testing.T) {
	f := &fake{hold: make(chan struct{})}
	b := newBatcher(t, f, BatchOptions{MaxBatch: 16, MaxWait: 20 * time.Millisecond, MaxInFlight: 1})
	release := holdBatch(t, b, f)
	sizes := []int{1, 2, 1, 3, 1}
	var wg sync.WaitGroup
	for i, n := range sizes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := input(float64(10*i), n)
			y, err := b.Predict(context.Background(), x)
			checkAnswer(t, fmt.Sprintf("request %d", i), x, y, err)
		}()
	}
	waitFor(t, "every request queued", func() bool { return b.Stats().Requests == int64(len(sizes)+1) })
	if calls, _ := f.stats(); calls != 1 {
		t.Errorf("%d calls while the first batch was held, want 1", calls)
	}
	release()
	wg.Wait()
	_, got := f.stats()
	if diff := cmp.Diff([]int{1, sum(sizes)}, got); diff != "" {
		t.Errorf("rows per call (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(BatchStats{Requests: int64(len(sizes)) + 1, Batches: 2, Rows: int64(sum(sizes)) + 1}, b.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}

// TestBatcherCancel: a request cancelled while queued is dropped from its
// batch (the Predictor never sees its rows); one cancelled while its batch
// runs returns at once, and the batch's context is cancelled once all of
// its requests are.
func TestBatcherCancel(t *testing.T) {
	t.Run("queued", func(t *testing.T) {
		f := &fake{gate: make(chan struct{}), started: make(chan struct{}, 16)}
		b := newBatcher(t, f, BatchOptions{MaxBatch: 8, MaxWait: -1, MaxInFlight: 1})
		// The first request occupies the only slot until the gate opens.
		firstDone := make(chan error, 1)
		go func() {
			_, err := b.Predict(context.Background(), input(1, 1))
			firstDone <- err
		}()
		<-f.started
		ctx, cancel := context.WithCancel(context.Background())
		cancelled := make(chan error, 1)
		go func() {
			_, err := b.Predict(ctx, input(-50, 1)) // would fail the batch if it ran
			cancelled <- err
		}()
		kept := make(chan error, 1)
		x := input(7, 2)
		go func() {
			y, err := b.Predict(context.Background(), x)
			checkAnswer(t, "the request kept", x, y, err)
			kept <- err
		}()
		waitFor(t, "both requests queued", func() bool { return b.Stats().Requests == 3 })
		cancel()
		select {
		case err := <-cancelled:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("the cancelled request returned %v, want context.Canceled", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the cancelled request did not return while its batch waited")
		}
		close(f.gate)
		if err := <-firstDone; err != nil {
			t.Errorf("first request: %v", err)
		}
		<-kept
		<-f.started
		f.mu.Lock()
		defer f.mu.Unlock()
		if diff := cmp.Diff([][]float64{{1}, {7, 8}}, f.firsts); diff != "" {
			t.Errorf("rows the Predictor saw (first elements; -want +got):\n%s", diff)
		}
		if st := b.Stats(); st.Dropped != 1 {
			t.Errorf("Stats().Dropped = %d, want 1", st.Dropped)
		}
	})
	t.Run("running", func(t *testing.T) {
		f := &fake{gate: make(chan struct{}), started: make(chan struct{}, 16)}
		b := newBatcher(t, f, BatchOptions{MaxBatch: 8, MaxWait: -1, MaxInFlight: 1})
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := b.Predict(ctx, input(1, 1))
			errc <- err
		}()
		<-f.started
		cancel()
		select {
		case err := <-errc:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Predict returned %v, want context.Canceled", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a request cancelled while running did not return")
		}
		waitFor(t, "the batch's context cancelled", f.sawDone.Load)
	})
}

// TestBatcherSlowBatch: with two batches in flight, a batch stuck in the
// Predictor does not hold back the next one.
func TestBatcherSlowBatch(t *testing.T) {
	stuck := make(chan struct{})
	defer close(stuck)
	var calls atomic.Int64
	p := PredictorFunc[float64](func(ctx context.Context, x *tensor.Tensor[float64]) (*tensor.Tensor[float64], error) {
		if calls.Add(1) == 1 {
			<-stuck
		}
		return want(x), nil
	})
	b := newBatcher(t, p, BatchOptions{MaxBatch: 4, MaxWait: -1, MaxInFlight: 2})
	go b.Predict(context.Background(), input(1, 1))
	waitFor(t, "the first batch running", func() bool { return calls.Load() == 1 })
	done := make(chan struct{})
	go func() {
		defer close(done)
		x := input(2, 3)
		y, err := b.Predict(context.Background(), x)
		checkAnswer(t, "second request", x, y, err)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a second batch waited for a stuck first one")
	}
}

// TestBatcherFailure: a request that makes its batch fail gets the error;
// the others in its batch get their answers (retried alone), unless
// NoRetry, when all of them get it.
func TestBatcherFailure(t *testing.T) {
	for _, tc := range []struct {
		name    string
		noRetry bool
	}{{"retry alone", false}, {"no retry", true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{hold: make(chan struct{})}
			b := newBatcher(t, f, BatchOptions{MaxBatch: 8, MaxWait: 20 * time.Millisecond, MaxInFlight: 1, NoRetry: tc.noRetry})
			// The eight requests queue behind a held batch, then run as one.
			release := holdBatch(t, b, f)
			var wg sync.WaitGroup
			errs := make([]error, 8)
			for i := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					id := float64(10 * i)
					if i == 5 {
						id = -1
					}
					x := input(id, 1)
					var y *tensor.Tensor[float64]
					y, errs[i] = b.Predict(context.Background(), x)
					if i != 5 && !tc.noRetry {
						checkAnswer(t, fmt.Sprintf("request %d", i), x, y, errs[i])
					}
				}()
			}
			waitFor(t, "every request queued", func() bool { return b.Stats().Requests == 9 })
			release()
			wg.Wait()
			for i, err := range errs {
				failed := i == 5 || tc.noRetry
				if (err != nil) != failed || (err != nil && !strings.Contains(err.Error(), "step size underflow")) {
					t.Errorf("request %d: error %v, want failed %v with the solver's message", i, err, failed)
				}
			}
			if st := b.Stats(); st.Batches != 2 || (st.Retried == 8) == tc.noRetry {
				t.Errorf("Stats %+v: want 2 batches (the held one, then the 8) and 8 retried unless NoRetry", st)
			}
		})
	}
}

// TestBatcherPanic: a panicking Predictor fails its requests with a
// *PanicError; the Batcher goes on.
func TestBatcherPanic(t *testing.T) {
	f := &fake{panics: true}
	b := newBatcher(t, f, BatchOptions{MaxWait: -1})
	_, err := b.Predict(context.Background(), input(1, 1))
	var pe *PanicError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "index out of range") {
		t.Fatalf("Predict returned %v, want a *PanicError with the panic's message", err)
	}
	f.panics = false
	x := input(2, 1)
	y, err := b.Predict(context.Background(), x)
	checkAnswer(t, "after the panic", x, y, err)
}

// TestBatcherClose: Close answers what is in flight, later calls get
// ErrClosed, and no goroutine of the Batcher is left.
func TestBatcherClose(t *testing.T) {
	before := runtime.NumGoroutine()
	f := &fake{delay: 20 * time.Millisecond}
	b, err := NewBatcher[float64](f, BatchOptions{MaxBatch: 4, MaxWait: time.Millisecond, MaxInFlight: 2})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var answered atomic.Int64
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := input(float64(i), 1)
			y, err := b.Predict(context.Background(), x)
			if errors.Is(err, ErrClosed) {
				return
			}
			checkAnswer(t, "request", x, y, err)
			answered.Add(1)
		}()
	}
	waitFor(t, "some requests queued", func() bool { return b.Stats().Requests > 0 })
	b.Close()
	wg.Wait()
	if a, r := answered.Load(), b.Stats().Requests; a != r {
		t.Errorf("%d requests were queued but %d answered", r, a)
	}
	if _, err := b.Predict(context.Background(), input(1, 1)); !errors.Is(err, ErrClosed) {
		t.Errorf("Predict after Close returned %v, want ErrClosed", err)
	}
	b.Close() // twice is fine
	waitFor(t, "goroutines back to the count before", func() bool { return runtime.NumGoroutine() <= before })
}

// TestNewBatcherErrors: bad options are errors naming the field.
func TestNewBatcherErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Predictor[float64]
		o    BatchOptions
		want string
	}{
		{"nil predictor", nil, BatchOptions{}, "nil Predictor"},
		{"negative batch", &fake{}, BatchOptions{MaxBatch: -1}, "MaxBatch"},
		{"negative in flight", &fake{}, BatchOptions{MaxInFlight: -2}, "MaxInFlight"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewBatcher(tc.p, tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewBatcher: %v, want an error naming %s", err, tc.want)
			}
		})
	}
	b := newBatcher(t, &fake{}, BatchOptions{})
	if diff := cmp.Diff(BatchOptions{MaxBatch: DefaultMaxBatch, MaxWait: DefaultMaxWait, MaxInFlight: DefaultMaxInFlight}, b.Options(),
		cmp.Comparer(func(a, b func(int, time.Duration, error)) bool { return a == nil && b == nil })); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if _, err := b.Predict(context.Background(), tensor.New[float64](0, 3)); err == nil {
		t.Error("Predict of zero rows: no error")
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func repeat(v, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

func contains(xs []int, v int) bool {
	for _, x := range xs {
		if x == v {
			return true
		}
	}
	return false
}
