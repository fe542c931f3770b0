package sde

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// neural32 is a neural SDE in float32: the drift a tanh MLP d → hidden → d,
// the diffusion sigmoid(y Gᵀ + c) (diagonal noise).
type neural32 struct {
	w1, b1, w2, b2, g, c *autograd.Param[float32]
}

func newNeural32(rng *rand.Rand, d, hidden int) *neural32 {
	p := func(n string, s ...int) *autograd.Param[float32] {
		return autograd.NewParam(n, tensor.RandN[float32](rng, 0, 1/math.Sqrt(float64(s[len(s)-1])), s...))
	}
	return &neural32{w1: p("w1", hidden, d), b1: p("b1", hidden), w2: p("w2", d, hidden), b2: p("b2", d), g: p("g", d, d), c: p("c", d)}
}

func (m *neural32) Drift(tp *autograd.Tape[float32], _ float64, y autograd.Var[float32]) autograd.Var[float32] {
	return autograd.Linear(autograd.Tanh(autograd.Linear(y, tp.Param(m.w1), tp.Param(m.b1))), tp.Param(m.w2), tp.Param(m.b2))
}

func (m *neural32) Diffusion(tp *autograd.Tape[float32], _ float64, y autograd.Var[float32]) autograd.Var[float32] {
	return autograd.Sigmoid(autograd.Linear(y, tp.Param(m.g), tp.Param(m.c)))
}

func (m *neural32) Params() []*autograd.Param[float32] {
	return []*autograd.Param[float32]{m.w1, m.b1, m.w2, m.b2, m.g, m.c}
}

// BenchmarkReversibleBySteps is the memory of the gradient modes as the
// number of steps grows from 16 to 8192 (t from 0 to 1 in steps of 2⁻ᵏ,
// which the Brownian tree answers from its first k levels; a tanh MLP
// drift 16 → 64 → 16 and a sigmoid-layer diagonal diffusion, batch 64,
// float32: a state of 1024 numbers), one forward and backward pass per op
// on a fresh tape and Brownian path: tape-nodes (the nodes the forward
// pass left on the caller's tape), retained-MB (the heap the forward pass
// left live for the backward pass, measured after a collection: tape,
// stored states, checkpoints, the path's cache) and alloc-MB (all memory
// allocated by both passes); for Checkpoint and Recursive, states (the most kept at
// once, y0 included) and re-advanced/step (steps recomputed beyond the one
// taping of each, per step). reversible_heun with the Reversible gradient
// against Backprop, and euler with Checkpoint (⌈√N⌉ segments), Recursive
// with a Budget of 8 (binomial) and Backprop; Backprop only up to
// 1024 steps. The Brownian tree's cache is
// held at 16 nodes (256 KiB here; an evicted node is drawn again when the
// backward pass needs it), so that the path's memory stays out of the
// trend.
func BenchmarkReversibleBySteps(b *testing.B) {
	const batch, d, hidden = 64, 16, 64
	for _, mode := range []struct {
		name   string
		method string
		grad   GradMode
	}{
		{"reversible_heun/reversible", ReversibleHeun, Reversible{}},
		{"reversible_heun/backprop", ReversibleHeun, Backprop{}},
		{"euler/checkpoint", EulerMaruyama, Checkpoint{}},
		{"euler/binomial-8", EulerMaruyama, Recursive{Budget: 8}},
		{"euler/backprop", EulerMaruyama, Backprop{}},
	} {
		for _, steps := range []int{16, 128, 1024, 8192} {
			if mode.grad == (Backprop{}) && steps > 1024 {
				continue
			}
			b.Run(fmt.Sprintf("%s/steps=%d", mode.name, steps), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 2))
				m := newNeural32(rng, d, hidden)
				y0 := tensor.RandN[float32](rng, 0, 1, batch, d)
				eng := tensor.Default().Float32()
				var nodes, stored, readvanced int
				var retained, alloc float64
				seed := uint64(0)
				for b.Loop() {
					seed++
					path, err := NewBrownian[float32](0, 1, []int{batch, d}, BrownianOptions{Seed: seed, CacheSize: 16})
					if err != nil {
						b.Fatal(err)
					}
					tp := autograd.NewTape(eng)
					var before, mid, after runtime.MemStats
					runtime.GC()
					runtime.ReadMemStats(&before)
					ys, st, err := Solve[float32](tp, m, tp.Input(y0), []float64{0, 1}, path,
						Options{Method: mode.method, Step: 1 / float64(steps), Mode: mode.grad})
					if err != nil {
						b.Fatal(err)
					}
					if st.Steps != steps {
						b.Fatalf("%d steps, want %d", st.Steps, steps)
					}
					nodes = tp.Len()
					runtime.GC()
					runtime.ReadMemStats(&mid)
					if err := tp.Backward(autograd.Mean(ys[1])); err != nil {
						b.Fatal(err)
					}
					runtime.ReadMemStats(&after)
					stored, readvanced = st.Stored, st.BackwardEvals-steps
					retained = float64(int64(mid.HeapAlloc)-int64(before.HeapAlloc)) / 1e6
					alloc = float64(after.TotalAlloc-before.TotalAlloc) / 1e6
					runtime.KeepAlive(ys)
					tp.Release()
				}
				b.ReportMetric(float64(nodes), "tape-nodes")
				b.ReportMetric(retained, "retained-MB")
				b.ReportMetric(alloc, "alloc-MB")
				if _, ok := mode.grad.(Recursive); ok || mode.grad == (Checkpoint{}) {
					b.ReportMetric(float64(stored), "states")
					b.ReportMetric(float64(readvanced)/float64(steps), "re-advanced/step")
				}
			})
		}
	}
}
