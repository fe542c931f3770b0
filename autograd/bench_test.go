package autograd_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// BenchmarkTapeTinyMLP measures the tape's own overhead: forward and
// backward of a 3-layer MLP of width 8 at batch 1 on a reused tape, where the
// kernels are trivial. It reports time and allocations per recorded op.
func BenchmarkTapeTinyMLP(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const width = 8
	ws := make([]*ag.Param[float32], 3)
	bs := make([]*ag.Param[float32], 3)
	for i := range ws {
		ws[i] = ag.NewParam("w", tensor.RandN[float32](rng, 0, 0.3, width, width))
		bs[i] = ag.NewParam("b", tensor.RandN[float32](rng, 0, 0.3, width))
	}
	x := tensor.RandN[float32](rng, 0, 1, 1, width)
	y := tensor.RandN[float32](rng, 0, 1, 1, width)
	tp := ag.NewTape(eng32())
	ops := 0
	step := func() {
		tp.Reset()
		h := tp.Const(x)
		for i := range ws {
			h = ag.Linear(h, tp.Param(ws[i]), tp.Param(bs[i]))
			if i < len(ws)-1 {
				h = ag.Tanh(h)
			}
		}
		loss := ag.MSE(h, tp.Const(y))
		ops = tp.Len()
		tp.Backward(loss)
	}
	step()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	b.ResetTimer()
	for b.Loop() {
		step()
	}
	b.StopTimer()
	runtime.ReadMemStats(&m1)
	n := float64(b.N) * float64(ops)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/recorded-op")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/n, "allocs/recorded-op")
	b.ReportMetric(float64(ops), "recorded-ops")
}

// mnistNet holds the parameters of the paper's MNIST vector field
// f(h, t) = conv1x1(cat(relu(conv3x3(cat(relu(conv1x1(cat(h, t))), t))), t)),
// with 5 state channels and 50 hidden channels.
type mnistNet struct {
	w1, b1, w2, b2, w3, b3 *ag.Param[float32]
}

const (
	mBatch, mC, mHidden, mHW = 32, 5, 50, 28
)

func newMNISTNet(rng *rand.Rand) *mnistNet {
	p := func(name string, shape ...int) *ag.Param[float32] {
		return ag.NewParam(name, tensor.RandN[float32](rng, 0, 0.1, shape...))
	}
	return &mnistNet{
		w1: p("w1", mHidden, mC+1, 1, 1), b1: p("b1", mHidden),
		w2: p("w2", mHidden, mHidden+1, 3, 3), b2: p("b2", mHidden),
		w3: p("w3", mC, mHidden+1, 1, 1), b3: p("b3", mC),
	}
}

func (m *mnistNet) forward(tp *ag.Tape[float32], h ag.Var[float32], tv float32) ag.Var[float32] {
	z := ag.ReLU(ag.Conv2D(ag.ConcatTime(h, tv), tp.Param(m.w1), tp.Param(m.b1), tensor.ConvParams{}))
	z = ag.ReLU(ag.Conv2D(ag.ConcatTime(z, tv), tp.Param(m.w2), tp.Param(m.b2), tensor.ConvParams{Pad: 1}))
	return ag.Conv2D(ag.ConcatTime(z, tv), tp.Param(m.w3), tp.Param(m.b3), tensor.ConvParams{})
}

// rawMNIST computes the same forward and backward pass as mnistNet on the
// tape, calling the same tensor kernels directly on preallocated buffers.
type rawMNIST struct {
	eng                 tensor.Engine[float32]
	m                   *mnistNet
	tch                 *tensor.Tensor[float32] // the time channel
	c1, y1, r1          *tensor.Tensor[float32] // cat(h,t), conv1, relu
	c2, y2, r2          *tensor.Tensor[float32]
	c3, y3              *tensor.Tensor[float32]
	gc3, gr2, gy2, gc2  *tensor.Tensor[float32]
	gr1, gy1, gc1, gh   *tensor.Tensor[float32]
	gtime               *tensor.Tensor[float32]
	db1, db2, db3, dbuf *tensor.Tensor[float32]
}

