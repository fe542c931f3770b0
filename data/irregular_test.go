package data

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// want3 is a [B][T][C] expectation.
type want3 [][][]float64

func check3(t *testing.T, name string, got []float32, shape []int, want want3) {
	t.Helper()
	if len(shape) != 3 || shape[0] != len(want) {
		t.Fatalf("%s: shape %v, want [%d ...]", name, shape, len(want))
	}
	for b := range want {
		if len(want[b]) != shape[1] {
			t.Fatalf("%s: shape %v, want %d times", name, shape, len(want[b]))
		}
		for j := range want[b] {
			if len(want[b][j]) != shape[2] {
				t.Fatalf("%s: shape %v, want %d channels", name, shape, len(want[b][j]))
			}
			for c, w := range want[b][j] {
				if g := got[(b*shape[1]+j)*shape[2]+c]; float64(g) != w {
					t.Errorf("%s[%d, %d, %d] = %v, want %v", name, b, j, c, g, w)
				}
			}
		}
	}
}

// pointOne is a variable so that pointOne+0.2 is float64 arithmetic
// (0.30000000000000004), not an exact constant 0.3.
var pointOne = 0.1

func TestNewSeriesBatch(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name   string
		series []Series
		times  []float64
		values want3
		mask   want3
		pos    [][]int
	}{
		{
			name:   "one series",
			series: []Series{{Times: []float64{0, 1.5}, Values: []float64{1, 2}, C: 1}},
			times:  []float64{0, 1.5},
			values: want3{{{1}, {2}}},
			mask:   want3{{{1}, {1}}},
			pos:    [][]int{{0, 1}},
		},
		{
			name: "interleaved and shared times",
			series: []Series{
				{Times: []float64{0, 2}, Values: []float64{1, 2}, C: 1},
				{Times: []float64{1, 2, 3}, Values: []float64{3, 4, 5}, C: 1},
			},
			times:  []float64{0, 1, 2, 3},
			values: want3{{{1}, {0}, {2}, {0}}, {{0}, {3}, {4}, {5}}},
			mask:   want3{{{1}, {0}, {1}, {0}}, {{0}, {1}, {1}, {1}}},
			pos:    [][]int{{0, 2}, {1, 2, 3}},
		},
		{
			name: "two channels with a mask, missing values NaN",
			series: []Series{
				{Times: []float64{-1, 0.5}, Values: []float64{1, nan, nan, nan}, Mask: []bool{true, false, false, false}, C: 2},
				{Times: []float64{0.5}, Values: []float64{7, 8}, C: 2},
			},
			times:  []float64{-1, 0.5},
			values: want3{{{1, 0}, {0, 0}}, {{0, 0}, {7, 8}}},
			mask:   want3{{{1, 0}, {0, 0}}, {{0, 0}, {1, 1}}},
			pos:    [][]int{{0, 1}, {1}},
		},
		{
			name: "exact equality: 0.1+0.2 is not 0.3",
			series: []Series{
				{Times: []float64{0.3}, Values: []float64{1}, C: 1},
				{Times: []float64{pointOne + 0.2}, Values: []float64{2}, C: 1},
			},
			times:  []float64{0.3, pointOne + 0.2},
			values: want3{{{1}, {0}}, {{0}, {2}}},
			mask:   want3{{{1}, {0}}, {{0}, {1}}},
			pos:    [][]int{{0}, {1}},
		},
		{
			name: "-0 and 0 are one time",
			series: []Series{
				{Times: []float64{math.Copysign(0, -1), 1}, Values: []float64{1, 2}, C: 1},
				{Times: []float64{0}, Values: []float64{3}, C: 1},
			},
			times:  []float64{0, 1},
			values: want3{{{1}, {2}}, {{3}, {0}}},
			mask:   want3{{{1}, {1}}, {{1}, {0}}},
			pos:    [][]int{{0, 1}, {0}},
		},
		{
			name: "an empty series",
			series: []Series{
				{C: 1},
				{Times: []float64{4}, Values: []float64{3}, C: 1},
			},
			times:  []float64{4},
			values: want3{{{0}}, {{3}}},
			mask:   want3{{{0}}, {{1}}},
			pos:    [][]int{{}, {0}},
		},
		{
			name:   "all empty",
			series: []Series{{C: 2}, {C: 2}},
			times:  []float64{},
			values: want3{{}, {}},
			mask:   want3{{}, {}},
			pos:    [][]int{{}, {}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := NewSeriesBatch[float32](tc.series)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(b.Times, tc.times) {
				t.Errorf("Times = %v, want %v", b.Times, tc.times)
			}
			check3(t, "Values", b.Values.ReadData(), b.Values.Shape(), tc.values)
			check3(t, "Mask", b.Mask.ReadData(), b.Mask.Shape(), tc.mask)
			if b.Len() != len(tc.series) || !slices.Equal(b.Indices, []int{0, 1}[:len(tc.series)]) {
				t.Errorf("Len %d, Indices %v", b.Len(), b.Indices)
			}
			if len(b.Pos) != len(tc.pos) {
				t.Fatalf("Pos = %v, want %v", b.Pos, tc.pos)
			}
			for i := range tc.pos {
				if !slices.Equal(b.Pos[i], tc.pos[i]) {
					t.Errorf("Pos[%d] = %v, want %v", i, b.Pos[i], tc.pos[i])
				}
				for k, j := range b.Pos[i] {
					if b.Times[j] != tc.series[i].Times[k] {
						t.Errorf("series %d observation %d at %v maps to time %v", i, k, tc.series[i].Times[k], b.Times[j])
					}
				}
			}
		})
	}
}

