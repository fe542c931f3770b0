package sde

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adamnode/adamnode/tensor"
)

// TestBrownianConcurrent: goroutines querying one Brownian at once (with a
// cache small enough that they evict each other's nodes) get the values a
// fresh path with the same seed gives one query at a time. Run under the
// race detector by make test.
func TestBrownianConcurrent(t *testing.T) {
	opt := BrownianOptions{Seed: 11, CacheSize: 4}
	shared, err := NewBrownian[float64](0, 1, []int{3, 2}, opt)
	if err != nil {
		t.Fatal(err)
	}
	const workers, queries = 8, 64
	interval := func(g, q int) (float64, float64) {
		s := float64((g*queries+q)%97) / 101
		return s, s + float64(q%13+1)/29
	}
	got := make([][][]float64, workers)
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dst := tensor.New[float64](3, 2)
			for q := range queries {
				s, u := interval(g, q)
				if err := shared.Increment(dst, s, min(u, 1)); err != nil {
					t.Error(err)
					return
				}
				got[g] = append(got[g], append([]float64(nil), dst.Data()...))
			}
		}()
	}
	wg.Wait()
	for g := range workers {
		alone, err := NewBrownian[float64](0, 1, []int{3, 2}, opt)
		if err != nil {
			t.Fatal(err)
		}
		dst := tensor.New[float64](3, 2)
		for q := range queries {
			s, u := interval(g, q)
			if err := alone.Increment(dst, s, min(u, 1)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(dst.Data(), got[g][q]); diff != "" {
				t.Fatalf("goroutine %d query %d: W(%g, %g) differs from a sequential query (-alone +concurrent):\n%s", g, q, s, min(u, 1), diff)
			}
		}
	}
}
