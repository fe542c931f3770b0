package tensor_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/adamnode/adamnode/tensor"
)

// BenchmarkGemm measures square float32 and float64 GEMM on every compiled-in
// backend, reporting GFLOP/s.
func BenchmarkGemm(b *testing.B) {
	for _, be := range tensor.Backends(0) {
		for _, n := range []int{256, 1024} {
			b.Run(fmt.Sprintf("%s/float32/n=%d", be.Name(), n), func(b *testing.B) { benchGemm[float32](b, be, n) })
			b.Run(fmt.Sprintf("%s/float64/n=%d", be.Name(), n), func(b *testing.B) { benchGemm[float64](b, be, n) })
		}
	}
}

func benchGemm[T tensor.Float](b *testing.B, be tensor.Backend, n int) {
	e := tensor.EngineFor[T](be)
	rng := rand.New(rand.NewPCG(1, 1))
	x := tensor.RandN[T](rng, 0, 1, n, n)
	y := tensor.RandN[T](rng, 0, 1, n, n)
	z := tensor.New[T](n, n)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		z.MatMul(e, x, false, y, false)
	}
	b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// convBench is one of the paper's MNIST convolution shapes.
type convBench struct {
	name                  string
	batch, cin, cout, k   int
	pad, height, width, s int
}

var paperConvs = []convBench{
	{name: "3x3_51to50", batch: 32, cin: 51, cout: 50, k: 3, pad: 1, height: 28, width: 28, s: 1},
	{name: "1x1_6to50", batch: 32, cin: 6, cout: 50, k: 1, pad: 0, height: 28, width: 28, s: 1},
}

// BenchmarkConv2D measures the three convolution passes at the paper's MNIST
// shapes, into caller-given destinations, on every compiled-in backend. Next
// to GFLOP/s it reports gemm-ratio: the pass's GFLOP/s over that of a single
// GEMM with the same FLOP count (the batch folded into the GEMM's columns),
// measured in the same run on the same engine.
func BenchmarkConv2D(b *testing.B) {
	for _, be := range tensor.Backends(0) {
		for _, c := range paperConvs {
			for _, pass := range []string{"forward", "backward-data", "backward-filter"} {
				b.Run(fmt.Sprintf("%s/%s/%s", be.Name(), c.name, pass), func(b *testing.B) {
					benchConv(b, tensor.EngineFor[float32](be), c, pass)
				})
			}
		}
	}
}

func benchConv(b *testing.B, e tensor.Engine[float32], c convBench, pass string) {
	rng := rand.New(rand.NewPCG(2, 2))
	p := tensor.ConvParams{Stride: c.s, Pad: c.pad}
	x := tensor.RandN[float32](rng, 0, 1, c.batch, c.cin, c.height, c.width)
	w := tensor.RandN[float32](rng, 0, 0.1, c.cout, c.cin, c.k, c.k)
	ys := tensor.Conv2DOutputShape(x.Shape(), w.Shape(), p)
	y := tensor.RandN[float32](rng, 0, 1, ys...)
	dx := tensor.New[float32](x.Shape()...)
	dw := tensor.New[float32](w.Shape()...)
	kk := c.cin * c.k * c.k       // GEMM inner size of the forward pass
	cols := ys[0] * ys[2] * ys[3] // batch folded into columns
	flops := 2 * float64(c.cout) * float64(kk) * float64(cols)

	run := func() {
		switch pass {
		case "forward":
			e.Conv2D(y, x, w, nil, p)
		case "backward-data":
			e.Conv2DBackwardData(dx, y, w, p, false)
		case "backward-filter":
			e.Conv2DBackwardFilter(dw, nil, y, x, p, false)
		}
	}
	run() // warm the workspaces
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		run()
	}
	convTime := b.Elapsed().Seconds() / float64(b.N)
	b.StopTimer()

	// The same FLOPs as one GEMM of the pass's shape, in the same run.
	var ga, gb, gc *tensor.Tensor[float32]
	var ta, tb bool
	switch pass {
	case "forward": // [Co,K]·[K,N]
		ga, gb, gc = tensor.RandN[float32](rng, 0, 1, c.cout, kk), tensor.RandN[float32](rng, 0, 1, kk, cols), tensor.New[float32](c.cout, cols)
	case "backward-data": // [Co,K]ᵀ·[Co,N]
		ga, gb, gc, ta = tensor.RandN[float32](rng, 0, 1, c.cout, kk), tensor.RandN[float32](rng, 0, 1, c.cout, cols), tensor.New[float32](kk, cols), true
	case "backward-filter": // [Co,N]·[K,N]ᵀ
		ga, gb, gc, tb = tensor.RandN[float32](rng, 0, 1, c.cout, cols), tensor.RandN[float32](rng, 0, 1, kk, cols), tensor.New[float32](c.cout, kk), true
	}
	gc.MatMul(e, ga, ta, gb, tb)
	reps := max(3, min(b.N, 20))
	start := time.Now()
	for range reps {
		gc.MatMul(e, ga, ta, gb, tb)
	}
	gemmTime := time.Since(start).Seconds() / float64(reps)
	b.ReportMetric(flops/convTime/1e9, "GFLOP/s")
	b.ReportMetric(gemmTime/convTime, "gemm-ratio")
}

