package distributed

import (
	"fmt"
	"sync"
)

// Local is one rank of an in-process group made by NewLocal: the same
// collective calls as Comm, between goroutines, with no MPI. It runs
// data-parallel code in one process — tests, and trying a setup before
// launching it with mpirun. Sums are taken in rank order, so results are
// deterministic.
type Local struct {
	g    *group
	rank int
}

// group is the shared state of a Local group: the buffers of the round
// under way and the result of the last round.
type group struct {
	mu     sync.Mutex
	cond   *sync.Cond
	size   int
	round  uint64      // rounds completed
	bufs   [][]float64 // this round's contributions, by rank
	kind   []string    // this round's call, by rank
	result []float64   // the last round's result
	spare  []float64   // storage for results, reused
	err    error       // the last round's failure
}

// NewLocal returns the n ranks of an in-process group; each is to be used
// by one goroutine. It panics if n < 1.
func NewLocal(n int) []*Local {
	if n < 1 {
		panic(fmt.Sprintf("distributed: NewLocal(%d): want at least one rank", n))
	}
	g := &group{size: n, bufs: make([][]float64, n), kind: make([]string, n)}
	g.cond = sync.NewCond(&g.mu)
	ls := make([]*Local, n)
	for i := range ls {
		ls[i] = &Local{g: g, rank: i}
	}
	return ls
}

// Rank returns this rank, from 0.
func (l *Local) Rank() int { return l.rank }

// Size returns the number of ranks in the group.
func (l *Local) Size() int { return l.g.size }

// AllReduce replaces buf with the elementwise sum of every rank's buf.
func (l *Local) AllReduce(buf []float64) error {
	return l.collective("AllReduce", buf, func(bufs [][]float64) []float64 {
		sum := l.g.resultBuf(len(buf))
		copy(sum, bufs[0])
		for _, b := range bufs[1:] {
			for i, v := range b {
				sum[i] += v
			}
		}
		return sum
	})
}

// resultBuf returns the group's result storage, of length n, reused from
// round to round (every rank has copied the last result out before the
// next round can complete).
func (g *group) resultBuf(n int) []float64 {
	if cap(g.spare) < n {
		g.spare = make([]float64, n)
	}
	return g.spare[:n]
}

// AllReduceFloat32 replaces buf with the elementwise sum, in float32 and
// rank order, of every rank's buf.
func (l *Local) AllReduceFloat32(buf []float32) error {
	b := make([]float64, len(buf))
	for i, v := range buf {
		b[i] = float64(v)
	}
	err := l.collective("AllReduceFloat32", b, func(bufs [][]float64) []float64 {
		sum := make([]float32, len(b))
		for _, r := range bufs {
			for i, v := range r {
				sum[i] += float32(v)
			}
		}
		out := l.g.resultBuf(len(sum))
		for i, v := range sum {
			out[i] = float64(v)
		}
		return out
	})
	for i, v := range b {
		buf[i] = float32(v)
	}
	return err
}

// Broadcast replaces buf on every rank with root's.
func (l *Local) Broadcast(buf []float64, root int) error {
	if root < 0 || root >= l.g.size {
		return fmt.Errorf("distributed: Broadcast from rank %d of a group of %d", root, l.g.size)
	}
	return l.collective(fmt.Sprintf("Broadcast from %d", root), buf, func(bufs [][]float64) []float64 {
		// A copy: the ranks' buffers are reused by the next round, which a
		// rank may begin before the others have read this one's result.
		out := l.g.resultBuf(len(bufs[root]))
		copy(out, bufs[root])
		return out
	})
}

// Barrier waits for every rank.
func (l *Local) Barrier() error {
	return l.collective("Barrier", nil, func([][]float64) []float64 { return nil })
}

// collective waits until every rank has made the call, then sets buf to
// combine of their buffers (by rank). Ranks whose calls or lengths differ
// all get an error naming them.
func (l *Local) collective(kind string, buf []float64, combine func([][]float64) []float64) error {
	g := l.g
	g.mu.Lock()
	defer g.mu.Unlock()
	g.bufs[l.rank] = append(g.bufs[l.rank][:0], buf...) // the rank's storage, reused
	g.kind[l.rank] = kind
	arrived := 0
	for _, k := range g.kind {
		if k != "" {
			arrived++
		}
	}
	if arrived < g.size {
		for r := g.round; g.round == r; {
			g.cond.Wait()
		}
	} else {
		g.result, g.err = nil, nil
		for r := range g.size {
			if g.kind[r] != g.kind[0] || len(g.bufs[r]) != len(g.bufs[0]) {
				g.err = fmt.Errorf("distributed: mismatched collective calls: rank 0 %s of %d numbers, rank %d %s of %d",
					g.kind[0], len(g.bufs[0]), r, g.kind[r], len(g.bufs[r]))
				break
			}
		}
		if g.err == nil {
			g.result = combine(g.bufs)
		}
		for r := range g.size {
			g.kind[r], g.bufs[r] = "", g.bufs[r][:0]
		}
		g.round++
		g.cond.Broadcast()
	}
	if g.err != nil {
		return g.err
	}
	copy(buf, g.result)
	return nil
}
