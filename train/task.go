package train

import (
	"context"
	"fmt"
	"iter"
	"math/rand/v2"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/tensor"
)

// Task is what Fit trains: a model's parameters, its training batches (of
// any type B) and the loss on one. Every model trains through it: Run's
// image classifiers, a regression on a time series, a latent ODE's ELBO.
//
// A Task may also be an Evaluator (a held-out evaluation after every
// epoch), Counted (the NFE columns), layers.Trainable (training and
// evaluation modes) and layers.Buffered (state the checkpoint keeps).
type Task[T tensor.Float, B any] interface {
	// Params are the parameters the optimizer steps, saved and resumed
	// by name.
	Params() []*autograd.Param[T]
	// NumBatches is the number of training batches in every epoch.
	NumBatches() int
	// Batches yields the training batches of epoch (from 0), NumBatches
	// of them, in an order that depends only on the epoch (a seeded
	// shuffle): a resumed run skips the batches it had done. It stops
	// with ctx's error when ctx is done. In a distributed run each rank
	// yields its own shard of every batch.
	Batches(ctx context.Context, epoch int) iter.Seq2[B, error]
	// Loss records the forward pass on b on tp (reset before each batch)
	// and returns the loss whose gradient the step follows.
	Loss(tp *autograd.Tape[T], b B) (Loss[T], error)
}

// Loss is a training batch's result.
type Loss[T tensor.Float] struct {
	// Value is a scalar: the batch's mean loss, whose gradient is taken.
	Value autograd.Var[T]
	// N is the number of examples Value is the mean of: the weight of the
	// batch in the epoch's mean loss (and, distributed, in the sum over
	// the ranks). 0 counts as 1.
	N int
	// Correct, for a classification, is how many of the N were predicted
	// right: the accuracy column is ΣCorrect/ΣN (0 for tasks without).
	Correct int
}

// Evaluator is a Task evaluated after every training epoch, on a tape that
// records no gradients, in evaluation mode (layers.Trainable): the CSV's
// "test" row. Evaluate returns the sums over the batches i ≡ shard (mod
// shards) of its evaluation — all of them when shards is 1; a distributed
// run adds the ranks' sums. A Task that is no Evaluator has one row per
// epoch, its training row.
type Evaluator[T tensor.Float] interface {
	Evaluate(ctx context.Context, tp *autograd.Tape[T], shard, shards int) (Eval, error)
}

// Eval is the sums of an evaluation.
type Eval struct {
	LossSum float64 // Σ over the batches of mean loss × examples
	Correct int     // examples predicted right (0 for tasks without)
	N       int     // examples evaluated (at least one)
	NFE     int     // forward evaluations of the ODE block, summed over the batches
	Batches int     // batches evaluated: the row's NFE is NFE/Batches
}

// row is the test row of the sums.
func (e Eval) row(seconds float64) (Row, error) {
	if e.N <= 0 {
		return Row{}, fmt.Errorf("the evaluation saw %d examples", e.N)
	}
	nfe := 0.0
	if e.Batches > 0 {
		nfe = float64(e.NFE) / float64(e.Batches)
	}
	return Row{Split: "test", Loss: e.LossSum / float64(e.N), Accuracy: float64(e.Correct) / float64(e.N),
		FwdNFE: nfe, Seconds: seconds}, nil
}

// classifier is the Task of Run: an image classifier trained with
// cross-entropy on a data.Loader, evaluated on another.
type classifier[T tensor.Float] struct {
	m      Model[T]
	tr, te *data.Loader
}

func (c classifier[T]) Params() []*autograd.Param[T]  { return c.m.Params() }
func (c classifier[T]) Buffers() []*autograd.Param[T] { return layers.Buffers[T](c.m) }
func (c classifier[T]) NumBatches() int               { return c.tr.NumBatches() }

func (c classifier[T]) SetTraining(training bool) {
	if tm, ok := c.m.(layers.Trainable); ok {
		tm.SetTraining(training)
	}
}

// NFE returns the model's counts, if it is Counted (0 and 0 if not).
func (c classifier[T]) NFE() (forward, backward int) {
	if cm, ok := c.m.(Counted); ok {
		return cm.NFE()
	}
	return 0, 0
}

func (c classifier[T]) Batches(ctx context.Context, epoch int) iter.Seq2[*data.Batch, error] {
	return c.tr.Epoch(ctx, epoch)
}

