package infer_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/infer"
	"github.com/adamnode/adamnode/models"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// smallConfig is the MNIST AdamNODE classifier shrunk to 1×8×8 images and
// narrow layers, quick enough for the race detector.
func smallConfig() models.Config {
	cfg := models.Paper(models.AdamNODE, models.MNIST)
	cfg.H, cfg.W, cfg.C, cfg.NHid = 8, 8, 2, 4
	return cfg
}

// classifierPool returns a pool of a small AdamNODE classifier, its
// trained model and the build it was made with.
func classifierPool[T tensor.Float](t testing.TB, opt infer.Options) (*infer.Pool[T], *models.Classifier[T]) {
	t.Helper()
	cfg := smallConfig()
	trained, err := models.New[T](rand.New(rand.NewPCG(1, 2)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(10)
	var mu sync.Mutex
	build := func() (*models.Classifier[T], error) {
		mu.Lock()
		seed++
		s := seed
		mu.Unlock()
		return models.New[T](rand.New(rand.NewPCG(s, 3)), cfg) // other values: the pool's binding must replace them
	}
	p, err := infer.New[T](trained, build, opt)
	if err != nil {
		t.Fatal(err)
	}
	return p, trained
}

// images returns a batch of n random images of the small configuration.
func images[T tensor.Float](n int, seed uint64) *tensor.Tensor[T] {
	rng := rand.New(rand.NewPCG(seed, 5))
	x := tensor.New[T](n, 1, 8, 8)
	d := x.Data()
	for i := range d {
		d[i] = T(rng.Float64())
	}
	return x
}

// TestConcurrentSameAnswers: 24 goroutines predicting batches at once
// on a pool of 3 replicas get, bit for bit, what one goroutine gets for
// each batch; and the trained model's own pass (RowsAsBuilt, on an
// engine like the replicas') gives the same bits, so the replicas read
// the trained parameters.
func TestConcurrentSameAnswers(t *testing.T) {
	t.Run("float32", testConcurrent[float32])
	t.Run("float64", testConcurrent[float64])
}

func testConcurrent[T tensor.Float](t *testing.T) {
	for _, rows := range []infer.Rows{infer.RowErrors, infer.RowsAsBuilt} {
		opt := infer.Options{Replicas: 3, Backend: tensor.Gonum(1), Rows: rows}
		p, trained := classifierPool[T](t, opt)
		const batches = 8
		inputs := make([]*tensor.Tensor[T], batches)
		want := make([][]T, batches)
		for i := range inputs {
			inputs[i] = images[T](1+i%4, uint64(i))
			y, err := p.Predict(context.Background(), inputs[i])
			if err != nil {
				t.Fatal(err)
			}
			want[i] = y.ReadData()
		}
		if rows == infer.RowsAsBuilt {
			for i, x := range inputs {
				tp := autograd.NewTape(tensor.EngineFor[T](tensor.Gonum(1)))
				tp.SetNoGrad(true)
				y, err := trained.Forward(tp, tp.Const(x))
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(y.Value().ReadData(), want[i]); diff != "" {
					t.Errorf("batch %d: pool (+) and trained model (-) differ:\n%s", i, diff)
				}
			}
		}
		var wg sync.WaitGroup
		got := make([][][]T, 24)
		errs := make([]error, len(got))
		for g := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range batches {
					i := (g + k) % batches
					y, err := p.Predict(context.Background(), inputs[i])
					if err != nil {
						errs[g] = err
						return
					}
					got[g] = append(got[g], y.ReadData())
				}
			}()
		}
		wg.Wait()
		for g := range got {
			if errs[g] != nil {
				t.Fatalf("%v: goroutine %d: %v", rows, g, errs[g])
			}
			for k, y := range got[g] {
				if diff := cmp.Diff(want[(g+k)%batches], y); diff != "" {
					t.Errorf("%v: goroutine %d, batch %d: differs from one goroutine's:\n%s", rows, g, (g+k)%batches, diff)
				}
			}
		}
	}
}

