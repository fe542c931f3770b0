package data

import (
	"context"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/adamnode/adamnode/tensor"
)

// LoaderOptions configures a Loader.
type LoaderOptions struct {
	// BatchSize is the number of images per batch; it must be positive.
	BatchSize int
	// Shuffle visits the images in a new order each epoch, drawn from Seed
	// and the epoch number; without it every epoch is in dataset order.
	Shuffle bool
	// Seed seeds the shuffling: the same Seed and epoch give the same order.
	Seed uint64
	// DropLast leaves out the last batch of an epoch when it would be
	// smaller than BatchSize.
	DropLast bool
	// Subset, when positive, uses only the first Subset images of the
	// dataset (all of them if it has fewer), for quick runs.
	Subset int
	// Mean and Std, when set, standardise each channel c of the [0, 1]
	// pixel values x to (x - Mean[c]) / Std[c]. Both must have one entry per
	// channel and every Std must be positive. Images.ChannelStats computes
	// them.
	Mean, Std []float64
	// Prefetch is how many batches a background goroutine prepares ahead of
	// the consumer. Zero prepares each batch on the caller's goroutine when
	// it is asked for.
	Prefetch int
	// Shard and Shards, with Shards > 1, make this loader one of Shards
	// data-parallel ranks: each epoch's order is cut into global batches
	// of Shards × BatchSize images and this loader yields the Shard-th
	// BatchSize of each (seeded alike on every rank, so the shards are
	// disjoint and cover the epoch). A last global batch that cannot give
	// every shard a full batch is left out, so that every rank takes the
	// same number of steps.
	Shard, Shards int
}

// Batch is one batch of images and their labels.
type Batch struct {
	// X holds the images as float32 in [B, C, H, W] layout, with pixel
	// values p mapped to p/255 in [0, 1], or standardised if the loader
	// has Mean and Std.
	X *tensor.Tensor[float32]
	// Labels holds the class of each image in X.
	Labels []int
	// Indices holds the position in the dataset of each image in X.
	Indices []int
}

// Len returns the number of images in the batch.
func (b *Batch) Len() int { return len(b.Labels) }

// Loader cuts an in-memory image set into float32 batches, epoch by epoch.
// See the package documentation for the iteration contract and the
// ownership of batches. A Loader is not changed by iterating, so several
// goroutines may iterate over it at once.
type Loader struct {
	data *Images
	opts LoaderOptions
	lut  []float32 // lut[c*256+p] is the value of pixel p in channel c
}

// NewLoader returns a loader over d with the given options. It checks d
// (Images.Validate) and the options. The loader keeps d and reads its
// pixels while iterating: do not modify d while a loader uses it.
func NewLoader(d *Images, opts LoaderOptions) (*Loader, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	switch {
	case opts.BatchSize <= 0:
		return nil, fmt.Errorf("data: NewLoader: batch size %d, want > 0", opts.BatchSize)
	case opts.Subset < 0:
		return nil, fmt.Errorf("data: NewLoader: subset %d, want >= 0", opts.Subset)
	case opts.Shards < 0 || opts.Shard < 0 || (opts.Shards > 1 && opts.Shard >= opts.Shards):
		return nil, fmt.Errorf("data: NewLoader: shard %d of %d, want 0 ≤ shard < shards", opts.Shard, opts.Shards)
	case opts.Prefetch < 0:
		return nil, fmt.Errorf("data: NewLoader: prefetch %d, want >= 0", opts.Prefetch)
	case (opts.Mean == nil) != (opts.Std == nil):
		return nil, fmt.Errorf("data: NewLoader: Mean and Std must be given together")
	case opts.Mean != nil && (len(opts.Mean) != d.C || len(opts.Std) != d.C):
		return nil, fmt.Errorf("data: NewLoader: %d means and %d standard deviations for %d channels",
			len(opts.Mean), len(opts.Std), d.C)
	}
	l := &Loader{data: d, opts: opts, lut: make([]float32, d.C*256)}
	if opts.Subset > 0 {
		l.data = d.Head(opts.Subset)
	}
	for c := range d.C {
		m, s := 0.0, 1.0
		if opts.Mean != nil {
			m, s = opts.Mean[c], opts.Std[c]
			if !(s > 0) || math.IsInf(s, 0) || math.IsNaN(m) || math.IsInf(m, 0) {
				return nil, fmt.Errorf("data: NewLoader: channel %d has mean %v and std %v, want finite with std > 0", c, m, s)
			}
		}
		for p := range 256 {
			l.lut[c*256+p] = float32((float64(p)/255 - m) / s)
		}
	}
	return l, nil
}

// WithShard returns a loader over the same images with the same options
// but the shard: the Shard-th of Shards (data-parallel replicas make
// theirs from one loader this way). Its BatchSize is the same.
func (l *Loader) WithShard(shard, shards int) (*Loader, error) {
	o := l.opts
	o.Shard, o.Shards = shard, shards
	if shards < 0 || shard < 0 || (shards > 1 && shard >= shards) {
		return nil, fmt.Errorf("data: WithShard: shard %d of %d, want 0 ≤ shard < shards", shard, shards)
	}
	c := *l
	c.opts = o
	return &c, nil
}

// Len returns the number of images the loader draws from (after Subset).
func (l *Loader) Len() int { return l.data.Len() }

// BatchSize returns the number of images of a full batch.
func (l *Loader) BatchSize() int { return l.opts.BatchSize }