// Loss is the batch's softmax cross-entropy.
func (c classifier[T]) Loss(tp *autograd.Tape[T], b *data.Batch) (Loss[T], error) {
	logits, err := c.m.Forward(tp, tp.Const(castImages[T](tp, b.X)))
	if err != nil {
		return Loss[T]{}, err
	}
	return Loss[T]{Value: layers.SoftmaxCrossEntropy(logits, b.Labels), N: b.Len(),
		Correct: countCorrect(tp.Engine(), logits.Value(), b.Labels)}, nil
}

// Evaluate runs the model over the test loader's batches i ≡ shard (mod
// shards).
func (c classifier[T]) Evaluate(ctx context.Context, tp *autograd.Tape[T], shard, shards int) (Eval, error) {
	var e Eval
	i := 0
	for b, err := range c.te.Epoch(ctx, 0) {
		if err != nil {
			return e, err
		}
		if i++; (i-1)%shards != shard {
			continue
		}
		tp.Reset()
		l, err := c.Loss(tp, b)
		if err != nil {
			return e, fmt.Errorf("batch %d: %w", i, err)
		}
		e.LossSum += float64(l.Value.Item()) * float64(l.N)
		e.Correct += l.Correct
		e.N += l.N
		fwd, _ := c.NFE()
		e.NFE += fwd
		e.Batches++
	}
	return e, nil
}

// validate returns an error unless the model, the optimizer and both
// loaders are given.
func (c classifier[T]) validate(opt any) error {
	if isNil(c.m) || isNil(opt) || isNil(c.tr) || isNil(c.te) {
		return fmt.Errorf("train: Run needs a model, an optimizer and both loaders")
	}
	return nil
}

// batchSize bounds the examples of a training batch (a resumed
// checkpoint's sums are checked against it).
func (c classifier[T]) batchSize() int { return c.tr.BatchSize() }

// hasAccuracy: the rows' accuracy is shown.
func (classifier[T]) hasAccuracy() bool { return true }

// Sampled is a Task whose batches are drawn at random: PerEpoch batches
// an epoch, batch i of epoch e drawn by Sample from a generator seeded by
// Seed, e and i alone, so that a resumed run draws the batches it would
// have (the random windows of a time series, say, or a random subset of
// series). Its loss is Objective's; Counter, if set (an odeblock.Block),
// gives the rows' NFE columns. To add an evaluation (Evaluator), embed it
// in a type with an Evaluate method.
//
// In a distributed run every rank draws the same batch; to split it, have
// Sample return the rank's share of what it draws.
type Sampled[T tensor.Float, B any] struct {
	Parameters []*autograd.Param[T]
	PerEpoch   int
	Seed       uint64
	Sample     func(rng *rand.Rand) (B, error)
	Objective  func(tp *autograd.Tape[T], b B) (Loss[T], error)
	Counter    Counted
}

// NFE returns the Counter's counts (0 and 0 without a Counter).
func (s *Sampled[T, B]) NFE() (forward, backward int) {
	if s.Counter == nil {
		return 0, 0
	}
	return s.Counter.NFE()
}

// Params returns s.Parameters.
func (s *Sampled[T, B]) Params() []*autograd.Param[T] { return s.Parameters }

// NumBatches returns s.PerEpoch.
func (s *Sampled[T, B]) NumBatches() int { return s.PerEpoch }

// Batches yields the PerEpoch batches of epoch that Sample draws.
func (s *Sampled[T, B]) Batches(ctx context.Context, epoch int) iter.Seq2[B, error] {
	return func(yield func(B, error) bool) {
		for i := range s.PerEpoch {
			var b B
			err := ctx.Err()
			if err == nil {
				b, err = s.Sample(rand.New(rand.NewPCG(s.Seed, uint64(epoch)<<32|uint64(i))))
				if err != nil {
					err = fmt.Errorf("sampling batch %d: %w", i+1, err)
				}
			}
			if !yield(b, err) || err != nil {
				return
			}
		}
	}
}

// Loss returns s.Objective(tp, b).
func (s *Sampled[T, B]) Loss(tp *autograd.Tape[T], b B) (Loss[T], error) { return s.Objective(tp, b) }

// validate returns an error naming what a Sampled lacks.
func (s *Sampled[T, B]) validate(opt any) error {
	switch {
	case s == nil || isNil(opt):
		return fmt.Errorf("train: Fit needs a task and an optimizer")
	case s.PerEpoch < 1:
		return fmt.Errorf("train: Sampled.PerEpoch is %d, want at least 1", s.PerEpoch)
	case s.Sample == nil || s.Objective == nil:
		return fmt.Errorf("train: Sampled needs its Sample and Objective functions")
	}
	return nil
}
