package hooks

import (
	"strings"
	"testing"
)

// TestOf checks that Of finds the Integrator registered for its types,
// and panics naming them when none is.
func TestOf(t *testing.T) {
	type solver struct{}
	in := &Integrator[float32, *solver, int, string, bool]{}
	Register(in)
	defer func() { registered = registered[:len(registered)-1] }()
	if got := Of[float32, *solver, int, string, bool](); got != in {
		t.Errorf("Of returned %p, registered %p", got, in)
	}
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "no integrator registered") || !strings.Contains(msg, "float64") {
			t.Errorf("Of of unregistered types panicked with %q", msg)
		}
	}()
	Of[float64, *solver, int, string, bool]()
	t.Error("Of of unregistered types returned")
}

// TestStepGeom checks a step's start and size.
func TestStepGeom(t *testing.T) {
	g := StepGeom{T: 0.5, H: -0.25, End: 0.25, T0: 0.5}
	if g.Start() != 0.5 || g.Size() != -0.25 {
		t.Errorf("Start %v, Size %v of %+v", g.Start(), g.Size(), g)
	}
}