// Random series on a coarse grid (so that times coincide), with random
// masks: the union is the sorted set of all times, and every value lands
// at its time with its mask bit; everything else is 0.
func TestNewSeriesBatchRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		c := 1 + rng.IntN(3)
		series := make([]Series, 1+rng.IntN(6))
		set := map[float64]bool{}
		for i := range series {
			var times []float64
			for k := range 12 {
				if rng.IntN(3) == 0 {
					times = append(times, float64(k)/4-1)
				}
			}
			s := Series{Times: times, Values: make([]float64, len(times)*c), C: c}
			if rng.IntN(2) == 0 {
				s.Mask = make([]bool, len(s.Values))
			}
			for k := range s.Values {
				s.Values[k] = float64(1 + rng.IntN(100))
				if s.Mask != nil {
					s.Mask[k] = rng.IntN(2) == 0
				}
			}
			for _, tm := range times {
				set[tm] = true
			}
			series[i] = s
		}
		b, err := NewSeriesBatch[float64](series)
		if err != nil {
			t.Fatal(err)
		}
		var union []float64
		for tm := range set {
			union = append(union, tm)
		}
		slices.Sort(union)
		if !slices.Equal(b.Times, union) {
			t.Fatalf("trial %d: Times %v, want %v", trial, b.Times, union)
		}
		nt := len(union)
		want, wantMask := make([]float64, len(series)*nt*c), make([]float64, len(series)*nt*c)
		for i, s := range series {
			for k, tm := range s.Times {
				j, _ := slices.BinarySearch(union, tm)
				if b.Pos[i][k] != j {
					t.Fatalf("trial %d: Pos[%d][%d] = %d, want %d", trial, i, k, b.Pos[i][k], j)
				}
				for ch := range c {
					if s.Observed(k, ch) {
						want[(i*nt+j)*c+ch] = s.At(k)[ch]
						wantMask[(i*nt+j)*c+ch] = 1
					}
				}
			}
		}
		if !b.Values.HasShape(len(series), nt, c) || !b.Mask.HasShape(len(series), nt, c) {
			t.Fatalf("trial %d: shapes %v and %v", trial, b.Values.Shape(), b.Mask.Shape())
		}
		if !slices.Equal(b.Values.ReadData(), want) || !slices.Equal(b.Mask.ReadData(), wantMask) {
			t.Fatalf("trial %d: values or mask differ", trial)
		}
	}
}

// The batch is a copy: changing the series afterwards changes nothing.
func TestNewSeriesBatchOwnsStorage(t *testing.T) {
	s := []Series{{Times: []float64{0, 1}, Values: []float64{1, 2}, C: 1}}
	b, err := NewSeriesBatch[float64](s)
	if err != nil {
		t.Fatal(err)
	}
	s[0].Times[1], s[0].Values[1] = 5, 9
	if b.Times[1] != 1 || b.Values.At(0, 1, 0) != 2 {
		t.Errorf("batch changed with its series: times %v, values %v", b.Times, b.Values.ReadData())
	}
}

