package integrate

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/tensor/enginetest"
)

// ewField returns f(t, y) = −0.8·tanh(y) + (0.3 + 0.2·cos t)·y + 0.05 (NaN
// past tBlow) on all but the
// last q elements of a state of size elements, and 0.5·tanh of the first q elements as the last q
// (quadratures: read by nobody, their derivative of the rest), computed
// with ew's elementwise work only; and a counter of its evaluations.
func ewField[T tensor.Float](ew tensor.Elementwise[T], tBlow float64, size, q int) (tensorEvalFunc[T], *int) {
	scratch := map[int]*tensor.Tensor[T]{}
	calls := new(int)
	return func(_ evalKind, _ int, t float64, y, dy *tensor.Tensor[T]) error {
		*calls++
		n, nd := y.Len(), dy.Len()
		yf, dyf := y.Reshape(n), dy.Reshape(nd)
		p := size - q // the elements that are not quadratures
		s := scratch[p]
		if s == nil {
			s = tensor.New[T](p)
			scratch[p] = s
		}
		ew.Map(tensor.MapTanh, s, yf.Slice(0, p), 0, 0)
		if t > tBlow {
			ew.Fill(dyf, T(math.NaN()))
			return nil
		}
		c := 0.3 + 0.2*math.Cos(t)
		ew.LinComb(dyf.Slice(0, p), nil, []T{-0.8, T(c)}, []*tensor.Tensor[T]{s, yf.Slice(0, p)})
		ew.Map(tensor.MapAddScalar, dyf.Slice(0, p), dyf.Slice(0, p), 0.05, 0)
		if nd > p {
			ew.Map(tensor.MapTanh, dyf.Slice(p, nd), yf.Slice(0, nd-p), 0, 0)
			ew.Map(tensor.MapScale, dyf.Slice(p, nd), dyf.Slice(p, nd), 0.5, 0)
		}
		return nil
	}, calls
}

// deviceCase is one solve of TestSolveOnDevice.
type deviceCase struct {
	name string
	opt  Options
	ts   []float64
	n    int
	zero bool // start from y0 = 0 (the first step's selection then caps it at 100·h0)
}

func deviceCases() []deviceCase {
	span := []float64{0, 2}
	outs := []float64{0, 0.3, 0.7, 1.1, 2}
	var cs []deviceCase
	for _, m := range []string{"dopri5", "tsit5", "dop853", "dopri8"} {
		cs = append(cs, deviceCase{m, Options{Method: m, RTol: 1e-6, ATol: 1e-8}, outs, 37, false})
	}
	for _, m := range []string{"bosh3", "fehlberg2", "heun-euler", "adaptive_heun"} { // low orders: few steps at loose tolerances
		cs = append(cs, deviceCase{m, Options{Method: m, RTol: 1e-3, ATol: 1e-5}, outs, 37, false})
	}
	for _, m := range []string{"rk4", "euler", "midpoint", "rk38"} {
		cs = append(cs, deviceCase{m + " fixed", Options{Method: m, Step: 0.125}, outs, 5, false})
	}
	cs = append(cs,
		deviceCase{"dopri5 fixed step", Options{Step: 0.3}, outs, 6, false},
		deviceCase{"dopri5 backward", Options{RTol: 1e-6, ATol: 1e-8}, []float64{2, 1.3, 0.5, -0.4}, 9, false},
		deviceCase{"dopri5 jumps and stops", Options{RTol: 1e-5, ATol: 1e-7, StepControl: StepControl{MaxStep: 0.2}, Stops: Stops{Jumps: []float64{0.45, 1.2}, StepTo: []float64{0.9}}}, outs, 9, false},
		deviceCase{"dopri5 first step given", Options{StepControl: StepControl{FirstStep: 0.01, MinStep: 1e-6}}, span, 4, false},
		deviceCase{"dopri5 error len", Options{RTol: 1e-5, ErrorNorm: ErrorNorm{ErrorLen: 5}}, span, 11, false},
		deviceCase{"dopri5 mixed norm", Options{RTol: 1e-5, ErrorNorm: ErrorNorm{ErrorParts: []int{3, 4, 2}}}, span, 11, false},
		deviceCase{"dop853 mixed norm", Options{Method: "dop853", RTol: 1e-5, ErrorNorm: ErrorNorm{ErrorParts: []int{3, 6}}}, span, 11, false},
		deviceCase{"dopri5 quadrature", Options{RTol: 1e-5, Quadrature: 4, ErrorNorm: ErrorNorm{ErrorParts: []int{4, 3}}}, span, 11, false},
		deviceCase{"tsit5 quadrature", Options{Method: "tsit5", RTol: 1e-5, Quadrature: 3}, span, 8, false},
		deviceCase{"bosh3 one element", Options{Method: "bosh3"}, outs, 1, false},
		deviceCase{"dopri5 from zero", Options{RTol: 1e-5, ATol: 1e-8}, span, 7, true},
		deviceCase{"dopri5 empty state", Options{}, span, 0, false},
	)
	return cs
}