func newRawMNIST(eng tensor.Engine[float32], m *mnistNet) *rawMNIST {
	n := func(c int) *tensor.Tensor[float32] { return tensor.New[float32](mBatch, c, mHW, mHW) }
	return &rawMNIST{eng: eng, m: m, tch: n(1),
		c1: n(mC + 1), y1: n(mHidden), r1: n(mHidden),
		c2: n(mHidden + 1), y2: n(mHidden), r2: n(mHidden),
		c3: n(mHidden + 1), y3: n(mC),
		gc3: n(mHidden + 1), gr2: n(mHidden), gy2: n(mHidden), gc2: n(mHidden + 1),
		gr1: n(mHidden), gy1: n(mHidden), gc1: n(mC + 1), gh: n(mC), gtime: n(1),
		db1: tensor.New[float32](mHidden), db2: tensor.New[float32](mHidden), db3: tensor.New[float32](mC),
	}
}

// reluBackward sets dx = dy ⊙ [y > 0].
func reluBackward(dx, dy, y *tensor.Tensor[float32]) {
	d, g, v := dx.Data(), dy.Data(), y.Data()
	for i := range d {
		if v[i] > 0 {
			d[i] = g[i]
		} else {
			d[i] = 0
		}
	}
}

func (r *rawMNIST) run(h, cot *tensor.Tensor[float32], tv float32) {
	e, m := r.eng, r.m
	r.tch.Fill(tv)
	r.c1.Concat(1, h, r.tch)
	e.Conv2D(r.y1, r.c1, m.w1.Value, nil, tensor.ConvParams{})
	r.y1.AddBias(r.y1, m.b1.Value)
	r.r1.ReLU(r.y1)
	r.c2.Concat(1, r.r1, r.tch)
	e.Conv2D(r.y2, r.c2, m.w2.Value, nil, tensor.ConvParams{Pad: 1})
	r.y2.AddBias(r.y2, m.b2.Value)
	r.r2.ReLU(r.y2)
	r.c3.Concat(1, r.r2, r.tch)
	e.Conv2D(r.y3, r.c3, m.w3.Value, nil, tensor.ConvParams{})
	r.y3.AddBias(r.y3, m.b3.Value)

	m.b3.Grad.Add(m.b3.Grad, r.db3.SumPerChannel(cot))
	e.Conv2DBackwardFilter(m.w3.Grad, nil, cot, r.c3, tensor.ConvParams{}, true)
	e.Conv2DBackwardData(r.gc3, cot, m.w3.Value, tensor.ConvParams{}, false)
	tensor.SplitInto(r.gc3, 1, r.gr2, r.gtime)
	reluBackward(r.gy2, r.gr2, r.r2)
	m.b2.Grad.Add(m.b2.Grad, r.db2.SumPerChannel(r.gy2))
	e.Conv2DBackwardFilter(m.w2.Grad, nil, r.gy2, r.c2, tensor.ConvParams{Pad: 1}, true)
	e.Conv2DBackwardData(r.gc2, r.gy2, m.w2.Value, tensor.ConvParams{Pad: 1}, false)
	tensor.SplitInto(r.gc2, 1, r.gr1, r.gtime)
	reluBackward(r.gy1, r.gr1, r.r1)
	m.b1.Grad.Add(m.b1.Grad, r.db1.SumPerChannel(r.gy1))
	e.Conv2DBackwardFilter(m.w1.Grad, nil, r.gy1, r.c1, tensor.ConvParams{}, true)
	e.Conv2DBackwardData(r.gc1, r.gy1, m.w1.Value, tensor.ConvParams{}, false)
	tensor.SplitInto(r.gc1, 1, r.gh, r.gtime)
}

