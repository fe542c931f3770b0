package integrate

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/odeblock/internal/hooks"
	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/tensor/enginetest"
)

// hk is the table package odeblock looks up.
func hk[T tensor.Float]() *hooks.Integrator[T, *Solver[T], *Tableau, Stats, StepInfo[T]] {
	return hooks.Of[T, *Solver[T], *Tableau, Stats, StepInfo[T]]()
}

// slowing is dy/dt = −y·(1 + t), told the purpose of each evaluation.
func slowing[T tensor.Float](_ evalKind, _ int, t float64, y, dy []T) error {
	for i := range y {
		dy[i] = -y[i] * T(1+t)
	}
	return nil
}

// TestHooksRecomputeSteps checks what odeblock does with a step's hooks:
// from each accepted step's geometry (Geom) the stages recomputed with
// rkStages, and the solution with rkSolution, on the solver's vector
// operations give the solver's Y1 to the bit, at the times StageTime
// names; for both element types.
func TestHooksRecomputeSteps(t *testing.T) {
	testHooksRecompute[float32](t)
	testHooksRecompute[float64](t)
}

func testHooksRecompute[T tensor.Float](t *testing.T) {
	h := hk[T]()
	for _, method := range []string{"dopri5", "bosh3", "rk4"} {
		opt := Options{Method: method, RTol: 1e-6, ATol: 1e-8}
		if method == "rk4" {
			opt = Options{Method: method, Step: 0.3}
		}
		opt.Jumps = []float64{0.55}
		s, err := NewSolver[T](opt)
		if err != nil {
			t.Fatal(err)
		}
		tb := s.Tableau()
		var steps, wrong int
		s.OnStep = func(si StepInfo[T]) error {
			if !si.Accepted {
				return nil
			}
			steps++
			g := h.Geom(si)
			if fromHook(g) != si.geom || g.Start() != si.T || g.Size() != si.H {
				t.Errorf("%s: Geom %+v of the step %+v", method, g, si.geom)
			}
			k := make([][]T, tb.Stages())
			for i := range k {
				k[i] = make([]T, len(si.Y0))
			}
			in := make([]T, len(si.Y0))
			var times []float64
			err := rkStages[[]T](s.ops(), s.tb, fromHook(g), si.Y0, k, 0, tb.Stages(), func(int) []T { return in }, func(i int, ti float64, y []T) error {
				times = append(times, ti)
				if ti != h.StageTime(g, tb, i) || ti != si.geom.StageTime(tb, i) {
					t.Errorf("%s: stage %d at %v, StageTime %v", method, i, ti, h.StageTime(g, tb, i))
				}
				return slowing(evalStage, i, ti, y, k[i])
			})
			if err != nil {
				return err
			}
			y1 := make([]T, len(si.Y0))
			rkSolution[[]T](s.ops(), s.tb, g.Size(), si.Y0, y1, in, k)
			if !cmp.Equal(y1, si.Y1) {
				wrong++
			}
			return nil
		}
		y0 := []T{1, -0.5, 2}
		out := [][]T{make([]T, 3), make([]T, 3)}
		if _, err := s.solveEval(slowing[T], y0, []float64{0, 1.2}, out); err != nil {
			t.Fatal(err)
		}
		if steps < 3 || wrong != 0 {
			t.Errorf("%s: %d of %d recomputed steps differ from the solver's", method, wrong, steps)
		}
	}
}