// TestParamChanged: a parameter of the trained model written or replaced
// after the pool was made fails every Predict with a *ParamChangedError
// naming it.
func TestParamChanged(t *testing.T) {
	for _, c := range []struct {
		name     string
		change   func(*autograd.Param[float32])
		replaced bool
	}{
		{"written", func(p *autograd.Param[float32]) { p.Value.Data()[0] += 1 }, false},
		{"replaced", func(p *autograd.Param[float32]) { p.Value = p.Value.Clone() }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, trained := classifierPool[float32](t, infer.Options{Replicas: 2, Backend: tensor.Gonum(1)})
			x := images[float32](2, 1)
			if _, err := p.Predict(context.Background(), x); err != nil {
				t.Fatalf("before the change: %v", err)
			}
			prm := trained.Params()[3]
			c.change(prm)
			_, err := p.Predict(context.Background(), x)
			var pc *infer.ParamChangedError
			if !errors.As(err, &pc) {
				t.Fatalf("Predict after the change: %v, want a *ParamChangedError", err)
			}
			want := infer.ParamChangedError{Name: prm.Name, Index: 3, Replaced: c.replaced}
			if diff := cmp.Diff(want, *pc); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", prm.Name)) {
				t.Errorf("message %q does not name %q", err, prm.Name)
			}
		})
	}
}

// TestParamMarkedUnchanged: a parameter whose version moved on with its
// values unchanged (a pass reading it through Data, a MarkChanged) is
// not a change; a later write still is.
func TestParamMarkedUnchanged(t *testing.T) {
	p, trained := classifierPool[float64](t, infer.Options{Replicas: 1, Backend: tensor.Gonum(1)})
	x := images[float64](1, 1)
	prm := trained.Params()[2]
	for range 2 {
		prm.Value.MarkChanged()
		if _, err := p.Predict(context.Background(), x); err != nil {
			t.Fatalf("after MarkChanged: %v", err)
		}
	}
	prm.Value.Data()[1] += 1
	if _, err := p.Predict(context.Background(), x); err == nil || !strings.Contains(err.Error(), prm.Name) {
		t.Errorf("after a write: %v, want an error naming %q", err, prm.Name)
	}
}

// blockingFunc returns a build of Func models that wait for release
// whenever entered is sent to (the pass holds its replica meanwhile).
func blockingFunc(entered chan<- struct{}, release <-chan struct{}) func() (*infer.Func[float64], error) {
	return func() (*infer.Func[float64], error) {
		w := autograd.NewParam("w", tensor.FromSlice([]float64{2}, 1))
		return &infer.Func[float64]{
			Parameters: []*autograd.Param[float64]{w},
			Fn: func(tp *autograd.Tape[float64], x autograd.Var[float64]) (autograd.Var[float64], error) {
				entered <- struct{}{}
				<-release
				return autograd.Scale(x, 2), nil
			},
		}, nil
	}
}

// TestContextWhileWaiting: with its one replica busy, a Predict returns
// ctx.Err() when its context is cancelled or its deadline passes, and
// one whose context is already done returns at once; the busy pass then
// finishes with its answer.
func TestContextWhileWaiting(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	build := blockingFunc(entered, release)
	trained, _ := build()
	p, err := infer.New[float64](trained, build, infer.Options{Replicas: 1, Input: []int{2}})
	if err != nil {
		t.Fatal(err)
	}
	x := tensor.FromSlice([]float64{1, 2, 3, 4}, 2, 2)
	done := make(chan error)
	go func() {
		y, err := p.Predict(context.Background(), x)
		if err == nil && !cmp.Equal(y.ReadData(), []float64{2, 4, 6, 8}) {
			err = fmt.Errorf("answer %v", y.ReadData())
		}
		done <- err
	}()
	<-entered // the replica is busy

	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	if _, err := p.Predict(ctx, x); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled while waiting: %v, want context.Canceled", err)
	}
	dl, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	if _, err := p.Predict(dl, x); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline while waiting: %v, want context.DeadlineExceeded", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Errorf("the busy pass: %v", err)
	}
	// With a replica free, a done context still wins.
	if _, err := p.Predict(ctx, x); !errors.Is(err, context.Canceled) {
		t.Errorf("done context with a free replica: %v, want context.Canceled", err)
	}
}