// BenchmarkConvNetMNIST runs forward and backward of the paper's MNIST
// vector field (batch 32, 28×28, 50 channels) on a reused tape, and the same
// kernels called directly, alternating in the same run. tape/raw-median is
// the median ratio of their times: the tape's overhead.
func BenchmarkConvNetMNIST(b *testing.B) {
	eng := eng32()
	rng := rand.New(rand.NewPCG(2, 2))
	m := newMNISTNet(rng)
	h := tensor.RandN[float32](rng, 0, 1, mBatch, mC, mHW, mHW)
	cot := tensor.RandN[float32](rng, 0, 1, mBatch, mC, mHW, mHW)
	tp := ag.NewTape(eng)
	taped := func() {
		tp.Reset()
		x := tp.Input(h)
		tp.BackwardWith(m.forward(tp, x, 0.5), cot)
	}
	raw := newRawMNIST(eng, m)
	taped()
	raw.run(h, cot, 0.5)
	timed := func(f func()) time.Duration {
		t0 := time.Now()
		f()
		return time.Since(t0)
	}
	rawRun := func() { raw.run(h, cot, 0.5) }
	// The machine is shared: alternate the order, and report the median of
	// the per-iteration ratios as well as the totals.
	var tTape, tRaw time.Duration
	var ratios []float64
	i := 0
	for b.Loop() {
		var dt, dr time.Duration
		if i%2 == 0 {
			dt, dr = timed(taped), timed(rawRun)
		} else {
			dr, dt = timed(rawRun), timed(taped)
		}
		i++
		tTape += dt
		tRaw += dr
		ratios = append(ratios, dt.Seconds()/dr.Seconds())
	}
	slices.Sort(ratios)
	n := float64(b.N)
	b.ReportMetric(tTape.Seconds()*1e3/n, "tape-ms/op")
	b.ReportMetric(tRaw.Seconds()*1e3/n, "raw-ms/op")
	b.ReportMetric(ratios[len(ratios)/2], "tape/raw-median")
}

// BenchmarkRowShards times the forward and backward pass of a float32 MLP
// field (17 → W → W → 16, tanh, the time column left out) on a batch of
// 512, evaluated whole on the engine's workers (sharded=false) and as
// RowShards of one shard per worker (sharded=true): `benchstat -col
// /sharded`.
func BenchmarkRowShards(b *testing.B) {
	for _, width := range []int{64, 128} {
		rng := rand.New(rand.NewPCG(2, 3))
		dims := []int{17, width, width, 16}
		var params []*ag.Param[float32]
		for i := 0; i+1 < len(dims); i++ {
			params = append(params,
				ag.NewParam("w", tensor.RandN[float32](rng, 0, 0.2, dims[i+1], dims[i])),
				ag.NewParam("b", tensor.RandN[float32](rng, 0, 0.2, dims[i+1])))
		}
		f := func(tp *ag.Tape[float32], _ float64, x ag.Var[float32]) ag.Var[float32] {
			for i := 0; i < len(params); i += 2 {
				x = ag.Linear(x, tp.Param(params[i]), tp.Param(params[i+1]))
				if i+2 < len(params) {
					x = ag.Tanh(x)
				}
			}
			return x
		}
		x := tensor.RandN[float32](rng, 0, 1, 512, 17)
		g := tensor.RandN[float32](rng, 0, 1, 512, 16)
		for _, sharded := range []bool{false, true} {
			b.Run(fmt.Sprintf("w=%d/sharded=%v", width, sharded), func(b *testing.B) {
				eng := eng32()
				if tensor.Workers(eng) < 2 {
					b.Skip("one worker")
				}
				rs := ag.NewRowShards(tensor.Workers(eng), params)
				tp := ag.NewTape(eng)
				for b.Loop() {
					tp.Reset()
					xv := tp.Input(x)
					var y ag.Var[float32]
					if sharded {
						y = rs.Apply(xv, 0, f)
					} else {
						y = f(tp, 0, xv)
					}
					if err := tp.BackwardWith(y, g); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
