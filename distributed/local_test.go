package distributed_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/adamnode/adamnode/distributed"
)

// TestLocalCollectives: many rounds of all-reduce, broadcast and barrier
// on three goroutines give every rank the sums and root's values.
func TestLocalCollectives(t *testing.T) {
	const n = 3
	ranks := distributed.NewLocal(n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for _, c := range ranks {
		wg.Go(func() {
			r := float64(c.Rank())
			// A wrong value is recorded and the rank goes on making the same
			// calls, so that the others are not left waiting for it.
			mismatchAt := func(m *mismatch) {
				if errs[c.Rank()] == nil {
					errs[c.Rank()] = m
				}
			}
			for round := range 200 {
				buf := []float64{r, float64(round), r * r}
				if err := c.AllReduce(buf); err != nil {
					errs[c.Rank()] = err
					return
				}
				if want := []float64{0 + 1 + 2, n * float64(round), 0 + 1 + 4}; buf[0] != want[0] || buf[1] != want[1] || buf[2] != want[2] {
					mismatchAt(&mismatch{round, buf, want})
				}
				f := []float32{float32(r) + 0.5, 1e-8}
				if err := c.AllReduceFloat32(f); err != nil {
					errs[c.Rank()] = err
					return
				}
				if f[0] != 0.5+1.5+2.5 || f[1] != float32(1e-8)+float32(1e-8)+float32(1e-8) {
					mismatchAt(&mismatch{round, []float64{float64(f[0]), float64(f[1])}, []float64{4.5, 3e-8}})
				}
				root := round % n
				b := []float64{r + float64(round)}
				if err := c.Broadcast(b, root); err != nil {
					errs[c.Rank()] = err
					return
				}
				if b[0] != float64(root+round) {
					mismatchAt(&mismatch{round, b, []float64{float64(root + round)}})
				}
				if err := c.Barrier(); err != nil {
					errs[c.Rank()] = err
					return
				}
				// Back to back, so that a rank's next contribution may be
				// made before the others have read this result.
				for k := range 3 {
					b := []float64{r*10 + float64(k), float64(round)}
					if err := c.Broadcast(b, root); err != nil {
						errs[c.Rank()] = err
						return
					}
					if want := []float64{float64(root*10 + k), float64(round)}; b[0] != want[0] || b[1] != want[1] {
						mismatchAt(&mismatch{round, b, want})
					}
				}
			}
		})
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

type mismatch struct {
	round     int
	got, want []float64
}

func (m *mismatch) Error() string {
	return fmt.Sprintf("round %d: got %v, want %v", m.round, m.got, m.want)
}

// TestLocalMismatchedCalls: ranks calling different collectives, or with
// buffers of different lengths, all get an error naming both calls.
func TestLocalMismatchedCalls(t *testing.T) {
	for _, tc := range []struct {
		name string
		call func(c *distributed.Local) error
	}{
		{"lengths", func(c *distributed.Local) error { return c.AllReduce(make([]float64, 2+c.Rank())) }},
		{"calls", func(c *distributed.Local) error {
			if c.Rank() == 0 {
				return c.AllReduce([]float64{1})
			}
			return c.Broadcast([]float64{1}, 0)
		}},
	} {
		ranks := distributed.NewLocal(2)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for _, c := range ranks {
			wg.Go(func() { errs[c.Rank()] = tc.call(c) })
		}
		wg.Wait()
		for r, err := range errs {
			if err == nil || !strings.Contains(err.Error(), "mismatched collective calls") {
				t.Errorf("%s: rank %d: error %v, want one naming the mismatched calls", tc.name, r, err)
			}
		}
	}
	if err := distributed.NewLocal(2)[0].Broadcast(nil, 2); err == nil {
		t.Error("Broadcast from rank 2 of 2: no error")
	}
}
