package odeblock_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/bench/mnistnode"
	"github.com/adamnode/adamnode/internal/peakrss"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// mlp32 is f(h, t) = W2·tanh(W1·[h, t] + b1) + b2 in float32.
type mlp32 struct{ w1, b1, w2, b2 *autograd.Param[float32] }

func newMLP32(rng *rand.Rand, d, hidden int) *mlp32 {
	p := func(n string, s ...int) *autograd.Param[float32] {
		return autograd.NewParam(n, tensor.RandN[float32](rng, 0, 1/math.Sqrt(float64(s[len(s)-1])), s...))
	}
	return &mlp32{w1: p("w1", hidden, d+1), b1: p("b1", hidden), w2: p("w2", d, hidden), b2: p("b2", d)}
}

func (m *mlp32) ForwardT(tp *autograd.Tape[float32], t float64, h autograd.Var[float32]) autograd.Var[float32] {
	z := autograd.Tanh(autograd.Linear(autograd.ConcatTime(h, float32(t)), tp.Param(m.w1), tp.Param(m.b1)))
	return autograd.Linear(z, tp.Param(m.w2), tp.Param(m.b2))
}

func (m *mlp32) Params() []*autograd.Param[float32] {
	return []*autograd.Param[float32]{m.w1, m.b1, m.w2, m.b2}
}

// rawMLP evaluates the same MLP and its VJP with tensor kernels only: the
// baseline for the solver's and tape's overhead.
type rawMLP struct {
	e                tensor.Engine[float32]
	m                *mlp32
	x, pre, a, y, c  *tensor.Tensor[float32]
	da, dx, dw1, dw2 *tensor.Tensor[float32]
	h, m0, v, dh, dm []float32
	dv               []float32
}

func newRawMLP(e tensor.Engine[float32], m *mlp32, b, d, hidden int) *rawMLP {
	n := b * d
	return &rawMLP{e: e, m: m,
		x: tensor.New[float32](b, d+1), pre: tensor.New[float32](b, hidden), a: tensor.New[float32](b, hidden),
		y: tensor.New[float32](b, d), c: tensor.New[float32](b, d), da: tensor.New[float32](b, hidden),
		dx: tensor.New[float32](b, d+1), dw1: tensor.New[float32](hidden, d+1), dw2: tensor.New[float32](d, hidden),
		h: make([]float32, n), m0: make([]float32, n), v: make([]float32, n), dh: make([]float32, n), dm: make([]float32, n), dv: make([]float32, n)}
}

// eval is one evaluation of the AdamNODE right-hand side.
func (r *rawMLP) eval(t float32) {
	d := r.x.Dim(1) - 1
	xd := r.x.Data()
	for i := 0; i < r.x.Dim(0); i++ {
		copy(xd[i*(d+1):], r.h[i*d:(i+1)*d])
		xd[i*(d+1)+d] = t
	}
	r.pre.MatMul(r.e, r.x, false, r.m.w1.Value, true)
	r.pre.AddBias(r.pre, r.m.b1.Value)
	r.a.Tanh(r.pre)
	r.y.MatMul(r.e, r.a, false, r.m.w2.Value, true)
	r.y.AddBias(r.y, r.m.b2.Value)
	for i, g := range r.y.Data() {
		v := float64(r.v[i])
		e := math.Exp(-math.Abs(v))
		sp := math.Sqrt(max(v, 0) + math.Log1p(e))
		r.dh[i] = -r.m0[i] / float32(sp+1e-8)
		r.dm[i] = 0.5 * (-g - r.m0[i])
		r.dv[i] = 0.5 * (g*g - r.v[i])
		r.c.Data()[i] = 0.5*r.dm[i] - g*r.dv[i] // the adjoint's cotangent c
	}
}

