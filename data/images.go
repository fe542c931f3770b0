package data

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Images is an in-memory set of labelled 8-bit images.
//
// Pixels holds Len() images one after another, each channel-major (C planes
// of H rows of W pixels), so image i is Pixels[i*C*H*W : (i+1)*C*H*W].
// Labels[i] is the class of image i, in [0, Classes).
//
// The readers return Images with fresh storage. Head and SplitAt return views
// that share the receiver's Pixels and Labels.
type Images struct {
	Pixels  []uint8
	Labels  []int
	C, H, W int // channels, height, width of every image
	Classes int // number of classes; every label is below it
}

// Len returns the number of images.
func (d *Images) Len() int { return len(d.Labels) }

// Size returns the number of pixels of one image, C*H*W.
func (d *Images) Size() int { return d.C * d.H * d.W }

// Image returns the pixels of image i (a view, not a copy).
func (d *Images) Image(i int) []uint8 {
	n := d.Size()
	return d.Pixels[i*n : (i+1)*n : (i+1)*n]
}

// Validate checks that the fields are consistent: positive image dimensions,
// len(Pixels) == Len()*C*H*W, and every label in [0, Classes). NewLoader calls
// it, so hand-built Images are checked before use.
func (d *Images) Validate() error {
	if d.C <= 0 || d.H <= 0 || d.W <= 0 {
		return fmt.Errorf("data: images have non-positive dimensions %dx%dx%d", d.C, d.H, d.W)
	}
	if d.Classes <= 0 {
		return fmt.Errorf("data: images have %d classes", d.Classes)
	}
	if want := int64(d.Len()) * int64(d.Size()); int64(len(d.Pixels)) != want {
		return fmt.Errorf("data: %d pixels for %d images of %dx%dx%d (want %d)",
			len(d.Pixels), d.Len(), d.C, d.H, d.W, want)
	}
	for i, l := range d.Labels {
		if l < 0 || l >= d.Classes {
			return fmt.Errorf("data: label %d of image %d is out of range [0, %d)", l, i, d.Classes)
		}
	}
	return nil
}

// Head returns a view of the first n images (all of them if n exceeds
// Len()), for quick runs on a subset.
func (d *Images) Head(n int) *Images {
	a, _ := d.SplitAt(n)
	return a
}

// SplitAt splits the set into the first n images and the rest, both views of
// the receiver's storage; n is clamped to [0, Len()]. To hold out a
// validation set drawn at random, call Shuffled first.
func (d *Images) SplitAt(n int) (head, tail *Images) {
	n = max(0, min(n, d.Len()))
	k := n * d.Size()
	head, tail = d.like(), d.like()
	head.Pixels, head.Labels = d.Pixels[:k:k], d.Labels[:n:n]
	tail.Pixels, tail.Labels = d.Pixels[k:], d.Labels[n:]
	return head, tail
}

// Shuffled returns a copy of the set with its images in an order drawn from
// seed; the same seed gives the same order.
func (d *Images) Shuffled(seed uint64) *Images {
	// A stream of its own, so that a Loader seeded alike does not draw the
	// same permutation.
	perm := rand.New(rand.NewPCG(seed, shuffledStream)).Perm(d.Len())
	out := d.like()
	out.Pixels = make([]uint8, len(d.Pixels))
	out.Labels = make([]int, d.Len())
	for i, j := range perm {
		copy(out.Image(i), d.Image(j))
		out.Labels[i] = d.Labels[j]
	}
	return out
}

// Concat returns a new set holding the images of d followed by those of
// more. All must have the same image shape and class count.
func Concat(d *Images, more ...*Images) (*Images, error) {
	out := d.like()
	np, nl := len(d.Pixels), len(d.Labels)
	for _, m := range more {
		if m.C != d.C || m.H != d.H || m.W != d.W || m.Classes != d.Classes {
			return nil, fmt.Errorf("data: Concat: images of %dx%dx%d with %d classes and %dx%dx%d with %d classes",
				d.C, d.H, d.W, d.Classes, m.C, m.H, m.W, m.Classes)
		}
		np += len(m.Pixels)
		nl += len(m.Labels)
	}
	out.Pixels = append(make([]uint8, 0, np), d.Pixels...)
	out.Labels = append(make([]int, 0, nl), d.Labels...)
	for _, m := range more {
		out.Pixels = append(out.Pixels, m.Pixels...)
		out.Labels = append(out.Labels, m.Labels...)
	}
	return out, nil
}

// ClassCounts returns the number of images of each class.
func (d *Images) ClassCounts() []int {
	counts := make([]int, d.Classes)
	for _, l := range d.Labels {
		if l >= 0 && l < d.Classes {
			counts[l]++
		}
	}
	return counts
}

// ChannelStats returns the mean and standard deviation of each channel over
// all images, in the [0, 1] scale the Loader produces (pixel/255). They are
// the values to pass as LoaderOptions.Mean and Std to standardise a channel.
func (d *Images) ChannelStats() (mean, std []float64) {
	mean, std = make([]float64, d.C), make([]float64, d.C)
	plane := d.H * d.W
	var hist [256]int64
	for c := range d.C {
		hist = [256]int64{}
		for i := range d.Len() {
			for _, p := range d.Image(i)[c*plane : (c+1)*plane] {
				hist[p]++
			}
		}
		var n, s, s2 float64
		for v, k := range hist {
			x := float64(v) / 255
			n += float64(k)
			s += float64(k) * x
			s2 += float64(k) * x * x
		}
		if n == 0 {
			continue
		}
		mean[c] = s / n
		std[c] = math.Sqrt(max(0, s2/n-mean[c]*mean[c]))
	}
	return mean, std
}

// shuffledStream is the PCG stream Shuffled draws from; Loader uses the
// epoch number as the stream.
const shuffledStream = 0x5348554646 // "SHUFF"

// like returns an empty set with the receiver's image shape and classes.
func (d *Images) like() *Images {
	return &Images{C: d.C, H: d.H, W: d.W, Classes: d.Classes}
}

// FakeImages returns n images of c × h × w random pixels with random
// labels below classes, drawn from seed: torchvision's FakeData, for
// trying a model without a dataset.
func FakeImages(n, c, h, w, classes int, seed uint64) *Images {
	rng := rand.New(rand.NewPCG(seed, 0x66616b65))
	d := &Images{Pixels: make([]uint8, n*c*h*w), Labels: make([]int, n), C: c, H: h, W: w, Classes: classes}
	for i := range d.Pixels {
		d.Pixels[i] = uint8(rng.IntN(256))
	}
	for i := range d.Labels {
		d.Labels[i] = rng.IntN(classes)
	}
	return d
}
