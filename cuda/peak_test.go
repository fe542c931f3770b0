package cuda

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

// TestPeakBytes: Stats' peaks start at zero, rise with a product's
// operands and result (at least their bytes, the blocks' rounding at most
// a quarter more), rise further with a larger product, stay at their
// high-water mark when the memory goes back (FreeCache), start again from
// what is held at ResetPeak, and measure the same product the same from
// there.
func TestPeakBytes(t *testing.T) {
	g := gpu(t)
	if s := stats(t, g); s.PeakBytes != 0 || s.PeakPoolBytes != 0 {
		t.Fatalf("a new backend's peaks: %d in use, %d held, want 0", s.PeakBytes, s.PeakPoolBytes)
	}
	e := tensor.EngineFor[float32](g)
	rng := rand.New(rand.NewPCG(7, 8))
	product := func(m, n, k int) int64 {
		x := tensor.RandN[float32](rng, 0, 1, m, k)
		w := tensor.RandN[float32](rng, 0, 1, n, k)
		y := tensor.New[float32](m, n).MatMul(e, x, false, w, true)
		y.ReadData()
		runtime.KeepAlive(x)
		runtime.KeepAlive(w)
		return int64(4 * (m*k + n*k + m*n))
	}
	// check: the peak in use is at least the bytes of the tensors the
	// product used and at most those of every tensor on the device then,
	// rounded up to their blocks (a quarter more, or minBlock).
	check := func(step string, s Stats, least, most int64) {
		t.Helper()
		if s.PeakBytes < least || s.PeakBytes > most*5/4+6*minBlock {
			t.Errorf("%s: PeakBytes %d, want from %d (the product's tensors) to a quarter over %d (all on the device)", step, s.PeakBytes, least, most)
		}
		if s.PeakPoolBytes < s.PeakBytes {
			t.Errorf("%s: PeakPoolBytes %d below PeakBytes %d", step, s.PeakPoolBytes, s.PeakBytes)
		}
	}

	small := product(8, 24, 16)
	s1 := stats(t, g)
	check("small product", s1, small, small)

	large := product(256, 512, 1024) // 3.5 MiB; the small product's copies may still be held
	s2 := stats(t, g)
	check("large product", s2, large, small+large)
	t.Logf("peaks: small product %d in use, %d held; large %d and %d", s1.PeakBytes, s1.PeakPoolBytes, s2.PeakBytes, s2.PeakPoolBytes)
	if s2.PeakBytes <= s1.PeakBytes || s2.PeakPoolBytes < s1.PeakPoolBytes {
		t.Errorf("the larger product's peaks %d in use, %d held; the smaller's %d, %d: want them higher",
			s2.PeakBytes, s2.PeakPoolBytes, s1.PeakBytes, s1.PeakPoolBytes)
	}

	FreeCache(g)
	if s := stats(t, g); s.PoolBytes != 0 || s.PeakBytes != s2.PeakBytes || s.PeakPoolBytes != s2.PeakPoolBytes {
		t.Errorf("after FreeCache: pool %d bytes, peaks %d and %d; want 0 and the marks kept, %d and %d",
			s.PoolBytes, s.PeakBytes, s.PeakPoolBytes, s2.PeakBytes, s2.PeakPoolBytes)
	}
	ResetPeak(g)
	if s := stats(t, g); s.PeakBytes != 0 || s.PeakPoolBytes != 0 {
		t.Errorf("ResetPeak with nothing held: peaks %d and %d, want 0", s.PeakBytes, s.PeakPoolBytes)
	}
	product(8, 24, 16)
	if s := stats(t, g); s.PeakBytes != s1.PeakBytes || s.PeakPoolBytes != s1.PeakPoolBytes {
		t.Errorf("the small product after ResetPeak: peaks %d and %d, want the first time's %d and %d",
			s.PeakBytes, s.PeakPoolBytes, s1.PeakBytes, s1.PeakPoolBytes)
	}

	// ResetPeak with memory held starts from it.
	keep := tensor.RandN[float32](rng, 0, 1, 512, 1024)
	y := tensor.New[float32](512, 24).MatMul(e, keep, false, tensor.RandN[float32](rng, 0, 1, 24, 1024), true)
	y.ReadData()
	ResetPeak(g)
	s := stats(t, g)
	if s.PeakBytes < 4*int64(keep.Len()) {
		t.Errorf("ResetPeak with a 2 MiB operand held: PeakBytes %d, want at least its %d bytes", s.PeakBytes, 4*keep.Len())
	}
	runtime.KeepAlive(keep)

	// Not a cuda backend: nothing happens.
	ResetPeak(tensor.Gonum(1))
	if _, ok := StatsOf(tensor.Gonum(1)); ok {
		t.Error("StatsOf of the gonum backend: ok")
	}
}