// initial returns a state of n elements in [−1, 1] (zeros with zero).
func initial[T tensor.Float](n int, zero bool) []T {
	y := make([]T, n)
	for i := range y {
		if !zero {
			y[i] = T(math.Sin(float64(3*i + 1)))
		}
	}
	return y
}

// TestSolveOnDevice: with a device engine (the parking fake, whose host
// memory holds NaN wherever the device holds newer values), every
// explicit Runge–Kutta solve of deviceCases takes the host's steps and
// gives its outputs, and copies nothing of the state to the host: two
// numbers per attempted step (one with fixed steps; one and two per part
// of the norm for dop853's two estimates), and five to start.
func TestSolveOnDevice(t *testing.T) {
	t.Run("float64", func(t *testing.T) { testSolveOnDevice[float64](t, 1e-12) })
	t.Run("float32", func(t *testing.T) { testSolveOnDevice[float32](t, 2e-5) })
}

func testSolveOnDevice[T tensor.Float](t *testing.T, tol float64) {
	cpu := tensor.EngineFor[T](tensor.Gonum(1))
	dev := enginetest.NewParkingDevice(cpu)
	for _, c := range deviceCases() {
		if tol > 1e-9 && c.opt.Step == 0 && c.opt.RTol < 1e-4 {
			// Tolerances near float32's resolution: the host's and the
			// device's error ratios, rounded differently (the host's
			// sums in float32, the device's in float64), would decide a
			// step apart (tsit5 with a quadrature at 1e-4 on the generic
			// kernel path, dop853 at 2e-4).
			c.opt.RTol, c.opt.ATol = 1e-3, 1e-5
		}
		t.Run(c.name, func(t *testing.T) {
			shape := []int{c.n}
			if c.n%3 == 0 && c.n > 0 {
				shape = []int{3, c.n / 3}
			}
			// The host: Solve on slices with the same field.
			hostF, _ := ewField(tensor.HostElementwise[T](), math.Inf(1), c.n, c.opt.Quadrature)
			hs, err := NewSolver[T](c.opt)
			if err != nil {
				t.Fatal(err)
			}
			hostOut := make([][]T, len(c.ts))
			for i := range hostOut {
				hostOut[i] = make([]T, c.n)
			}
			hostStats, err := hs.solveEval(func(k evalKind, st int, tt float64, y, dy []T) error {
				return hostF(k, st, tt, tensor.FromSlice(y), tensor.FromSlice(dy))
			}, initial[T](c.n, c.zero), c.ts, hostOut)
			if err != nil {
				t.Fatal(err)
			}

			ds, err := NewSolver[T](c.opt)
			if err != nil {
				t.Fatal(err)
			}
			if !ds.useDevice(dev) {
				t.Fatal("useDevice: the parking device has an Elementwise")
			}
			devF, calls := ewField(dev.Elementwise(), math.Inf(1), c.n, c.opt.Quadrature)
			y0 := tensor.FromSlice(initial[T](c.n, c.zero), shape...)
			out := make([]*tensor.Tensor[T], len(c.ts))
			for i := range out {
				out[i] = tensor.New[T](shape...)
			}
			// Every evaluation must be handed views of the device's
			// buffers in the state's shape.
			f := func(k evalKind, st int, tt float64, y, dy *tensor.Tensor[T]) error {
				if !ds.OnDevice() {
					return errors.New("f called off the device")
				}
				if y.Len() == c.n && !slices.Equal(y.Shape(), shape) {
					return fmt.Errorf("f got y of shape %v, the state's is %v", y.Shape(), shape)
				}
				return devF(k, st, tt, y, dy)
			}
			var bufs []*tensor.Tensor[T]
			for round := range 2 { // the second reuses the buffers
				dev.Reset()
				*calls = 0
				st, err := ds.solveTensorsEval(f, y0, c.ts, out)
				if err != nil {
					t.Fatal(err)
				}
				if round == 0 {
					bufs = slices.Clone(ds.dev.bufs)
				} else if !slices.Equal(bufs, ds.dev.bufs) {
					t.Error("the second solve made new device buffers")
				}
				syncs, elems := dev.Syncs()
				numbers := dev.Numbers()
				if diff := cmp.Diff(hostStats, st); diff != "" {
					t.Fatalf("round %d: stats differ from the host's (-host +device):\n%s", round, diff)
				}
				if *calls != st.NFE {
					t.Errorf("f called %d times, stats count %d", *calls, st.NFE)
				}
				if syncs != 0 {
					t.Errorf("round %d: the solve copied %d storages (%d elements) to the host", round, syncs, elems)
				}
				attempts := st.Accepted + st.Rejected
				perStep := 2 // the error ratio, and whether the solution is finite
				if c.opt.Step > 0 {
					perStep = 1
				} else if tb, _ := c.opt.MethodTableau(); tb.E3 != nil {
					perStep = 1 + 2*max(1, len(c.opt.ErrorParts)) // both estimates, part by part
				}
				if limit := 5 + perStep*attempts; numbers > limit {
					t.Errorf("round %d: %d numbers read for %d steps, above %d", round, numbers, attempts, limit)
				}
				for i, o := range out {
					if diff := cmp.Diff(toF64(hostOut[i]), toF64(o.ReadData()), cmpopts.EquateApprox(tol, tol)); diff != "" {
						t.Fatalf("round %d: output %d (t=%g) differs from the host's (-host +device):\n%s", round, i, c.ts[i], diff)
					}
				}
			}
		})
	}
}

