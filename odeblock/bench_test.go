package odeblock_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/adamnode/adamnode/autograd"
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

func (m *mlp32) Forward(tp *autograd.Tape[float32], t float64, h autograd.Var[float32]) autograd.Var[float32] {
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
	block := &odeblock.Block[float32]{Dynamics: dyn, Solver: odeblock.Options{RTol: 1e-6, ATol: 1e-6}, Mode: odeblock.Adjoint}
	params := dyn.Params()
	tp := autograd.NewTape(e)
	iter := func() {
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

// mnistField is the paper's MNIST f: cat t → conv1×1 (c+1 → nhid) · ReLU ·
// cat t → conv3×3 (nhid+1 → nhid, pad 1) · ReLU · cat t → conv1×1
// (nhid+1 → c).
type mnistField struct{ w1, b1, w2, b2, w3, b3 *autograd.Param[float32] }

// kaiming returns a weight of shape s initialised as PyTorch's default:
// uniform on ±1/√fan_in.
func kaiming(rng *rand.Rand, name string, s ...int) *autograd.Param[float32] {
	fan := 1
	for _, d := range s[1:] {
		fan *= d
	}
	return bias(rng, name, fan, s...)
}

// bias returns a tensor of shape s uniform on ±1/√fan.
func bias(rng *rand.Rand, name string, fan int, s ...int) *autograd.Param[float32] {
	bound := 1 / math.Sqrt(float64(fan))
	return autograd.NewParam(name, tensor.RandU[float32](rng, -bound, bound, s...))
}

func newMNISTField(rng *rand.Rand, c, nhid int) *mnistField {
	return &mnistField{
		w1: kaiming(rng, "f.w1", nhid, c+1, 1, 1), b1: bias(rng, "f.b1", c+1, nhid),
		w2: kaiming(rng, "f.w2", nhid, nhid+1, 3, 3), b2: bias(rng, "f.b2", (nhid+1)*9, nhid),
		w3: kaiming(rng, "f.w3", c, nhid+1, 1, 1), b3: bias(rng, "f.b3", nhid+1, c),
	}
}

func (f *mnistField) Forward(tp *autograd.Tape[float32], t float64, h autograd.Var[float32]) autograd.Var[float32] {
	// Conv2DTimeAct(z, t, …, ReLU) is ReLU(Conv2D(ConcatTime(z, t), …)), as
	// the models' Sequential records TimeConcat + Conv2D + ReLU.
	tt := float32(t)
	z := autograd.Conv2DTimeAct(h, tt, tp.Param(f.w1), tp.Param(f.b1), tensor.ConvParams{}, autograd.ReLUAct)
	z = autograd.Conv2DTimeAct(z, tt, tp.Param(f.w2), tp.Param(f.b2), tensor.ConvParams{Pad: 1}, autograd.ReLUAct)
	return autograd.Conv2DTime(z, tt, tp.Param(f.w3), tp.Param(f.b3), tensor.ConvParams{})
}

func (f *mnistField) Params() []*autograd.Param[float32] {
	return []*autograd.Param[float32]{f.w1, f.b1, f.w2, f.b2, f.w3, f.b3}
}

// mnistAdamNODE is the paper's MNIST AdamNODE (c = 5, nhid = 50): an
// initial-state net, the ODE block on [0, 1] and a linear head.
type mnistAdamNODE struct {
	i1, ib1, i2, ib2, i3, ib3 *autograd.Param[float32]
	dyn                       *odeblock.AdamNODE[float32]
	hw, hb                    *autograd.Param[float32]
	block                     *odeblock.Block[float32]
}

func newMNISTAdamNODE(rng *rand.Rand, mode odeblock.GradMode, t1 float64) *mnistAdamNODE {
	const c, nhid = 5, 50
	m := &mnistAdamNODE{
		i1: kaiming(rng, "init.w1", nhid, 1, 1, 1), ib1: bias(rng, "init.b1", 1, nhid),
		i2: kaiming(rng, "init.w2", nhid, nhid, 3, 3), ib2: bias(rng, "init.b2", nhid*9, nhid),
		i3: kaiming(rng, "init.w3", 2*c-1, nhid, 1, 1), ib3: bias(rng, "init.b3", nhid, 2*c-1),
		hw: kaiming(rng, "head.w", 10, c*28*28), hb: bias(rng, "head.b", c*28*28, 10),
	}
	m.dyn = odeblock.NewAdamNODE[float32](newMNISTField(rng, c, nhid), -5, 5, odeblock.ScaleSoftplus)
	m.block = &odeblock.Block[float32]{Dynamics: m.dyn, Times: []float64{0, t1}, Mode: mode,
		Solver: odeblock.Options{RTol: 1e-4, ATol: 1e-4}}
	return m
}

func (m *mnistAdamNODE) params() []*autograd.Param[float32] {
	return append([]*autograd.Param[float32]{m.i1, m.ib1, m.i2, m.ib2, m.i3, m.ib3, m.hw, m.hb}, m.dyn.Params()...)
}

func (m *mnistAdamNODE) loss(tp *autograd.Tape[float32], x *tensor.Tensor[float32], labels []int) (autograd.Var[float32], error) {
	const c = 5
	img := tp.Const(x)
	leaky := autograd.LeakyReLUAct(0.3)
	z := autograd.Conv2DAct(img, tp.Param(m.i1), tp.Param(m.ib1), tensor.ConvParams{}, leaky)
	z = autograd.Conv2DAct(z, tp.Param(m.i2), tp.Param(m.ib2), tensor.ConvParams{Pad: 1}, leaky)
	z = autograd.Conv2D(z, tp.Param(m.i3), tp.Param(m.ib3), tensor.ConvParams{})
	parts := autograd.Split(autograd.Concat(1, img, z), 1, c, c)
	zt, err := m.block.Forward(tp, odeblock.AdamInitialState(parts[0], parts[1]))
	if err != nil {
		return autograd.Var[float32]{}, err
	}
	h := odeblock.Part(zt, 0, 3)
	return autograd.SoftmaxCrossEntropy(autograd.Linear(autograd.Flatten(h), tp.Param(m.hw), tp.Param(m.hb)), labels), nil
}

// BenchmarkMNISTAdamNODE is the compute-bound case: one training iteration
// (forward and backward) of the paper's MNIST AdamNODE, batch 32, dopri5 at
// 1e-4, float32. It reports the NFE and the process's peak RSS (run it
// alone: -bench 'MNISTAdamNODE/adjoint' for a clean figure).
func BenchmarkMNISTAdamNODE(b *testing.B) {
	for _, mode := range modes {
		b.Run(mode.String(), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 4))
			m := newMNISTAdamNODE(rng, mode, 1)
			x := tensor.RandU[float32](rng, 0, 1, 32, 1, 28, 28)
			labels := make([]int, 32)
			for i := range labels {
				labels[i] = i % 10
			}
			tp := autograd.NewTape(tensor.EngineFor[float32](tensor.Default()))
			params := m.params()
			iter := func() {
				tp.Reset()
				autograd.ZeroGrads(params)
				l, err := m.loss(tp, x, labels)
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
			st := m.block.Stats()
			b.ReportMetric(float64(st.Forward.NFE), "fwd-NFE")
			b.ReportMetric(float64(st.Backward.NFE), "bwd-NFE")
			var ru syscall.Rusage
			if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
				b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB")
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