func TestSeriesErrors(t *testing.T) {
	ok := Series{Times: []float64{0, 1}, Values: []float64{1, 2}, C: 1}
	tests := []struct {
		name   string
		series []Series
		index  int
		msg    string // the whole message after "data: OP: "
	}{
		{"empty batch", nil, -1, "no series"},
		{"empty slice", []Series{}, -1, "no series"},
		{"duplicate time", []Series{ok, {Times: []float64{0, 1, 1}, Values: []float64{1, 2, 3}, C: 1}}, 1,
			"series 1: time 1 at position 2 is a duplicate of time 1 at position 1; times must be strictly increasing"},
		{"unsorted times", []Series{{Times: []float64{0, 2, 1.5}, Values: []float64{1, 2, 3}, C: 1}, ok}, 0,
			"series 0: time 1.5 at position 2 is before time 2 at position 1; times must be strictly increasing"},
		{"NaN time", []Series{ok, ok, {Times: []float64{math.NaN()}, Values: []float64{1}, C: 1}}, 2,
			"series 2: time NaN at position 0 is not finite"},
		{"infinite time", []Series{{Times: []float64{0, math.Inf(1)}, Values: []float64{1, 2}, C: 1}}, 0,
			"series 0: time +Inf at position 1 is not finite"},
		{"too few values", []Series{ok, {Times: []float64{0, 1}, Values: []float64{1, 2, 3}, C: 2}}, 1,
			"series 1: 3 values for 2 times of 2 channels (want 4)"},
		{"too many values", []Series{{Times: []float64{0}, Values: []float64{1, 2}, C: 1}}, 0,
			"series 0: 2 values for 1 times of 1 channels (want 1)"},
		{"no channels", []Series{{}}, 0, "series 0: 0 channels, want at least 1"},
		{"mask too short", []Series{{Times: []float64{0, 1}, Values: []float64{1, 2}, Mask: []bool{true}, C: 1}}, 0,
			"series 0: mask of 1 entries for 2 times of 1 channels (want 2, or a nil mask)"},
		{"mask too long", []Series{ok, {Times: []float64{0}, Values: []float64{1}, Mask: []bool{true, true}, C: 1}}, 1,
			"series 1: mask of 2 entries for 1 times of 1 channels (want 1, or a nil mask)"},
		{"observed NaN", []Series{{Times: []float64{0, 1}, Values: []float64{1, 2, 3, math.NaN()}, C: 2}}, 0,
			"series 0: observed value NaN at position 1 (time 1), channel 1 is not finite"},
		{"masked NaN then observed Inf", []Series{{Times: []float64{0, 1}, Values: []float64{math.NaN(), math.Inf(-1)}, Mask: []bool{false, true}, C: 1}}, 0,
			"series 0: observed value -Inf at position 1 (time 1), channel 0 is not finite"},
		{"channels differ", []Series{ok, ok, {Times: []float64{0}, Values: []float64{1, 2}, C: 2}}, 2,
			"series 2: 2 channels, but series 0 has 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewSeriesBatch[float32](tc.series)
			_, lerr := NewSeriesLoader[float32](tc.series, SeriesLoaderOptions{BatchSize: 2})
			for op, err := range map[string]error{"NewSeriesBatch": err, "NewSeriesLoader": lerr} {
				var se *SeriesError
				if !errors.As(err, &se) {
					t.Fatalf("%s: error %v (%T), want a *SeriesError", op, err, err)
				}
				if se.Op != op || se.Series != tc.index {
					t.Errorf("%s: Op %q, Series %d, want %q, %d", op, se.Op, se.Series, op, tc.index)
				}
				if want := "data: " + op + ": " + tc.msg; err.Error() != want {
					t.Errorf("%s: error\n%s\nwant\n%s", op, err, want)
				}
			}
			// A lone invalid series says the same through Validate, without the index.
			if tc.index >= 0 {
				err := tc.series[tc.index].Validate()
				want := "data: Validate: " + strings.TrimPrefix(tc.msg, fmt.Sprintf("series %d: ", tc.index))
				if tc.name == "channels differ" {
					want = ""
				}
				if got := errString(err); got != want {
					t.Errorf("Validate: %q, want %q", got, want)
				}
			}
		})
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid series: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestSeriesSplit(t *testing.T) {
	s := Series{Times: []float64{0, 1, 2, 3}, Values: []float64{0, 10, 1, 11, 2, 12, 3, 13}, Mask: []bool{true, false, true, true, false, true, true, true}, C: 2}
	for _, tc := range []struct {
		name         string
		split        func() (Series, Series)
		nHead, nTail int
	}{
		{"SplitAt(1)", func() (Series, Series) { return s.SplitAt(1) }, 1, 3},
		{"SplitTime(2)", func() (Series, Series) { return s.SplitTime(2) }, 2, 2},
		{"SplitTime(1.5)", func() (Series, Series) { return s.SplitTime(1.5) }, 2, 2},
		{"SplitTime(-1)", func() (Series, Series) { return s.SplitTime(-1) }, 0, 4},
		{"SplitTime(9)", func() (Series, Series) { return s.SplitTime(9) }, 4, 0},
		{"SplitAt(-3)", func() (Series, Series) { return s.SplitAt(-3) }, 0, 4},
		{"SplitAt(7)", func() (Series, Series) { return s.SplitAt(7) }, 4, 0},
	} {
		h, tl := tc.split()
		if h.Len() != tc.nHead || tl.Len() != tc.nTail {
			t.Errorf("%s: lengths %d and %d, want %d and %d", tc.name, h.Len(), tl.Len(), tc.nHead, tc.nTail)
			continue
		}
		for _, part := range []struct {
			p   Series
			off int
		}{{h, 0}, {tl, tc.nHead}} {
			if err := part.p.Validate(); err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			for i := range part.p.Len() {
				if part.p.Times[i] != s.Times[part.off+i] || !slices.Equal(part.p.At(i), s.At(part.off+i)) ||
					part.p.Observed(i, 0) != s.Observed(part.off+i, 0) || part.p.Observed(i, 1) != s.Observed(part.off+i, 1) {
					t.Errorf("%s: observation %d differs from the series' %d", tc.name, i, part.off+i)
				}
			}
		}
		// The head's capacity ends at its length: appending does not clobber the tail.
		if cap(h.Times) != h.Len() || cap(h.Values) != h.Len()*2 || cap(h.Mask) != h.Len()*2 {
			t.Errorf("%s: head has spare capacity", tc.name)
		}
	}

	before, after := SplitTimes([]Series{s, {Times: []float64{1.5, 2.5}, Values: []float64{5, 6, 7, 8}, C: 2}}, 2)
	if len(before) != 2 || before[0].Len() != 2 || after[0].Len() != 2 || before[1].Len() != 1 || after[1].Len() != 1 {
		t.Errorf("SplitTimes: lengths %d %d / %d %d", before[0].Len(), before[1].Len(), after[0].Len(), after[1].Len())
	}
	if after[1].Mask != nil || after[1].Times[0] != 2.5 {
		t.Errorf("SplitTimes: second series after 2 is %+v", after[1])
	}
}

// seriesSet returns n one-channel series; series i has i%4+1 observations
// at times i/8 + k, with value i.
func seriesSet(n int) []Series {
	s := make([]Series, n)
	for i := range s {
		m := i%4 + 1
		s[i] = Series{Times: make([]float64, m), Values: make([]float64, m), C: 1}
		for k := range m {
			s[i].Times[k] = float64(i)/8 + float64(k)
			s[i].Values[k] = float64(i)
		}
	}
	return s
}

// epochIndices runs one epoch, checks each batch against the series it
// names and returns the indices of the batches.
func epochIndices(t *testing.T, l *SeriesLoader[float32], series []Series, epoch int) [][]int {
	t.Helper()
	var out [][]int
	for b, err := range l.Epoch(context.Background(), epoch) {
		if err != nil {
			t.Fatal(err)
		}
		want, err := NewSeriesBatch[float32](slices.Collect(func(yield func(Series) bool) {
			for _, j := range b.Indices {
				if !yield(series[j]) {
					return
				}
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(b.Times, want.Times) || !slices.Equal(b.Values.ReadData(), want.Values.ReadData()) ||
			!slices.Equal(b.Mask.ReadData(), want.Mask.ReadData()) || !slices.EqualFunc(b.Pos, want.Pos, slices.Equal) {
			t.Fatalf("epoch %d: batch of %v differs from NewSeriesBatch of the same series", epoch, b.Indices)
		}
		for i, j := range b.Indices {
			for k := range b.Pos[i] {
				if v := b.Values.At(i, b.Pos[i][k], 0); float64(v) != float64(j) {
					t.Fatalf("batch series %d (dataset %d) has value %v", i, j, v)
				}
			}
		}
		out = append(out, b.Indices)
	}
	return out
}

func TestSeriesLoader(t *testing.T) {
	series := seriesSet(10)
	for _, tc := range []struct {
		opts  SeriesLoaderOptions
		sizes []int
	}{
		{SeriesLoaderOptions{BatchSize: 3}, []int{3, 3, 3, 1}},
		{SeriesLoaderOptions{BatchSize: 3, DropLast: true}, []int{3, 3, 3}},
		{SeriesLoaderOptions{BatchSize: 5, Shuffle: true, Seed: 4}, []int{5, 5}},
		{SeriesLoaderOptions{BatchSize: 4, Shuffle: true, Seed: 4}, []int{4, 4, 2}},
		{SeriesLoaderOptions{BatchSize: 4, Shuffle: true, Seed: 4, DropLast: true}, []int{4, 4}},
		{SeriesLoaderOptions{BatchSize: 20, Shuffle: true, Seed: 1}, []int{10}},
		{SeriesLoaderOptions{BatchSize: 20, Shuffle: true, Seed: 1, DropLast: true}, nil},
	} {
		l, err := NewSeriesLoader[float32](series, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if l.Len() != 10 || l.BatchSize() != tc.opts.BatchSize || l.NumBatches() != len(tc.sizes) {
			t.Errorf("%+v: Len %d BatchSize %d NumBatches %d", tc.opts, l.Len(), l.BatchSize(), l.NumBatches())
		}
		var orders [][]int
		for epoch := range 3 {
			got := epochIndices(t, l, series, epoch)
			var sizes []int
			var all []int
			for _, b := range got {
				sizes = append(sizes, len(b))
				all = append(all, b...)
			}
			if !slices.Equal(sizes, tc.sizes) {
				t.Errorf("%+v epoch %d: batch sizes %v, want %v", tc.opts, epoch, sizes, tc.sizes)
			}
			// The batches follow Order, which is a permutation.
			order := l.Order(epoch)
			if !slices.Equal(all, order[:len(all)]) {
				t.Errorf("%+v epoch %d: batches %v do not follow Order %v", tc.opts, epoch, got, order)
			}
			perm := slices.Sorted(slices.Values(order))
			for i, v := range perm {
				if v != i {
					t.Fatalf("%+v epoch %d: Order %v is not a permutation", tc.opts, epoch, order)
				}
			}
			if !tc.opts.DropLast && len(all) != 10 {
				t.Errorf("%+v epoch %d: %d series visited, want all 10", tc.opts, epoch, len(all))
			}
			// Deterministic: the same epoch again gives the same batches.
			if again := epochIndices(t, l, series, epoch); !slices.EqualFunc(again, got, slices.Equal) {
				t.Errorf("%+v epoch %d: %v, then %v", tc.opts, epoch, got, again)
			}
			orders = append(orders, order)
		}
		if tc.opts.Shuffle {
			if slices.Equal(orders[0], orders[1]) && slices.Equal(orders[1], orders[2]) {
				t.Errorf("%+v: the same order every epoch: %v", tc.opts, orders[0])
			}
			// The order Loader draws for as many images.
			il, err := NewLoader(synthetic(10, 1, 1, 1), LoaderOptions{BatchSize: 1, Shuffle: true, Seed: tc.opts.Seed})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(il.Order(2), orders[2]) {
				t.Errorf("%+v: order %v, Loader's %v", tc.opts, orders[2], il.Order(2))
			}
		} else if !slices.Equal(orders[0], []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
			t.Errorf("%+v: order %v without shuffling", tc.opts, orders[0])
		}
	}

	// A different seed gives a different order.
	a, _ := NewSeriesLoader[float32](series, SeriesLoaderOptions{BatchSize: 2, Shuffle: true, Seed: 1})
	b, _ := NewSeriesLoader[float32](series, SeriesLoaderOptions{BatchSize: 2, Shuffle: true, Seed: 2})
	if slices.Equal(a.Order(0), b.Order(0)) {
		t.Errorf("seeds 1 and 2 give the same order %v", a.Order(0))
	}
}

func TestSeriesLoaderOptions(t *testing.T) {
	for _, bs := range []int{0, -1} {
		_, err := NewSeriesLoader[float64](seriesSet(3), SeriesLoaderOptions{BatchSize: bs})
		if err == nil || !strings.Contains(err.Error(), "data: NewSeriesLoader: batch size") {
			t.Errorf("batch size %d: error %v", bs, err)
		}
	}
}

func TestSeriesLoaderStops(t *testing.T) {
	l, err := NewSeriesLoader[float64](seriesSet(10), SeriesLoaderOptions{BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	// Breaking out of the loop ends the iteration.
	n := 0
	for range l.Epoch(context.Background(), 0) {
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Errorf("%d steps before break", n)
	}
	// A cancelled context yields its error once, with a nil batch.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n = 0
	var errs []error
	for b, err := range l.Epoch(ctx, 0) {
		n++
		if err != nil {
			if b != nil {
				t.Error("batch with an error")
			}
			errs = append(errs, err)
			continue
		}
		if n == 2 {
			cancel()
		}
	}
	if n != 3 || len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Errorf("%d steps, errors %v; want 3 steps ending in one context.Canceled", n, errs)
	}
}

func TestSineWaves(t *testing.T) {
	for _, opts := range []SineOptions{
		{Points: 30, TMax: 5, MinFreq: 0.2, MaxFreq: 1, Noise: 0.05},
		{Points: 30, TMax: 5, Grid: 100, MinFreq: 0.5, MaxFreq: 0.5, Amplitude: 2, Noise: 0.1},
		{Points: 100, TMax: 1, Grid: 100, MinFreq: 1, MaxFreq: 3},
	} {
		const n = 40
		series, waves, err := SineWaves(rand.New(rand.NewPCG(3, 4)), n, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(series) != n || len(waves) != n {
			t.Fatalf("%+v: %d series, %d waves", opts, len(series), len(waves))
		}
		amp := opts.Amplitude
		if amp == 0 {
			amp = 1
		}
		var sum, sum2 float64
		var count int
		grid := map[float64]bool{}
		for i, s := range series {
			if err := s.Validate(); err != nil {
				t.Fatalf("%+v: series %d: %v", opts, i, err)
			}
			w := waves[i]
			if s.Len() != opts.Points || s.C != 1 || s.Mask != nil {
				t.Errorf("%+v: series %d has %d points of %d channels", opts, i, s.Len(), s.C)
			}
			if w.Amplitude != amp || w.Freq < opts.MinFreq || w.Freq > opts.MaxFreq || w.Phase < 0 || w.Phase >= 2*math.Pi {
				t.Errorf("%+v: wave %d is %+v", opts, i, w)
			}
			for k, tm := range s.Times {
				if tm < 0 || tm > opts.TMax || (opts.Grid == 0 && tm == opts.TMax) {
					t.Errorf("%+v: series %d time %v out of range", opts, i, tm)
				}
				if opts.Grid > 0 {
					step := opts.TMax / float64(opts.Grid-1)
					if r := tm / step; math.Abs(r-math.Round(r)) > 1e-9 {
						t.Errorf("%+v: series %d time %v is off the grid", opts, i, tm)
					}
					grid[tm] = true
				}
				d := s.Values[k] - w.At(tm)
				if math.Abs(d) > 6*opts.Noise {
					t.Errorf("%+v: series %d value %v at %v is %v from the wave", opts, i, s.Values[k], tm, d)
				}
				sum += d
				sum2 += d * d
				count++
			}
		}
		if opts.Grid > 0 && len(grid) > opts.Grid {
			t.Errorf("%+v: %d distinct times on a grid of %d", opts, len(grid), opts.Grid)
		}
		if opts.Points == opts.Grid && len(grid) != opts.Grid {
			t.Errorf("%+v: %d distinct times, want the whole grid", opts, len(grid))
		}
		mean, std := sum/float64(count), math.Sqrt(sum2/float64(count))
		if math.Abs(mean) > 4*opts.Noise/math.Sqrt(float64(count)) || math.Abs(std-opts.Noise) > 0.1*opts.Noise {
			t.Errorf("%+v: noise has mean %v and std %v, want 0 and %v", opts, mean, std, opts.Noise)
		}
		// The same seed gives the same data; batches over a grid share times.
		again, _, _ := SineWaves(rand.New(rand.NewPCG(3, 4)), n, opts)
		for i := range series {
			if !slices.Equal(series[i].Times, again[i].Times) || !slices.Equal(series[i].Values, again[i].Values) {
				t.Fatalf("%+v: series %d differs with the same seed", opts, i)
			}
		}
		b, err := NewSeriesBatch[float32](series)
		if err != nil {
			t.Fatal(err)
		}
		if opts.Grid > 0 && len(b.Times) != len(grid) {
			t.Errorf("%+v: union of %d times, want the %d grid points used", opts, len(b.Times), len(grid))
		}
	}
}

func TestSineWavesOptions(t *testing.T) {
	good := SineOptions{Points: 5, TMax: 1, MaxFreq: 1}
	rng := rand.New(rand.NewPCG(1, 1))
	if s, _, err := SineWaves(rng, 0, good); err != nil || len(s) != 0 {
		t.Errorf("n = 0: %v, %v", s, err)
	}
	for _, tc := range []struct {
		n      int
		change func(*SineOptions)
		msg    string
	}{
		{-1, func(*SineOptions) {}, "-1 series"},
		{1, func(o *SineOptions) { o.Points = 0 }, "0 points per series"},
		{1, func(o *SineOptions) { o.TMax = 0 }, "TMax 0"},
		{1, func(o *SineOptions) { o.TMax = math.Inf(1) }, "TMax +Inf"},
		{1, func(o *SineOptions) { o.Grid = 4 }, "grid of 4 points for 5 points"},
		{1, func(o *SineOptions) { o.Points, o.Grid = 1, 1 }, "grid of 1 points for 1 points"},
		{1, func(o *SineOptions) { o.Grid = -1 }, "grid of -1 points"},
		{1, func(o *SineOptions) { o.MinFreq = 2 }, "frequencies in [2, 1]"},
		{1, func(o *SineOptions) { o.MinFreq = -1 }, "frequencies in [-1, 1]"},
		{1, func(o *SineOptions) { o.MaxFreq = math.NaN() }, "frequencies in [0, NaN]"},
		{1, func(o *SineOptions) { o.Amplitude = math.Inf(-1) }, "amplitude -Inf"},
		{1, func(o *SineOptions) { o.Noise = -0.1 }, "noise -0.1"},
	} {
		o := good
		tc.change(&o)
		_, _, err := SineWaves(rng, tc.n, o)
		if err == nil || !strings.HasPrefix(err.Error(), "data: SineWaves: "+tc.msg) {
			t.Errorf("%+v, n %d: error %v, want one starting %q", o, tc.n, err, tc.msg)
		}
	}
}

// TestChoose: n draws with replacement, rng.IntN(len) each in order; bad
// counts panic.
func TestChoose(t *testing.T) {
	xs := []string{"a", "b", "c", "d"}
	got := Choose(rand.New(rand.NewPCG(3, 4)), xs, 9)
	ref := rand.New(rand.NewPCG(3, 4))
	want := make([]string, 9)
	for i := range want {
		want[i] = xs[ref.IntN(len(xs))]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Choose (-want +got):\n%s", diff)
	}
	if got := Choose(rand.New(rand.NewPCG(3, 4)), []int(nil), 0); len(got) != 0 {
		t.Errorf("Choose of none from none = %v", got)
	}
	for _, c := range []struct {
		xs []int
		n  int
	}{{nil, 1}, {[]int{1}, -1}} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "Choose") {
					t.Errorf("Choose(%v, %d) panicked with %v, want a message naming Choose", c.xs, c.n, r)
				}
			}()
			Choose(rand.New(rand.NewPCG(1, 1)), c.xs, c.n)
		}()
	}
}