func toF64[T tensor.Float](x []T) []float64 {
	r := make([]float64, len(x))
	for i, v := range x {
		r[i] = float64(v)
	}
	return r
}

// TestSolveTensorsOnHost: on a CPU engine, and on a device for the
// solves the device path leaves to the host (an Event, an implicit, a
// Rosenbrock and an Adams method), SolveTensors gives Solve's results to
// the bit; f is handed tensors in y0's shape.
func TestSolveTensorsOnHost(t *testing.T) {
	cpu := tensor.EngineFor[float64](tensor.Gonum(1))
	dev := enginetest.NewParkingDevice(cpu)
	ev := func() *Event[float64] {
		return &Event[float64]{G: func(_ float64, y []float64) float64 { return y[0] - 0.2 }}
	}
	cases := []struct {
		name  string
		eng   tensor.Engine[float64]
		opt   Options
		event bool
	}{
		{"cpu dopri5", cpu, Options{}, false},
		{"cpu bdf", cpu, Options{Method: "bdf"}, false},
		{"device event", dev, Options{}, true},
		{"device rosenbrock23", dev, Options{Method: "rosenbrock23"}, false},
		{"device radauIIA5", dev, Options{Method: "radauIIA5", Step: 0.1}, false},
		{"device implicit_adams", dev, Options{Method: "implicit_adams", Step: 0.1}, false},
		{"device bdf", dev, Options{Method: "bdf"}, false},
		{"device error rows", dev, Options{ErrorNorm: ErrorNorm{ErrorRows: 2, ErrorRowLen: 3}}, false},
	}
	shape := []int{2, 3}
	ts := []float64{0, 0.5, 2}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			field, _ := ewField(tensor.HostElementwise[float64](), math.Inf(1), 6, 0)
			slice := func(k evalKind, st int, tt float64, y, dy []float64) error {
				return field(k, st, tt, tensor.FromSlice(y), tensor.FromSlice(dy))
			}
			hs, err := NewSolver[float64](c.opt)
			if err != nil {
				t.Fatal(err)
			}
			ts := ts
			if c.event {
				hs.Event, ts = ev(), []float64{0, 2}
			}
			want := [][]float64{make([]float64, 6), make([]float64, 6), make([]float64, 6)}[:len(ts)]
			wantStats, err := hs.solveEval(slice, initial[float64](6, false), ts, want)
			if err != nil {
				t.Fatal(err)
			}

			s, err := NewSolver[float64](c.opt)
			if err != nil {
				t.Fatal(err)
			}
			if c.event {
				s.Event = ev()
			}
			s.useDevice(c.eng)
			out := make([]*tensor.Tensor[float64], len(ts))
			for i := range out {
				out[i] = tensor.New[float64](shape...)
			}
			st, err := s.solveTensorsEval(func(k evalKind, i int, tt float64, y, dy *tensor.Tensor[float64]) error {
				if s.OnDevice() {
					return errors.New("on the device")
				}
				if y.Len() == 6 && !slices.Equal(y.Shape(), shape) {
					return fmt.Errorf("y of shape %v", y.Shape())
				}
				return field(k, i, tt, y, dy)
			}, tensor.FromSlice(initial[float64](6, false), shape...), ts, out)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantStats, st); diff != "" {
				t.Errorf("stats (-Solve +SolveTensors):\n%s", diff)
			}
			for i := range out {
				if diff := cmp.Diff(want[i], out[i].ReadData()); diff != "" {
					t.Errorf("output %d (-Solve +SolveTensors):\n%s", i, diff)
				}
			}
		})
	}
}

