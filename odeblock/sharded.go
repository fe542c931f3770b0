package odeblock

import (
	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// ShardedField returns f evaluated on shards of the batch at once, each
// on a tape of its own with the parameter gradients summed over the shards
// (autograd.RowShards): PyTorch's DataParallel within one process, one
// shard per worker of the engine. It is for fields whose rows are
// independent — every MLP, and convolution nets applied per sample — and
// must be safe to call on several tapes at once (the layers package's
// modules are, except Dropout and BatchNorm).
//
// shards ≤ 0 lets the batch's size decide: one shard per worker where each
// gets at least 128 rows, rows × (f's parameter elements) is at least 2²¹
// and rows × (its largest parameter's elements) is below 2²³; else the
// whole batch on the caller's tape, f as it is. That is where sharding
// paid on MLP fields on 2 cores (bench/benchstat/shard-ab.txt: 11–24% faster a
// training step): each evaluation synchronises the workers once instead
// of at every product and map, and each core keeps its own rows in its
// cache. Below it the synchronisation costs more than it saves; above it
// each product is large enough for the engine's own split. shards > 0
// asks for that many (at most one per worker), for a field whose rows cost
// more than their parameter count says (a convolution net).
func ShardedField[T tensor.Float](f Field[T], shards int) Field[T] {
	s := &shardedField[T]{f: f, rs: autograd.NewRowShards(shards, f.Params())}
	s.fn = f.ForwardT
	return s
}

type shardedField[T tensor.Float] struct {
	f  Field[T]
	rs *autograd.RowShards[T]
	fn autograd.RowFunc[T]
}

func (s *shardedField[T]) ForwardT(tp *autograd.Tape[T], t float64, h autograd.Var[T]) autograd.Var[T] {
	return s.rs.Apply(h, t, s.fn)
}

func (s *shardedField[T]) Params() []*autograd.Param[T] { return s.f.Params() }