// TestInputShape: inputs that are not a batch of rows of the pool's
// shape are errors naming both shapes.
func TestInputShape(t *testing.T) {
	p, _ := classifierPool[float32](t, infer.Options{Replicas: 1, Backend: tensor.Gonum(1)})
	if diff := cmp.Diff([]int{1, 8, 8}, p.Input()); diff != "" {
		t.Errorf("Input (-want +got):\n%s", diff)
	}
	for _, c := range []struct {
		name string
		x    *tensor.Tensor[float32]
		want string
	}{
		{"nil", nil, "nil tensor; want a batch of shape [B 1 8 8]"},
		{"scalar", tensor.New[float32](), "input of shape [], want [B 1 8 8]"},
		{"one image without its batch axis", tensor.New[float32](1, 8, 8), "input of shape [1 8 8], want [B 1 8 8]"},
		{"28×28", tensor.New[float32](3, 1, 28, 28), "input of shape [3 1 28 28], want [B 1 8 8]"},
		{"flat", tensor.New[float32](3, 64), "input of shape [3 64], want [B 1 8 8]"},
		{"no rows", tensor.New[float32](0, 1, 8, 8), "input of shape [0 1 8 8] holds no rows"},
	} {
		_, err := p.Predict(context.Background(), c.x)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

// TestBuildMisuse: a build that does not make a new model of the trained
// model's configuration fails New (or the Predict that needs another
// replica) with an error saying what is wrong.
func TestBuildMisuse(t *testing.T) {
	cfg := smallConfig()
	mk := func(c models.Config) *models.Classifier[float32] {
		m, err := models.New[float32](rand.New(rand.NewPCG(1, 2)), c)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	trained := mk(cfg)
	wider := cfg
	wider.NHid = 5
	nodeCfg := cfg
	nodeCfg.Kind = models.NODE
	nodeCfg.C = 2
	renamed := mk(cfg)
	renamed.Params()[0].Name = "other"
	for _, c := range []struct {
		name  string
		build func() (*models.Classifier[float32], error)
		want  string
	}{
		{"the trained model", func() (*models.Classifier[float32], error) { return trained, nil }, "sharing parameter"},
		{"wider", func() (*models.Classifier[float32], error) { return mk(wider), nil }, "has shape"},
		{"another family", func() (*models.Classifier[float32], error) { return mk(nodeCfg), nil }, "parameters, the trained model has"},
		{"renamed", func() (*models.Classifier[float32], error) { return renamed, nil }, `is "other", the trained model's is`},
		{"failing", func() (*models.Classifier[float32], error) { return nil, errors.New("no file") }, "build: no file"},
		{"nil", func() (*models.Classifier[float32], error) { return nil, nil }, "nil model"},
	} {
		_, err := infer.New[float32](trained, c.build, infer.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: New: %v, want an error saying %q", c.name, err, c.want)
		}
	}
	// The same new model every call: the second replica, built when two
	// passes overlap, would share its ODE block with the first.
	entered, release := make(chan struct{}), make(chan struct{})
	mkFunc := func() *infer.Func[float64] {
		f, _ := blockingFunc(entered, release)()
		f.Blocks = []*odeblock.Block[float64]{{}}
		return f
	}
	once := mkFunc()
	p, err := infer.New[float64](mkFunc(), func() (*infer.Func[float64], error) { return once, nil }, infer.Options{Replicas: 2, Input: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan error)
	go func() {
		_, err := p.Predict(context.Background(), tensor.New[float64](1, 1))
		first <- err
	}()
	<-entered
	if _, err := p.Predict(context.Background(), tensor.New[float64](1, 1)); err == nil || !strings.Contains(err.Error(), "ODE block is the trained model's or another replica's") {
		t.Errorf("a second replica sharing the first's block: %v, want an error saying so", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Errorf("the first pass: %v", err)
	}
	if _, err := infer.New[float32](trained, func() (*models.Classifier[float32], error) { return trained, nil }, infer.Options{Replicas: -1}); err == nil || !strings.Contains(err.Error(), "Replicas must not be negative, got -1") {
		t.Errorf("Replicas −1: %v", err)
	}
	if _, err := infer.New[float32](trained, func() (*models.Classifier[float32], error) { return mk(cfg), nil }, infer.Options{Rows: 7}); err == nil || !strings.Contains(err.Error(), "Options.Rows is Rows(7)") {
		t.Errorf("Rows 7: %v", err)
	}
	f := &infer.Func[float32]{}
	if _, err := infer.New[float32](f, func() (*infer.Func[float32], error) { return &infer.Func[float32]{}, nil }, infer.Options{}); err == nil || !strings.Contains(err.Error(), "Options.Input must give the shape") {
		t.Errorf("Func without Input: %v", err)
	}
}

// TestBlockSharedOutside: a replica's ODE block used by a goroutine
// outside the pool fails the pool's pass with the block's own error
// (odeblock's guard), not a wrong answer or a panic.
func TestBlockSharedOutside(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var hold sync.Mutex // held: the field waits (only the outside pass sets it)
	var outside bool
	var blocks []*odeblock.Block[float64]
	build := func() (*infer.Func[float64], error) {
		w := autograd.NewParam("w", tensor.FromSlice([]float64{-1}, 1))
		field := odeblock.FieldFunc([]*autograd.Param[float64]{w}, func(tp *autograd.Tape[float64], _ float64, h autograd.Var[float64]) autograd.Var[float64] {
			hold.Lock()
			wait := outside
			outside = false
			hold.Unlock()
			if wait {
				entered <- struct{}{}
				<-release
			}
			return autograd.Mul(h, tp.Param(w))
		})
		b := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}}
		blocks = append(blocks, b)
		return &infer.Func[float64]{
			Parameters: []*autograd.Param[float64]{w},
			Blocks:     []*odeblock.Block[float64]{b},
			Fn: func(tp *autograd.Tape[float64], x autograd.Var[float64]) (autograd.Var[float64], error) {
				return b.Forward(tp, x)
			},
		}, nil
	}
	trained, _ := build()
	p, err := infer.New[float64](trained, build, infer.Options{Replicas: 1, Input: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	replicaBlock := blocks[1]
	if !replicaBlock.RowErrors {
		t.Error("the replica's block: RowErrors not set by the pool's default Rows")
	}
	outsideDone := make(chan error)
	go func() {
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Gonum(1)))
		hold.Lock()
		outside = true
		hold.Unlock()
		_, err := replicaBlock.Forward(tp, tp.Const(tensor.FromSlice([]float64{1}, 1, 1)))
		outsideDone <- err
	}()
	<-entered
	_, err = p.Predict(context.Background(), tensor.FromSlice([]float64{1, 2}, 2, 1))
	if err == nil || !strings.Contains(err.Error(), "Block used from two goroutines at once") {
		t.Errorf("Predict while the replica's block is used outside: %v, want the block's concurrent-use error", err)
	}
	close(release)
	if err := <-outsideDone; err != nil {
		t.Errorf("the outside pass: %v", err)
	}
	y, err := p.Predict(context.Background(), tensor.FromSlice([]float64{1, 2}, 2, 1))
	if err != nil {
		t.Fatalf("after the outside pass: %v", err)
	}
	for i, v := range y.ReadData() {
		if want := float64(i+1) * math.Exp(-1); math.Abs(v-want) > 1e-5 {
			t.Errorf("row %d: %g, want %g", i, v, want)
		}
	}
}

// TestForwardPanics: a model whose pass panics fails that Predict with an
// error carrying the panic's value; the pool goes on with a new replica.
func TestForwardPanics(t *testing.T) {
	calls := 0
	var mu sync.Mutex
	build := func() (*infer.Func[float64], error) {
		return &infer.Func[float64]{Fn: func(tp *autograd.Tape[float64], x autograd.Var[float64]) (autograd.Var[float64], error) {
			mu.Lock()
			calls++
			n := calls
			mu.Unlock()
			if n == 1 {
				panic("boom")
			}
			return x, nil
		}}, nil
	}
	trained, _ := build()
	p, err := infer.New[float64](trained, build, infer.Options{Replicas: 1, Input: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	x := tensor.FromSlice([]float64{3}, 1, 1)
	if _, err := p.Predict(context.Background(), x); err == nil || !strings.Contains(err.Error(), "panicked: boom") {
		t.Errorf("first call: %v, want the panic as an error", err)
	}
	y, err := p.Predict(context.Background(), x)
	if err != nil || y.ReadData()[0] != 3 {
		t.Errorf("second call: %v, %v", y, err)
	}
}

// TestOutputNotBatch: a model whose output's first axis is not the
// batch's is an error naming both shapes.
func TestOutputNotBatch(t *testing.T) {
	build := func() (*infer.Func[float64], error) {
		return &infer.Func[float64]{Fn: func(tp *autograd.Tape[float64], x autograd.Var[float64]) (autograd.Var[float64], error) {
			return autograd.Sum(x), nil
		}}, nil
	}
	trained, _ := build()
	p, err := infer.New[float64](trained, build, infer.Options{Replicas: 1, Input: []int{2}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Predict(context.Background(), tensor.New[float64](3, 2))
	if err == nil || !strings.Contains(err.Error(), "output has shape [] for an input of shape [3 2]") {
		t.Errorf("%v, want an error naming both shapes", err)
	}
}
