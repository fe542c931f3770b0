package cuda

import (
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/google/go-cmp/cmp"

	"github.com/adamnode/adamnode/tensor"
)

// Copies counts the stand-in's copies between host and device, every one
// of them (its cudaMemcpy, which the driver's cuMemcpy* call too),
// whoever asked for it: the tensors' copies that Stats counts, and the
// numbers the kernels' functions read (Sum, the error norms, ArgMaxAxis).
type Copies struct {
	Up, UpBytes     int64 // host to device
	Down, DownBytes int64 // device to host
}

// Sub returns the copies of c since before.
func (c Copies) Sub(before Copies) Copies {
	return Copies{c.Up - before.Up, c.UpBytes - before.UpBytes, c.Down - before.Down, c.DownBytes - before.DownBytes}
}

// standinCopiesFn is the stand-in runtime's standin_copies, bound once.
var standinCopiesFn = sync.OnceValues(func() (func(out *uint64), error) {
	h, err := dlopen(filepath.Join(standinDir, "libcudart.so"))
	if err != nil {
		return nil, err
	}
	sym, err := dlsym(h, "standin_copies")
	if err != nil {
		return nil, err
	}
	var f func(out *uint64)
	purego.RegisterFunc(&f, sym)
	return f, nil
})

// standinCopies returns the stand-in's counts of copies so far; the test
// skips on the real libraries, which count none.
func standinCopies(t *testing.T) Copies {
	t.Helper()
	if standinDir == "" {
		t.Skip("the copy counts are the stand-in's")
	}
	f, err := standinCopiesFn()
	if err != nil {
		t.Fatal(err)
	}
	var c [4]uint64
	f(&c[0])
	return Copies{int64(c[0]), int64(c[1]), int64(c[2]), int64(c[3])}
}

// argMaxValues returns n values for the positions of shape with axis
// removed: along the axis of each, by pattern (−1: one drawn per
// position) 0 random finite values, 1 small integers (ties), 2 a NaN
// first, 3 a NaN elsewhere, 4 every element NaN, 5 zeros of both signs,
// 6 the largest twice (+Inf), 7 every element −Inf, 8 a NaN and +Inf.
func argMaxValues[T tensor.Float](r *rand.Rand, shape []int, axis, pattern int) []T {
	outer, inner := 1, 1
	for i, d := range shape {
		if i < axis {
			outer *= d
		} else if i > axis {
			inner *= d
		}
	}
	na := shape[axis]
	x := finite[T](r, outer*na*inner)
	for o := range outer {
		for i := range inner {
			at := func(j int) *T { return &x[(o*na+j)*inner+i] }
			p := pattern
			if p < 0 {
				p = r.IntN(9)
			}
			switch p {
			case 1:
				for j := range na {
					*at(j) = T(r.IntN(3))
				}
			case 2:
				*at(0) = T(math.NaN())
			case 3:
				*at(r.IntN(na)) = T(math.NaN())
			case 4:
				for j := range na {
					*at(j) = T(math.NaN())
				}
			case 5:
				for j := range na {
					*at(j) = T(math.Copysign(0, float64(r.IntN(2)*2-1)))
				}
			case 6:
				*at(r.IntN(na)) = T(math.Inf(1))
				*at(r.IntN(na)) = T(math.Inf(1))
			case 7:
				for j := range na {
					*at(j) = T(math.Inf(-1))
				}
			case 8:
				*at(r.IntN(na)) = T(math.NaN())
				*at(r.IntN(na)) = T(math.Inf(1))
			}
		}
	}
	return x
}

// argMaxCases are TestArgMaxAxis's shapes, axes and values (argMaxValues'
// patterns).
var argMaxCases = []struct {
	name    string
	shape   []int
	axis    int
	pattern int
}{
	{"one row", []int{1, 10}, 1, -1},
	{"one column", []int{7, 1}, 1, 0},
	{"one column, axis 0", []int{7, 1}, 0, -1},
	{"rank 1", []int{11}, 0, 0},
	{"one element", []int{1}, 0, 0},
	{"odd sizes", []int{13, 37}, 1, -1},
	{"odd sizes, axis 0", []int{13, 37}, 0, -1},
	{"odd sizes, axis -1", []int{13, 37}, -1, -1},
	{"ties", []int{9, 5}, 1, 1},
	{"signed zeros", []int{9, 5}, 1, 5},
	{"NaN first", []int{6, 11}, 1, 2},
	{"NaN elsewhere", []int{6, 11}, 1, 3},
	{"all NaN", []int{6, 11}, 1, 4},
	{"+Inf twice", []int{6, 11}, 1, 6},
	{"all -Inf", []int{6, 11}, 1, 7},
	{"NaN and +Inf", []int{6, 11}, 1, 8},
	{"rank 3, axis 1", []int{3, 10, 4}, 1, -1},
	{"rank 4, axis 2", []int{2, 3, 5, 3}, 2, -1},
	{"long axis (a block a row)", []int{5, 700}, 1, -1},
	{"long axis, ties", []int{5, 700}, 1, 1},
	{"long axis, NaN first", []int{5, 700}, 1, 2},
	{"long axis, rank 3", []int{2, 600, 3}, 1, -1},
	{"more rows than a launch", []int{argMaxChunk + 808, 3}, 1, -1},
	{"no rows", []int{0, 5}, 1, 0},
}

// TestArgMaxAxis: the engine's ArgMaxAxis (tensor.ArgMaxOn on a tensor the
// device holds) and the kernels' ArgMaxAxis give tensor.ArgMax's indices
// for every case: one row, one column, odd sizes, ties, signed zeros, NaN
// first, elsewhere and everywhere, ±Inf, ranks 1 to 4 along inner axes,
// axes longer than a block, more rows than a launch, none.
func TestArgMaxAxis(t *testing.T) {
	g := gpu(t)
	k := kernels(t)
	bothTypes(t, func(t *testing.T) { testArgMaxAxis[float32](t, g, k) }, func(t *testing.T) { testArgMaxAxis[float64](t, g, k) })
}

