package odeblock

import (
	"github.com/adamnode/adamnode/odeblock/internal/hooks"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// passPools is the memory the gradient modes keep from pass to pass of a
// Block, so that a training loop reusing the block records every pass on
// the tapes and buffers of the one before: Backprop's stage tapes, the
// states Checkpoint, Recursive and the adjoint's anchors keep (tensors,
// in a device's memory when the pass runs on one), the tapes steps are
// recomputed on, and the Interpolated mode's dense-log steps.
// The modes take what they need and give it back when their backward is
// done; nothing here belongs to one pass.
type passPools[T tensor.Float] struct {
	stages   []*stageTape[T]
	states   []*tensor.Tensor[T] // states kept, where the pass keeps them (pass.ew)
	restaged []*stageTape[T]
	log      hooks.DenseLog[T] // an empty log holding the last pass's steps and their buffers, for takeLog
}

// takeStageTape returns a pooled stage tape on eng with an input buffer
// of the shape, or a new one; tapes that fit neither are released.
func (q *passPools[T]) takeStageTape(eng tensor.Engine[T], shape []int) *stageTape[T] {
	for len(q.stages) > 0 {
		last := len(q.stages) - 1
		st := q.stages[last]
		q.stages[last] = nil
		q.stages = q.stages[:last]
		if st.tp.Engine() == eng && st.y.HasShape(shape...) {
			return st
		}
		st.tp.Release()
	}
	return newStageTape(eng, shape)
}

// newStageTape returns a stage tape on eng with an input buffer of the
// shape. Grad inside the dynamics records its gradients on it
// (Tape.SetGradsRecorded): the pass differentiates them again.
func newStageTape[T tensor.Float](eng tensor.Engine[T], shape []int) *stageTape[T] {
	tp := autograd.NewTape(eng)
	tp.SetGradsRecorded(true)
	return &stageTape[T]{tp: tp, y: tensor.New[T](shape...)}
}

// putStageTape pools st (reset by the caller).
func (q *passPools[T]) putStageTape(st *stageTape[T]) { q.stages = append(q.stages, st) }

// trimStageTapes releases the pooled tapes beyond n, so that one long
// solve does not keep its memory for good.
func (q *passPools[T]) trimStageTapes(n int) {
	for len(q.stages) > n {
		last := len(q.stages) - 1
		q.stages[last].tp.Release()
		q.stages[last] = nil
		q.stages = q.stages[:last]
	}
}

// takeState returns a copy of y, made by ew, in a pooled tensor of the
// shape (others are dropped), or a new one: a state kept where ew keeps
// it (a device's memory, or the host's).
func (q *passPools[T]) takeState(ew tensor.Elementwise[T], y *tensor.Tensor[T], shape []int) *tensor.Tensor[T] {
	var buf *tensor.Tensor[T]
	for buf == nil && len(q.states) > 0 {
		last := len(q.states) - 1
		if b := q.states[last]; b.HasShape(shape...) {
			buf = b
		}
		q.states[last] = nil
		q.states = q.states[:last]
	}
	if buf == nil {
		buf = tensor.New[T](shape...)
	}
	ew.Copy(buf, y)
	return buf
}

// putState pools the state y.
func (q *passPools[T]) putState(y *tensor.Tensor[T]) { q.states = append(q.states, y) }

// trimStates keeps at most n pooled states.
func (q *passPools[T]) trimStates(n int) {
	n = min(n, len(q.states))
	clear(q.states[n:])
	q.states = q.states[:n]
}

// restageTapes returns s stage tapes on eng with input buffers of the
// shape for recomputing steps, made anew when the pooled ones do not fit.
// They are reused from step to step and kept from pass to pass.
func (q *passPools[T]) restageTapes(eng tensor.Engine[T], shape []int, s int) []*stageTape[T] {
	ts := q.restaged
	if len(ts) == s && ts[0].tp.Engine() == eng && ts[0].y.HasShape(shape...) {
		return ts
	}
	ts = make([]*stageTape[T], s)
	for i := range ts {
		ts[i] = newStageTape(eng, shape)
	}
	q.restaged = ts
	return ts
}

// takeLog returns an empty dense log with the pooled steps.
func (q *passPools[T]) takeLog() hooks.DenseLog[T] {
	l := q.log
	if l == nil {
		l = hk[T]().NewDenseLog(nil)
	}
	q.log = nil
	return l
}

// giveLog keeps l's steps, and their buffers, for the next pass (the
// last pass's: a training loop's passes are alike), in an empty log, and
// empties l.
func (q *passPools[T]) giveLog(l hooks.DenseLog[T]) {
	q.log = hk[T]().NewDenseLog(l)
}
