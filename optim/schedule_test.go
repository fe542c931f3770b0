package optim

import (
	"math"
	"testing"
)

func TestSchedules(t *testing.T) {
	// cos(π/5) = (1 + √5)/4 and cos(2π/5) = (√5 − 1)/4.
	cos36 := (1 + math.Sqrt(5)) / 4
	cos72 := (math.Sqrt(5) - 1) / 4
	step := StepLR{Base: 0.1, StepSize: 3, Gamma: 0.5}
	cosine := CosineLR{Base: 1, EtaMin: 0.1, TMax: 10}
	for _, tc := range []struct {
		name  string
		s     Schedule
		epoch int
		want  float64
	}{
		{"step e0", step, 0, 0.1},
		{"step e2", step, 2, 0.1},
		{"step e3", step, 3, 0.05},
		{"step e5", step, 5, 0.05},
		{"step e6", step, 6, 0.025},
		{"step e10", step, 10, 0.0125},
		{"step gamma 0.1", StepLR{Base: 1, StepSize: 30, Gamma: 0.1}, 60, 0.01},
		// lr(e) = 0.1 + 0.9·(1 + cos(π·e/10))/2 = 0.1 + 0.45·(1 + cos(π·e/10)).
		{"cosine e0", cosine, 0, 1},
		{"cosine e2", cosine, 2, 0.1 + 0.45*(1+cos36)},
		{"cosine e4", cosine, 4, 0.1 + 0.45*(1+cos72)},
		{"cosine e5", cosine, 5, 0.55},
		{"cosine e8", cosine, 8, 0.1 + 0.45*(1-cos36)},
		{"cosine e10", cosine, 10, 0.1},
		{"cosine e15 (back up)", cosine, 15, 0.55},
		{"cosine e20", cosine, 20, 1},
		{"cosine eta 0", CosineLR{Base: 2, TMax: 4}, 2, 1},
	} {
		if got := tc.s.LR(tc.epoch); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("%s: LR(%d) = %.17g, want %.17g", tc.name, tc.epoch, got, tc.want)
		}
	}
}

func TestScheduleMisuse(t *testing.T) {
	mustPanic(t, "step size 0", "step size", func() { StepLR{Base: 1, Gamma: 0.1}.LR(1) })
	mustPanic(t, "TMax 0", "TMax", func() { CosineLR{Base: 1}.LR(1) })
	mustPanic(t, "negative epoch", "epoch -1", func() { StepLR{Base: 1, StepSize: 1, Gamma: 0.1}.LR(-1) })
}