// mapBench is one elementwise map of BenchmarkMap, with the range its
// inputs are drawn from.
type mapBench struct {
	name   string
	lo, hi float64
	f32    func(z, x *tensor.Tensor[float32])
	f64    func(z, x *tensor.Tensor[float64])
}

var mapBenches = []mapBench{
	{"Exp", -10, 10, func(z, x *tensor.Tensor[float32]) { z.Exp(x) }, func(z, x *tensor.Tensor[float64]) { z.Exp(x) }},
	{"Log", 1e-3, 100, func(z, x *tensor.Tensor[float32]) { z.Log(x) }, func(z, x *tensor.Tensor[float64]) { z.Log(x) }},
	{"Sqrt", 0, 100, func(z, x *tensor.Tensor[float32]) { z.Sqrt(x) }, func(z, x *tensor.Tensor[float64]) { z.Sqrt(x) }},
	{"Tanh", -5, 5, func(z, x *tensor.Tensor[float32]) { z.Tanh(x) }, func(z, x *tensor.Tensor[float64]) { z.Tanh(x) }},
	{"Sigmoid", -10, 10, func(z, x *tensor.Tensor[float32]) { z.Sigmoid(x) }, func(z, x *tensor.Tensor[float64]) { z.Sigmoid(x) }},
	{"Softplus", -10, 10, func(z, x *tensor.Tensor[float32]) { z.Softplus(x) }, func(z, x *tensor.Tensor[float64]) { z.Softplus(x) }},
	{"ReLU", -1, 1, func(z, x *tensor.Tensor[float32]) { z.ReLU(x) }, func(z, x *tensor.Tensor[float64]) { z.ReLU(x) }},
	{"LeakyReLU", -1, 1, func(z, x *tensor.Tensor[float32]) { z.LeakyReLU(x, 0.3) }, func(z, x *tensor.Tensor[float64]) { z.LeakyReLU(x, 0.3) }},
}

// mapBwdBench is one backward map of BenchmarkMap, z = g ⊙ f′ from the
// activation's output y (drawn from [lo, hi)) and the output gradient g;
// the Acc ones add to z.
type mapBwdBench struct {
	name   string
	lo, hi float64
	f32    func(z, g, y *tensor.Tensor[float32])
	f64    func(z, g, y *tensor.Tensor[float64])
}