// TestSolveOnDeviceErrors: on the device, a state that is not finite at
// the start, dynamics that turn NaN, wrong output buffers and f's errors
// end the solve as they do on the host; OnStep is given the step's states
// in host memory.
func TestSolveOnDeviceErrors(t *testing.T) {
	dev := enginetest.NewParkingDevice(tensor.EngineFor[float64](tensor.Gonum(1)))
	newSolver := func(opt Options) *Solver[float64] {
		s, err := NewSolver[float64](opt)
		if err != nil {
			t.Fatal(err)
		}
		s.useDevice(dev)
		return s
	}
	outs := func(k, n int) []*tensor.Tensor[float64] {
		o := make([]*tensor.Tensor[float64], k)
		for i := range o {
			o[i] = tensor.New[float64](n)
		}
		return o
	}
	f, _ := ewField(dev.Elementwise(), math.Inf(1), 3, 0)

	y0 := tensor.FromSlice([]float64{1, math.NaN(), 2})
	if _, err := newSolver(Options{}).solveTensorsEval(f, y0, []float64{0, 1}, outs(2, 3)); !errors.Is(err, ErrNonFinite) {
		t.Errorf("NaN in y0: got %v, want ErrNonFinite", err)
	}
	good := tensor.FromSlice([]float64{1, 0.5, 2})
	if _, err := newSolver(Options{}).solveTensorsEval(f, good, []float64{0, 1}, outs(2, 4)); err == nil {
		t.Error("outputs of 4 elements for a state of 3: no error")
	}
	blow, _ := ewField(dev.Elementwise(), 0.5, 3, 0)
	_, err := newSolver(Options{}).solveTensorsEval(blow, good, []float64{0, 3}, outs(2, 3))
	var se *SolveError
	if !errors.As(err, &se) || !(errors.Is(err, ErrNonFinite) || errors.Is(err, ErrStepUnderflow)) {
		t.Errorf("dynamics NaN past t=0.5: got %v, want a SolveError for NaN/Inf or underflow", err)
	}
	_, err = newSolver(Options{Step: 0.1}).solveTensorsEval(blow, good, []float64{0, 3}, outs(2, 3))
	if !errors.Is(err, ErrNonFinite) {
		t.Errorf("fixed steps into NaN: got %v, want ErrNonFinite", err)
	}
	boom := errors.New("boom")
	_, err = newSolver(Options{}).solveTensorsEval(func(k evalKind, i int, tt float64, y, dy *tensor.Tensor[float64]) error {
		if tt > 0.5 {
			return boom
		}
		return f(k, i, tt, y, dy)
	}, good, []float64{0, 1}, outs(2, 3))
	if !errors.Is(err, boom) || !errors.As(err, &se) || !(se.T > 0 && se.T <= 0.5) {
		t.Errorf("f's error: got %v", err)
	}

	s := newSolver(Options{})
	steps := 0
	s.OnStep = func(si StepInfo[float64]) error {
		steps++
		for _, v := range append(slices.Clone(si.Y0), si.Y1...) {
			if math.IsNaN(v) {
				return fmt.Errorf("step %d: OnStep read NaN: the state was not brought to the host", steps)
			}
		}
		return nil
	}
	st, err := s.solveTensorsEval(f, good, []float64{0, 1}, outs(2, 3))
	if err != nil {
		t.Fatal(err)
	}
	if steps != st.Accepted+st.Rejected {
		t.Errorf("OnStep called %d times for %d steps", steps, st.Accepted+st.Rejected)
	}
}

