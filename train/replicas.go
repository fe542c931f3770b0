package train

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/distributed"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
)

// Replica is one of RunReplicas' replicas: a model, its optimizer, its
// shard of the training data (data.LoaderOptions{Shard: i, Shards: k})
// and the test loader.
type Replica[T tensor.Float] struct {
	Model     Model[T]
	Optimizer optim.Optimizer[T]
	Train     *data.Loader
	Test      *data.Loader
}

// RunReplicas trains data-parallel in this process: k replicas of the
// model, made by replica(i) for i = 0…k−1, each on its shard of every
// global batch, in goroutines of their own, each computing with a backend
// of one worker (cfg.Backend's kind, or the default's), their gradients
// averaged after every step (distributed.NewLocal) — Run with
// Config.Distributed, every rank a goroutine. Splitting the batch
// parallelises the whole step, the solver's elementwise work included,
// where the workers of one backend share only the large products: on two
// cores two replicas of one worker each train the paper's MNIST AdamNODE
// faster than one process of two (bench/README.md).
//
// Replica 0 reports (cfg.Log, the progress bar, OnBatch, OnStep and OnEpoch) and
// writes the files; the result is its. An error in any replica stops all
// of them at the same step and is returned. With an adaptive solver each
// replica's solve takes its own steps (for its shard), so the training
// matches one process's to the solver's tolerance; with a fixed grid, to
// rounding.
func RunReplicas[T tensor.Float](ctx context.Context, cfg Config, k int, replica func(i int) (Replica[T], error)) (*Result, error) {
	return fitReplicas(ctx, "RunReplicas", cfg, k, func(i int) (Task[T, *data.Batch], optim.Optimizer[T], error) {
		r, err := replica(i)
		return classifier[T]{m: r.Model, tr: r.Train, te: r.Test}, r.Optimizer, err
	})
}

// FitReplicas is RunReplicas for any task: replica(i) returns replica i's
// task, whose training batches are its shard of every global batch, and
// its optimizer.
func FitReplicas[T tensor.Float, B any](ctx context.Context, cfg Config, k int, replica func(i int) (Task[T, B], optim.Optimizer[T], error)) (*Result, error) {
	return fitReplicas(ctx, "FitReplicas", cfg, k, replica)
}

func fitReplicas[T tensor.Float, B any](ctx context.Context, name string, cfg Config, k int, replica func(i int) (Task[T, B], optim.Optimizer[T], error)) (*Result, error) {
	if k < 1 {
		return nil, fmt.Errorf("train: %s with %d replicas, want at least 1", name, k)
	}
	if cfg.Distributed != nil {
		return nil, fmt.Errorf("train: %s makes its own communicator: Config.Distributed must be nil", name)
	}
	be := cfg.Backend
	if be == nil {
		be = tensor.Default()
	}
	one, err := oneWorker(be)
	if err != nil {
		return nil, err
	}
	tasks := make([]Task[T, B], k)
	opts := make([]optim.Optimizer[T], k)
	for i := range tasks {
		if tasks[i], opts[i], err = replica(i); err != nil {
			return nil, fmt.Errorf("train: replica %d: %w", i, err)
		}
	}
	comms := distributed.NewLocal(k)
	results := make([]*Result, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i := range tasks {
		c := cfg
		c.Distributed, c.Backend = comms[i], one
		if i > 0 {
			c.Log, c.Quiet, c.OnBatch, c.OnStep, c.OnEpoch = io.Discard, true, nil, nil, nil
		}
		wg.Go(func() {
			results[i], errs[i] = Fit(ctx, c, tasks[i], opts[i])
		})
	}
	wg.Wait()
	err = errs[0]
	if isRemote(err) {
		// Replica 0 stopped because another failed: return that one's.
		for _, e := range errs[1:] {
			if e != nil && !isRemote(e) {
				err = e
				break
			}
		}
	}
	return results[0], err
}

// isRemote reports whether err says another rank failed.
func isRemote(err error) bool {
	return errors.Is(err, errRemote)
}

// oneWorker returns a backend of be's kind with one worker: the CPU
// backends by name, any other (a GPU's) as it is.
func oneWorker(be tensor.Backend) (tensor.Backend, error) {
	switch be.Name() {
	case "gonum":
		return tensor.Gonum(1), nil
	case "openblas":
		return tensor.OpenBLAS(1)
	}
	return be, nil
}