func testArgMaxAxis[T tensor.Float](t *testing.T, g tensor.Backend, k *Kernels) {
	e := tensor.EngineFor[T](g)
	ew := tensor.ElementwiseOf(e)
	if ew == nil {
		t.Skip("the stand-in's kernels do not load")
	}
	r := rand.New(rand.NewPCG(35, 3))
	for _, c := range argMaxCases {
		t.Run(c.name, func(t *testing.T) {
			ax := c.axis
			if ax < 0 {
				ax += len(c.shape)
			}
			x := tensor.FromSlice(argMaxValues[T](r, c.shape, ax, c.pattern), c.shape...)
			want := tensor.ArgMax(x, c.axis)

			// The engine's: x's values made the device's newer ones by a
			// kernel's copy.
			y := tensor.New[T](c.shape...)
			ew.Copy(y, x)
			if y.Len() > 0 && !y.Storage().DeviceNewer() {
				t.Fatal("the copy's result is not the device's")
			}
			if diff := cmp.Diff(want, tensor.ArgMaxOn(e, y, c.axis)); diff != "" {
				t.Errorf("ArgMaxOn (-tensor.ArgMax +device):\n%s", diff)
			}
			if y.Len() > 0 && !y.Storage().DeviceNewer() {
				t.Error("ArgMaxOn copied the tensor to the host")
			}

			// The kernels'.
			got := make([]int, len(want))
			if err := ArgMaxAxis(k, got, toDevice(t, k, x.ReadData()), c.shape, c.axis); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ArgMaxAxis (-tensor.ArgMax +kernel):\n%s", diff)
			}
		})
	}

	b6 := toDevice(t, k, make([]T, 6))
	for name, err := range map[string]error{
		"axis 2":     ArgMaxAxis(k, make([]int, 2), b6, []int{2, 3}, 2),
		"axis -3":    ArgMaxAxis(k, make([]int, 2), b6, []int{2, 3}, -3),
		"no dims":    ArgMaxAxis(k, make([]int, 1), b6, nil, 0),
		"negative":   ArgMaxAxis(k, make([]int, 6), b6, []int{-2, -3}, 0),
		"dst length": ArgMaxAxis(k, make([]int, 3), b6, []int{2, 3}, 1),
		"x length":   ArgMaxAxis(k, make([]int, 2), b6, []int{2, 4}, 1),
		"empty axis": ArgMaxAxis(k, make([]int, 6), Buffer[T]{}, []int{6, 0}, 1),
	} {
		if err == nil || !strings.Contains(err.Error(), "ArgMaxAxis") {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, f := range map[string]func(){
		"empty axis": func() { ew.(tensor.ArgMaxer[T]).ArgMaxAxis(tensor.New[T](3, 0), 1) },
		"axis 2":     func() { ew.(tensor.ArgMaxer[T]).ArgMaxAxis(tensor.New[T](3, 2), 2) },
	} {
		func() {
			defer func() {
				var se *tensor.ShapeError
				if err, _ := recover().(error); !errors.As(err, &se) || !strings.Contains(se.Op, "ArgMaxAxis") {
					t.Errorf("%s: panic %v, want a *tensor.ShapeError of cuda.ArgMaxAxis", name, err)
				}
			}()
			f()
		}()
	}
}

// TestArgMaxCopiesIndices: tensor.ArgMaxOn of class scores the device
// holds copies to the host only the indices (one copy of 4 bytes a row,
// counted by the stand-in) and nothing to the device, and leaves the
// scores there; of scores the host holds it computes on the host and
// copies nothing either way. The CPU engine has no ArgMaxer.
func TestArgMaxCopiesIndices(t *testing.T) {
	g := gpu(t)
	e := tensor.EngineFor[float32](g)
	ew := tensor.ElementwiseOf(e)
	if ew == nil {
		t.Skip("the stand-in's kernels do not load")
	}
	const rows, classes = 32, 10
	r := rand.New(rand.NewPCG(35, 4))
	x := tensor.FromSlice(finite[float32](r, rows*classes), rows, classes)
	want := tensor.ArgMax(x, 1)
	logits := tensor.New[float32](rows, classes)
	ew.Copy(logits, x)

	before := standinCopies(t)
	got := tensor.ArgMaxOn(e, logits, 1)
	d := standinCopies(t).Sub(before)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ArgMaxOn (-tensor.ArgMax +device):\n%s", diff)
	}
	t.Logf("argmax of [%d, %d] on the device: %+v", rows, classes, d)
	if wantC := (Copies{Down: 1, DownBytes: 4 * rows}); d != wantC {
		t.Errorf("copies %+v, want %+v: the indices alone, not the %d bytes of scores", d, wantC, 4*rows*classes)
	}
	if !logits.Storage().DeviceNewer() {
		t.Error("the scores were copied to the host")
	}

	host := tensor.FromSlice(x.ReadData(), rows, classes) // values on the host
	before = standinCopies(t)
	got = tensor.ArgMaxOn(e, host, 1)
	if d := standinCopies(t).Sub(before); d != (Copies{}) {
		t.Errorf("ArgMaxOn of host values copied %+v", d)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ArgMaxOn of host values (-want +got):\n%s", diff)
	}
	if _, ok := any(tensor.EngineFor[float32](tensor.Gonum(1))).(tensor.ArgMaxer[float32]); ok {
		t.Error("the CPU engine is an ArgMaxer")
	}
}