// vjp is one backward evaluation: the right-hand side and one VJP of f.
func (r *rawMLP) vjp(t float32) {
	r.eval(t)
	for i := range r.dv { // the adjoint's a_m and a_v updates
		v := float64(r.v[i])
		e := math.Exp(-math.Abs(v))
		sig := 1 / (1 + e)
		sp := math.Sqrt(max(v, 0) + math.Log1p(e))
		r.dm[i] = float32(float64(r.dh[i])/sp) + 0.5*r.dm[i]
		r.dv[i] = float32(-float64(r.dh[i]*r.m0[i])*sig/(2*sp)/(sp*sp)) + 0.5*r.dv[i]
	}
	r.dw2.MatMul(r.e, r.c, true, r.a, false)
	r.da.MatMul(r.e, r.c, false, r.m.w2.Value, false)
	for i, a := range r.a.Data() {
		r.da.Data()[i] *= 1 - a*a
	}
	r.dw1.MatMul(r.e, r.da, true, r.x, false)
	r.dx.MatMul(r.e, r.da, false, r.m.w1.Value, false)
}

// adamStep returns one training iteration of an AdamNODE block from
// (h0, m0) on a tape of e: the forward solve, the mean square of h at the
// end and the backward pass.
func adamStep(b *testing.B, e tensor.Engine[float32], block *odeblock.Block[float32], h0, m0 *tensor.Tensor[float32]) func() {
	params := block.Params()
	tp := autograd.NewTape(e)
	return func() {
		tp.Reset()
		autograd.ZeroGrads(params)
		z, err := block.Forward(tp, odeblock.AdamInitialState(tp.Input(h0), tp.Input(m0)))
		if err != nil {
			b.Fatal(err)
		}
		if err := tp.Backward(autograd.Mean(autograd.Square(odeblock.Part(z, 0, 3)))); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdamNODEMLP is the overhead-bound case: AdamNODE with a small
// tanh MLP field, batch 512, dopri5 at 1e-6, one iteration (forward and
// adjoint backward) in float32. overhead-ratio is the iteration's time over
// the time of the same number of raw-kernel evaluations (forward NFE) and
// evaluation+VJPs (backward NFE), measured in the same run.
func BenchmarkAdamNODEMLP(b *testing.B) {
	const batch, d, hidden = 512, 4, 32
	rng := rand.New(rand.NewPCG(1, 2))
	e := tensor.EngineFor[float32](tensor.Default())
	field := newMLP32(rng, d, hidden)
	dyn := odeblock.NewAdamNODE[float32](field, -1, 1, odeblock.ScaleSoftplus)
	h0 := tensor.RandN[float32](rng, 0, 1, batch, d)
	m0 := tensor.RandN[float32](rng, 0, 0.5, batch, d)
	block := &odeblock.Block[float32]{Dynamics: dyn, Solver: odeblock.Options{RTol: 1e-6, ATol: 1e-6}, Mode: odeblock.Adjoint{}}
	iter := adamStep(b, e, block, h0, m0)
	iter()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		iter()
	}
	perIter := b.Elapsed().Seconds() / float64(b.N)
	b.StopTimer()
	st := block.Stats()
	raw := newRawMLP(e, field, batch, d, hidden)
	copy(raw.h, h0.Data()) // the same inputs, so tanh takes the same paths
	copy(raw.m0, m0.Data())
	for i, m := range raw.m0 {
		raw.v[i] = m * m
	}
	reps := 3
	start := time.Now()
	for range reps {
		for range st.Forward.NFE {
			raw.eval(0.5)
		}
		for range st.Backward.NFE {
			raw.vjp(0.5)
		}
	}
	rawIter := time.Since(start).Seconds() / float64(reps)
	b.ReportMetric(float64(st.Forward.NFE), "fwd-NFE")
	b.ReportMetric(float64(st.Backward.NFE), "bwd-NFE")
	b.ReportMetric(perIter/float64(st.Forward.NFE+st.Backward.NFE)*1e6, "µs/NFE")
	b.ReportMetric(perIter/rawIter, "overhead-ratio")
}

// BenchmarkMNISTAdamNODE is the compute-bound case: one training iteration
// (forward and backward) of the paper's MNIST AdamNODE, batch 32, dopri5 at
// 1e-4, float32. It reports the NFE and the process's peak RSS (run it
// alone: -bench 'MNISTAdamNODE/adjoint' for a clean figure).
func BenchmarkMNISTAdamNODE(b *testing.B) {
	for _, mode := range modes {
		b.Run(mode.String(), func(b *testing.B) {
			m := mnistnode.New(3, mode)
			x, labels := mnistnode.Batch(3, 32)
			tp := autograd.NewTape(tensor.EngineFor[float32](tensor.Default()))
			params := m.Params()
			iter := func() {
				tp.Reset()
				autograd.ZeroGrads(params)
				l, err := m.Loss(tp, x, labels)
				if err != nil {
					b.Fatal(err)
				}
				if err := tp.Backward(l); err != nil {
					b.Fatal(err)
				}
			}
			iter()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				iter()
			}
			st := m.Block.Stats()
			b.ReportMetric(float64(st.Forward.NFE), "fwd-NFE")
			b.ReportMetric(float64(st.Backward.NFE), "bwd-NFE")
			if mib, ok := peakrss.MiB(); ok {
				b.ReportMetric(mib, "peak-RSS-MB")
			}
		})
	}
}

