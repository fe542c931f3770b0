package data

import (
	"context"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/adamnode/adamnode/tensor"
)

// Series is one irregularly sampled multichannel time series: Len()
// observations at Times, each of C channels, some of which may be missing.
//
// Times must be finite and strictly increasing. Values holds the
// observations row by row, [Len(), C] in row-major order, so observation i
// is Values[i*C : (i+1)*C] (At). Mask, when not nil, has one entry per value
// and tells which channels of each observation were observed; a nil Mask
// means every channel of every observation was. The value of a missing
// channel is ignored (it may be NaN, as in datasets that write missing
// values that way); every observed value must be finite. Validate checks
// all of this.
//
// A series with no observations is valid: it contributes nothing to a
// batch but its row of zeros.
type Series struct {
	Times  []float64
	Values []float64
	Mask   []bool
	C      int // channels of every observation; at least 1
}

// Len returns the number of observations.
func (s Series) Len() int { return len(s.Times) }

// At returns the C values of observation i (a view, not a copy).
func (s Series) At(i int) []float64 { return s.Values[i*s.C : (i+1)*s.C : (i+1)*s.C] }

// Observed reports whether channel c of observation i was observed.
func (s Series) Observed(i, c int) bool { return s.Mask == nil || s.Mask[i*s.C+c] }

// Validate checks that the series is consistent: C ≥ 1, finite and strictly
// increasing times, Len()*C values, a nil Mask or one of Len()*C entries,
// and finite observed values. The error is a *SeriesError (with Series -1)
// that names the position and the values at fault.
func (s Series) Validate() error {
	if msg := s.check(); msg != "" {
		return &SeriesError{Op: "Validate", Series: -1, Msg: msg}
	}
	return nil
}

// check returns what is wrong with s, or "".
func (s Series) check() string {
	n := s.Len()
	switch {
	case s.C < 1:
		return fmt.Sprintf("%d channels, want at least 1", s.C)
	case len(s.Values) != n*s.C:
		return fmt.Sprintf("%d values for %d times of %d channels (want %d)", len(s.Values), n, s.C, n*s.C)
	case s.Mask != nil && len(s.Mask) != n*s.C:
		return fmt.Sprintf("mask of %d entries for %d times of %d channels (want %d, or a nil mask)", len(s.Mask), n, s.C, n*s.C)
	}
	for i, t := range s.Times {
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return fmt.Sprintf("time %v at position %d is not finite", t, i)
		}
		if i > 0 && !(t > s.Times[i-1]) {
			what := "before"
			if t == s.Times[i-1] {
				what = "a duplicate of"
			}
			return fmt.Sprintf("time %v at position %d is %s time %v at position %d; times must be strictly increasing",
				t, i, what, s.Times[i-1], i-1)
		}
	}
	for k, v := range s.Values {
		if s.Mask != nil && !s.Mask[k] {
			continue
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Sprintf("observed value %v at position %d (time %v), channel %d is not finite", v, k/s.C, s.Times[k/s.C], k%s.C)
		}
	}
	return ""
}

// SplitAt splits the series into its first n observations and the rest,
// both views of the receiver's storage; n is clamped to [0, Len()]. For an
// extrapolation task the head is observed and the tail predicted.
func (s Series) SplitAt(n int) (head, tail Series) {
	n = max(0, min(n, s.Len()))
	k := n * s.C
	head = Series{Times: s.Times[:n:n], Values: s.Values[:k:k], C: s.C}
	tail = Series{Times: s.Times[n:], Values: s.Values[k:], C: s.C}
	if s.Mask != nil {
		head.Mask, tail.Mask = s.Mask[:k:k], s.Mask[k:]
	}
	return head, tail
}

// SplitTime splits the series into the observations before time t and
// those at or after it (views, as SplitAt).
func (s Series) SplitTime(t float64) (before, after Series) {
	n, _ := slices.BinarySearch(s.Times, t)
	return s.SplitAt(n)
}

// SplitTimes splits every series at time t (Series.SplitTime): the
// observed parts and the parts to predict of an extrapolation task whose
// series share a time axis.
func SplitTimes(series []Series, t float64) (before, after []Series) {
	before, after = make([]Series, len(series)), make([]Series, len(series))
	for i, s := range series {
		before[i], after[i] = s.SplitTime(t)
	}
	return before, after
}

