package sde

import (
	"fmt"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// Block is an SDE solve as one op of a model, as odeblock.Block is an ODE
// solve: y0 ↦ y(t1) (Forward) or y at every time of Times (Trajectory),
// differentiated as Options.Mode says, so that a network mixes SDE
// blocks with ordinary layers (a neural SDE: f and g are modules reading
// their parameters through the tape).
//
// Each call draws a new Brownian path (a Brownian of the shape the noise
// needs, seeded by Seed and the number of calls before it: a model trained
// twice from the same Seed sees the same noise), unless Path is set, which
// every call then uses. A Block is not safe for concurrent use.
type Block[T tensor.Float] struct {
	SDE SDE[T]
	// Times are the output times, strictly increasing; nil means [0, 1].
	Times []float64
	// Options configure the solves; Step must be set.
	Options Options
	// BrownianSize is the number of Brownian motions per row of the batch
	// for General noise (the path is [B, BrownianSize] for a state
	// [B, ...]); other noises ignore it.
	BrownianSize int
	// Seed seeds the paths that calls draw.
	Seed uint64
	// NoArea draws the paths without Lévy areas (BrownianOptions.NoArea):
	// half the work per node of the tree, for the methods that read
	// increments only (all but sri2 and sra1). The same Seed then gives
	// other paths.
	NoArea bool
	// Path, if set, is the path of every call.
	Path Path[T]

	calls uint64
	last  *Stats
	path  Path[T]
}

// Params returns the SDE's parameters.
func (b *Block[T]) Params() []*autograd.Param[T] { return b.SDE.Params() }

// Stats returns the counts of the last call (its BackwardEvals filled in
// once its backward pass has run), or nil before the first.
func (b *Block[T]) Stats() *Stats { return b.last }

// LastPath returns the Brownian path of the last call.
func (b *Block[T]) LastPath() Path[T] { return b.path }

// Forward records the block on tp and returns y at the last time. A failed
// solve returns the error with NaNs shaped like y0 (see
// autograd.Tape.Check).
func (b *Block[T]) Forward(tp *autograd.Tape[T], y0 autograd.Var[T]) (autograd.Var[T], error) {
	ys, err := b.solve(tp, y0)
	if err != nil {
		return b.failed(tp, y0, false), err
	}
	return ys[len(ys)-1], nil
}

// Trajectory records the block on tp and returns y at every time of Times,
// stacked along a new leading axis: [len(Times), y0's shape...]; the first
// entry is y0. A failed solve returns the error with NaNs of that shape.
func (b *Block[T]) Trajectory(tp *autograd.Tape[T], y0 autograd.Var[T]) (autograd.Var[T], error) {
	ys, err := b.solve(tp, y0)
	if err != nil {
		return b.failed(tp, y0, true), err
	}
	return autograd.Stack(0, ys...), nil
}

// failed is what Forward and Trajectory return with an error: NaNs shaped
// like their result (see autograd.Tape.Check), or the zero Var where y0
// is.
func (b *Block[T]) failed(tp *autograd.Tape[T], y0 autograd.Var[T], traj bool) autograd.Var[T] {
	if tp == nil || y0.IsZero() {
		return autograd.Var[T]{}
	}
	if !traj {
		return tp.NaNs(y0.Shape()...)
	}
	n := len(b.Times)
	if b.Times == nil {
		n = 2
	}
	return tp.NaNs(append([]int{n}, y0.Shape()...)...)
}

func (b *Block[T]) solve(tp *autograd.Tape[T], y0 autograd.Var[T]) (ys []autograd.Var[T], err error) {
	defer tensor.Recover(&err)
	ts := b.Times
	if ts == nil {
		ts = []float64{0, 1}
	}
	if len(ts) < 2 {
		return nil, fmt.Errorf("sde: Block.Times %v needs at least two times", ts)
	}
	if err := checkTimes("Block.Times", ts); err != nil {
		return nil, err // before the Brownian path, whose span would be named instead
	}
	path := b.Path
	if path == nil {
		shape, err := b.pathShape(y0.Shape())
		if err != nil {
			return nil, err
		}
		br, err := NewBrownian[T](ts[0], ts[len(ts)-1], shape, BrownianOptions{Seed: splitmix(b.Seed + b.calls), NoArea: b.NoArea})
		if err != nil {
			return nil, err
		}
		b.calls++
		path = br
	}
	b.path = path
	ys, b.last, err = Solve(tp, b.SDE, y0, ts, path, b.Options)
	return ys, err
}

// pathShape is the shape of the Brownian path the noise layout needs for
// a state of the given shape.
func (b *Block[T]) pathShape(y []int) ([]int, error) {
	rows := 1
	if len(y) >= 2 {
		rows = y[0]
	}
	switch b.Options.Noise {
	case Diagonal:
		return append([]int(nil), y...), nil
	case Scalar:
		if len(y) < 2 {
			return []int{1}, nil
		}
		return []int{rows, 1}, nil
	case General:
		if b.BrownianSize < 1 {
			return nil, fmt.Errorf("sde: Block with general noise needs BrownianSize ≥ 1, not %d", b.BrownianSize)
		}
		if len(y) < 2 {
			return []int{b.BrownianSize}, nil
		}
		return []int{rows, b.BrownianSize}, nil
	}
	return nil, fmt.Errorf("sde: unknown noise type %v", b.Options.Noise)
}