// BenchmarkMemoryByHorizon reports the memory a forward pass keeps for its
// backward (heap retained after the forward, after a GC) for each gradient
// mode as t1 grows, on the overhead-bound MLP AdamNODE: Adjoint's stays
// flat, Backprop's grows with the evaluations, Checkpoint's with the steps.
func BenchmarkMemoryByHorizon(b *testing.B) {
	const batch, d, hidden = 256, 4, 32
	for _, mode := range modes {
		for _, t1 := range []float64{1, 4, 16} {
			b.Run(fmt.Sprintf("%v/t1=%g", mode, t1), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 2))
				dyn := odeblock.NewAdamNODE[float32](newMLP32(rng, d, hidden), -1, 1, odeblock.ScaleSoftplus)
				h0 := tensor.RandN[float32](rng, 0, 1, batch, d)
				m0 := tensor.RandN[float32](rng, 0, 0.5, batch, d)
				block := &odeblock.Block[float32]{Dynamics: dyn, Times: []float64{0, t1}, Mode: mode, Solver: odeblock.Options{RTol: 1e-5, ATol: 1e-5}}
				var retained float64
				for b.Loop() {
					tp := autograd.NewTape(tensor.EngineFor[float32](tensor.Default()))
					var before, after runtime.MemStats
					runtime.GC()
					runtime.ReadMemStats(&before)
					z, err := block.Forward(tp, odeblock.AdamInitialState(tp.Input(h0), tp.Input(m0)))
					if err != nil {
						b.Fatal(err)
					}
					runtime.GC()
					runtime.ReadMemStats(&after)
					retained = float64(after.HeapAlloc) - float64(before.HeapAlloc)
					if err := tp.Backward(autograd.Mean(odeblock.Part(z, 0, 3))); err != nil {
						b.Fatal(err)
					}
				}
				st := block.Stats()
				b.ReportMetric(retained/1e6, "retained-MB")
				b.ReportMetric(float64(st.Forward.NFE), "fwd-NFE")
				b.ReportMetric(float64(st.Forward.Accepted), "steps")
			})
		}
	}
}