// TestSolverReuseAcrossSizes: one Solver solving states of different
// sizes in turn, an empty one twice among them, gives each time what a
// fresh Solver gives, to the bit (its buffers are carved again when the
// size changes, and an empty state needs none); on the device too, across
// methods of other stage counts.
func TestSolverReuseAcrossSizes(t *testing.T) {
	field, _ := ewField(tensor.HostElementwise[float64](), math.Inf(1), 0, 0)
	f := func(_ float64, y, dy []float64) error {
		if len(y) == 0 {
			return nil
		}
		return field(evalStage, 0, 0.3, tensor.FromSlice(y), tensor.FromSlice(dy))
	}
	ts := []float64{0, 0.7, 1.5}
	solve := func(s *Solver[float64], n int) ([][]float64, Stats) {
		out := [][]float64{make([]float64, n), make([]float64, n), make([]float64, n)}
		st, err := s.Solve(f, initial[float64](n, false), ts, out)
		if err != nil {
			t.Fatal(err)
		}
		return out, st
	}
	// On the device: a solver reused across sizes and methods of other
	// stage counts makes its buffers again for each.
	dev := enginetest.NewParkingDevice(tensor.EngineFor[float64](tensor.Gonum(1)))
	devF, _ := ewField(dev.Elementwise(), math.Inf(1), 0, 0)
	devSolve := func(s *Solver[float64], n int) ([]float64, Stats) {
		s.useDevice(dev)
		out := []*tensor.Tensor[float64]{tensor.New[float64](n), tensor.New[float64](n), tensor.New[float64](n)}
		st, err := s.solveTensorsEval(devF, tensor.FromSlice(initial[float64](n, false)), ts, out)
		if err != nil {
			t.Fatal(err)
		}
		return out[2].ReadData(), st
	}
	reusedDev, _ := NewSolver[float64](Options{})
	for _, c := range []struct {
		method string
		n      int
	}{{"dopri5", 6}, {"bosh3", 6}, {"dopri5", 6}, {"dopri5", 3}, {"tsit5", 5}} {
		opt := Options{Method: c.method, RTol: 1e-6, ATol: 1e-8}
		if err := reusedDev.Configure(opt); err != nil {
			t.Fatal(err)
		}
		fresh, _ := NewSolver[float64](opt)
		want, wantSt := devSolve(fresh, c.n)
		got, st := devSolve(reusedDev, c.n)
		if diff := cmp.Diff(want, got); diff != "" || st != wantSt {
			t.Errorf("device, %s n=%d: a reused solver differs from a fresh one (stats %+v, %+v):\n%s", c.method, c.n, st, wantSt, diff)
		}
	}
	for _, sizes := range [][]int{{6, 3, 0, 0, 6}, {0, 0, 4}} {
		reused, err := NewSolver[float64](Options{RTol: 1e-6, ATol: 1e-8})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range sizes {
			fresh, _ := NewSolver[float64](reused.Options())
			want, wantSt := solve(fresh, n)
			got, st := solve(reused, n)
			if diff := cmp.Diff(want, got); diff != "" || st != wantSt {
				t.Errorf("sizes %v, n=%d: a reused solver differs from a fresh one (stats %+v, %+v):\n%s", sizes, n, st, wantSt, diff)
			}
		}
	}
}

