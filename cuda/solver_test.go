package cuda

import (
	"math"
	"testing"

	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/odeblock/integrate"
	"github.com/adamnode/adamnode/tensor"
)

// deviceField returns f(t, y) = −0.8·tanh(y) + (0.3 + 0.2·cos t)·y on
// ew's elementwise work.
func deviceField[T tensor.Float](ew tensor.Elementwise[T]) odeblock.TensorFunc[T] {
	var s *tensor.Tensor[T]
	return func(t float64, y, dy *tensor.Tensor[T]) error {
		if s == nil || s.Len() != y.Len() {
			s = tensor.New[T](y.Shape()...)
		}
		ew.Map(tensor.MapTanh, s, y, 0, 0)
		ew.LinComb(dy, nil, []T{-0.8, T(0.3 + 0.2*math.Cos(t))}, []*tensor.Tensor[T]{s, y})
		return nil
	}
}

// TestSolverOnDevice: an adaptive dopri5 solve with outputs inside its
// steps (dense output) runs on the device through Solver.SolveTensors:
// it takes the CPU's steps, gives its outputs within float32 rounding,
// copies y0 up once and nothing of any tensor back (Stats counts tensor
// copies; the error norms' records, a few float64 each, are read by the
// kernels' own copy, two per attempted step).
func TestSolverOnDevice(t *testing.T) {
	g := gpu(t)
	eng := tensor.EngineFor[float32](g)
	ew := tensor.ElementwiseOf(eng)
	if ew == nil {
		t.Skip("the stand-in's kernels do not load")
	}
	const batch, width = 16, 48
	y0 := make([]float32, batch*width)
	for i := range y0 {
		y0[i] = float32(math.Sin(float64(3*i + 1)))
	}
	ts := []float64{0, 0.4, 1.3, 2, 4}
	opt := odeblock.Options{RTol: 1e-5, ATol: 1e-7}
	solve := func(e tensor.Engine[float32], f odeblock.TensorFunc[float32]) ([][]float32, odeblock.Stats, bool) {
		s, err := integrate.NewSolverOn[float32](e, opt)
		if err != nil {
			t.Fatal(err)
		}
		on := tensor.OnDevice(e)
		out := make([]*tensor.Tensor[float32], len(ts))
		for i := range out {
			out[i] = tensor.New[float32](batch, width)
		}
		st, err := s.SolveTensors(f, tensor.FromSlice(append([]float32(nil), y0...), batch, width), ts, out)
		if err != nil {
			t.Fatal(err)
		}
		vals := make([][]float32, len(out))
		for i, o := range out {
			vals[i] = o.ReadData()
		}
		return vals, st, on
	}
	want, wantStats, on := solve(tensor.EngineFor[float32](tensor.Gonum(1)), deviceField(tensor.HostElementwise[float32]()))
	if on {
		t.Fatal("a CPU engine has an Elementwise")
	}

	before := stats(t, g)
	s, err := integrate.NewSolverOn[float32](eng, opt)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*tensor.Tensor[float32], len(ts))
	for i := range out {
		out[i] = tensor.New[float32](batch, width)
	}
	st, err := s.SolveTensors(deviceField(ew), tensor.FromSlice(append([]float32(nil), y0...), batch, width), ts, out)
	if err != nil {
		t.Fatal(err)
	}
	after := stats(t, g)
	if st != wantStats {
		t.Errorf("the device's solve took %+v, the CPU's %+v", st, wantStats)
	}
	state := int64(4 * batch * width)
	attempts := int64(st.Accepted + st.Rejected)
	down, downBytes := after.Downloads-before.Downloads, after.DownloadBytes-before.DownloadBytes
	if limit := 5 + 2*attempts; down > limit {
		t.Errorf("%d copies to the host for %d steps, above %d", down, attempts, limit)
	}
	if downBytes >= state {
		t.Errorf("%d bytes copied to the host, as much as a state (%d)", downBytes, state)
	}
	if up := after.UploadBytes - before.UploadBytes; up != state {
		t.Errorf("%d bytes copied to the device, want y0's %d", up, state)
	}
	t.Logf("%d steps (%d evaluations): %d copies (%d bytes) to the host, %d bytes to the device",
		attempts, st.NFE, down, downBytes, after.UploadBytes-before.UploadBytes)
	for i, o := range out {
		got := o.ReadData()
		if d := maxRelDiff(got, want[i]); d > 1e-5 {
			t.Errorf("output %d (t=%g) differs from the CPU's by %.3g (relative)", i, ts[i], d)
		}
	}
}
