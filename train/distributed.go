package train

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/tensor"
)

// Distributed is the communicator of data-parallel training
// (distributed.Comm is one): collective calls over float64 buffers, in
// which every rank takes part.
type Distributed interface {
	Rank() int
	Size() int
	AllReduce(buf []float64) error
	Broadcast(buf []float64, root int) error
	Barrier() error
}

// Data-parallel training, with Config.Distributed: every rank runs Run
// with the same configuration and model, and a training loader that is
// its shard of every batch. The parameters start as rank 0's (broadcast);
// each step's gradients are averaged across the ranks with one all-reduce
// of one buffer (all the parameters' gradients, rank 0's buffers —
// BatchNorm's running statistics, as PyTorch's DDP broadcasts them — then
// the step's numbers and flags), so every rank takes the same optimizer
// step; the rows' numbers are
// summed over the ranks; only rank 0 writes the CSV and the checkpoint
// (resuming, it sends the checkpoint to the others: no shared file
// system is needed). A rank whose step fails, or whose
// context is done, says so in the same all-reduce: every rank then stops
// at that step — with the error, or interrupted — and none is left
// waiting. The test loader is evaluated whole on every rank.

// errRemote is wrapped by the error of a rank that stops because another
// rank failed (remote says where).
var errRemote = errors.New("another rank failed")

// remote returns the error of a rank that stops because another failed
// at the point where.
func remote(where string) error {
	return fmt.Errorf("train: %w %s (its error is in its output)", errRemote, where)
}

// writer reports whether this rank writes the run's files.
func (r *run[T, B]) writer() bool {
	return r.cfg.Distributed == nil || r.cfg.Distributed.Rank() == 0
}

// broadcastParams replaces every rank's parameters and buffers with rank
// 0's.
func (r *run[T, B]) broadcastParams() error {
	d := r.cfg.Distributed
	if d == nil || d.Size() <= 1 {
		return nil
	}
	ps := r.state()
	buf := make([]float64, 0, numel(ps))
	for _, p := range ps {
		for _, v := range p.Value.Data() {
			buf = append(buf, float64(v))
		}
	}
	if err := d.Broadcast(buf, 0); err != nil {
		return err
	}
	unpack(ps, buf, func(p *autograd.Param[T]) *tensor.Tensor[T] { return p.Value }, 1)
	return nil
}

// unpack writes buf, scaled, into the tensors at(p) of ps in order.
func unpack[T tensor.Float](ps []*autograd.Param[T], buf []float64, at func(*autograd.Param[T]) *tensor.Tensor[T], scale float64) {
	off := 0
	for _, p := range ps {
		d := at(p).Data()
		for i := range d {
			d[i] = T(buf[off+i] * scale)
		}
		off += len(d)
	}
}

// distributedStep is step across the ranks (see above).
func (r *run[T, B]) distributedStep(b B) (stepStats, bool, error) {
	d := r.cfg.Distributed
	ps := r.task.Params()
	st, err := gradients(r.tp, r.task, r.opt, b)
	bs := layers.Buffers[T](r.task)
	n, nb := numel(ps), numel(bs)
	buf := make([]float64, n+nb, n+nb+7)
	if err == nil {
		off := 0
		for _, p := range ps {
			if p.Grad != nil {
				for i, v := range p.Grad.Data() {
					buf[off+i] = float64(v)
				}
			}
			off += p.Value.Len()
		}
	}
	if d.Rank() == 0 {
		// Rank 0's buffers, the others' zeros: the sum is rank 0's.
		off := n
		for _, b := range bs {
			for i, v := range b.Value.Data() {
				buf[off+i] = float64(v)
			}
			off += b.Value.Len()
		}
	}
	buf = append(buf, flag(err != nil), flag(r.ctx.Err() != nil),
		st.loss*float64(st.seen), float64(st.correct), float64(st.seen), float64(st.fwd), float64(st.bwd))
	t0 := time.Now()
	if rerr := d.AllReduce(buf); rerr != nil {
		return st, false, rerr
	}
	r.res.AllReduces++
	r.res.AllReduceSeconds += time.Since(t0).Seconds()
	r.res.AllReduceLen = len(buf)
	tail := buf[n+nb:]
	switch {
	case err != nil:
		return st, false, fmt.Errorf("rank %d: %w", d.Rank(), err)
	case tail[0] > 0:
		return st, false, remote("in its step")
	}
	size := float64(d.Size())
	for _, p := range ps {
		if p.Grad == nil {
			p.ZeroGrad()
		}
	}
	unpack(ps, buf[:n], func(p *autograd.Param[T]) *tensor.Tensor[T] { return p.Grad }, 1/size)
	unpack(bs, buf[n:n+nb], func(p *autograd.Param[T]) *tensor.Tensor[T] { return p.Value }, 1)
	// Every rank has the same averaged gradients: all step, skip or fail
	// alike.
	err = update(r.tp.Engine(), ps, r.opt, r.cfg.Clip)
	var skipped error
	if r.skip(err) {
		skipped, err = err, nil
	}
	if err != nil {
		return st, false, err
	}
	sum := stepStats{loss: tail[2], correct: int(tail[3]), seen: int(tail[4]),
		fwd: int(math.Round(tail[5] / size)), bwd: int(math.Round(tail[6] / size)), skipped: skipped}
	return sum, tail[1] > 0, nil
}