// TestDenseLogOnDevice: a denseLog kept by a solve on a device (the
// parking fake) holds its steps in the device's memory, and AtTensor
// evaluates them there, copying nothing to the host, with the host log's
// values, for each form of the dense output (dopri5's quartic, the
// tableau weights of tsit5, bosh3 and dop853, rk4's cubic Hermite), at step
// ends and inside steps; on a log a host solve kept, AtTensor is At.
func TestDenseLogOnDevice(t *testing.T) {
	cpu := tensor.EngineFor[float64](tensor.Gonum(1))
	dev := enginetest.NewParkingDevice(cpu)
	const n = 6
	for _, method := range []string{"dopri5", "tsit5", "bosh3", "dop853", "rk4"} {
		t.Run(method, func(t *testing.T) {
			opt := Options{Method: method, RTol: 1e-8, ATol: 1e-8}
			if method == "rk4" {
				opt = Options{Method: method, Step: 0.15}
			}
			ts := []float64{0, 1.3}
			hostF, _ := ewField(tensor.HostElementwise[float64](), math.Inf(1), n, 0)
			hs, err := NewSolver[float64](opt)
			if err != nil {
				t.Fatal(err)
			}
			hostLog := newDenseLog[float64](nil)
			hs.setDenseLog(hostLog)
			hostOut := [][]float64{make([]float64, n), make([]float64, n)}
			if _, err := hs.solveEval(func(k evalKind, st int, tt float64, y, dy []float64) error {
				return hostF(k, st, tt, tensor.FromSlice(y), tensor.FromSlice(dy))
			}, initial[float64](n, false), ts, hostOut); err != nil {
				t.Fatal(err)
			}

			ds, err := NewSolver[float64](opt)
			if err != nil {
				t.Fatal(err)
			}
			ds.useDevice(dev)
			devLog := newDenseLog[float64](nil)
			ds.setDenseLog(devLog)
			devF, _ := ewField(dev.Elementwise(), math.Inf(1), n, 0)
			out := []*tensor.Tensor[float64]{tensor.New[float64](n), tensor.New[float64](n)}
			if _, err := ds.solveTensorsEval(devF, tensor.FromSlice(initial[float64](n, false)), ts, out); err != nil {
				t.Fatal(err)
			}
			if devLog.Len() != hostLog.Len() || devLog.Len() < 3 {
				t.Fatalf("%d steps logged on the device, %d on the host", devLog.Len(), hostLog.Len())
			}
			// A second solve into a log of the first's steps reuses their
			// device tensors.
			first := devLog.steps[0]
			again := newDenseLog(devLog.Release())
			ds.setDenseLog(again)
			if _, err := ds.solveTensorsEval(devF, tensor.FromSlice(initial[float64](n, false)), ts, out); err != nil {
				t.Fatal(err)
			}
			devLog = again
			if st := devLog.steps[0]; st.y0t != first.y0t || st.y1t != first.y1t || len(st.kst) > 0 && st.kst[0] != first.kst[0] {
				t.Error("the second solve's log made new device tensors")
			}
			var at []float64
			for i := range devLog.Len() {
				st := devLog.steps[i]
				if !st.on {
					t.Fatalf("step %d kept on the host", i)
				}
				at = append(at, st.t, st.t+0.3*st.h, st.t+0.77*st.h, st.end)
			}
			got, want, hostAt := tensor.New[float64](n), make([]float64, n), tensor.New[float64](n)
			var tmp *tensor.Tensor[float64] // the quartic's midpoint buffer, made once
			for _, tq := range at {
				dev.Reset()
				devLog.AtTensor(tq, got)
				if tmp == nil {
					tmp = devLog.comb.tmp
				} else if devLog.comb.tmp != tmp {
					t.Errorf("t=%g: the midpoint's buffer made anew", tq)
				}
				if syncs, _ := dev.Syncs(); syncs != 0 {
					t.Errorf("AtTensor(%g) copied %d storages to the host", tq, syncs)
				}
				hostLog.At(tq, want)
				if diff := cmp.Diff(want, got.ReadData(), cmpopts.EquateApprox(1e-12, 1e-14)); diff != "" {
					t.Errorf("t=%g (-host +device):\n%s", tq, diff)
				}
				hostLog.AtTensor(tq, hostAt)
				if diff := cmp.Diff(want, hostAt.ReadData()); diff != "" {
					t.Errorf("t=%g: AtTensor of the host's log differs from At:\n%s", tq, diff)
				}
			}
		})
	}
}

