package data

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"
	"time"
)

// synthetic returns n images of c x h x w with pixel j of image i equal to
// seqPix(i, j) and label i % 10.
func synthetic(n, c, h, w int) *Images {
	d := &Images{C: c, H: h, W: w, Classes: 10, Labels: make([]int, n), Pixels: make([]uint8, n*c*h*w)}
	for i := range n {
		d.Labels[i] = i % 10
		for j := range c * h * w {
			d.Pixels[i*c*h*w+j] = seqPix(i, j)
		}
	}
	return d
}

// collect runs one epoch and returns copies of the batches' indices,
// checking each batch's contents against the dataset as it goes.
func collect(t *testing.T, l *Loader, d *Images, epoch int) [][]int {
	t.Helper()
	var out [][]int
	for b, err := range l.Epoch(context.Background(), epoch) {
		if err != nil {
			t.Fatal(err)
		}
		checkBatch(t, b, d, l.opts)
		out = append(out, slices.Clone(b.Indices))
	}
	return out
}

// checkBatch checks that b holds the images and labels its Indices name.
func checkBatch(t *testing.T, b *Batch, d *Images, opts LoaderOptions) {
	t.Helper()
	n := b.Len()
	if !b.X.HasShape(n, d.C, d.H, d.W) || len(b.Indices) != n {
		t.Fatalf("batch of %d labels, %d indices, X shape %v; want [%d %d %d %d]", n, len(b.Indices), b.X.Shape(), n, d.C, d.H, d.W)
	}
	x := b.X.Data()
	plane := d.H * d.W
	for i, idx := range b.Indices {
		if b.Labels[i] != d.Labels[idx] {
			t.Fatalf("label %d of batch = %d, want %d (image %d)", i, b.Labels[i], d.Labels[idx], idx)
		}
		for j, p := range d.Image(idx) {
			want := float64(p) / 255
			if opts.Mean != nil {
				c := j / plane
				want = (want - opts.Mean[c]) / opts.Std[c]
			}
			if got := x[i*d.Size()+j]; math.Abs(float64(got)-want) > 1e-6 {
				t.Fatalf("image %d (batch row %d) value %d = %v, want %v", idx, i, j, got, want)
			}
		}
	}
}

func TestLoaderEpochs(t *testing.T) {
	for _, tc := range []struct {
		n, batch, subset int
		dropLast         bool
		wantSizes        []int
	}{
		{n: 10, batch: 4, wantSizes: []int{4, 4, 2}},
		{n: 10, batch: 4, dropLast: true, wantSizes: []int{4, 4}},
		{n: 8, batch: 4, dropLast: true, wantSizes: []int{4, 4}},
		{n: 8, batch: 4, wantSizes: []int{4, 4}},
		{n: 3, batch: 5, wantSizes: []int{3}},
		{n: 3, batch: 5, dropLast: true, wantSizes: nil},
		{n: 0, batch: 2, wantSizes: nil},
		{n: 1, batch: 1, wantSizes: []int{1}},
		{n: 100, batch: 7, subset: 15, wantSizes: []int{7, 7, 1}},
		{n: 100, batch: 7, subset: 15, dropLast: true, wantSizes: []int{7, 7}},
		{n: 5, batch: 2, subset: 50, wantSizes: []int{2, 2, 1}},
	} {
		for _, shuffle := range []bool{false, true} {
			for _, prefetch := range []int{0, 1, 3} {
				name := fmt.Sprintf("n%d_b%d_sub%d_drop%v_shuffle%v_prefetch%d", tc.n, tc.batch, tc.subset, tc.dropLast, shuffle, prefetch)
				t.Run(name, func(t *testing.T) {
					d := synthetic(tc.n, 2, 3, 4)
					opts := LoaderOptions{BatchSize: tc.batch, Subset: tc.subset, DropLast: tc.dropLast, Shuffle: shuffle, Seed: 42, Prefetch: prefetch}
					l, err := NewLoader(d, opts)
					if err != nil {
						t.Fatal(err)
					}
					if l.NumBatches() != len(tc.wantSizes) {
						t.Errorf("NumBatches = %d, want %d", l.NumBatches(), len(tc.wantSizes))
					}
					used := min(tc.n, tc.subset)
					if tc.subset == 0 {
						used = tc.n
					}
					if l.Len() != used {
						t.Errorf("Len = %d, want %d", l.Len(), used)
					}
					for epoch := range 2 {
						batches := collect(t, l, d, epoch)
						var sizes, all []int
						for _, b := range batches {
							sizes = append(sizes, len(b))
							all = append(all, b...)
						}
						if !slices.Equal(sizes, tc.wantSizes) {
							t.Fatalf("epoch %d: batch sizes %v, want %v", epoch, sizes, tc.wantSizes)
						}
						// The epoch follows Order, each image at most once,
						// all of them without DropLast; only the subset.
						order := l.Order(epoch)
						if !slices.Equal(all, order[:len(all)]) {
							t.Errorf("epoch %d: indices %v do not follow Order %v", epoch, all, order)
						}
						seen := make(map[int]bool)
						for _, i := range all {
							if seen[i] || i < 0 || i >= used {
								t.Fatalf("epoch %d: index %d repeated or outside [0, %d)", epoch, i, used)
							}
							seen[i] = true
						}
						if !tc.dropLast && len(seen) != used {
							t.Errorf("epoch %d: %d distinct images, want all %d", epoch, len(seen), used)
						}
						if !shuffle && !slices.IsSorted(all) {
							t.Errorf("epoch %d: unshuffled order %v not sorted", epoch, all)
						}
					}
				})
			}
		}
	}
}

