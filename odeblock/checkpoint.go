package odeblock

import "github.com/adamnode/adamnode/tensor"

// Checkpoint keeps the state at the start of each accepted step and, in
// backward, recomputes one step at a time on tapes. Its gradients equal
// Backprop's; memory grows with steps × state only. Recursive bounds that
// memory too. With a method whose steps are not explicit RK stages (the
// stiff, implicit and Adams methods) it runs as Interpolated.
type Checkpoint struct{}

func init() { registerMode(Checkpoint{}) }

func (Checkpoint) stepsOnly() GradMode { return Interpolated{} }

func (Checkpoint) String() string  { return "checkpoint" }
func (Checkpoint) validate() error { return nil }

func (Checkpoint) strategy32(p *pass[float32]) strategy[float32] { return &checkpoint[float32]{p: p} }
func (Checkpoint) strategy64(p *pass[float64]) strategy[float64] { return &checkpoint[float64]{p: p} }

// checkpoint is Checkpoint at work on one pass.
type checkpoint[T tensor.Float] struct {
	p *pass[T]
}

func (c *checkpoint[T]) stepEnds() bool { return !outputsInside(c.p.b.Solver) }

// forwardOnDevice: Checkpoint's forward solve may run on a device, the
// steps' states kept in its memory.
func (c *checkpoint[T]) forwardOnDevice() bool { return true }

// forward returns the step hook; the solve evaluates the dynamics without
// gradients (pass.tensorEvaluator).
func (c *checkpoint[T]) forward() func(StepInfo[T]) error {
	c.p.startParamGrads()
	return func(si StepInfo[T]) error {
		if sp := c.p.logStep(si); sp != nil {
			c.p.keepStart(sp, si)
		}
		return nil
	}
}

func (c *checkpoint[T]) abort() { c.putStates() }

func (c *checkpoint[T]) backward(g *tensor.Tensor[T]) ([]*tensor.Tensor[T], error) {
	defer c.putStates()
	p := c.p
	p.b.stats.Stored = len(p.steps)
	tapes := p.restageTapes(p.solver.Tableau().Stages())
	return p.stepsBackward(g, func(j int, need []bool) ([]*stageTape[T], int, error) {
		sp := &p.steps[j]
		nfe, err := p.restage(sp, sp.y0, tapes, need)
		return tapes, nfe, err
	})
}

// putStates gives the steps' states back to the Block's pool, keeping no
// more than this pass used.
func (c *checkpoint[T]) putStates() {
	c.p.putStarts()
	c.p.b.pools.trimStates(len(c.p.steps))
}