// BenchmarkRecursiveBySteps is the memory and recomputation of the modes
// that differentiate the discrete solve as the number of steps grows from
// 10 to 10,000 (fixed-step rk4 over [0, 1], a tanh MLP field 16 → 64 → 16,
// batch 64, float32: a state of 1024 numbers). Per pass, on a fresh block
// and tape: states (the most the mode kept at once, BlockStats.Stored),
// alloc-MB (all memory allocated by the forward and backward pass, an upper
// bound on its peak) and re-advanced/step (steps recomputed beyond
// Checkpoint's one re-recording per step). Recursive with budgets 8 and 32
// against Checkpoint (unlimited).
func BenchmarkRecursiveBySteps(b *testing.B) {
	const batch, d, hidden = 64, 16, 64
	for _, mode := range []odeblock.GradMode{odeblock.Recursive{Budget: 8}, odeblock.Recursive{Budget: 32}, odeblock.Checkpoint{}} {
		for _, steps := range []int{10, 100, 1000, 10000} {
			name := mode.String()
			if r, ok := mode.(odeblock.Recursive); ok {
				name = fmt.Sprintf("recursive-%d", r.Budget)
			}
			b.Run(fmt.Sprintf("%s/steps=%d", name, steps), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 2))
				f := newMLP32(rng, d, hidden)
				h0 := tensor.RandN[float32](rng, 0, 1, batch, d)
				var st odeblock.BlockStats
				var alloc float64
				for b.Loop() {
					block := &odeblock.Block[float32]{Dynamics: &odeblock.NODE[float32]{F: f}, Mode: mode,
						Solver: odeblock.Options{Method: "rk4", Step: 1 / float64(steps)}}
					tp := autograd.NewTape(tensor.EngineFor[float32](tensor.Default()))
					var before, after runtime.MemStats
					runtime.GC()
					runtime.ReadMemStats(&before)
					z, err := block.Forward(tp, tp.Input(h0))
					if err != nil {
						b.Fatal(err)
					}
					if err := tp.Backward(autograd.Mean(z)); err != nil {
						b.Fatal(err)
					}
					runtime.ReadMemStats(&after)
					alloc = float64(after.TotalAlloc - before.TotalAlloc)
					st = block.Stats()
				}
				if st.Forward.Accepted != steps {
					b.Fatalf("%d steps taken, want %d", st.Forward.Accepted, steps)
				}
				const s = 4 // rk4's stages, all needed in backward
				b.ReportMetric(float64(st.Stored), "states")
				b.ReportMetric(alloc/1e6, "alloc-MB")
				b.ReportMetric(float64(st.Backward.NFE-2*s*steps)/float64(s*steps), "re-advanced/step")
			})
		}
	}
}

// BenchmarkShardedSolve is one training iteration (forward and adjoint
// backward, float32) of an AdamNODE whose field is a 16 → 128 → 16 tanh
// MLP, batch 512, dopri5 at 1e-6, solved whole (shards=1) and as one ODE
// per worker (shards=2, Block.Shards) on the default backend's kind with 2
// workers: `benchstat -col /shards`.
func BenchmarkShardedSolve(b *testing.B) {
	const batch, d, hidden = 512, 16, 128
	for _, shards := range []int{1, 2} {
		b.Run(fmt.Sprintf("shards=%d", shards), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(5, 6))
			bs := tensor.Backends(2) // OpenBLAS last, where it is built in
			e := tensor.EngineFor[float32](bs[len(bs)-1])
			dyn := odeblock.NewAdamNODE[float32](newMLP32(rng, d, hidden), -1, 1, odeblock.ScaleSoftplus)
			h0 := tensor.RandN[float32](rng, 0, 1, batch, d)
			m0 := tensor.RandN[float32](rng, 0, 0.5, batch, d)
			block := &odeblock.Block[float32]{Dynamics: dyn, Solver: odeblock.Options{RTol: 1e-6, ATol: 1e-6}, Mode: odeblock.Adjoint{}, Shards: shards}
			iter := adamStep(b, e, block, h0, m0)
			iter()
			b.ReportAllocs()
			for b.Loop() {
				iter()
			}
			st := block.Stats()
			b.ReportMetric(float64(st.Forward.NFE), "fwd-NFE")
			b.ReportMetric(float64(st.Backward.NFE), "bwd-NFE")
		})
	}
}
