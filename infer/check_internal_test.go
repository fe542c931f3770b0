package infer

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/adamnode/adamnode/models"
	"github.com/adamnode/adamnode/tensor"
)

// BenchmarkCheckParams times Predict's parameter check on the MNIST
// AdamNODE classifier's parameters (models.Paper): "versions", the
// steady state, one atomic load per parameter; "checksums", every
// parameter's version moved on, so that each is checksummed.
func BenchmarkCheckParams(b *testing.B) {
	m, err := models.New[float32](rand.New(rand.NewPCG(1, 1)), models.Paper(models.AdamNODE, models.MNIST))
	if err != nil {
		b.Fatal(err)
	}
	p := &Pool[float32]{params: m.Params()}
	p.prints = make([]fingerprint[float32], len(p.params))
	for i, prm := range p.params {
		p.prints[i].take(prm.Value)
	}
	b.Logf("%d parameters, %d elements", len(p.params), m.NumParams())
	b.Run("versions", func(b *testing.B) {
		for b.Loop() {
			if err := p.checkParams(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("checksums", func(b *testing.B) {
		for b.Loop() {
			for _, prm := range p.params {
				prm.Value.MarkChanged()
			}
			if err := p.checkParams(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestChecksum: the checksum changes with any one element, with two
// elements swapped, with the length, in float32 and float64; equal
// elements give equal sums.
func TestChecksum(t *testing.T) {
	t.Run("float32", testChecksum[float32])
	t.Run("float64", testChecksum[float64])
}

func testChecksum[T tensor.Float](t *testing.T) {
	for _, n := range []int{0, 1, 3, 4, 5, 8, 9, 13} {
		x := make([]T, n)
		for i := range x {
			x[i] = T(i) + 0.5
		}
		sum := checksum(x)
		if again := checksum(slices.Clone(x)); again != sum {
			t.Errorf("n %d: equal elements, sums %x and %x", n, sum, again)
		}
		seen := map[uint64]string{sum: "as made"}
		note := func(what string, y []T) {
			s := checksum(y)
			if prev, ok := seen[s]; ok {
				t.Errorf("n %d: %s has the sum %x of %s", n, what, s, prev)
			}
			seen[s] = what
		}
		for i := range n {
			y := slices.Clone(x)
			y[i] = -y[i]
			note(fmt.Sprintf("element %d negated", i), y)
			if i+1 < n {
				y := slices.Clone(x)
				y[i], y[i+1] = y[i+1], y[i]
				note(fmt.Sprintf("elements %d and %d swapped", i, i+1), y)
			}
		}
		if n > 0 {
			note("one shorter", x[:n-1])
		}
	}
}
