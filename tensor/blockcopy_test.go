package tensor_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/tensor/enginetest"
)

// TestCopyBlocks: the host reference sets or adds a·x's blocks into z's,
// element by element as its formula says, and leaves z's other elements.
func TestCopyBlocks(t *testing.T) {
	cases := []struct {
		name   string
		zn, xn int
		s      tensor.Blocks
	}{
		{"none", 5, 5, tensor.Blocks{}},
		{"one block", 7, 9, tensor.Blocks{Count: 1, Len: 3, ZOff: 2, XOff: 5}},
		{"gather", 6, 9, tensor.Blocks{Count: 3, Len: 2, ZStride: 2, XStride: 3}},
		{"scatter", 9, 6, tensor.Blocks{Count: 3, Len: 2, ZStride: 3, XStride: 2}},
		{"time channel", 12, 4, tensor.Blocks{Count: 4, Len: 1, ZOff: 2, ZStride: 3, XStride: 1}},
		{"repeated source", 8, 3, tensor.Blocks{Count: 2, Len: 3, ZOff: 1, ZStride: 4}},
	}
	for _, tc := range cases {
		for _, a := range []float64{1, -0.5} {
			for _, acc := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/a=%v/acc=%v", tc.name, a, acc), func(t *testing.T) {
					z, x := tensor.New[float64](tc.zn), tensor.New[float64](tc.xn)
					for i := range z.Data() {
						z.Data()[i] = float64(100 + i)
					}
					for i := range x.Data() {
						x.Data()[i] = float64(i) + 0.25
					}
					want := append([]float64(nil), z.Data()...)
					for b := range tc.s.Count {
						for i := range tc.s.Len {
							v := a * x.Data()[tc.s.XOff+b*tc.s.XStride+i]
							if acc {
								v += want[tc.s.ZOff+b*tc.s.ZStride+i]
							}
							want[tc.s.ZOff+b*tc.s.ZStride+i] = v
						}
					}
					tensor.CopyBlocks(z, x, a, tc.s, acc)
					if diff := cmp.Diff(want, z.Data()); diff != "" {
						t.Errorf("z (-want +got):\n%s", diff)
					}
				})
			}
		}
	}
}

// TestCopyBlocksMisuse: ranges outside a tensor, overlapping destination
// blocks, negative numbers and shared storage panic with a *ShapeError
// that names the operation and the shapes.
func TestCopyBlocksMisuse(t *testing.T) {
	z, x := tensor.New[float32](2, 3), tensor.New[float32](4, 2)
	cases := map[string]struct {
		z, x *tensor.Tensor[float32]
		s    tensor.Blocks
		why  string // in the message
	}{
		"z too short":       {z, x, tensor.Blocks{Count: 2, Len: 3, ZOff: 1, ZStride: 3}, "z's elements [1, 1+1·3+3) are not within its 6"},
		"x too short":       {z, x, tensor.Blocks{Count: 3, Len: 2, ZStride: 2, XOff: 1, XStride: 3}, "x's elements [1, 1+2·3+2) are not within its 8"},
		"z blocks overlap":  {z, x, tensor.Blocks{Count: 2, Len: 2, ZStride: 1}, "overlap"},
		"negative count":    {z, x, tensor.Blocks{Count: -1, Len: 1}, "negative"},
		"negative length":   {z, x, tensor.Blocks{Count: 1, Len: -1}, "negative"},
		"negative offset":   {z, x, tensor.Blocks{Count: 1, Len: 1, XOff: -1}, "negative"},
		"negative stride":   {z, x, tensor.Blocks{Count: 2, Len: 1, XStride: -1, XOff: 3}, "negative"},
		"negative z offset": {z, x, tensor.Blocks{Count: 1, Len: 1, ZOff: -1}, "negative"},
		"negative z stride": {z, x, tensor.Blocks{Count: 2, Len: 1, ZStride: -1, ZOff: 3}, "negative"},
		"offset past end":   {z, x, tensor.Blocks{Count: 1, Len: 1, ZOff: 6}, "not within"},
		"huge stride":       {z, x, tensor.Blocks{Count: 3, Len: 1, ZStride: 1, XStride: 1 << 62}, "x's elements"},
		"shared storage":    {z, z.Reshape(6), tensor.Blocks{Count: 1, Len: 1, ZOff: 1}, "share storage"},
		"shared, no blocks": {z, z, tensor.Blocks{}, "share storage"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() {
				r := recover()
				var se *tensor.ShapeError
				err, _ := r.(error)
				if !errors.As(err, &se) {
					t.Fatalf("panic %v, want a *tensor.ShapeError", r)
				}
				if msg := se.Error(); !strings.Contains(msg, "tensor.CopyBlocks") || !strings.Contains(msg, "[2 3]") || !strings.Contains(msg, tc.why) {
					t.Errorf("message %q does not name the operation, z's shape and %q", msg, tc.why)
				}
			}()
			tensor.CopyBlocks(tc.z, tc.x, 1, tc.s, false)
		})
	}
}

// TestBlockCopierOf: the CPU engines copy on the host (no BlockCopier);
// HostElementwise and the parking device's Elementwise are BlockCopiers.
func TestBlockCopierOf(t *testing.T) {
	cpu := tensor.Gonum(1).Float64()
	if c := tensor.BlockCopierOf(cpu); c != nil {
		t.Errorf("the CPU engine has a BlockCopier: %T", c)
	}
	if _, ok := tensor.HostElementwise[float32]().(tensor.BlockCopier[float32]); !ok {
		t.Error("HostElementwise is not a BlockCopier")
	}
	d := enginetest.NewParkingDevice(cpu)
	c := tensor.BlockCopierOf[float64](d)
	if c == nil {
		t.Fatal("the parking device has no BlockCopier")
	}
	z, x := tensor.New[float64](2, 3), tensor.FromSlice([]float64{1, 2, 3, 4}, 2, 2)
	c.CopyBlocks(z, x, 2, tensor.Blocks{Count: 2, Len: 2, ZOff: 1, ZStride: 3, XStride: 2}, false)
	if !z.Storage().DeviceNewer() {
		t.Error("the parking device left its result on the host")
	}
	if diff := cmp.Diff([]float64{0, 2, 4, 0, 6, 8}, z.ReadData()); diff != "" {
		t.Errorf("z (-want +got):\n%s", diff)
	}
}

// TestCopyBlocksOfNothing: a copy of no elements (no blocks, or blocks of
// no elements) fits tensors its offsets and strides would not, and writes
// nothing: z's version stays.
func TestCopyBlocksOfNothing(t *testing.T) {
	z, x := tensor.New[float32](2, 3), tensor.New[float32](4, 2)
	for _, s := range []tensor.Blocks{{Count: 0, Len: 3}, {Count: 2, Len: 0, ZOff: 100, XOff: 100}, {Count: 0, Len: 5, ZStride: 9}} {
		v := z.Version()
		tensor.CopyBlocks(z, x, 1, s, false)
		if z.Version() != v {
			t.Errorf("%+v: z written", s)
		}
	}
}
