package integrate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/tensor/enginetest"
)

// TestHostViews: a host solve's views of the solver's slices are made
// once per slice and kind and moved on at every call (marked changed); a
// whole state is in the state's shape, its flat view sharing that view's
// storage; a front of a solver buffer is the front of the whole buffer's
// flat view, in its storage; a slice without room for a whole state is a
// flat tensor of its own. The views go when the buffers are carved anew.
func TestHostViews(t *testing.T) {
	s, err := NewSolver[float64](Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := &s.dev
	d.setShape(tensor.New[float64](2, 3))
	s.ensure(6)
	buf := s.y
	for i := range buf {
		buf[i] = float64(i)
	}
	whole := d.hostView(buf, false)
	flat := d.hostView(buf, true)
	front := d.hostView(buf[:4], false)
	own := d.hostView(make([]float64, 4), false)
	for _, c := range []struct {
		name  string
		v     *tensor.Tensor[float64]
		shape []int
		data  []float64
		st    *tensor.Storage // nil: one of its own
	}{
		{"whole", whole, []int{2, 3}, buf, whole.Storage()},
		{"flat", flat, []int{6}, buf, whole.Storage()},
		{"front", front, []int{4}, buf[:4], whole.Storage()},
		{"own", own, []int{4}, []float64{0, 0, 0, 0}, nil},
	} {
		if !c.v.HasShape(c.shape...) {
			t.Errorf("%s: shape %v, want %v", c.name, c.v.Shape(), c.shape)
		}
		if diff := cmp.Diff(c.data, c.v.ReadData()); diff != "" {
			t.Errorf("%s: elements (-want +got):\n%s", c.name, diff)
		}
		if c.st != nil && c.v.Storage() != c.st {
			t.Errorf("%s: not in the whole buffer's storage", c.name)
		}
		if c.st == nil && c.v.Storage() == whole.Storage() {
			t.Errorf("%s: in the whole buffer's storage", c.name)
		}
	}
	ver := whole.Version()
	for _, c := range []struct {
		name string
		x    []float64
		flat bool
		want *tensor.Tensor[float64]
	}{{"whole", buf, false, whole}, {"flat", buf, true, flat}, {"front", buf[:4], false, front}} {
		if d.hostView(c.x, c.flat) != c.want {
			t.Errorf("%s: made again", c.name)
		}
		if v := whole.Version(); v <= ver {
			t.Errorf("%s: the storage's version stayed at %d", c.name, v)
		} else {
			ver = v
		}
	}
	if d.hostView(nil, false).Len() != 0 {
		t.Error("an empty slice's view is not empty")
	}
	if err := s.Configure(Options{Method: "dop853"}); err != nil {
		t.Fatal(err)
	}
	s.ensure(6) // more stages: the buffers carved anew
	if len(d.host) != 0 {
		t.Errorf("%d views kept after the buffers were carved anew", len(d.host))
	}
}

// TestHostSolveViews: a solve through SolveTensors in host memory with
// quadratures hands f the stage inputs without them as fronts of the
// solver's buffers, in the storage of their whole views, and OnStep the
// step's states as flat views of Y0 and Y1; once warm it allocates
// nothing.
func TestHostSolveViews(t *testing.T) {
	cpu := tensor.EngineFor[float64](tensor.Gonum(1))
	ts := []float64{0, 1}
	for _, m := range []string{"dopri5", "bosh3", "rk4"} {
		t.Run(m, func(t *testing.T) {
			opt := Options{Method: m, Quadrature: 2}
			if m == "rk4" {
				opt.Step = 0.1
			}
			s, err := NewSolverOn[float64](cpu, opt)
			if err != nil {
				t.Fatal(err)
			}
			// f: the first four elements decay, the last two (quadratures)
			// integrate the first two; no allocation.
			field := func(_ evalKind, _ int, _ float64, y, dy *tensor.Tensor[float64]) error {
				yd, dd := y.ReadData(), dy.Data()
				for i := range dd {
					dd[i] = -0.5 * yd[i%4]
				}
				return nil
			}
			var fronts []*tensor.Tensor[float64]
			var problems []string
			f := func(k evalKind, i int, tt float64, y, dy *tensor.Tensor[float64]) error {
				for _, v := range []*tensor.Tensor[float64]{y, dy} {
					if v.Len() < 6 {
						fronts = append(fronts, v)
					}
				}
				return field(k, i, tt, y, dy)
			}
			steps := 0
			s.OnStep = func(si StepInfo[float64]) error {
				steps++
				for _, c := range []struct {
					st *tensor.Tensor[float64]
					y  []float64
				}{{si.State0, si.Y0}, {si.State1, si.Y1}} {
					if c.st == nil || !c.st.HasShape(6) || &c.st.HostMemory()[0] != &c.y[0] {
						problems = append(problems, fmt.Sprintf("step %d: a state %v not Y0's or Y1's flat view", steps, c.st))
					}
				}
				return nil
			}
			y0 := tensor.FromSlice(initial[float64](6, false), 3, 2)
			out := []*tensor.Tensor[float64]{tensor.New[float64](6), tensor.New[float64](6)}
			if _, err := s.solveTensorsEval(f, y0, ts, out); err != nil {
				t.Fatal(err)
			}
			if len(problems) > 0 || steps == 0 {
				t.Errorf("%d steps; %s", steps, strings.Join(problems, "; "))
			}
			if len(fronts) == 0 {
				t.Fatal("f was handed no stage input without the quadratures")
			}
			for _, v := range fronts {
				var whole *tensor.Tensor[float64] // the view of the buffer v starts
				for _, b := range append(s.kall, s.y, s.y1, s.tmp, s.fnext) {
					if len(b) > 0 && &b[0] == &v.HostMemory()[0] {
						whole = s.dev.hostView(b, false)
					}
				}
				if v.Len() != 4 || whole == nil || whole.Storage() != v.Storage() {
					t.Errorf("a front of %d elements, in its buffer's storage %v", v.Len(), whole != nil && whole.Storage() == v.Storage())
				}
			}
			if raceEnabled {
				return
			}
			s.OnStep = func(StepInfo[float64]) error { return nil }
			eval := field
			if a := testing.AllocsPerRun(3, func() { _, err = s.solveTensorsEval(eval, y0, ts, out) }); a != 0 || err != nil {
				t.Errorf("a warm solve allocates %v (%v), want none", a, err)
			}
		})
	}
}

// TestDeviceBufferNames: the device path names its buffers by slices
// starting them: a whole buffer is the buffer itself, a front and a span
// views of it made once; a slice that starts inside a buffer or outside
// them panics naming its length. Turning device mode off and on again
// keeps the buffers; another method, or another device, gets buffers of
// its own.
func TestDeviceBufferNames(t *testing.T) {
	cpu := tensor.EngineFor[float64](tensor.Gonum(1))
	dev := enginetest.NewParkingDevice(cpu)
	s, err := NewSolverOn[float64](dev, Options{})
	if err != nil {
		t.Fatal(err)
	}
	y0 := tensor.FromSlice(initial[float64](6, false), 6)
	out := []*tensor.Tensor[float64]{tensor.New[float64](6), tensor.New[float64](6)}
	eval := func(_ evalKind, _ int, _ float64, y, dy *tensor.Tensor[float64]) error {
		tensor.HostElementwise[float64]().Map(tensor.MapScale, dy, y, -1, 0)
		return nil
	}
	if _, err := s.solveTensorsEval(eval, y0, []float64{0, 1}, out); err != nil {
		t.Fatal(err)
	}
	d := &s.dev
	first := d.bufs[0]
	if d.view(s.y) != d.bufs[d.find(s.y)] || d.find(s.y) == d.find(s.y1) {
		t.Error("whole buffers are not their own tensors")
	}
	front, span := d.view(s.y[:4]), d.span(s.y, 2, 5)
	if front.Len() != 4 || span.Len() != 3 || d.view(s.y[:4]) != front || d.span(s.y, 2, 5) != span {
		t.Errorf("a front of %d elements and a span of %d, or made again", front.Len(), span.Len())
	}
	whole := d.view(s.y)
	whole.Data()[2] = 7
	if got := span.ReadData()[0]; got != 7 {
		t.Errorf("the span [2, 5) starts with %g, want the buffer's element 2 (7)", got)
	}
	for _, c := range []struct {
		name string
		x    []float64
	}{{"inside a buffer", s.y[1:3]}, {"outside", make([]float64, 3)}} {
		func() {
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, fmt.Sprintf("a slice of %d elements that does not start", len(c.x))) {
					t.Errorf("%s: panic %q", c.name, msg)
				}
			}()
			d.find(c.x)
		}()
	}
	s.useDevice(nil)
	if _, err := s.solveTensorsEval(eval, y0, []float64{0, 1}, out); err != nil || s.onDev {
		t.Fatalf("device mode off: %v, on the device %v", err, s.onDev)
	}
	s.useDevice(dev)
	if _, err := s.solveTensorsEval(eval, y0, []float64{0, 1}, out); err != nil || !s.onDev {
		t.Fatalf("device mode on again: %v, on the device %v", err, s.onDev)
	}
	if d.bufs[0] != first {
		t.Error("the device buffers were made anew after device mode was off")
	}
	if err := s.Configure(Options{Method: "dop853"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.solveTensorsEval(eval, y0, []float64{0, 1}, out); err != nil || len(d.bufs) != s.slabLen(1) {
		t.Errorf("another method: %v, %d device buffers, want %d", err, len(d.bufs), s.slabLen(1))
	}
	first = d.bufs[0]
	s.useDevice(enginetest.NewParkingDevice(cpu))
	if _, err := s.solveTensorsEval(eval, y0, []float64{0, 1}, out); err != nil || d.bufs[0] == first {
		t.Errorf("another device: %v, its buffers made anew %v", err, d.bufs[0] != first)
	}
}