var mapBwdBenches = []mapBwdBench{
	{"TanhBackward", -1, 1, func(z, g, y *tensor.Tensor[float32]) { z.TanhBackward(g, y, false) }, func(z, g, y *tensor.Tensor[float64]) { z.TanhBackward(g, y, false) }},
	{"TanhBackwardAcc", -1, 1, func(z, g, y *tensor.Tensor[float32]) { z.TanhBackward(g, y, true) }, func(z, g, y *tensor.Tensor[float64]) { z.TanhBackward(g, y, true) }},
	{"SigmoidBackward", 0, 1, func(z, g, y *tensor.Tensor[float32]) { z.SigmoidBackward(g, y, false) }, func(z, g, y *tensor.Tensor[float64]) { z.SigmoidBackward(g, y, false) }},
	{"SoftplusBackward", 0, 10, func(z, g, y *tensor.Tensor[float32]) { z.SoftplusBackward(g, y, false) }, func(z, g, y *tensor.Tensor[float64]) { z.SoftplusBackward(g, y, false) }},
	{"ReLUBackward", -1, 1, func(z, g, y *tensor.Tensor[float32]) { z.ReLUBackward(g, y, false) }, func(z, g, y *tensor.Tensor[float64]) { z.ReLUBackward(g, y, false) }},
	{"ReLUBackwardAcc", -1, 1, func(z, g, y *tensor.Tensor[float32]) { z.ReLUBackward(g, y, true) }, func(z, g, y *tensor.Tensor[float64]) { z.ReLUBackward(g, y, true) }},
	{"LeakyReLUBackward", -1, 1, func(z, g, y *tensor.Tensor[float32]) { z.LeakyReLUBackward(g, y, 0.3, false) }, func(z, g, y *tensor.Tensor[float64]) { z.LeakyReLUBackward(g, y, 0.3, false) }},
}

// BenchmarkMap measures the elementwise maps and the activations' backward
// maps on a [512, 64] tensor on the calling goroutine, reporting ns per
// element.
func BenchmarkMap(b *testing.B) {
	for _, m := range mapBenches {
		b.Run("float32/"+m.name, func(b *testing.B) { benchMap(b, m.lo, m.hi, m.f32) })
		b.Run("float64/"+m.name, func(b *testing.B) { benchMap(b, m.lo, m.hi, m.f64) })
	}
	for _, m := range mapBwdBenches {
		b.Run("float32/"+m.name, func(b *testing.B) { benchMapBwd(b, m.lo, m.hi, m.f32) })
		b.Run("float64/"+m.name, func(b *testing.B) { benchMapBwd(b, m.lo, m.hi, m.f64) })
	}
}

func benchMapBwd[T tensor.Float](b *testing.B, lo, hi float64, f func(z, g, y *tensor.Tensor[T])) {
	rng := rand.New(rand.NewPCG(4, 4))
	y := tensor.RandU[T](rng, lo, hi, 512, 64)
	g := tensor.RandN[T](rng, 0, 1, 512, 64)
	z := tensor.New[T](512, 64)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		f(z, g, y)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(y.Len()), "ns/elem")
}

func benchMap[T tensor.Float](b *testing.B, lo, hi float64, f func(z, x *tensor.Tensor[T])) {
	rng := rand.New(rand.NewPCG(3, 3))
	x := tensor.RandU[T](rng, lo, hi, 512, 64)
	z := tensor.New[T](512, 64)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		f(z, x)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(x.Len()), "ns/elem")
}

