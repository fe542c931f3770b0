package cuda

import (
	"math"
	"slices"
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

// elementwiseOf returns the stand-in's (or the GPU's) Elementwise for T,
// failing t when the backend has none: the stand-in always compiles the
// kernels.
func elementwiseOf[T tensor.Float](t *testing.T, b tensor.Backend) tensor.Elementwise[T] {
	t.Helper()
	el := tensor.ElementwiseOf(tensor.EngineFor[T](b))
	if el == nil {
		t.Fatalf("the engine has no Elementwise: %v", b.(*backend).kernErr)
	}
	return el
}

// TestElementwiseChainStaysOnDevice: a chain of Elementwise calls uploads
// each host operand once, keeps every result on the device (nothing is
// downloaded, the storages are marked), and copies a result back only when
// the host reads it, once; a host write uploads that operand again. The
// values are HostElementwise's.
func TestElementwiseChainStaysOnDevice(t *testing.T) {
	b := gpu(t)
	el := elementwiseOf[float32](t, b)
	const n = 1000
	x, y := tensor.New[float32](n), tensor.New[float32](n)
	for i := range n {
		x.Data()[i] = float32(math.Sin(float64(i)))
		y.Data()[i] = float32(i%7) - 3
	}
	hx, hy := x.Clone(), y.Clone()
	chain := func(el tensor.Elementwise[float32], x, y *tensor.Tensor[float32]) (a, c, d, m *tensor.Tensor[float32], s float64) {
		a, c, d, m = tensor.New[float32](n), tensor.New[float32](n), tensor.New[float32](n), tensor.New[float32](2)
		el.Map(tensor.MapTanh, a, x, 0, 0)
		el.Binary(tensor.BinaryMul, c, a, y)
		el.LinComb(d, x, []float32{2, -1}, []*tensor.Tensor[float32]{a, c})
		el.MapBackward(tensor.MapTanh, d, c, a, 0, 0, true)
		el.Binary(tensor.BinaryAdd, d, d, x.Reshape(1, n).Slice(0, 1).Reshape(n))
		el.SumAxis(m, d.Reshape(n/2, 2), 0)
		return a, c, d, m, el.Sum(d)
	}
	s0, _ := StatsOf(b)
	a, c, d, m, sum := chain(el, x, y)
	s1, _ := StatsOf(b)
	if up, bytes := s1.Uploads-s0.Uploads, s1.UploadBytes-s0.UploadBytes; up != 2 || bytes != 2*4*n {
		t.Errorf("the chain uploaded %d operands (%d bytes), want x and y once (2, %d bytes)", up, bytes, 2*4*n)
	}
	if dl := s1.Downloads - s0.Downloads; dl != 0 {
		t.Errorf("the chain downloaded %d results before the host read any", dl)
	}
	for _, r := range []*tensor.Tensor[float32]{a, c, d, m} {
		if !r.Storage().DeviceNewer() {
			t.Errorf("a result of shape %v is not marked device-newer", r.Shape())
		}
	}
	ha, hc, hd, hm, hsum := chain(tensor.HostElementwise[float32](), hx, hy)
	got := d.ReadData()
	s2, _ := StatsOf(b)
	if dl, bytes := s2.Downloads-s1.Downloads, s2.DownloadBytes-s1.DownloadBytes; dl != 1 || bytes != 4*n {
		t.Errorf("reading d downloaded %d copies (%d bytes), want 1 (%d bytes)", dl, bytes, 4*n)
	}
	d.ReadData()
	if s3, _ := StatsOf(b); s3.Downloads != s2.Downloads {
		t.Errorf("reading d again downloaded %d more", s3.Downloads-s2.Downloads)
	}
	for _, p := range []struct {
		name      string
		got, want []float32
		tol       float64 // relative: tanh's ulps, and m's sums of 500 in another order
	}{{"a", a.ReadData(), ha.ReadData(), 1e-6}, {"c", c.ReadData(), hc.ReadData(), 1e-6}, {"d", got, hd.ReadData(), 1e-5}, {"m", m.ReadData(), hm.ReadData(), 1e-4}} {
		for i := range p.want {
			if w := p.want[i]; math.Abs(float64(p.got[i]-w)) > p.tol*(1+math.Abs(float64(w))) {
				t.Errorf("%s[%d] = %v, want %v", p.name, i, p.got[i], w)
				break
			}
		}
	}
	if math.Abs(sum-hsum) > 1e-5*math.Abs(hsum)+1e-3 {
		t.Errorf("Sum = %v, want %v", sum, hsum)
	}
	// A result read on the host is still current on the device: using it
	// uploads nothing. A host write to x uploads x again, once.
	s4, _ := StatsOf(b)
	e := tensor.New[float32](n)
	el.Binary(tensor.BinarySub, e, d, a)
	x.Data()[0] = 7
	el.Binary(tensor.BinaryMul, e, e, x)
	el.Binary(tensor.BinaryMul, e, e, x)
	s5, _ := StatsOf(b)
	if up := s5.Uploads - s4.Uploads; up != 1 {
		t.Errorf("after a host write to x: %d uploads, want 1 (x)", up)
	}
	if dl := s5.Downloads - s4.Downloads; dl != 0 {
		t.Errorf("%d downloads without a host read", dl)
	}
}

// TestBroadcastCollapse: the broadcast of two shapes is collapsed to the
// fewest axes, and split into kernel calls over the leading groups where
// more than MaxDims remain, with the blocks' offsets in row-major order.
func TestBroadcastCollapse(t *testing.T) {
	for _, c := range []struct {
		x, y, co, cx, cy []int
	}{
		{[]int{2, 3, 4}, []int{2, 3, 4}, []int{24}, []int{24}, []int{24}},
		{[]int{3, 5}, []int{5}, []int{3, 5}, []int{3, 5}, []int{1, 5}},
		{[]int{3, 1, 5}, []int{1, 5}, []int{3, 5}, []int{3, 5}, []int{1, 5}},
		{[]int{2, 3, 4}, []int{3, 1}, []int{2, 3, 4}, []int{2, 3, 4}, []int{1, 3, 1}},
		{[]int{4, 2, 3}, []int{4, 1, 1}, []int{4, 6}, []int{4, 6}, []int{4, 1}},
		{[]int{}, []int{}, nil, nil, nil},
		{[]int{1, 1}, []int{1}, nil, nil, nil},
	} {
		out, ok := tensor.BroadcastShape(c.x, c.y)
		if !ok {
			t.Fatalf("%v and %v do not broadcast", c.x, c.y)
		}
		co, cx, cy := collapse(c.x, c.y, out)
		if !slices.Equal(co, c.co) || !slices.Equal(cx, c.cx) || !slices.Equal(cy, c.cy) {
			t.Errorf("collapse(%v, %v) = %v, %v, %v; want %v, %v, %v", c.x, c.y, co, cx, cy, c.co, c.cx, c.cy)
		}
		runs, _, _, _, _, _ := bcastSplit(co, cx, cy)
		if len(runs) != 1 || runs[0] != (bcastRun{firstX: true, firstY: true}) {
			t.Errorf("%v and %v: runs %v, want one at 0", c.x, c.y, runs)
		}
	}
	x, y := []int{2, 1, 3, 1, 2}, []int{4, 1, 5, 1}
	out, _ := tensor.BroadcastShape(x, y)
	co, cx, cy := collapse(x, y, out)
	if !slices.Equal(co, []int{2, 4, 3, 5, 2}) || !slices.Equal(cx, []int{2, 1, 3, 1, 2}) || !slices.Equal(cy, []int{1, 4, 1, 5, 1}) {
		t.Fatalf("collapse(%v, %v) = %v, %v, %v", x, y, co, cx, cy)
	}
	runs, ix, iy, nx, ny, no := bcastSplit(co, cx, cy)
	want := []bcastRun{{0, 0, 0, true, true}, {6, 0, 120, true, false}}
	if !slices.Equal(runs, want) || !slices.Equal(ix, []int{1, 3, 1, 2}) || !slices.Equal(iy, []int{4, 1, 5, 1}) || nx != 6 || ny != 20 || no != 120 {
		t.Errorf("bcastSplit: runs %v, shapes %v and %v, lengths %d, %d, %d; want runs %v, [1 3 1 2] and [4 1 5 1], 6, 20, 120", runs, ix, iy, nx, ny, no, want)
	}
}