func TestLoaderShuffleSeed(t *testing.T) {
	d := synthetic(200, 1, 2, 2)
	mk := func(seed uint64, prefetch int) *Loader {
		l, err := NewLoader(d, LoaderOptions{BatchSize: 16, Shuffle: true, Seed: seed, Prefetch: prefetch})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	a, b, c := mk(1, 0), mk(1, 2), mk(2, 0)
	for epoch := range 3 {
		ea, eb, ec := collect(t, a, d, epoch), collect(t, b, d, epoch), collect(t, c, d, epoch)
		if !slices.EqualFunc(ea, eb, slices.Equal) {
			t.Errorf("epoch %d: same seed gave different orders with and without prefetch", epoch)
		}
		if slices.EqualFunc(ea, ec, slices.Equal) {
			t.Errorf("epoch %d: seeds 1 and 2 gave the same order", epoch)
		}
		if again := collect(t, a, d, epoch); !slices.EqualFunc(ea, again, slices.Equal) {
			t.Errorf("epoch %d: a second run of the same epoch gave another order", epoch)
		}
		if slices.Equal(a.Order(epoch), a.Order(epoch+1)) {
			t.Errorf("epochs %d and %d have the same order", epoch, epoch+1)
		}
		if slices.IsSorted(a.Order(epoch)) {
			t.Errorf("epoch %d: shuffled order is sorted", epoch)
		}
	}
}

func TestLoaderNormalise(t *testing.T) {
	d := synthetic(9, 3, 2, 2)
	mean, std := d.ChannelStats()
	opts := LoaderOptions{BatchSize: 4, Mean: mean, Std: std}
	l, err := NewLoader(d, opts)
	if err != nil {
		t.Fatal(err)
	}
	collect(t, l, d, 0) // checks every value against (p/255-mean)/std
	// Standardised over the whole set, each channel has mean 0 and std 1.
	l, _ = NewLoader(d, LoaderOptions{BatchSize: 9, Mean: mean, Std: std})
	for b := range l.Epoch(context.Background(), 0) {
		x := b.X.Data()
		for c := range 3 {
			var s, s2 float64
			for i := range 9 {
				for _, v := range x[i*12+c*4 : i*12+c*4+4] {
					s += float64(v)
					s2 += float64(v) * float64(v)
				}
			}
			m, v := s/36, s2/36-(s/36)*(s/36)
			if math.Abs(m) > 1e-5 || math.Abs(v-1) > 1e-4 {
				t.Errorf("channel %d: standardised mean %v variance %v, want 0 and 1", c, m, v)
			}
		}
	}
}

func TestNewLoaderBad(t *testing.T) {
	d := synthetic(4, 2, 2, 2)
	for _, tc := range []struct {
		name string
		d    *Images
		opts LoaderOptions
	}{
		{"zero batch", d, LoaderOptions{}},
		{"negative subset", d, LoaderOptions{BatchSize: 1, Subset: -1}},
		{"negative prefetch", d, LoaderOptions{BatchSize: 1, Prefetch: -1}},
		{"mean without std", d, LoaderOptions{BatchSize: 1, Mean: []float64{0, 0}}},
		{"wrong channel count", d, LoaderOptions{BatchSize: 1, Mean: []float64{0}, Std: []float64{1}}},
		{"zero std", d, LoaderOptions{BatchSize: 1, Mean: []float64{0, 0}, Std: []float64{1, 0}}},
		{"NaN mean", d, LoaderOptions{BatchSize: 1, Mean: []float64{math.NaN(), 0}, Std: []float64{1, 1}}},
		{"short pixels", &Images{Pixels: make([]uint8, 7), Labels: make([]int, 1), C: 2, H: 2, W: 2, Classes: 10}, LoaderOptions{BatchSize: 1}},
		{"label out of range", &Images{Pixels: make([]uint8, 8), Labels: []int{10}, C: 2, H: 2, W: 2, Classes: 10}, LoaderOptions{BatchSize: 1}},
		{"zero height", &Images{C: 1, W: 1, Classes: 10}, LoaderOptions{BatchSize: 1}},
	} {
		if _, err := NewLoader(tc.d, tc.opts); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// waitGoroutines waits briefly for the goroutine count to fall to want.
func waitGoroutines(t *testing.T, want int) {
	t.Helper()
	for range 100 {
		if runtime.NumGoroutine() <= want {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Errorf("%d goroutines, want %d: the prefetch goroutine leaked", runtime.NumGoroutine(), want)
}

func TestLoaderPrefetchStops(t *testing.T) {
	d := synthetic(100, 1, 4, 4)
	l, err := NewLoader(d, LoaderOptions{BatchSize: 3, Shuffle: true, Prefetch: 4})
	if err != nil {
		t.Fatal(err)
	}
	// Each subtest counts the goroutines as it starts (a subtest runs on a
	// goroutine of its own) and checks that no more remain at its end.
	t.Run("break", func(t *testing.T) {
		// One whole epoch first, so that goroutines started once and
		// kept (the engine's workers, the race detector's) are counted in
		// base: make test's -race run saw one more after the break.
		for _, err := range l.Epoch(context.Background(), 0) {
			if err != nil {
				t.Fatal(err)
			}
		}
		base := runtime.NumGoroutine()
		n := 0
		for _, err := range l.Epoch(context.Background(), 0) {
			if err != nil {
				t.Fatal(err)
			}
			if n++; n == 2 {
				break
			}
		}
		// The iterator waits for its goroutine before returning.
		if g := runtime.NumGoroutine(); g > base {
			t.Errorf("%d goroutines after break, want %d", g, base)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		base := runtime.NumGoroutine()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var batches, errs int
		for b, err := range l.Epoch(ctx, 1) {
			if err != nil {
				if b != nil || !errors.Is(err, context.Canceled) {
					t.Errorf("got batch %v, error %v; want nil, context.Canceled", b, err)
				}
				errs++
				continue
			}
			if batches++; batches == 3 {
				cancel()
			}
		}
		if batches != 3 || errs != 1 {
			t.Errorf("%d batches and %d errors, want 3 and 1", batches, errs)
		}
		waitGoroutines(t, base)
	})

	t.Run("cancelled before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var errs int
		for b, err := range l.Epoch(ctx, 0) {
			if b != nil || err == nil {
				t.Fatalf("got batch %v, error %v; want only the error", b, err)
			}
			errs++
		}
		if errs != 1 {
			t.Errorf("%d errors, want 1", errs)
		}
	})

	t.Run("deadline while blocked", func(t *testing.T) {
		base := runtime.NumGoroutine()
		// The consumer is slow; the producer fills its buffers and blocks
		// until the deadline ends the epoch.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		var err error
		for _, e := range l.Epoch(ctx, 2) {
			if e != nil {
				err = e
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error %v, want context.DeadlineExceeded", err)
		}
		waitGoroutines(t, base)
	})
}

// TestLoaderBatchStable checks the ownership contract: while the loop body
// holds a batch, the prefetch goroutine (running ahead) does not touch it.
func TestLoaderBatchStable(t *testing.T) {
	d := synthetic(64, 1, 8, 8)
	opts := LoaderOptions{BatchSize: 4, Shuffle: true, Seed: 3, Prefetch: 2}
	l, err := NewLoader(d, opts)
	if err != nil {
		t.Fatal(err)
	}
	for b, err := range l.Epoch(context.Background(), 0) {
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // let the producer run ahead
		checkBatch(t, b, d, opts)
	}
}

func TestLoaderConcurrentEpochs(t *testing.T) {
	d := synthetic(50, 1, 3, 3)
	l, err := NewLoader(d, LoaderOptions{BatchSize: 4, Shuffle: true, Prefetch: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := collect(t, l, d, 5)
	done := make(chan [][]int)
	for range 3 {
		go func() {
			var got [][]int
			for b, err := range l.Epoch(context.Background(), 5) {
				if err != nil {
					break
				}
				got = append(got, slices.Clone(b.Indices))
			}
			done <- got
		}()
	}
	for range 3 {
		if got := <-done; !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("concurrent epoch gave another order")
		}
	}
}

func TestImagesHelpers(t *testing.T) {
	d := synthetic(10, 2, 2, 3)
	head, tail := d.SplitAt(7)
	if head.Len() != 7 || tail.Len() != 3 || len(head.Pixels) != 7*12 || len(tail.Pixels) != 3*12 {
		t.Fatalf("SplitAt(7): %d and %d images", head.Len(), tail.Len())
	}
	if !slices.Equal(tail.Image(0), d.Image(7)) || tail.Labels[0] != d.Labels[7] {
		t.Errorf("tail starts with another image than image 7")
	}
	for _, n := range []int{-1, 0, 10, 11} {
		a, b := d.SplitAt(n)
		if want := max(0, min(n, 10)); a.Len() != want || b.Len() != 10-want || a.Validate() != nil || b.Validate() != nil {
			t.Errorf("SplitAt(%d): %d and %d images", n, a.Len(), b.Len())
		}
	}
	if h := d.Head(3); h.Len() != 3 || !slices.Equal(h.Pixels, d.Pixels[:36]) {
		t.Errorf("Head(3) is not the first three images")
	}

	s1, s2 := d.Shuffled(9), d.Shuffled(9)
	if !slices.Equal(s1.Pixels, s2.Pixels) || !slices.Equal(s1.Labels, s2.Labels) {
		t.Errorf("Shuffled with the same seed differs")
	}
	if slices.Equal(s1.Pixels, d.Pixels) {
		t.Errorf("Shuffled kept the order")
	}
	// Every image of d appears once in s1, with its label.
	seen := map[string]int{}
	for i := range d.Len() {
		seen[fmt.Sprint(d.Image(i), d.Labels[i])]++
	}
	for i := range s1.Len() {
		seen[fmt.Sprint(s1.Image(i), s1.Labels[i])]--
	}
	for k, v := range seen {
		if v != 0 {
			t.Errorf("image %s: count off by %d after Shuffled", k, v)
		}
	}

	all, err := Concat(head, tail)
	if err != nil || !slices.Equal(all.Pixels, d.Pixels) || !slices.Equal(all.Labels, d.Labels) {
		t.Errorf("Concat(SplitAt) is not the original: %v", err)
	}
	if _, err := Concat(d, synthetic(1, 1, 2, 3)); err == nil {
		t.Errorf("Concat of different shapes: no error")
	}

	if got := d.ClassCounts(); !slices.Equal(got, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}) {
		t.Errorf("ClassCounts = %v", got)
	}

	flat := &Images{C: 2, H: 1, W: 2, Classes: 1, Labels: []int{0, 0},
		Pixels: []uint8{0, 255, 51, 51, 255, 0, 51, 51}}
	mean, std := flat.ChannelStats()
	if math.Abs(mean[0]-0.5) > 1e-12 || math.Abs(std[0]-0.5) > 1e-12 || math.Abs(mean[1]-0.2) > 1e-12 || std[1] != 0 {
		t.Errorf("ChannelStats = %v, %v; want [0.5 0.2], [0.5 0]", mean, std)
	}
}

// TestFakeImages: fake images are valid, reproducible from their seed and
// load like real ones.
func TestFakeImages(t *testing.T) {
	a, b := FakeImages(10, 3, 4, 5, 7, 1), FakeImages(10, 3, 4, 5, 7, 1)
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	if a.Len() != 10 || a.Size() != 60 || !slices.Equal(a.Pixels, b.Pixels) || !slices.Equal(a.Labels, b.Labels) {
		t.Fatalf("fake images: %d of size %d, reproducible %v", a.Len(), a.Size(), slices.Equal(a.Pixels, b.Pixels))
	}
	if slices.Equal(a.Pixels, FakeImages(10, 3, 4, 5, 7, 2).Pixels) {
		t.Error("another seed gave the same pixels")
	}
	if _, err := NewLoader(a, LoaderOptions{BatchSize: 4}); err != nil {
		t.Error(err)
	}
}

// TestShards: the shards of an epoch (made by NewLoader or WithShard) are
// disjoint, cover every full global batch, and shard r's batch k is the r-th slice of the unsharded
// loader's batch k at Shards × BatchSize; every shard takes as many steps.
func TestShards(t *testing.T) {
	d := FakeImages(70, 1, 2, 2, 3, 1)
	whole, err := NewLoader(d, LoaderOptions{BatchSize: 3 * 4, Shuffle: true, Seed: 5, DropLast: true})
	if err != nil {
		t.Fatal(err)
	}
	var wholeIdx [][]int
	for b := range whole.Epoch(context.Background(), 2) {
		wholeIdx = append(wholeIdx, slices.Clone(b.Indices))
	}
	seen := map[int]bool{}
	for r := range 3 {
		l, err := NewLoader(d, LoaderOptions{BatchSize: 4, Shuffle: true, Seed: 5, Shard: r, Shards: 3})
		if err != nil {
			t.Fatal(err)
		}
		if r > 0 && r%2 == 0 {
			// The same shard made from another shard's loader.
			first, _ := NewLoader(d, LoaderOptions{BatchSize: 4, Shuffle: true, Seed: 5, Shard: 0, Shards: 3})
			if l, err = first.WithShard(r, 3); err != nil {
				t.Fatal(err)
			}
		}
		if l.NumBatches() != len(wholeIdx) {
			t.Fatalf("shard %d: %d batches, want %d", r, l.NumBatches(), len(wholeIdx))
		}
		k := 0
		for b := range l.Epoch(context.Background(), 2) {
			if want := wholeIdx[k][4*r : 4*r+4]; !slices.Equal(b.Indices, want) {
				t.Fatalf("shard %d batch %d: %v, want %v", r, k, b.Indices, want)
			}
			for _, i := range b.Indices {
				if seen[i] {
					t.Fatalf("image %d in two shards", i)
				}
				seen[i] = true
			}
			k++
		}
	}
	if len(seen) != 60 {
		t.Errorf("%d images seen, want the 60 of the full global batches", len(seen))
	}
	if _, err := NewLoader(d, LoaderOptions{BatchSize: 4, Shard: 3, Shards: 3}); err == nil {
		t.Error("shard 3 of 3 accepted")
	}
	if _, err := whole.WithShard(3, 3); err == nil {
		t.Error("WithShard(3, 3) accepted")
	}
}