// TestDevice853PartRatios: a device solve with dop853 and ErrorParts has
// the host's error ratios step by step, with the part the ratio comes
// from starting past the state's first element (the first part's
// element is constant: its ratio is 0).
func TestDevice853PartRatios(t *testing.T) {
	const n = 9
	cpu := tensor.EngineFor[float64](tensor.Gonum(1))
	dev := enginetest.NewParkingDevice(cpu)
	field := func(ew tensor.Elementwise[float64]) TensorFunc[float64] {
		return func(_ float64, y, dy *tensor.Tensor[float64]) error {
			ew.Fill(dy.Slice(0, 1), 0)
			ew.LinComb(dy.Slice(1, n), nil, []float64{-1.5}, []*tensor.Tensor[float64]{y.Slice(1, n)})
			return nil
		}
	}
	opt := Options{Method: "dop853", RTol: 1e-6, ATol: 1e-8, ErrorNorm: ErrorNorm{ErrorParts: []int{1, 8}}}
	var ratios [2][]float64
	for i, eng := range []tensor.Engine[float64]{cpu, dev} {
		s, err := NewSolverOn(eng, opt)
		if err != nil {
			t.Fatal(err)
		}
		s.StepStatesOnDevice = true
		s.OnStep = func(si StepInfo[float64]) error {
			ratios[i] = append(ratios[i], si.Ratio)
			return nil
		}
		y0 := tensor.FromSlice([]float64{1, 1, 2, 3, 4, 5, 6, 7, 8})
		out := []*tensor.Tensor[float64]{tensor.New[float64](n), tensor.New[float64](n)}
		ew := tensor.HostElementwise[float64]()
		if i == 1 {
			ew = dev.Elementwise()
		}
		if _, err := s.SolveTensors(field(ew), y0, []float64{0, 2}, out); err != nil {
			t.Fatal(err)
		}
	}
	if len(ratios[0]) < 3 {
		t.Fatalf("%d steps: too few to compare", len(ratios[0]))
	}
	// The ratios come from differences of nearly equal solutions, so a
	// rounding apart moves them by far more than an ulp: on arm64, whose
	// compiler fuses the host's x*y+z into one rounding, they differ from
	// the device's by up to 5e-7 relative. A ratio over the wrong part
	// differs from the first step on.
	if diff := cmp.Diff(ratios[0], ratios[1], cmpopts.EquateApprox(1e-5, 0)); diff != "" {
		t.Errorf("error ratios (-host +device):\n%s", diff)
	}
}
