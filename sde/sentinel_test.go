package sde_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/sde"
)

// TestSentinelsShared: sde's solve errors are odeblock's, so errors.Is
// answers alike for both kinds of solve, wrapped or not.
func TestSentinelsShared(t *testing.T) {
	for _, c := range []struct {
		name      string
		sde, odes error
	}{
		{"ErrMaxSteps", sde.ErrMaxSteps, odeblock.ErrMaxSteps},
		{"ErrStepUnderflow", sde.ErrStepUnderflow, odeblock.ErrStepUnderflow},
		{"ErrNonFinite", sde.ErrNonFinite, odeblock.ErrNonFinite},
	} {
		wrapped := fmt.Errorf("sde: at t=0.5: %w", c.sde)
		if !errors.Is(wrapped, c.odes) || !errors.Is(fmt.Errorf("odeblock: %w", c.odes), c.sde) {
			t.Errorf("%s: errors.Is does not see sde's and odeblock's as one", c.name)
		}
	}
	if errors.Is(sde.ErrMaxSteps, odeblock.ErrNonFinite) {
		t.Error("ErrMaxSteps is ErrNonFinite")
	}
}
