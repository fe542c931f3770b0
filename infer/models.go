package infer

import (
	"fmt"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/sde"
	"github.com/adamnode/adamnode/tensor"
)

// Func is a Model made of a function: a latent ODE's decoder, say, or
// any model whose pass is not one of the adapters'.
type Func[T tensor.Float] struct {
	// Fn records the output for the batch x on tp; its first axis must
	// be the batch's.
	Fn func(tp *autograd.Tape[T], x autograd.Var[T]) (autograd.Var[T], error)
	// Parameters lists every parameter Fn reads, in a fixed order.
	Parameters []*autograd.Param[T]
	// Blocks lists the ODE blocks Fn solves, for the pool to set their
	// RowErrors (Options.Rows) and to check that no two replicas share
	// one. Blocks left out are Fn's own affair.
	Blocks []*odeblock.Block[T]
}

// Forward implements Model: Fn(tp, x).
func (f *Func[T]) Forward(tp *autograd.Tape[T], x autograd.Var[T]) (autograd.Var[T], error) {
	if f.Fn == nil {
		return autograd.Var[T]{}, fmt.Errorf("infer: Func has no Fn")
	}
	return f.Fn(tp, x)
}

// Params implements Model: Parameters.
func (f *Func[T]) Params() []*autograd.Param[T] { return f.Parameters }

// ODEBlocks returns Blocks.
func (f *Func[T]) ODEBlocks() []*odeblock.Block[T] { return f.Blocks }

// ODE returns a Model solving b from each row's initial state to b's last
// time. A row of the input is the row's whole initial state with the
// dynamics' parts side by side along axis 1 (an AdamNODE's h, m and v of
// a [B, D] state: a row of 3·D; of a [B, C, H, W] state: [3·C, H, W]);
// the output is the state at the end, laid out alike. The dynamics'
// parts are ShardableDynamics' Parts (one for other dynamics).
func ODE[T tensor.Float](b *odeblock.Block[T]) Model[T] { return &ode[T]{b: b} }

// ODETrajectory is ODE with the output the state at every time of b's
// Times: [B, len(Times), row...], the first entry the initial state.
func ODETrajectory[T tensor.Float](b *odeblock.Block[T]) Model[T] { return &ode[T]{b: b, traj: true} }

type ode[T tensor.Float] struct {
	b    *odeblock.Block[T]
	traj bool
}

func (m *ode[T]) Params() []*autograd.Param[T] { return m.b.Params() }

func (m *ode[T]) Block() *odeblock.Block[T] { return m.b }

// parts returns the number of parts of the block's state.
func (m *ode[T]) parts() int {
	if sd, ok := m.b.Dynamics.(odeblock.ShardableDynamics[T]); ok {
		return sd.Parts()
	}
	return 1
}

func (m *ode[T]) Forward(tp *autograd.Tape[T], x autograd.Var[T]) (autograd.Var[T], error) {
	p := m.parts()
	shape := x.Shape()
	if len(shape) < 2 || shape[1]%p != 0 {
		return autograd.Var[T]{}, fmt.Errorf("infer: ODE: input of shape %v: a row holds the %d parts of the state side by side along axis 1, so it needs an axis 1 that %d divides", shape, p, p)
	}
	z0 := x
	if p > 1 {
		z0 = autograd.Concat(0, autograd.Split(x, 1, splitSizes(shape[1], p)...)...)
	}
	if !m.traj {
		z, err := m.b.Forward(tp, z0)
		if err != nil || p == 1 {
			return z, err
		}
		return autograd.Concat(1, autograd.Split(z, 0, splitSizes(shape[0]*p, p)...)...), nil
	}
	z, err := m.b.Trajectory(tp, z0) // [K, P·B, row of a part...]
	if err != nil {
		return z, err
	}
	if p > 1 {
		z = autograd.Concat(2, autograd.Split(z, 1, splitSizes(shape[0]*p, p)...)...) // [K, B, P·C, ...]
	}
	perm := make([]int, z.Value().Rank())
	for i := range perm {
		perm[i] = i
	}
	perm[0], perm[1] = 1, 0
	return autograd.Permute(z, perm...), nil
}

// splitSizes returns p equal sizes that sum to n (p divides n).
func splitSizes(n, p int) []int {
	s := make([]int, p)
	for i := range s {
		s[i] = n / p
	}
	return s
}

// SDE returns a Model solving b from each row's initial state (the input)
// to b's last time. Its Brownian path is drawn afresh at each call from
// the call's seed (WithSeed, else Options.Seed), so that a call's answer
// depends on its input and seed only, not on which replica ran it or how
// many calls came before (b.Seed and b.Path are not used). The path is
// the batch's: a row's noise depends on where it sits in the batch and
// on the batch's size, unless the pool runs RowsAlone, where every row
// is solved alone with the call's seed (and so gets the path it gets
// alone). Options.Rows' RowErrors changes nothing for an SDE.
func SDE[T tensor.Float](b *sde.Block[T]) Model[T] { return &sdeModel[T]{b: b} }

type sdeModel[T tensor.Float] struct {
	b    *sde.Block[T]
	seed uint64
}

func (m *sdeModel[T]) Params() []*autograd.Param[T] { return m.b.Params() }

func (m *sdeModel[T]) setSeed(s uint64) { m.seed = s }

func (m *sdeModel[T]) Forward(tp *autograd.Tape[T], x autograd.Var[T]) (autograd.Var[T], error) {
	b := m.b
	ts := b.Times
	if ts == nil {
		ts = []float64{0, 1}
	}
	if len(ts) < 2 {
		return autograd.Var[T]{}, fmt.Errorf("infer: SDE: Block.Times %v needs at least two times", ts)
	}
	shape, err := sdePathShape(b, x.Shape())
	if err != nil {
		return autograd.Var[T]{}, err
	}
	path, err := sde.NewBrownian[T](ts[0], ts[len(ts)-1], shape, sde.BrownianOptions{Seed: m.seed, NoArea: b.NoArea})
	if err != nil {
		return autograd.Var[T]{}, fmt.Errorf("infer: SDE: %w", err)
	}
	b.Path = path
	defer func() { b.Path = nil }()
	return b.Forward(tp, x)
}

// sdePathShape is the shape of the Brownian path b's noise needs for a
// state of shape y (as sde.Block draws its own).
func sdePathShape[T tensor.Float](b *sde.Block[T], y []int) ([]int, error) {
	rows := 1
	if len(y) >= 2 {
		rows = y[0]
	}
	switch b.Options.Noise {
	case sde.Diagonal:
		return append([]int(nil), y...), nil
	case sde.Scalar:
		if len(y) < 2 {
			return []int{1}, nil
		}
		return []int{rows, 1}, nil
	case sde.General:
		if b.BrownianSize < 1 {
			return nil, fmt.Errorf("infer: SDE: a Block with general noise needs BrownianSize ≥ 1, not %d", b.BrownianSize)
		}
		if len(y) < 2 {
			return []int{b.BrownianSize}, nil
		}
		return []int{rows, b.BrownianSize}, nil
	}
	return nil, fmt.Errorf("infer: SDE: unknown noise type %v", b.Options.Noise)
}