// SeriesError reports an invalid Series: which operation found it, the
// series' index in the slice given to that operation (-1 for a lone
// series), and what is wrong, with the positions and values at fault.
type SeriesError struct {
	Op     string // the function that found the problem, e.g. "NewSeriesBatch"
	Series int    // index of the series at fault, or -1
	Msg    string // what is wrong
}

// Error formats the error as "data: OP: series N: MSG".
func (e *SeriesError) Error() string {
	var b strings.Builder
	b.WriteString("data: ")
	b.WriteString(e.Op)
	b.WriteString(": ")
	if e.Series >= 0 {
		fmt.Fprintf(&b, "series %d: ", e.Series)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// checkSeries validates every series and their common channel count.
func checkSeries(op string, series []Series) error {
	if len(series) == 0 {
		return &SeriesError{Op: op, Series: -1, Msg: "no series"}
	}
	for i, s := range series {
		if msg := s.check(); msg != "" {
			return &SeriesError{Op: op, Series: i, Msg: msg}
		}
		if s.C != series[0].C {
			return &SeriesError{Op: op, Series: i, Msg: fmt.Sprintf("%d channels, but series 0 has %d", s.C, series[0].C)}
		}
	}
	return nil
}

// SeriesBatch is a batch of B irregularly sampled series padded to the
// union of their times, as in the latent ODE of Rubanova et al. (2019) and
// torchdiffeq's example: one ODE solve over Times serves every series, and
// the loss counts only the entries where Mask is 1.
type SeriesBatch[T tensor.Float] struct {
	// Times is the sorted union of the series' observation times, each
	// time once. Times are merged by exact float64 equality (-0 and 0 are
	// one time), with no tolerance: 0.3 and 0.1+0.2 computed in float64
	// are two times. Round times to a grid first to merge them.
	Times []float64
	// Values is [B, len(Times), C]: Values[b, j, c] is channel c of series
	// b at Times[j] where observed, and 0 elsewhere.
	Values *tensor.Tensor[T]
	// Mask is [B, len(Times), C], 1 where Values holds an observation and 0
	// where series b has no observation at Times[j] or its channel c is
	// missing there.
	Mask *tensor.Tensor[T]
	// Pos maps each series' observations into the union: observation i of
	// series b is at Times[Pos[b][i]]; len(Pos[b]) is its length.
	Pos [][]int
	// Indices holds the position of each series in the slice it came
	// from: the loader's dataset, or 0..B-1 for NewSeriesBatch.
	Indices []int
}

// Len returns the number of series in the batch.
func (b *SeriesBatch[T]) Len() int { return len(b.Indices) }

// NewSeriesBatch pads the series to the union of their times (see
// SeriesBatch). The series must be valid (Series.Validate) and have the
// same number of channels; there must be at least one. Errors are
// *SeriesError values naming the series at fault. The batch has storage of
// its own: it does not share memory with the series.
func NewSeriesBatch[T tensor.Float](series []Series) (*SeriesBatch[T], error) {
	if err := checkSeries("NewSeriesBatch", series); err != nil {
		return nil, err
	}
	idx := make([]int, len(series))
	for i := range idx {
		idx[i] = i
	}
	return collate[T](series, idx), nil
}

// collate builds the batch of series[idx[0]], series[idx[1]], ...; the
// series are valid and share C.
func collate[T tensor.Float](series []Series, idx []int) *SeriesBatch[T] {
	n := 0
	for _, j := range idx {
		n += series[j].Len()
	}
	times := make([]float64, 0, n)
	for _, j := range idx {
		times = append(times, series[j].Times...)
	}
	slices.Sort(times)
	times = slices.Compact(times) // exact equality; -0 and 0 are one time
	times = slices.Clip(times)

	c, nt := series[idx[0]].C, len(times)
	b := &SeriesBatch[T]{
		Times:   times,
		Values:  tensor.New[T](len(idx), nt, c),
		Mask:    tensor.New[T](len(idx), nt, c),
		Pos:     make([][]int, len(idx)),
		Indices: slices.Clone(idx),
	}
	vals, mask := b.Values.Data(), b.Mask.Data()
	for bi, j := range idx {
		s := series[j]
		pos := make([]int, s.Len())
		// Both lists are sorted: walk the union alongside the series.
		k := 0
		for i, t := range s.Times {
			for times[k] != t {
				k++
			}
			pos[i] = k
			row := (bi*nt + k) * c
			for ch := range c {
				if s.Observed(i, ch) {
					vals[row+ch] = T(s.Values[i*c+ch])
					mask[row+ch] = 1
				}
			}
		}
		b.Pos[bi] = pos
	}
	return b
}

// SeriesLoaderOptions configures a SeriesLoader.
type SeriesLoaderOptions struct {
	// BatchSize is the number of series per batch; it must be positive.
	BatchSize int
	// Shuffle visits the series in a new order each epoch, drawn from Seed
	// and the epoch number as Loader does; without it every epoch is in
	// slice order.
	Shuffle bool
	// Seed seeds the shuffling: the same Seed and epoch give the same order.
	Seed uint64
	// DropLast leaves out the last batch of an epoch when it would be
	// smaller than BatchSize.
	DropLast bool
}

// SeriesLoader cuts a slice of irregularly sampled series into padded
// batches (SeriesBatch), epoch by epoch, in the order Loader would use for
// as many images. Unlike Loader's batches, whose length varies with the
// union of times, each yielded batch is newly allocated and belongs to the
// caller. A SeriesLoader is not changed by iterating, so several goroutines
// may iterate over it at once; the series must not change meanwhile.
type SeriesLoader[T tensor.Float] struct {
	series []Series
	opts   SeriesLoaderOptions
}

// NewSeriesLoader returns a loader over series, checking every series as
// NewSeriesBatch does (errors are *SeriesError values naming the series at
// fault) and the options. It keeps the slice and reads the series while
// iterating.
func NewSeriesLoader[T tensor.Float](series []Series, opts SeriesLoaderOptions) (*SeriesLoader[T], error) {
	if opts.BatchSize <= 0 {
		return nil, fmt.Errorf("data: NewSeriesLoader: batch size %d, want > 0", opts.BatchSize)
	}
	if err := checkSeries("NewSeriesLoader", series); err != nil {
		return nil, err
	}
	return &SeriesLoader[T]{series: series, opts: opts}, nil
}

// Len returns the number of series.
func (l *SeriesLoader[T]) Len() int { return len(l.series) }

// BatchSize returns the number of series of a full batch.
func (l *SeriesLoader[T]) BatchSize() int { return l.opts.BatchSize }

// NumBatches returns the number of batches in one epoch.
func (l *SeriesLoader[T]) NumBatches() int {
	n, b := l.Len(), l.opts.BatchSize
	if l.opts.DropLast {
		return n / b
	}
	return (n + b - 1) / b
}

// Order returns the order in which epoch visits the series: a permutation
// of 0..Len()-1 drawn from the seed and the epoch number when shuffling
// (the one Loader draws for as many images), the identity otherwise.
func (l *SeriesLoader[T]) Order(epoch int) []int {
	if l.opts.Shuffle {
		return rand.New(rand.NewPCG(l.opts.Seed, uint64(epoch))).Perm(l.Len())
	}
	order := make([]int, l.Len())
	for i := range order {
		order[i] = i
	}
	return order
}

// Epoch returns an iterator over the batches of the given epoch. Each step
// yields a batch and a nil error, or a nil batch and ctx's error when ctx
// is done, after which the iteration ends. The batches are the caller's to
// keep.
func (l *SeriesLoader[T]) Epoch(ctx context.Context, epoch int) iter.Seq2[*SeriesBatch[T], error] {
	return func(yield func(*SeriesBatch[T], error) bool) {
		order, bs := l.Order(epoch), l.opts.BatchSize
		for k := range l.NumBatches() {
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			idx := order[k*bs : min((k+1)*bs, len(order))]
			if !yield(collate[T](l.series, idx), nil) {
				return
			}
		}
	}
}

// SineOptions configures SineWaves.
type SineOptions struct {
	// Points is the number of observations of each series; it must be
	// positive.
	Points int
	// TMax bounds the times: they lie in [0, TMax]. It must be finite and
	// positive.
	TMax float64
	// Grid, when positive, draws each series' times as Points distinct
	// points of the regular grid of Grid points from 0 to TMax (as
	// Rubanova et al. subsample a shared grid, so that a batch's union of
	// times stays short); Grid must then be at least Points and 2. When
	// zero, the times are drawn uniformly from [0, TMax).
	Grid int
	// MinFreq and MaxFreq bound the frequencies, in cycles per unit of
	// time, drawn uniformly from [MinFreq, MaxFreq]; 0 ≤ MinFreq ≤ MaxFreq.
	MinFreq, MaxFreq float64
	// Amplitude scales every wave; zero means 1.
	Amplitude float64
	// Noise is the standard deviation of the Gaussian noise added to each
	// observation; zero gives exact values.
	Noise float64
}

// Sine is the wave behind one series of SineWaves.
type Sine struct {
	Amplitude, Freq, Phase float64
}

// At returns the noiseless value of the wave at time t:
// Amplitude·sin(2π·Freq·t + Phase).
func (s Sine) At(t float64) float64 {
	return s.Amplitude * math.Sin(2*math.Pi*s.Freq*t+s.Phase)
}

// SineWaves returns n irregularly sampled noisy sine waves of one channel,
// the toy data of the latent ODE example: each series has a frequency drawn
// from [MinFreq, MaxFreq] and a phase from [0, 2π), Points sorted times
// (see SineOptions.Grid), and values Sine.At(t) plus Gaussian noise of
// standard deviation Noise. It returns the waves too. Everything is drawn
// from rng, so a seeded rng gives the same data every time.
func SineWaves(rng *rand.Rand, n int, opts SineOptions) ([]Series, []Sine, error) {
	amp := opts.Amplitude
	if amp == 0 {
		amp = 1
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case n < 0:
		return nil, nil, fmt.Errorf("data: SineWaves: %d series, want >= 0", n)
	case opts.Points <= 0:
		return nil, nil, fmt.Errorf("data: SineWaves: %d points per series, want > 0", opts.Points)
	case !(opts.TMax > 0) || !finite(opts.TMax):
		return nil, nil, fmt.Errorf("data: SineWaves: TMax %v, want finite and positive", opts.TMax)
	case opts.Grid < 0 || (opts.Grid > 0 && opts.Grid < max(opts.Points, 2)):
		return nil, nil, fmt.Errorf("data: SineWaves: grid of %d points for %d points per series, want 0 or at least max(2, points)", opts.Grid, opts.Points)
	case !(opts.MinFreq >= 0) || !(opts.MaxFreq >= opts.MinFreq) || !finite(opts.MaxFreq):
		return nil, nil, fmt.Errorf("data: SineWaves: frequencies in [%v, %v], want finite with 0 ≤ min ≤ max", opts.MinFreq, opts.MaxFreq)
	case !finite(amp):
		return nil, nil, fmt.Errorf("data: SineWaves: amplitude %v is not finite", opts.Amplitude)
	case !(opts.Noise >= 0) || !finite(opts.Noise):
		return nil, nil, fmt.Errorf("data: SineWaves: noise %v, want finite and >= 0", opts.Noise)
	}
	series, waves := make([]Series, n), make([]Sine, n)
	for i := range n {
		w := Sine{
			Amplitude: amp,
			Freq:      opts.MinFreq + (opts.MaxFreq-opts.MinFreq)*rng.Float64(),
			Phase:     2 * math.Pi * rng.Float64(),
		}
		times := sineTimes(rng, opts)
		vals := make([]float64, len(times))
		for k, t := range times {
			vals[k] = w.At(t) + opts.Noise*rng.NormFloat64()
		}
		series[i], waves[i] = Series{Times: times, Values: vals, C: 1}, w
	}
	return series, waves, nil
}

// sineTimes draws the sorted, distinct times of one series.
func sineTimes(rng *rand.Rand, opts SineOptions) []float64 {
	times := make([]float64, 0, opts.Points)
	if opts.Grid > 0 {
		step := opts.TMax / float64(opts.Grid-1)
		picks := rng.Perm(opts.Grid)[:opts.Points]
		slices.Sort(picks)
		for _, k := range picks {
			t := float64(k) * step
			if k == opts.Grid-1 {
				t = opts.TMax
			}
			times = append(times, t)
		}
		return times
	}
	for len(times) < opts.Points {
		for len(times) < opts.Points {
			times = append(times, opts.TMax*rng.Float64())
		}
		slices.Sort(times)
		times = slices.Compact(times) // redraw the (unlikely) duplicates
	}
	return times
}

// Choose returns n elements of xs drawn independently and uniformly, with
// replacement, in a new slice: numpy's Generator.choice(xs, n), a batch of
// series sampled for a training step. It draws rng.IntN(len(xs)) once per
// element, in order. It panics if n < 0, or if xs is empty and n > 0.
func Choose[E any](rng *rand.Rand, xs []E, n int) []E {
	if n < 0 || n > 0 && len(xs) == 0 {
		panic(fmt.Sprintf("data: Choose: %d elements of %d", n, len(xs)))
	}
	out := make([]E, n)
	for i := range out {
		out[i] = xs[rng.IntN(len(xs))]
	}
	return out
}