// BenchmarkGemmMLP measures float32 GEMM at the shapes of an MLP field's
// Linear layers (batch × in → out): the forward x·Wᵀ, the input gradient
// g·W and the weight gradient gᵀ·x, on every compiled-in backend with one
// worker and with GOMAXPROCS workers, reporting GFLOP/s.
func BenchmarkGemmMLP(b *testing.B) {
	shapes := []struct{ batch, in, out int }{
		{512, 17, 64}, {512, 64, 64}, {512, 64, 16}, {512, 256, 256}, {2048, 64, 64}, {128, 64, 64},
	}
	for _, workers := range []int{1, 0} {
		for _, be := range tensor.Backends(workers) {
			e := tensor.EngineFor[float32](be)
			for _, s := range shapes {
				rng := rand.New(rand.NewPCG(1, 1))
				x := tensor.RandN[float32](rng, 0, 1, s.batch, s.in)
				w := tensor.RandN[float32](rng, 0, 1, s.out, s.in)
				g := tensor.RandN[float32](rng, 0, 1, s.batch, s.out)
				y := tensor.New[float32](s.batch, s.out)
				dx := tensor.New[float32](s.batch, s.in)
				dw := tensor.New[float32](s.out, s.in)
				flops := 2 * float64(s.batch*s.in*s.out)
				for _, pass := range []struct {
					name string
					run  func()
				}{
					{"fwd", func() { y.MatMul(e, x, false, w, true) }},
					{"dx", func() { dx.MatMul(e, g, false, w, false) }},
					{"dw", func() { dw.MatMul(e, g, true, x, false) }},
				} {
					b.Run(fmt.Sprintf("%s/w=%d/%dx%dto%d/%s", be.Name(), be.Workers(), s.batch, s.in, s.out, pass.name), func(b *testing.B) {
						for b.Loop() {
							pass.run()
						}
						b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
					})
				}
			}
		}
	}
}

// BenchmarkLinearCombination times a Runge–Kutta stage sum, dst = base +
// Σ c_j·k_j over 5 terms of 49152 float32 (an AdamNODE adjoint state of a
// batch of 512, D = 16), in one pass (LinearCombination) and as the chain
// it replaces: a copy of base and one AxpySlice per term, in blocks of 512
// that stay in the first-level cache.
func BenchmarkLinearCombination(b *testing.B) {
	const n, m = 49152, 5
	rng := rand.New(rand.NewPCG(7, 7))
	dst, base := make([]float32, n), tensor.RandN[float32](rng, 0, 1, n).Data()
	coef, src := make([]float32, m), make([][]float32, m)
	for j := range src {
		src[j], coef[j] = tensor.RandN[float32](rng, 0, 1, n).Data(), float32(rng.NormFloat64())
	}
	b.Run("fused", func(b *testing.B) {
		for b.Loop() {
			tensor.LinearCombination(dst, base, coef, src)
		}
		b.SetBytes(4 * n * (m + 2))
	})
	b.Run("chain", func(b *testing.B) {
		for b.Loop() {
			for lo := 0; lo < n; lo += 512 {
				d := dst[lo : lo+512]
				copy(d, base[lo:lo+512])
				for j := range src {
					tensor.AxpySlice(coef[j], src[j][lo:lo+512], d)
				}
			}
		}
		b.SetBytes(4 * n * (m + 2))
	})
}

// BenchmarkParallelDispatch times Engine.Parallel with a body that does
// nothing but touch its band, on GOMAXPROCS workers: the fixed cost of
// handing parts to the pool and waiting for them, which decides how small
// a job is worth splitting. "back-to-back" calls it in a loop (the pool's
// workers stay awake); "after-idle" first sleeps a millisecond, longer
// than the workers poll before they block.
func BenchmarkParallelDispatch(b *testing.B) {
	e := tensor.Gonum(0).Float32()
	var sink [64]int
	body := func(lo, hi int) { sink[lo%64] += hi - lo }
	b.Run("back-to-back", func(b *testing.B) {
		for b.Loop() {
			e.Parallel(2, body)
		}
	})
	b.Run("after-idle", func(b *testing.B) {
		var busy time.Duration
		for b.Loop() {
			time.Sleep(time.Millisecond)
			t0 := time.Now()
			e.Parallel(2, body)
			busy += time.Since(t0)
		}
		b.ReportMetric(float64(busy.Nanoseconds())/float64(b.N), "ns/call")
	})
}
