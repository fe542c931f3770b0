package odeblock

import (
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// ShardableDynamics is Dynamics whose batch rows evolve independently —
// the package's families over a field whose rows are independent (an MLP,
// a convolution net applied per sample) — so that a Block can solve shards
// of the batch as separate ODEs (Block.Shards). The six families implement
// it.
type ShardableDynamics[T tensor.Float] interface {
	Dynamics[T]
	// Parts returns how many parts the state stacks along its leading
	// axis, each [B, ...] for a batch of B (NODE 1, HBNODE 2, AdamNODE 3).
	Parts() int
	// ForShard returns dynamics computing the same right-hand side from
	// the same field and parameters, with work buffers of their own: safe
	// to evaluate on another tape while d is evaluated.
	ForShard() Dynamics[T]
}

// Parts implements ShardableDynamics.
func (d *NODE[T]) Parts() int { return 1 }

// ForShard implements ShardableDynamics.
func (d *NODE[T]) ForShard() Dynamics[T] { return &NODE[T]{F: d.F} }

// Parts implements ShardableDynamics.
func (d *SONODE[T]) Parts() int { return 2 }

// ForShard implements ShardableDynamics.
func (d *SONODE[T]) ForShard() Dynamics[T] { return &SONODE[T]{F: d.F} }

// Parts implements ShardableDynamics.
func (d *HBNODE[T]) Parts() int { return 2 }

// ForShard implements ShardableDynamics.
func (d *HBNODE[T]) ForShard() Dynamics[T] { return &HBNODE[T]{F: d.F, GammaRaw: d.GammaRaw} }

// Parts implements ShardableDynamics.
func (d *GHBNODE[T]) Parts() int { return 2 }

// ForShard implements ShardableDynamics.
func (d *GHBNODE[T]) ForShard() Dynamics[T] {
	return &GHBNODE[T]{F: d.F, GammaRaw: d.GammaRaw, XiRaw: d.XiRaw, Phi: d.Phi}
}

// Parts implements ShardableDynamics.
func (d *AdamNODE[T]) Parts() int { return 3 }

// ForShard implements ShardableDynamics.
func (d *AdamNODE[T]) ForShard() Dynamics[T] {
	return &AdamNODE[T]{F: d.F, R1: d.R1, R2: d.R2, S: d.S, Eps: d.Eps}
}

// shardSolve is a Block's sharded solve (Block.Shards): a block per shard,
// each with dynamics of its own, recorded through one RowShards.
type shardSolve[T tensor.Float] struct {
	dyn    Dynamics[T] // the block's dynamics the shards were made for
	rs     *autograd.RowShards[T]
	blocks []*Block[T]
	run    autograd.ShardFunc[T]
	hookMu sync.Mutex
	used   int // shards of the last sharded pass
}

// shardFailure carries a shard's solve error out of RowShards, which
// raises a shard's panic again on the caller.
type shardFailure struct{ err error }

// shardCount returns how many shards a Forward of z0 on an engine of
// workers runs in, and the dynamics' parts: 1 when it solves the whole
// batch.
func (b *Block[T]) shardCount(z0 autograd.Var[T], workers int) (int, int, error) {
	if b.Shards < 2 || workers < 2 {
		return 1, 1, nil
	}
	sd, ok := b.Dynamics.(ShardableDynamics[T])
	if !ok {
		return 0, 0, fmt.Errorf("odeblock: Block.Shards is %d, but its dynamics %T cannot be sharded (they do not implement ShardableDynamics)", b.Shards, b.Dynamics)
	}
	parts := sd.Parts()
	shape := z0.Shape()
	if len(shape) == 0 || parts < 1 || shape[0]%parts != 0 {
		return 0, 0, fmt.Errorf("odeblock: Block.Shards: a state of shape %v does not split into the dynamics' %d parts along axis 0", shape, parts)
	}
	return min(b.Shards, workers, shape[0]/parts), parts, nil
}

// recordSharded records Forward as k solves of shards of the batch, each
// over its own rows of every part.
func (b *Block[T]) recordSharded(tp *autograd.Tape[T], z0 autograd.Var[T], k, parts int) (out autograd.Var[T], err error) {
	ss := b.sharded(k)
	ss.used = k
	for _, sb := range ss.blocks[:k] {
		sb.Times, sb.Solver, sb.Mode, sb.RowErrors = b.Times, b.Solver, b.Mode, b.RowErrors
		sb.OnStep = nil
		if b.OnStep != nil {
			sb.OnStep = ss.onStep(b.OnStep)
		}
	}
	rows := z0.Shape()[0] / parts
	// cut[i] is where shard i's rows of each part start; the shards' states
	// are laid out one after the other, each with its parts stacked.
	cut := make([]int, k+1)
	cuts := make([]int, k+1)
	for i := range cut {
		cut[i] = rows * i / k
		cuts[i] = parts * cut[i]
	}
	x := z0
	if parts > 1 {
		pieces := make([]autograd.Var[T], 0, k*parts)
		for i := range k {
			for p := range parts {
				pieces = append(pieces, autograd.Narrow(z0, 0, p*rows+cut[i], cut[i+1]-cut[i]))
			}
		}
		x = autograd.Concat(0, pieces...)
	}
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		f, ok := r.(shardFailure)
		if !ok {
			panic(r)
		}
		out, err = autograd.Var[T]{}, f.err
	}()
	y := ss.rs.ApplyShards(x, cuts, ss.run)
	b.passes++ // Stats reads the shards' counts
	if parts == 1 {
		return y, nil
	}
	pieces := make([]autograd.Var[T], 0, k*parts)
	for p := range parts {
		for i := range k {
			n := cut[i+1] - cut[i]
			pieces = append(pieces, autograd.Narrow(y, 0, cuts[i]+p*n, n))
		}
	}
	return autograd.Concat(0, pieces...), nil
}

