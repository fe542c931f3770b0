package cuda

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/tensor"
)

// copyBlocksCases are TestCopyBlocks's copies: the lengths of z and x and
// the blocks.
var copyBlocksCases = []struct {
	name   string
	zn, xn int
	s      tensor.Blocks
}{
	{"no blocks", 9, 9, tensor.Blocks{Count: 0, Len: 3}},
	{"empty blocks", 9, 9, tensor.Blocks{Count: 4, Len: 0, ZStride: 2}},
	{"one block", 13, 11, tensor.Blocks{Count: 1, Len: 7, ZOff: 5, XOff: 3}},
	{"one block, whole", 11, 11, tensor.Blocks{Count: 1, Len: 11}},
	// A filter [co, c+1, kh, kw] split into its first c channels and its
	// time channel, and its gradient scattered back, with co = 5, c = 3,
	// 3 × 3 taps.
	{"split input channels", 5 * 3 * 9, 5 * 4 * 9, tensor.Blocks{Count: 5, Len: 27, ZStride: 27, XStride: 36}},
	{"split time channel", 5 * 9, 5 * 4 * 9, tensor.Blocks{Count: 5, Len: 9, ZStride: 9, XOff: 27, XStride: 36}},
	{"scatter input channels", 5 * 4 * 9, 5 * 3 * 9, tensor.Blocks{Count: 5, Len: 27, ZStride: 36, XStride: 27}},
	{"scatter time channel", 5 * 4 * 9, 5 * 9, tensor.Blocks{Count: 5, Len: 9, ZOff: 27, ZStride: 36, XStride: 9}},
	{"odd lengths and offsets", 200, 150, tensor.Blocks{Count: 7, Len: 13, ZOff: 3, ZStride: 27, XOff: 5, XStride: 19}},
	{"blocks of one", 40, 40, tensor.Blocks{Count: 17, Len: 1, ZOff: 1, ZStride: 2, XOff: 2, XStride: 2}},
	{"a source read twice", 30, 10, tensor.Blocks{Count: 3, Len: 10, ZStride: 10}},
	{"adjacent blocks", 60, 80, tensor.Blocks{Count: 6, Len: 10, ZStride: 10, XOff: 1, XStride: 13}},
	// More elements than the stand-in's largest grid (4 multiprocessors ×
	// 32 blocks × 256 threads): the grid-stride loop goes round.
	{"many blocks", 300 * 180, 300 * 171, tensor.Blocks{Count: 300, Len: 171, ZOff: 9, ZStride: 180, XStride: 171}},
	{"one long block", 40001, 40003, tensor.Blocks{Count: 1, Len: 40000, ZOff: 1, XOff: 3}},
}

// TestCopyBlocks: the CopyBlocks kernel and the engine's CopyBlocks
// (tensor.BlockCopier) give tensor.CopyBlocks's results, bit for bit, set
// and accumulated, with a = 1 and a ≠ 1, for every case: no blocks, one,
// many, odd lengths and offsets, a filter's split and scatter, more
// elements than a grid; z's other elements are left. On the engine z
// stays on the device (its storage marked newer), whether it was there
// (written in place, nothing copied) or on the host (uploaded, unless the
// blocks set it whole).
func TestCopyBlocks(t *testing.T) {
	g := gpu(t)
	k := kernels(t)
	bothTypes(t, func(t *testing.T) { testCopyBlocks[float32](t, g, k) }, func(t *testing.T) { testCopyBlocks[float64](t, g, k) })
}

func testCopyBlocks[T tensor.Float](t *testing.T, g tensor.Backend, k *Kernels) {
	ew := tensor.ElementwiseOf(tensor.EngineFor[T](g))
	if ew == nil {
		t.Skip("the stand-in's kernels do not load")
	}
	bc, ok := ew.(tensor.BlockCopier[T])
	if !ok {
		t.Fatal("the engine's Elementwise is not a tensor.BlockCopier")
	}
	if tensor.BlockCopierOf(tensor.EngineFor[T](g)) == nil {
		t.Error("tensor.BlockCopierOf finds no BlockCopier on the engine")
	}
	r := rand.New(rand.NewPCG(41, 7))
	opt := cmpopts.EquateNaNs()
	for _, c := range copyBlocksCases {
		for _, a := range []T{1, -0.75, 3} {
			for _, acc := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/a=%v/acc=%v", c.name, a, acc), func(t *testing.T) {
					z0, x0 := values[T](r, c.zn), values[T](r, c.xn)
					want := tensor.FromSlice(slices.Clone(z0), c.zn)
					tensor.CopyBlocks(want, tensor.FromSlice(slices.Clone(x0), c.xn), a, c.s, acc)

					// The kernel's.
					dz, dx := toDevice(t, k, z0), toDevice(t, k, x0)
					if err := CopyBlocks(k, dz, dx, a, c.s, acc); err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(want.ReadData(), fromDevice(t, k, dz), opt); diff != "" {
						t.Errorf("kernel (-tensor.CopyBlocks +kernel):\n%s", diff)
					}
					if diff := cmp.Diff(x0, fromDevice(t, k, dx), opt); diff != "" {
						t.Errorf("kernel: x changed (-before +after):\n%s", diff)
					}

					// The engine's, z and x on the device (written there
					// by the engine's Copy).
					z, x := tensor.New[T](c.zn), tensor.New[T](c.xn)
					ew.Copy(z, tensor.FromSlice(slices.Clone(z0), c.zn))
					ew.Copy(x, tensor.FromSlice(slices.Clone(x0), c.xn))
					before := stats(t, g)
					bc.CopyBlocks(z, x, a, c.s, acc)
					s := stats(t, g)
					if n := s.Downloads + s.Uploads - before.Downloads - before.Uploads; n != 0 {
						t.Errorf("engine: %d copies with z and x on the device, want none", n)
					}
					if !z.Storage().DeviceNewer() {
						t.Error("engine: z is not newer on the device")
					}
					if diff := cmp.Diff(want.ReadData(), z.ReadData(), opt); diff != "" {
						t.Errorf("engine, on the device (-tensor.CopyBlocks +engine):\n%s", diff)
					}

					// The engine's, z and x on the host.
					z, x = tensor.FromSlice(slices.Clone(z0), c.zn), tensor.FromSlice(slices.Clone(x0), c.xn)
					zh := tensor.New[T](c.zn)
					copy(zh.Data(), z0)
					bc.CopyBlocks(zh, x, a, c.s, acc)
					if diff := cmp.Diff(want.ReadData(), zh.ReadData(), opt); diff != "" {
						t.Errorf("engine, from the host (-tensor.CopyBlocks +engine):\n%s", diff)
					}
					// FromSlice's memory: the result copied back at once.
					bc.CopyBlocks(z, x, a, c.s, acc)
					if diff := cmp.Diff(want.ReadData(), z.HostMemory(), opt); diff != "" {
						t.Errorf("engine, into FromSlice's memory (-tensor.CopyBlocks +engine):\n%s", diff)
					}
				})
			}
		}
	}
}

