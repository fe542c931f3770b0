package integrate

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adamnode/adamnode/odeblock/internal/hooks"
	"github.com/adamnode/adamnode/tensor"
)

// tensorStep is one step recomputed through the tensor hooks: its
// tensors, made once, and the functions RKStagesOn is handed.
type tensorStep[T tensor.Float] struct {
	ew            tensor.Elementwise[T]
	tb            *Tableau
	g             hooks.StepGeom
	y0, y1, input *tensor.Tensor[T]
	k             []*tensor.Tensor[T]
	times         []float64
	coef          []T
	xs            []*tensor.Tensor[T]
	in            func(int) *tensor.Tensor[T]
	eval          func(int, float64, *tensor.Tensor[T]) error
}

// newTensorStep returns the step g of method m from a state of n values,
// its stages f(t, y) = −(1+t)·y evaluated with ew's LinComb (which
// allocates nothing on the CPU engine, split or not).
func newTensorStep[T tensor.Float](ew tensor.Elementwise[T], m string, g hooks.StepGeom, n int) *tensorStep[T] {
	tb, _ := Method(m)
	st := &tensorStep[T]{ew: ew, tb: tb, g: g, y0: tensor.New[T](n), y1: tensor.New[T](n), input: tensor.New[T](n), times: make([]float64, 0, tb.Stages()),
		coef: make([]T, 1), xs: make([]*tensor.Tensor[T], 1)}
	y0 := st.y0.Data()
	for i := range y0 {
		y0[i] = T(math.Sin(float64(2*i + 1)))
	}
	for range tb.Stages() {
		st.k = append(st.k, tensor.New[T](n))
	}
	st.in = func(int) *tensor.Tensor[T] { return st.input }
	st.eval = func(i int, t float64, y *tensor.Tensor[T]) error {
		st.times = append(st.times, t)
		st.coef[0], st.xs[0] = T(-(1 + t)), y
		ew.LinComb(st.k[i], nil, st.coef, st.xs)
		st.xs[0] = nil
		return nil
	}
	return st
}

// run recomputes the step's stages and solution through h's tensor hooks.
func (st *tensorStep[T]) run(h *hooks.Integrator[T, *Solver[T], *Tableau, Stats, StepInfo[T]]) error {
	st.times = st.times[:0]
	if err := h.RKStagesOn(st.ew, st.tb, st.g, st.y0, st.k, 0, st.tb.Stages(), st.in, st.eval); err != nil {
		return err
	}
	h.RKSolutionOn(st.ew, st.tb, st.g.H, st.y0, st.y1, st.input, st.k)
	return nil
}

// hostStep is the step recomputed on the host slices of a solver of
// method m (rkStages and rkSolution on its vector operations, the stages
// evaluated by ew on views of the slices): the solution, the stages and
// the stage times.
func hostStep[T tensor.Float](t *testing.T, ew tensor.Elementwise[T], m string, g hooks.StepGeom, y0 []T) (y1 []T, k [][]T, times []float64) {
	t.Helper()
	s, err := NewSolver[T](Options{Method: m, Step: math.Abs(g.H)})
	if err != nil {
		t.Fatal(err)
	}
	n := len(y0)
	k = make([][]T, s.Tableau().Stages())
	for i := range k {
		k[i] = make([]T, n)
	}
	in, y1 := make([]T, n), make([]T, n)
	err = rkStages[[]T](s.ops(), s.tb, fromHook(g), y0, k, 0, len(k), func(int) []T { return in }, func(i int, ti float64, y []T) error {
		times = append(times, ti)
		ew.LinComb(tensor.FromSlice(k[i]), nil, []T{T(-(1 + ti))}, []*tensor.Tensor[T]{tensor.FromSlice(y)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rkSolution[[]T](s.ops(), s.tb, g.H, y0, y1, in, k)
	return y1, k, times
}

// TestTensorHooksAllocs checks RKStagesOn and RKSolutionOn on the CPU
// engine's Elementwise: a step recomputed through them has the stages,
// stage times and solution of the host solver's slices (hostStep) to the
// bit, again on every call, and a call allocates nothing once the hooks
// have a combiner to lend (methods with and without FSAL, short states
// and states long enough for the engine to split the sums over its
// workers).
func TestTensorHooksAllocs(t *testing.T) {
	testTensorHooksAllocs[float32](t)
	testTensorHooksAllocs[float64](t)
}

func testTensorHooksAllocs[T tensor.Float](t *testing.T) {
	g := hooks.StepGeom{T: 0.3, H: 0.05, End: 0.35, T0: 0.3}
	for _, c := range []struct {
		m       string
		n, jobs int
	}{
		{"dopri5", 37, 1}, {"rk4", 37, 1}, {"dop853", 37, 1}, {"bosh3", 5, 1},
		{"tsit5", 1 << 16, 2}, {"rk38", 1<<16 + 3, 2},
	} {
		name := fmt.Sprintf("%T %s n=%d", T(0), c.m, c.n)
		ew := tensor.ElementwiseOf(tensor.EngineFor[T](tensor.Gonum(c.jobs)))
		st := newTensorStep(ew, c.m, g, c.n)
		wantY1, wantK, wantTimes := hostStep(t, ew, c.m, g, st.y0.Data())
		h := hk[T]()
		for pass := range 2 {
			if err := st.run(h); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if d := cmp.Diff(wantTimes, st.times); d != "" {
				t.Errorf("%s pass %d: stage times (-host +tensor):\n%s", name, pass, d)
			}
			if !cmp.Equal(wantY1, st.y1.Data()) {
				t.Errorf("%s pass %d: the solution differs from the host's", name, pass)
			}
			for i, k := range st.k {
				if !cmp.Equal(wantK[i], k.Data()) {
					t.Errorf("%s pass %d: stage %d differs from the host's", name, pass, i)
				}
			}
		}
		if raceEnabled {
			continue // the race detector's sync.Pool drops what it is given
		}
		var err error
		if a := testing.AllocsPerRun(20, func() { err = st.run(h) }); a != 0 || err != nil {
			t.Errorf("%s: %v allocations a step, error %v; want none", name, a, err)
		}
	}
}

// TestTensorHooksConcurrent: goroutines recomputing steps through the one
// table of hooks at once (each its own Elementwise's, float64 and
// float32, as Blocks trained side by side) each get the host's solution
// to the bit; under the race detector, no two share a combiner.
func TestTensorHooksConcurrent(t *testing.T) {
	g := hooks.StepGeom{T: 1, H: -0.1, End: 0.9, T0: 1}
	ew := tensor.ElementwiseOf(tensor.EngineFor[float64](tensor.Gonum(1)))
	want, _, _ := hostStep(t, ew, "dopri5", g, newTensorStep(ew, "dopri5", g, 23).y0.Data())
	var wg sync.WaitGroup
	bad := make([]int, 4)
	for w := range bad {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := newTensorStep(tensor.ElementwiseOf(tensor.EngineFor[float64](tensor.Gonum(1))), "dopri5", g, 23)
			for range 50 {
				if err := st.run(hk[float64]()); err != nil || !cmp.Equal(want, st.y1.Data()) {
					bad[w]++
				}
			}
		}()
	}
	wg.Wait()
	if d := cmp.Diff(make([]int, len(bad)), bad); d != "" {
		t.Errorf("steps differing from the host's, per goroutine (-want +got):\n%s", d)
	}
}
