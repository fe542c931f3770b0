package odeblock

// Tests written after a mutation audit (a bug planted in library code that
// no earlier test caught): each fails on its planted bug, named in its doc.

import (
	"errors"
	"math"
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

// driftChecker returns an adjoint of pass p (nil: none) with the drift
// check's buffers for states of n elements, on the host, its backward
// solve's ATol atol.
func driftChecker(opt Adjoint, p *pass[float64], n int, atol float64) *adjoint[float64] {
	a := &adjoint[float64]{opt: opt, p: p, bopt: Options{ATol: atol}}
	a.w = &adjointWork[float64]{diff: tensor.New[float64](n), mask: tensor.New[float64](n),
		terms: make([]*tensor.Tensor[float64], 1), minusOne: []float64{-1}}
	if p != nil {
		a.setPhase(false)
	} else {
		a.ew = tensor.HostElementwise[float64]() // the host phase of no engine
	}
	a.fillMask()
	return a
}

// checkDrift runs a's drift check on the states zr, z0, z1.
func checkDrift(a *adjoint[float64], zr, z0, z1 []float64, rtol float64) error {
	return a.checkDrift(tensor.FromSlice(zr), tensor.FromSlice(z0), tensor.FromSlice(z1), 1, 0, rtol, 1, 1)
}

// TestCheckDriftThreshold: the Adjoint mode's drift check around its bound
// (Adjoint.MaxDrift = 0.05): a relative difference just above it fails
// with ErrAdjointDrift, just below passes; the difference is relative to
// the larger of the segment's two end states, and at least ATol·√n; NaN
// and Inf fail; a negative MaxDrift turns the check off; the default
// (MaxDrift 0) passes a reconstruction that agrees to rounding and fails
// one off by its own size. (Planted bugs: rel <= 10*bound; rel < bound
// dropped for NaN; the denominator of z0 only.)
func TestCheckDriftThreshold(t *testing.T) {
	const bound, rtol, atol = 0.05, 1e-6, 1e-9
	check := func(maxDrift float64, zr, z0, z1 []float64) error {
		return checkDrift(driftChecker(Adjoint{MaxDrift: maxDrift}, nil, len(zr), atol), zr, z0, z1, rtol)
	}
	floor := atol * math.Sqrt2 // ATol·√n for n = 2
	for _, c := range []struct {
		name       string
		zr, z0, z1 []float64
		drift      bool
	}{
		{"just below", []float64{3, 4 + 5*bound*(1-1e-6)}, []float64{3, 4}, []float64{3, 4}, false},
		{"just above", []float64{3, 4 + 5*bound*(1+1e-6)}, []float64{3, 4}, []float64{3, 4}, true},
		{"twice the bound", []float64{3, 4 + 10*bound}, []float64{3, 4}, []float64{3, 4}, true},
		{"exact", []float64{3, 4}, []float64{3, 4}, []float64{3, 4}, false},
		// Relative to |z1| = 5 when z0 is 0: 0.2/5 = 0.04, 0.3/5 = 0.06.
		{"z1 larger, below", []float64{0, 0.2}, []float64{0, 0}, []float64{3, 4}, false},
		{"z1 larger, above", []float64{0, 0.3}, []float64{0, 0}, []float64{3, 4}, true},
		// Relative to |z0| = 5 when z1 is 0.
		{"z0 larger, below", []float64{3, 4.2}, []float64{3, 4}, []float64{0, 0}, false},
		{"z0 larger, above", []float64{3, 4.3}, []float64{3, 4}, []float64{0, 0}, true},
		// Both ends 0: relative to ATol·√n.
		{"at the floor, below", []float64{0.04 * floor, 0}, []float64{0, 0}, []float64{0, 0}, false},
		{"at the floor, above", []float64{0.06 * floor, 0}, []float64{0, 0}, []float64{0, 0}, true},
		{"NaN", []float64{3, math.NaN()}, []float64{3, 4}, []float64{3, 4}, true},
		{"Inf", []float64{math.Inf(1), 4}, []float64{3, 4}, []float64{3, 4}, true},
		{"NaN forward", []float64{3, 4}, []float64{3, math.NaN()}, []float64{3, 4}, true},
	} {
		err := check(bound, c.zr, c.z0, c.z1)
		if c.drift != errors.Is(err, ErrAdjointDrift) || c.drift != (err != nil) {
			t.Errorf("%s: %v, want a drift: %v", c.name, err, c.drift)
		}
	}
	if err := check(-1, []float64{math.NaN(), 100}, []float64{3, 4}, []float64{3, 4}); err != nil {
		t.Errorf("MaxDrift −1 (no check): %v", err)
	}
	if err := check(0, []float64{3, 4 + 1e-12}, []float64{3, 4}, []float64{3, 4}); err != nil {
		t.Errorf("the default bound: a difference of 2e-13 relative: %v", err)
	}
	if err := check(0, []float64{6, 8}, []float64{3, 4}, []float64{3, 4}); !errors.Is(err, ErrAdjointDrift) {
		t.Errorf("the default bound: a difference of 1 relative: %v", err)
	}
}

// TestDefaultDriftBound: the default drift check (MaxDrift 0) around its
// two bounds: the drift weighted by min(1, a0/a1) at most 10·rtol, the
// drift itself at most max(1e-2, 10·rtol); an infinite rtol (a recovery's
// one-step pieces) asks for the second only; NaN fails everywhere.
func TestDefaultDriftBound(t *testing.T) {
	for _, c := range []struct {
		name      string
		rel, rtol float64
		a1, a0    float64
		drift     bool
	}{
		{"just below 10·rtol", 1e-7 * (1 - 1e-9), 1e-8, 1, 1, false},
		{"just above 10·rtol", 1e-7 * (1 + 1e-9), 1e-8, 1, 1, true},
		{"at 10·rtol", tolDriftFactor * 1e-8, 1e-8, 1, 1, false},
		{"a growing adjoint weighs 1", 1e-7 * (1 + 1e-9), 1e-8, 1, 10, true},
		{"a shrinking adjoint: weighted below", 1e-6 * (1 - 1e-9), 1e-8, 1, 0.1, false},
		{"a shrinking adjoint: weighted above", 1e-6 * (1 + 1e-9), 1e-8, 1, 0.1, true},
		{"the weight is a ratio: below", 1e-6 * (1 - 1e-9), 1e-8, 20, 2, false},
		{"the weight is a ratio: above", 1e-6 * (1 + 1e-9), 1e-8, 20, 2, true},
		{"no adjoint at the start weighs 1", 1e-7 * (1 + 1e-9), 1e-8, 0, 0, true},
		{"weighted below, but above 1e-2", 1.01e-2, 1e-8, 1, 1e-9, true},
		{"weighted below, just below 1e-2", 0.99e-2, 1e-8, 1, 1e-9, false},
		{"weighted below, at 1e-2", defaultMaxDrift, 1e-8, 1, 1e-9, false},
		{"loose rtol: 10·rtol above 1e-2", 0.0499, 5e-3, 1, 1, false},
		{"loose rtol: above 10·rtol", 0.0501, 5e-3, 1, 1, true},
		{"one-step piece: 1e-2 only", 0.99e-2, math.Inf(1), 1, 1, false},
		{"one-step piece: above 1e-2", 1.01e-2, math.Inf(1), 1, 1, true},
		{"NaN", math.NaN(), 1e-8, 1, 1, true},
		{"NaN, one-step piece", math.NaN(), math.Inf(1), 1, 1, true},
	} {
		err := driftVerdict(c.rel, 0, c.rtol, c.a1, c.a0, 1, 0)
		if c.drift != errors.Is(err, ErrAdjointDrift) || c.drift != (err != nil) {
			t.Errorf("%s: %v, want a drift: %v", c.name, err, c.drift)
		}
	}
}

// TestCheckDriftIntegrals: the drift check leaves out a CNF's log-density
// column (IntegralParts), in the difference and in the size it is
// measured against: a reconstruction off only in Δ passes; one off in z
// by 6% of |z| fails even where Δ is large. (Planted bugs: the mask
// ignored; the mask's column off by one.)
func TestCheckDriftIntegrals(t *testing.T) {
	a := driftChecker(Adjoint{MaxDrift: 0.05}, &pass[float64]{b: &Block[float64]{Dynamics: &CNF[float64]{}}, shape: []int{2, 2}, n: 4}, 4, 1e-9)
	z0 := []float64{3, 100, 4, 100} // rows [z, Δ]
	for _, c := range []struct {
		name  string
		zr    []float64
		drift bool
	}{
		{"Δ off", []float64{3, 150, 4, 40}, false},
		{"z off", []float64{3, 100, 4.3, 100}, true},
		{"z slightly off", []float64{3, 100, 4.2, 100}, false},
	} {
		err := checkDrift(a, c.zr, z0, z0, 1e-6)
		if c.drift != errors.Is(err, ErrAdjointDrift) {
			t.Errorf("%s: %v, want a drift: %v", c.name, err, c.drift)
		}
	}
}