// distributed reports whether this run is one of several ranks.
func (r *run[T, B]) distributed() bool { return r.cfg.distributed() }

// distributed reports whether cfg trains on several ranks.
func (cfg Config) distributed() bool {
	return cfg.Distributed != nil && cfg.Distributed.Size() > 1
}

// checkShards returns an error unless the training loader of a rank is
// its rank's shard of as many as there are ranks.
func (c classifier[T]) checkShards(cfg Config) error {
	if !cfg.distributed() {
		return nil
	}
	d := cfg.Distributed
	if shard, shards := c.tr.Shard(); shard != d.Rank() || shards != d.Size() {
		return fmt.Errorf("train: rank %d of %d has a training loader of shard %d of %d: make it with data.LoaderOptions{Shard: %d, Shards: %d}",
			d.Rank(), d.Size(), shard, shards, d.Rank(), d.Size())
	}
	return nil
}

// flag is 1 for true, 0 for false: a flag summed by an all-reduce.
func flag(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// agreeStart checks, before the first step, that every rank begins
// alike: no rank failed to begin (err is this rank's failure), and all
// resume at rank 0's epoch and batch with as many batches per epoch and
// parameters.
func (r *run[T, B]) agreeStart(start int, p progressSums, err error) error {
	d := r.cfg.Distributed
	var mine []float64
	if err == nil {
		mine = []float64{float64(start), float64(p.Batches), float64(r.nb), float64(numel(r.task.Params()))}
	} else {
		mine = make([]float64, 4) // not compared: this rank fails
	}
	root := slices.Clone(mine)
	if berr := d.Broadcast(root, 0); berr != nil {
		return berr
	}
	mismatch := err == nil && !slices.Equal(mine, root)
	flags := []float64{flag(err != nil), flag(mismatch)}
	if rerr := d.AllReduce(flags); rerr != nil {
		return rerr
	}
	switch {
	case err != nil:
		return fmt.Errorf("rank %d: %w", d.Rank(), err)
	case flags[0] > 0:
		return remote("to begin")
	case mismatch:
		return fmt.Errorf("train %s: rank %d starts at epoch %g, batch %g, with %g batches per epoch and %g parameters; rank 0 at epoch %g, batch %g, with %g and %g (each rank's checkpoint, loader shard and model must agree)",
			r.cfg.Name, d.Rank(), mine[0], mine[1], mine[2], mine[3], root[0], root[1], root[2], root[3])
	case flags[1] > 0:
		return errors.New("train: the ranks do not start alike (the rank that differs says how in its output)")
	}
	return nil
}

// reduceEvaluation sums the ranks' evaluations of their test batches.
func (r *run[T, B]) reduceEvaluation(e Eval, err error) (Eval, error) {
	d := r.cfg.Distributed
	buf := []float64{flag(err != nil), e.LossSum, float64(e.Correct), float64(e.N), float64(e.NFE), float64(e.Batches)}
	if rerr := d.AllReduce(buf); rerr != nil {
		return e, rerr
	}
	switch {
	case err != nil:
		return e, fmt.Errorf("rank %d: %w", d.Rank(), err)
	case buf[0] > 0:
		return e, remote("in its evaluation")
	}
	return Eval{LossSum: buf[1], Correct: int(buf[2]), N: int(buf[3]), NFE: int(buf[4]), Batches: int(buf[5])}, nil
}

// endEpoch ends epoch epoch on every rank alike, after rank 0 wrote the
// files (err is this rank's failure so far): an error on any rank stops
// all, as do OnEpoch's ErrStop and a cancelled context on any rank.
func (r *run[T, B]) endEpoch(epoch int, trainRow, ev Row, err error) (bool, error) {
	d := r.cfg.Distributed
	stop := false
	if err == nil {
		stop, err = r.onEpoch(trainRow, ev)
	}
	flags := []float64{flag(err != nil), flag(stop), flag(r.ctx.Err() != nil)}
	if rerr := d.AllReduce(flags); rerr != nil {
		return false, rerr
	}
	switch {
	case err != nil:
		return false, err
	case flags[0] > 0:
		return false, remote("at the end of the epoch")
	case flags[1] > 0:
		return true, nil
	case flags[2] > 0 && epoch+1 < r.cfg.Epochs:
		return false, &InterruptedError{Name: r.cfg.Name, Epoch: epoch + 1, Batch: 0, Batches: r.nb, Checkpoint: r.res.CheckpointPath}
	}
	return false, nil
}

// shareCheckpoint sends rank 0's checkpoint file to the other ranks, which
// keep it in a temporary file they resume from (r.resumeFrom), so that a
// resumed run needs no file system the ranks share. err is this rank's
// failure so far: a failing rank still takes part, and one that cannot
// read or write the file reports it as its error. The cleanup removes the
// temporary file.
func (r *run[T, B]) shareCheckpoint(err error) (cleanup func(), _ error) {
	cleanup = func() {}
	d := r.cfg.Distributed
	// The file's length (−1: none, −2: rank 0 cannot read it), then its
	// bytes, six to a float64 (exact below 2⁵³).
	var data []byte
	head := []float64{-1}
	if d.Rank() == 0 && err == nil {
		b, rerr := os.ReadFile(r.res.CheckpointPath)
		switch {
		case rerr == nil:
			data, head[0] = b, float64(len(b))
		case !errors.Is(rerr, os.ErrNotExist):
			head[0], err = -2, rerr
		}
	}
	if berr := d.Broadcast(head, 0); berr != nil {
		return cleanup, berr
	}
	n := int(head[0])
	if n == -2 && err == nil {
		err = errors.New("train: rank 0 cannot read its checkpoint (its error is in its output)")
	}
	if n < 0 {
		r.noCheckpoint = d.Rank() != 0 // not a stale file of this rank's own
		return cleanup, err
	}
	buf := make([]float64, (n+5)/6)
	if d.Rank() == 0 {
		buf = packBytes(data)
	}
	if berr := d.Broadcast(buf, 0); berr != nil {
		return cleanup, berr
	}
	if d.Rank() == 0 || err != nil {
		return cleanup, err
	}
	data = unpackBytes(buf, n)
	f, ferr := os.CreateTemp("", "adamnode-resume-*.safetensors")
	if ferr != nil {
		return cleanup, fmt.Errorf("train: rank %d: keeping rank 0's checkpoint: %w", d.Rank(), ferr)
	}
	cleanup = func() { os.Remove(f.Name()) }
	if _, werr := f.Write(data); werr != nil {
		f.Close()
		return cleanup, fmt.Errorf("train: rank %d: keeping rank 0's checkpoint: %w", d.Rank(), werr)
	}
	if cerr := f.Close(); cerr != nil {
		return cleanup, fmt.Errorf("train: rank %d: keeping rank 0's checkpoint: %w", d.Rank(), cerr)
	}
	r.resumeFrom = f.Name()
	return cleanup, nil
}
