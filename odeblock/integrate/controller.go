package integrate

import "math"

// controller is a step-size controller: it returns the factor by which to
// scale a step whose error ratio was ratio (≤ 1 accepted, above rejected)
// to get the next step, and keeps what it needs of the accepted steps'
// history.
type controller interface {
	factor(ratio float64, accepted bool) float64
	// accept notes the error ratio of an accepted step.
	accept(ratio float64)
	// reset forgets the history, at the start of a solve.
	reset()
}

// newController returns the controller Options ask for: the I controller,
// or the PI controller when PCoeff is set.
func newController(opt Options, tb *Tableau) controller {
	ic := iController{safety: opt.Safety, ifactor: opt.IFactor, dfactor: opt.DFactor, order: float64(tb.estimateOrder()),
		shrink: tb.Stiff()}
	if opt.PCoeff > 0 {
		return &piController{iController: ic, pcoeff: opt.PCoeff, prev: 1}
	}
	return &ic
}

// iController is the integral (I) controller of torchdiffeq and
// Hairer–Nørsett–Wanner: factor = min(IFactor, max(lo, Safety·ratio^(−1/order))),
// lo being DFactor after a rejected step and 1 after an accepted one (an
// accepted step never shrinks the next, as torchdiffeq's); IFactor when the
// error is zero. For the stiff (Rosenbrock) methods lo is DFactor after an
// accepted step too, as in Hairer and Wanner's codes: an accepted step
// with an error ratio near 1 shrinks the next, where a stiff transient
// begins, instead of having it rejected.
type iController struct {
	safety, ifactor, dfactor, order float64
	shrink                          bool // accepted steps may shrink the next
}

func (c *iController) factor(ratio float64, accepted bool) float64 {
	if ratio == 0 {
		return c.ifactor
	}
	return c.clamp(c.safety*math.Pow(ratio, -1/c.order), accepted)
}

// clamp bounds a raw factor by [lo, IFactor].
func (c *iController) clamp(f float64, accepted bool) float64 {
	lo := c.dfactor
	if accepted && !c.shrink {
		lo = 1
	}
	return math.Min(c.ifactor, math.Max(f, lo))
}

func (c *iController) accept(float64) {}
func (c *iController) reset()         {}

// piController is the proportional–integral controller: the I controller's
// raw factor times (prev/ratio)^(PCoeff/order), prev being the error ratio
// of the last accepted step (1 before the first), then bounded as the I
// controller's.
type piController struct {
	iController
	pcoeff, prev float64
}

func (c *piController) factor(ratio float64, accepted bool) float64 {
	if ratio == 0 {
		return c.ifactor
	}
	f := c.safety * math.Pow(ratio, -1/c.order) * math.Pow(c.prev/ratio, c.pcoeff/c.order)
	return c.clamp(f, accepted)
}

func (c *piController) accept(ratio float64) { c.prev = math.Max(ratio, 1e-10) }
func (c *piController) reset()               { c.prev = 1 }