// Shard returns which shard of every global batch the loader yields and of
// how many (0 and 1 for a loader that is not sharded).
func (l *Loader) Shard() (shard, shards int) { return l.opts.Shard, max(l.opts.Shards, 1) }

// NumBatches returns the number of batches in one epoch.
func (l *Loader) NumBatches() int {
	n, b := l.Len(), l.opts.BatchSize
	if l.opts.Shards > 1 {
		return n / (b * l.opts.Shards)
	}
	if l.opts.DropLast {
		return n / b
	}
	return (n + b - 1) / b
}

// Order returns the order in which epoch visits the images: a permutation of
// 0..Len()-1 drawn from the seed and the epoch number when shuffling, the
// identity otherwise. With DropLast the images at the end of the order that
// do not fill a batch are left out of that epoch.
func (l *Loader) Order(epoch int) []int {
	var order []int
	if !l.opts.Shuffle {
		order = make([]int, l.Len())
		for i := range order {
			order[i] = i
		}
	} else {
		order = rand.New(rand.NewPCG(l.opts.Seed, uint64(epoch))).Perm(l.Len())
	}
	if l.opts.Shards <= 1 {
		return order
	}
	// This shard's BatchSize of each full global batch.
	b, g := l.opts.BatchSize, l.opts.BatchSize*l.opts.Shards
	mine := make([]int, 0, l.NumBatches()*b)
	for k := range l.NumBatches() {
		lo := k*g + l.opts.Shard*b
		mine = append(mine, order[lo:lo+b]...)
	}
	return mine
}

// buffer is the storage of one full-size batch.
type buffer struct {
	full Batch
	out  *Batch // what was handed out: &full or a shorter view of it
}

func (l *Loader) newBuffer() *buffer {
	d, bs := l.data, l.opts.BatchSize
	return &buffer{full: Batch{
		X:       tensor.New[float32](bs, d.C, d.H, d.W),
		Labels:  make([]int, bs),
		Indices: make([]int, bs),
	}}
}

// fill writes batch k of the epoch with the given order into buf and sets
// buf.out.
func (l *Loader) fill(buf *buffer, order []int, k int) {
	d, bs := l.data, l.opts.BatchSize
	idx := order[k*bs : min((k+1)*bs, len(order))]
	size, plane := d.Size(), d.H*d.W
	x := buf.full.X.Data()
	for i, j := range idx {
		src := d.Pixels[j*size : (j+1)*size]
		dst := x[i*size : (i+1)*size]
		for c := range d.C {
			lut := (*[256]float32)(l.lut[c*256:])
			s, t := src[c*plane:(c+1)*plane], dst[c*plane:(c+1)*plane]
			for p, v := range s {
				t[p] = lut[v]
			}
		}
		buf.full.Labels[i] = d.Labels[j]
		buf.full.Indices[i] = j
	}
	n := len(idx)
	if n == bs {
		buf.out = &buf.full
		return
	}
	buf.out = &Batch{X: buf.full.X.Slice(0, n), Labels: buf.full.Labels[:n:n], Indices: buf.full.Indices[:n:n]}
}

// Epoch returns an iterator over the batches of the given epoch (numbered by
// the caller, usually from 0; it picks the shuffled order). Each step yields
// a batch and a nil error, or a nil batch and ctx's error when ctx is done,
// after which the iteration ends.
//
// The yielded *Batch, its tensor and its slices belong to the iterator and
// are valid only until the loop body returns: the iterator reuses their
// storage for a later batch. Clone X and copy the slices to keep them.
//
// With Prefetch > 0 a goroutine prepares batches ahead. It is started when
// the iteration starts and has stopped when the iteration returns, whether
// the loop ran to the end, broke out early or ctx was cancelled.
func (l *Loader) Epoch(ctx context.Context, epoch int) iter.Seq2[*Batch, error] {
	return func(yield func(*Batch, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(nil, err)
			return
		}
		order := l.Order(epoch)
		nb := l.NumBatches()
		if l.opts.Prefetch == 0 {
			buf := l.newBuffer()
			for k := range nb {
				if err := ctx.Err(); err != nil {
					yield(nil, err)
					return
				}
				l.fill(buf, order, k)
				if !yield(buf.out, nil) {
					return
				}
			}
			return
		}
		l.prefetch(ctx, yield, order, nb)
	}
}

// prefetch runs one epoch with a producer goroutine filling up to
// Prefetch batches ahead.
func (l *Loader) prefetch(ctx context.Context, yield func(*Batch, error) bool, order []int, nb int) {
	ahead := min(l.opts.Prefetch, nb)
	// One buffer is with the consumer; the other ahead are being filled or
	// wait in ready, so the producer runs at most ahead batches ahead.
	free := make(chan *buffer, ahead+1)
	for range ahead + 1 {
		free <- l.newBuffer()
	}
	ready := make(chan *buffer, ahead)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(ready)
		for k := range nb {
			var buf *buffer
			select {
			case buf = <-free:
			case <-stop:
				return
			case <-ctx.Done():
				return
			}
			l.fill(buf, order, k)
			select {
			case ready <- buf:
			case <-stop:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	defer func() {
		close(stop)
		wg.Wait()
	}()
	for got := 0; got < nb; got++ {
		var buf *buffer
		select {
		case buf = <-ready:
		case <-ctx.Done():
		}
		// buf is nil only if the producer stopped because ctx is done.
		if buf == nil || ctx.Err() != nil {
			yield(nil, ctx.Err())
			return
		}
		if !yield(buf.out, nil) {
			return
		}
		free <- buf // never blocks: free has room for every buffer
	}
}