// TestHooksDenseLog checks the dense log through the hooks: a solve with a
// log set keeps its steps, which At evaluates to the solution at the end;
// NewDenseLog of that log takes its steps (and empties it); SetDenseLog
// nil keeps nothing.
func TestHooksDenseLog(t *testing.T) {
	h := hk[float64]()
	s, err := NewSolver[float64](Options{RTol: 1e-7, ATol: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	log := h.NewDenseLog(nil)
	h.SetDenseLog(s, log)
	if s.keep != asDenseLog(log) || s.keep == nil {
		t.Fatal("SetDenseLog did not set the solver's log")
	}
	out := [][]float64{make([]float64, 2), make([]float64, 2)}
	if _, err := s.solveEval(slowing[float64], []float64{1, 3}, []float64{0, 2}, out); err != nil {
		t.Fatal(err)
	}
	n := log.Len()
	at := make([]float64, 2)
	log.At(2, at)
	if n < 3 || !cmp.Equal(at, out[1]) {
		t.Errorf("the log kept %d steps; at t=2 %v, the solve %v", n, at, out[1])
	}
	again := h.NewDenseLog(log)
	if log.Len() != 0 || again.Len() != 0 || cap(asDenseLog(again).steps) < n {
		t.Errorf("NewDenseLog: the old log keeps %d steps, the new one %d of capacity %d (want ≥ %d)",
			log.Len(), again.Len(), cap(asDenseLog(again).steps), n)
	}
	h.SetDenseLog(s, nil)
	if s.keep != nil {
		t.Error("SetDenseLog(nil) left a log set")
	}
}

// TestHooksSolverSettings checks the hooks that set up a solver: a shared
// slab (NewShared, SlabLen), the stage sums' workers (UseWorkers) and the
// device (UseDevice, and NewSolverOn for a user).
func TestHooksSolverSettings(t *testing.T) {
	h := hk[float64]()
	var slab []float64
	s := h.NewShared(&slab)
	if s.shared != &slab {
		t.Error("NewShared: the solver does not carve from the slab")
	}
	if err := s.Configure(Options{}); err != nil {
		t.Fatal(err)
	}
	if got, want := h.SlabLen(s, 7), s.slabLen(7); got != want || got < 7 {
		t.Errorf("SlabLen(7) = %d, the solver's %d", got, want)
	}
	two := tensor.EngineFor[float64](tensor.Gonum(2))
	h.UseWorkers(s, two)
	if s.comb.eng != two {
		t.Error("UseWorkers: the stage sums do not split over the engine's workers")
	}
	cpu := tensor.EngineFor[float64](tensor.Gonum(1))
	dev := enginetest.NewParkingDevice(cpu)
	if h.UseDevice(s, cpu) || s.dev.ew != nil {
		t.Error("UseDevice: a CPU engine put the solver on a device")
	}
	if !h.UseDevice(s, dev) || s.dev.ew == nil {
		t.Error("UseDevice: an engine with an Elementwise left the solver off the device")
	}

	on, err := NewSolverOn[float64](dev, Options{})
	if err != nil || on.dev.ew == nil {
		t.Errorf("NewSolverOn with a device: %v, on the device %v", err, err == nil && on.dev.ew != nil)
	}
	if off, err := NewSolverOn[float64](cpu, Options{}); err != nil || off.dev.ew != nil {
		t.Errorf("NewSolverOn with a CPU engine: %v, on a device %v", err, err == nil && off.dev.ew != nil)
	}
	if _, err := NewSolverOn[float64](dev, Options{RTol: -1}); err == nil {
		t.Error("NewSolverOn took a negative RTol")
	}
	// The same solve on the device and on the host agree up to the
	// device's rounding (see "Solving on a device").
	const n = 6
	solve := func(s *Solver[float64], ew tensor.Elementwise[float64]) []float64 {
		f, _ := ewField(ew, math.Inf(1), n, 0)
		outs := []*tensor.Tensor[float64]{tensor.New[float64](n), tensor.New[float64](n)}
		if _, err := h.SolveTensorsEval(s, f, tensor.FromSlice(initial[float64](n, false)), []float64{0, 1}, outs); err != nil {
			t.Fatal(err)
		}
		return outs[1].ReadData()
	}
	host, err := NewSolver[float64](Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := solve(host, tensor.HostElementwise[float64]())
	if got := solve(on, dev.Elementwise()); !cmp.Equal(got, want, cmpopts.EquateApprox(0, 1e-9)) {
		t.Errorf("SolveTensorsEval on the device: %v, on the host %v", got, want)
	}
}

// TestEvalStages checks the stage numbers a solve tells f with each
// evaluation of an attempted step's stages: within the solver's stages,
// from 1 (stage 0 is the step's start, told apart) except for bdf,
// whose one evaluation per Newton iteration is its stage 0.
func TestEvalStages(t *testing.T) {
	for _, c := range []struct {
		method string
		lo     int     // the least stage number
		step   float64 // a fixed step, for methods with no error estimate
	}{{"dopri5", 1, 0}, {"bosh3", 1, 0}, {"rodas4", 1, 0}, {"rosenbrock23", 1, 0}, {"implicit_adams", 1, 0.1}, {"radauIIA5", 0, 0.1}, {"bdf", 0, 0}} {
		s, err := NewSolver[float64](Options{Method: c.method, RTol: 1e-6, ATol: 1e-8, Step: c.step})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		f := func(k evalKind, i int, tt float64, y, dy []float64) error {
			if k == evalStage {
				seen[i] = true
			}
			return slowing(k, i, tt, y, dy)
		}
		out := [][]float64{make([]float64, 2), make([]float64, 2)}
		if _, err := s.solveEval(f, []float64{1, -2}, []float64{0, 1}, out); err != nil {
			t.Fatal(err)
		}
		if len(seen) == 0 {
			t.Errorf("%s: no stage evaluations", c.method)
		}
		for i := range seen {
			if i < c.lo || i >= max(len(s.k), 1) {
				t.Errorf("%s: a stage numbered %d of %d (from %d)", c.method, i, len(s.k), c.lo)
			}
		}
	}
}
