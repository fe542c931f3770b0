package integrate

import (
	"github.com/adamnode/adamnode/odeblock/internal/hooks"
	"github.com/adamnode/adamnode/tensor"
)

// The hooks package odeblock drives the solver with (see "How odeblock
// drives the solver" in the package doc). The evaluation kinds and
// functions are hooks' types, spelled here without exporting them.

type (
	evalKind                       = hooks.EvalKind
	tensorEvalFunc[T tensor.Float] = hooks.TensorEvalFunc[T]
)

// evalFunc is f told the purpose of each evaluation: the function the
// solver's loop calls.
type evalFunc[T tensor.Float] func(kind evalKind, stage int, t float64, y, dy []T) error

const (
	evalStart   = hooks.EvalStart
	evalProbe   = hooks.EvalProbe
	evalStage   = hooks.EvalStage
	evalStepEnd = hooks.EvalStepEnd
	evalRestart = hooks.EvalRestart
)

func init() {
	hooks.Register(integrator[float32]())
	hooks.Register(integrator[float64]())
}

// integrator returns the hooks of element type T: the package's
// unexported operations under the names odeblock calls them by.
func integrator[T tensor.Float]() *hooks.Integrator[T, *Solver[T], *Tableau, Stats, StepInfo[T]] {
	combs := new(combinerPool[T])
	return &hooks.Integrator[T, *Solver[T], *Tableau, Stats, StepInfo[T]]{
		NewShared:   newShared[T],
		SlabLen:     (*Solver[T]).slabLen,
		SetDenseLog: func(s *Solver[T], l hooks.DenseLog[T]) { s.setDenseLog(asDenseLog(l)) },
		NewDenseLog: func(from hooks.DenseLog[T]) hooks.DenseLog[T] {
			var steps []denseStep[T]
			if l := asDenseLog(from); l != nil {
				steps = l.Release()
			}
			return newDenseLog(steps)
		},
		UseWorkers:       func(s *Solver[T], eng tensor.Engine[T]) { s.comb.use(eng) },
		UseDevice:        (*Solver[T]).useDevice,
		SolveTensorsEval: (*Solver[T]).solveTensorsEval,
		Geom:             func(si StepInfo[T]) hooks.StepGeom { return si.geom.hook() },
		StageTime:        func(g hooks.StepGeom, tb *Tableau, i int) float64 { return fromHook(g).StageTime(tb, i) },
		RKStagesOn: func(ew tensor.Elementwise[T], tb *Tableau, g hooks.StepGeom, y0 *tensor.Tensor[T], k []*tensor.Tensor[T], from, to int, in func(int) *tensor.Tensor[T], eval func(int, float64, *tensor.Tensor[T]) error) error {
			return combs.rkStagesOn(ew, tb, fromHook(g), y0, k, from, to, in, eval)
		},
		RKSolutionOn: combs.rkSolutionOn,
		InterpolateStep: func(tb *Tableau, dst, y0, y1 []T, ks [][]T, t, h, tq float64, f0, f1 []T) {
			var w [16]float64
			interpolateStep(&w, tb, dst, y0, y1, ks, t, h, tq, f0, f1)
		},
	}
}

// asDenseLog returns the log l is (nil for none).
func asDenseLog[T tensor.Float](l hooks.DenseLog[T]) *denseLog[T] {
	d, _ := l.(*denseLog[T])
	return d
}

// newShared returns an unconfigured solver whose work buffers are carved
// from *slab, which other solvers used in turn share (a Block's forward
// and adjoint solvers take turns with one slab); Configure it before use.
func newShared[T tensor.Float](slab *[]T) *Solver[T] { return &Solver[T]{shared: slab} }

// setDenseLog makes the solver keep every accepted step's dense output in
// l (nil: keep nothing).
func (s *Solver[T]) setDenseLog(l *denseLog[T]) { s.keep = l }

// hook returns g as package hooks spells it.
func (g stepGeom) hook() hooks.StepGeom {
	return hooks.StepGeom{T: g.t, H: g.h, End: g.end, T0: g.t0, LeftLimit: g.leftLimit}
}

// fromHook returns the step g spelled by package hooks.
func fromHook(g hooks.StepGeom) stepGeom {
	return stepGeom{t: g.T, h: g.H, end: g.End, t0: g.T0, leftLimit: g.LeftLimit}
}