// sharded returns the block's shard solves for k shards, made anew when
// its dynamics or their parameters changed.
func (b *Block[T]) sharded(k int) *shardSolve[T] {
	ss := b.shards
	params := listed(b.Dynamics.Params())
	if ss == nil || !sameDynamics(ss.dyn, b.Dynamics) || !slices.Equal(ss.rs.Params(), params) {
		ss = &shardSolve[T]{dyn: b.Dynamics, rs: autograd.NewRowShards(k, params)}
		ss.run = func(tp *autograd.Tape[T], i int, x autograd.Var[T]) autograd.Var[T] {
			y, err := ss.blocks[i].record(tp, x, false)
			if err != nil {
				panic(shardFailure{fmt.Errorf("shard %d of %d: %w", i, ss.used, err)})
			}
			return y
		}
		b.shards = ss
	}
	sd := b.Dynamics.(ShardableDynamics[T])
	for len(ss.blocks) < k {
		ss.blocks = append(ss.blocks, &Block[T]{Dynamics: sd.ForShard()})
	}
	return ss
}

// sameDynamics reports whether a and b are the same dynamics: equal
// values of a comparable type (a pointer to a family, say). Values of a
// type that cannot be compared never are, so their shards' blocks are
// made anew at every pass.
func sameDynamics[T tensor.Float](a, b Dynamics[T]) (same bool) {
	ta := reflect.TypeOf(a)
	if ta != reflect.TypeOf(b) || ta == nil || !ta.Comparable() {
		return false
	}
	defer func() {
		if recover() != nil {
			same = false // an interface field holding an uncomparable value
		}
	}()
	return a == b
}

// onStep returns a hook passing the shards' steps to hook one at a time.
func (ss *shardSolve[T]) onStep(hook func(StepInfo[T]) error) func(StepInfo[T]) error {
	return func(si StepInfo[T]) error {
		ss.hookMu.Lock()
		defer ss.hookMu.Unlock()
		return hook(si)
	}
}

// stats returns the shards' last passes' counts, the most of any shard
// for each.
func (ss *shardSolve[T]) stats() BlockStats {
	var s BlockStats
	for _, sb := range ss.blocks[:ss.used] {
		s = s.most(sb.stats)
	}
	return s
}

// totals returns the shards' counts since ResetStats, the most of any
// shard for each.
func (ss *shardSolve[T]) totals() BlockStats {
	var s BlockStats
	for _, sb := range ss.blocks {
		s = s.most(sb.total)
	}
	return s
}

// most returns the larger of each count of s and o.
func (s BlockStats) most(o BlockStats) BlockStats {
	return BlockStats{Forward: mostStats(s.Forward, o.Forward), Backward: mostStats(s.Backward, o.Backward),
		Stored: max(s.Stored, o.Stored), Recovered: max(s.Recovered, o.Recovered)}
}

// mostStats returns the larger of each count of s and o.
func mostStats(s, o Stats) Stats {
	return Stats{NFE: max(s.NFE, o.NFE), Accepted: max(s.Accepted, o.Accepted), Rejected: max(s.Rejected, o.Rejected),
		Jacobians: max(s.Jacobians, o.Jacobians), LUs: max(s.LUs, o.LUs)}
}
