package mlpfamily

import (
	"math"
	"testing"
)

// TestReplicas: 2 and 3 replicas (3 splits the batch unevenly) train as
// one problem does: the same loss and gradients at the same weights and
// the same weights after three steps, to the solver's tolerance (each replica's
// adaptive solve takes its own steps).
func TestReplicas(t *testing.T) {
	c := Base()
	c.Batch = 96
	for _, k := range []int{2, 3} {
		one, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		src, _ := New(c)
		reps, err := NewReplicas(src, k)
		if err != nil {
			t.Fatal(err)
		}
		for step := range 3 {
			a, err := one.Step()
			if err != nil {
				t.Fatal(err)
			}
			b, err := reps.Step()
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(a.Loss-b.Loss) > 1e-4*a.Loss {
				t.Errorf("%d replicas, step %d: loss %.8g, one problem %.8g", k, step, b.Loss, a.Loss)
			}
			// The gradients the steps took (Adam hides their scale).
			for _, q := range reps.reps {
				for j, prm := range q.Params {
					want := one.Params[j].Grad.Data()
					var num, den float64
					for i, v := range prm.Grad.Data() {
						num += (float64(v) - float64(want[i])) * (float64(v) - float64(want[i]))
						den += float64(want[i]) * float64(want[i])
					}
					if math.Sqrt(num) > 1e-3*math.Sqrt(den)+1e-7 {
						t.Fatalf("%d replicas, step %d: %s's gradient differs from one problem's by %.3g of its norm", k, step, prm.Name, math.Sqrt(num/den))
					}
				}
			}
		}
		for _, q := range reps.reps {
			for j, prm := range q.Params {
				want := one.Params[j].Value.Data()
				for i, v := range prm.Value.Data() {
					if d := math.Abs(float64(v - want[i])); d > 1e-4*(1+math.Abs(float64(want[i]))) {
						t.Fatalf("%d replicas: %s[%d] = %g, one problem %g", k, prm.Name, i, v, want[i])
					}
				}
			}
		}
	}
	if _, err := NewReplicas(&Problem{Config: c}, 0); err == nil {
		t.Error("0 replicas: no error")
	}
}
