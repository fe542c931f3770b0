package integrate

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/tensor"
)

// quietDevice is a device engine (OnDevice) whose Elementwise is the
// host's with an ErrorNorm that allocates nothing, so that what a device
// solve allocates is the solver's own.
type quietDevice[T tensor.Float] struct{ tensor.Engine[T] }

func (quietDevice[T]) Elementwise() tensor.Elementwise[T] {
	return quietNorm[T]{tensor.HostElementwise[T]()}
}

// quietNorm is an Elementwise whose ErrorNorm is the RMS of the scaled
// error over one part (the solves here set no ErrorParts).
type quietNorm[T tensor.Float] struct{ tensor.Elementwise[T] }

func (quietNorm[T]) ErrorNorm(e, y0, y1 *tensor.Tensor[T], atol, rtol T, _ []int) (float64, bool) {
	ed, a, b := e.Data(), y0.Data(), y1.Data()
	if len(ed) == 0 {
		return 0, true
	}
	var sum float64
	for i, x := range ed {
		r := float64(x) / (float64(atol) + float64(rtol)*math.Max(math.Abs(float64(a[i])), math.Abs(float64(b[i]))))
		sum += r * r
	}
	r := math.Sqrt(sum / float64(len(ed)))
	return r, !math.IsNaN(r) && !math.IsInf(r, 0)
}

// TestSolveTensorsAllocs checks what a SolveTensors allocates once its
// solver has solved before: nothing, on the host (the CPU engine) and on
// a device, with flat states and outputs, at fixed and adaptive steps,
// outputs inside steps (the Hermite, the quartic and a tableau's dense
// weights) and through SolveTensors as through odeblock's hook; with
// shaped states, the outputs' flat views a solve and nothing a step (ten
// times the steps, the same allocations).
func TestSolveTensorsAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	cpu := tensor.EngineFor[float64](tensor.Gonum(1))
	ew := tensor.ElementwiseOf(cpu)
	f := func(_ float64, y, dy *tensor.Tensor[float64]) error {
		ew.Map(tensor.MapScale, dy, y, -0.5, 0)
		return nil
	}
	ts := []float64{0, 0.105, 0.2, 0.55, 0.905, 1}
	for _, eng := range []tensor.Engine[float64]{cpu, quietDevice[float64]{cpu}} {
		for _, c := range []struct {
			m    string
			step float64
		}{{"rk4", 0.01}, {"dopri5", 0.01}, {"dop853", 0.01}, {"dopri5", 0}, {"tsit5", 0}} {
			for _, shape := range [][]int{{6}, {2, 3}} {
				name := fmt.Sprintf("%T %s step %v shape %v", eng, c.m, c.step, shape)
				y0 := tensor.New[float64](shape...)
				for i := range y0.Data() {
					y0.Data()[i] = float64(i) - 2.5
				}
				var out []*tensor.Tensor[float64]
				for range ts {
					out = append(out, tensor.New[float64](shape...))
				}
				solves := func(opt Options) (float64, float64) {
					s, err := NewSolverOn[float64](eng, opt)
					if err != nil {
						t.Fatal(err)
					}
					if s.deviceSolve() != (eng != tensor.Engine[float64](cpu)) {
						t.Fatalf("%s: a device solve %v", name, s.deviceSolve())
					}
					var err1, err2 error
					a := testing.AllocsPerRun(3, func() { _, err1 = s.SolveTensors(f, y0, ts, out) })
					eval := func(_ evalKind, _ int, t float64, y, dy *tensor.Tensor[float64]) error { return f(t, y, dy) }
					b := testing.AllocsPerRun(3, func() { _, err2 = s.solveTensorsEval(eval, y0, ts, out) })
					if err1 != nil || err2 != nil {
						t.Fatalf("%s: %v, %v", name, err1, err2)
					}
					return a, b
				}
				opt := Options{Method: c.m, Step: c.step, RTol: 1e-5, ATol: 1e-7}
				a, b := solves(opt)
				opt.Step /= 10
				opt.RTol /= 1e3
				a10, b10 := solves(opt)
				if a != b || a10 != b10 || a != a10 {
					t.Errorf("%s: SolveTensors %v allocations, the hook's %v; ten times the steps %v and %v", name, a, b, a10, b10)
				}
				if len(shape) == 1 && a != 0 {
					t.Errorf("%s: a flat solve allocates %v, want none", name, a)
				}
			}
		}
	}
}

// TestSolveTensorsReshapes: one solver solving states of the same length
// in turn shaped [2 3], [3 2], [6] and [2 3] again hands f views in each
// solve's shape, on the host and on a device, and keeps none of the
// caller's tensors or functions after a solve (its slices of outputs
// emptied, their room kept).
func TestSolveTensorsReshapes(t *testing.T) {
	cpu := tensor.EngineFor[float64](tensor.Gonum(1))
	ew := tensor.ElementwiseOf(cpu)
	for _, eng := range []tensor.Engine[float64]{cpu, quietDevice[float64]{cpu}} {
		s, err := NewSolverOn[float64](eng, Options{Method: "rk4", Step: 0.25})
		if err != nil {
			t.Fatal(err)
		}
		for _, shape := range [][]int{{2, 3}, {3, 2}, {6}, {2, 3}} {
			name := fmt.Sprintf("%T shape %v", eng, shape)
			y0 := tensor.New[float64](shape...)
			out := []*tensor.Tensor[float64]{tensor.New[float64](shape...), tensor.New[float64](shape...), tensor.New[float64](6)}
			var got [][]int
			_, err := s.SolveTensors(func(_ float64, y, dy *tensor.Tensor[float64]) error {
				got = append(got, y.Shape(), dy.Shape())
				ew.Map(tensor.MapAddScalar, dy, y, 1, 0)
				return nil
			}, y0, []float64{0, 0.25, 0.5}, out)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, g := range got {
				if d := cmp.Diff(shape, g); d != "" {
					t.Fatalf("%s: f got a view (-want +got):\n%s", name, d)
				}
			}
			for i, o := range out { // y' = y + 1 from 0: e^t − 1
				want := slices.Repeat([]float64{math.Expm1(float64(i) / 4)}, 6)
				if d := cmp.Diff(want, o.Data(), cmpopts.EquateApprox(1e-4, 0)); d != "" {
					t.Errorf("%s: output %d of shape %v (-want +got):\n%s", name, i, o.Shape(), d)
				}
			}
			d := &s.dev
			if d.f != nil || d.plain != nil || len(d.out) != 0 || slices.ContainsFunc(d.out[:cap(d.out)], func(x *tensor.Tensor[float64]) bool { return x != nil }) ||
				slices.ContainsFunc(d.outs[:cap(d.outs)], func(x []float64) bool { return x != nil }) {
				t.Errorf("%s: the solver keeps the solve's f %v, SolveTensors' f %v, outputs %v, host outputs %v", name, d.f != nil, d.plain != nil, d.out[:cap(d.out)], d.outs[:cap(d.outs)])
			}
		}
	}
}