// TestCopyBlocksWholeNotUploaded: blocks that set all of z do not upload
// z (only x goes up); blocks that leave some of z upload it, so that the
// elements left keep their values.
func TestCopyBlocksWholeNotUploaded(t *testing.T) {
	g := gpu(t)
	ew := tensor.ElementwiseOf(tensor.EngineFor[float32](g))
	if ew == nil {
		t.Skip("the stand-in's kernels do not load")
	}
	bc := ew.(tensor.BlockCopier[float32])
	for _, c := range []struct {
		name    string
		s       tensor.Blocks
		uploads int64
	}{
		{"whole", tensor.Blocks{Count: 4, Len: 3, ZStride: 3, XOff: 1, XStride: 5}, 1},
		{"part", tensor.Blocks{Count: 4, Len: 2, ZStride: 3, XOff: 1, XStride: 5}, 2},
	} {
		z, x := tensor.Full[float32](7, 4, 3), tensor.Full[float32](2, 4, 5)
		before := stats(t, g)
		bc.CopyBlocks(z, x, 0.5, c.s, false)
		if n := stats(t, g).Uploads - before.Uploads; n != c.uploads {
			t.Errorf("%s: %d uploads, want %d", c.name, n, c.uploads)
		}
		want := []float32{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
		if c.name == "part" {
			want = []float32{1, 1, 7, 1, 1, 7, 1, 1, 7, 1, 1, 7}
		}
		if diff := cmp.Diff(want, z.ReadData()); diff != "" {
			t.Errorf("%s: z (-want +got):\n%s", c.name, diff)
		}
	}
}

// TestCopyBlocksMisuse: the kernel's function returns an error naming
// CopyBlocks for blocks outside a buffer, overlapping destination blocks
// and negative numbers; the engine's panics with a *tensor.ShapeError
// naming cuda.CopyBlocks, the shapes and the ranges, before anything runs.
func TestCopyBlocksMisuse(t *testing.T) {
	g := gpu(t)
	k := kernels(t)
	ew := tensor.ElementwiseOf(tensor.EngineFor[float64](g))
	if ew == nil {
		t.Skip("the stand-in's kernels do not load")
	}
	b6, b8 := toDevice(t, k, make([]float64, 6)), toDevice(t, k, make([]float64, 8))
	for name, s := range map[string]tensor.Blocks{
		"z too short":      {Count: 2, Len: 3, ZOff: 1, ZStride: 3},
		"x too short":      {Count: 3, Len: 2, ZStride: 2, XOff: 1, XStride: 3},
		"z blocks overlap": {Count: 2, Len: 2, ZStride: 1},
		"negative count":   {Count: -1, Len: 1},
		"negative length":  {Count: 1, Len: -1},
		"negative offset":  {Count: 1, Len: 1, ZOff: -1},
		"negative stride":  {Count: 2, Len: 1, XOff: 3, XStride: -1},
	} {
		if err := CopyBlocks(k, b6, b8, 1, s, false); err == nil || !strings.Contains(err.Error(), "CopyBlocks") {
			t.Errorf("kernel, %s: %v", name, err)
		}
		func() {
			defer func() {
				var se *tensor.ShapeError
				err, _ := recover().(error)
				if !errors.As(err, &se) {
					t.Fatalf("engine, %s: panic %v, want a *tensor.ShapeError", name, err)
				}
				if msg := se.Error(); !strings.HasPrefix(msg, "cuda.CopyBlocks:") || !strings.Contains(msg, "[2 3]") || !strings.Contains(msg, "[8]") {
					t.Errorf("engine, %s: %q does not name cuda.CopyBlocks and the shapes", name, msg)
				}
			}()
			ew.(tensor.BlockCopier[float64]).CopyBlocks(tensor.New[float64](2, 3), tensor.New[float64](8), 1, s, false)
		}()
	}
	func() {
		defer func() {
			var se *tensor.ShapeError
			if err, _ := recover().(error); !errors.As(err, &se) || !strings.Contains(se.Msg, "share storage") {
				t.Errorf("engine, shared storage: panic %v, want a *tensor.ShapeError", err)
			}
		}()
		z := tensor.New[float64](2, 3)
		ew.(tensor.BlockCopier[float64]).CopyBlocks(z, z.Reshape(6), 1, tensor.Blocks{Count: 1, Len: 2, ZOff: 3}, false)
	}()
}
