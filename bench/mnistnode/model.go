// Package mnistnode is the paper's MNIST AdamNODE as a benchmark shared with
// a PyTorch 1.13 + torchdiffeq peer (bench/torch_mnist.py): Save writes the
// weights, a batch and reference values to a safetensors file the peer
// loads, so that both sides train the same model on the same images.
//
// The model (c = 5, nhid = 50, as the authors' MNIST AdamNODE):
//
//	init: conv1×1 (1 → 50) · LeakyReLU(0.3) · conv3×3 pad 1 (50 → 50) ·
//	      LeakyReLU(0.3) · conv1×1 (50 → 9)
//	[h0, m0] = split([image, init(image)], 5 channels each), v0 = m0²
//	f(h, t): [h, t] → conv1×1 (6 → 50) · ReLU · [·, t] → conv3×3 pad 1
//	      (51 → 50) · ReLU · [·, t] → conv1×1 (51 → 5)   (t the last channel)
//	h' = −m / (√softplus(v) + 1e-8), m' = σ(r1)·(−f − m), v' = σ(r2)·(f² − v),
//	      r1 = −5, r2 = 5, on t ∈ [0, 1], dopri5 at rtol = atol = 1e-4
//	head: Linear(5·28·28 → 10) of h(1), softmax cross-entropy (mean)
//
// All weights start as PyTorch's defaults (uniform on ±1/√fan_in), drawn
// from a seeded generator.
package mnistnode

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// Format is the value of the weights file's "format" metadata.
const Format = "adamnode-mnistnode/1"

const (
	channels = 5  // c: the channels of h, m and v
	hidden   = 50 // nhid
	side     = 28 // image side
)

// Model is the MNIST AdamNODE in float32.
type Model struct {
	// The initial-state net and the head.
	I1, IB1, I2, IB2, I3, IB3, HW, HB *autograd.Param[float32]
	// f's convolutions.
	W1, B1, W2, B2, W3, B3 *autograd.Param[float32]
	Dyn                    *odeblock.AdamNODE[float32]
	Block                  *odeblock.Block[float32]
}

// field is f, recording the convolutions of [x, t] as Conv2DTime.
type field struct{ m *Model }

func (f field) ForwardT(tp *autograd.Tape[float32], t float64, h autograd.Var[float32]) autograd.Var[float32] {
	m, tt := f.m, float32(t)
	z := autograd.Conv2DTimeAct(h, tt, tp.Param(m.W1), tp.Param(m.B1), tensor.ConvParams{}, autograd.ReLUAct)
	z = autograd.Conv2DTimeAct(z, tt, tp.Param(m.W2), tp.Param(m.B2), tensor.ConvParams{Pad: 1}, autograd.ReLUAct)
	return autograd.Conv2DTime(z, tt, tp.Param(m.W3), tp.Param(m.B3), tensor.ConvParams{})
}

func (f field) Params() []*autograd.Param[float32] {
	m := f.m
	return []*autograd.Param[float32]{m.W1, m.B1, m.W2, m.B2, m.W3, m.B3}
}

// uniform returns a parameter of shape s uniform on ±1/√fan.
func uniform(rng *rand.Rand, name string, fan int, s ...int) *autograd.Param[float32] {
	bound := 1 / math.Sqrt(float64(fan))
	return autograd.NewParam(name, tensor.RandU[float32](rng, -bound, bound, s...))
}

// weight returns a weight [out, in, ...] with PyTorch's default init.
func weight(rng *rand.Rand, name string, s ...int) *autograd.Param[float32] {
	fan := 1
	for _, d := range s[1:] {
		fan *= d
	}
	return uniform(rng, name, fan, s...)
}

// New returns the model with weights drawn from seed, its block in the
// given gradient mode.
func New(seed uint64, mode odeblock.GradMode) *Model {
	rng := rand.New(rand.NewPCG(seed, 0x6d6e697374))
	const c, n = channels, hidden
	m := &Model{
		I1: weight(rng, "init.0.weight", n, 1, 1, 1), IB1: uniform(rng, "init.0.bias", 1, n),
		I2: weight(rng, "init.2.weight", n, n, 3, 3), IB2: uniform(rng, "init.2.bias", n*9, n),
		I3: weight(rng, "init.4.weight", 2*c-1, n, 1, 1), IB3: uniform(rng, "init.4.bias", n, 2*c-1),
		W1: weight(rng, "f.1.weight", n, c+1, 1, 1), B1: uniform(rng, "f.1.bias", c+1, n),
		W2: weight(rng, "f.2.weight", n, n+1, 3, 3), B2: uniform(rng, "f.2.bias", (n+1)*9, n),
		W3: weight(rng, "f.3.weight", c, n+1, 1, 1), B3: uniform(rng, "f.3.bias", n+1, c),
		HW: weight(rng, "head.weight", 10, c*side*side), HB: uniform(rng, "head.bias", c*side*side, 10),
	}
	s := odeblock.PaperScalars()
	m.Dyn = odeblock.NewAdamNODE[float32](field{m}, s.R1, s.R2, s.Scale)
	m.Block = &odeblock.Block[float32]{Dynamics: m.Dyn, Times: []float64{0, 1}, Mode: mode,
		Solver: odeblock.Options{RTol: 1e-4, ATol: 1e-4}}
	return m
}

// Params returns every trainable parameter: the initial-state net, the
// head, then the dynamics' (f's, r1, r2).
func (m *Model) Params() []*autograd.Param[float32] {
	return append([]*autograd.Param[float32]{m.I1, m.IB1, m.I2, m.IB2, m.I3, m.IB3, m.HW, m.HB}, m.Dyn.Params()...)
}

// Loss records the model's mean cross-entropy on images x [B, 1, 28, 28]
// with the given labels.
func (m *Model) Loss(tp *autograd.Tape[float32], x *tensor.Tensor[float32], labels []int) (autograd.Var[float32], error) {
	img := tp.Const(x)
	leaky := autograd.LeakyReLUAct(0.3)
	z := autograd.Conv2DAct(img, tp.Param(m.I1), tp.Param(m.IB1), tensor.ConvParams{}, leaky)
	z = autograd.Conv2DAct(z, tp.Param(m.I2), tp.Param(m.IB2), tensor.ConvParams{Pad: 1}, leaky)
	z = autograd.Conv2D(z, tp.Param(m.I3), tp.Param(m.IB3), tensor.ConvParams{})
	parts := autograd.Split(autograd.Concat(1, img, z), 1, channels, channels)
	zt, err := m.Block.Forward(tp, odeblock.AdamInitialState(parts[0], parts[1]))
	if err != nil {
		return autograd.Var[float32]{}, err
	}
	h := odeblock.Part(zt, 0, 3)
	return autograd.SoftmaxCrossEntropy(autograd.Linear(autograd.Flatten(h), tp.Param(m.HW), tp.Param(m.HB)), labels), nil
}

// Batch returns n images [n, 1, 28, 28] and their labels drawn from seed:
// smooth random blobs (a few Gaussian bumps each) in [0, 1], which need as
// many solver steps as real digits do, rather than white noise.
func Batch(seed uint64, n int) (*tensor.Tensor[float32], []int) {
	rng := rand.New(rand.NewPCG(seed, 0x62617463))
	x := tensor.New[float32](n, 1, side, side)
	d := x.Data()
	labels := make([]int, n)
	for b := range n {
		labels[b] = rng.IntN(10)
		img := d[b*side*side : (b+1)*side*side]
		for range 3 + rng.IntN(3) {
			cy, cx := 4+24*rng.Float64()*0.8, 4+24*rng.Float64()*0.8
			r := 2 + 4*rng.Float64()
			for i := range side {
				for j := range side {
					dy, dx := float64(i)-cy, float64(j)-cx
					img[i*side+j] += float32(math.Exp(-(dy*dy + dx*dx) / (2 * r * r)))
				}
			}
		}
		for i, v := range img {
			img[i] = min(v, 1)
		}
	}
	return x, labels
}

// Save writes the model's weights, the batch (tensor "input", labels as
// JSON in metadata "labels") and the loss of a forward pass at these
// weights (metadata "check.loss", with its forward NFE in
// "check.fwd_nfe") to a safetensors file at path.
func (m *Model) Save(path string, x *tensor.Tensor[float32], labels []int) error {
	tp := autograd.NewTape(tensor.EngineFor[float32](tensor.Default()))
	defer tp.Release()
	tp.SetNoGrad(true)
	l, err := m.Loss(tp, x, labels)
	if err != nil {
		return fmt.Errorf("mnistnode: reference forward: %w", err)
	}
	lb, err := json.Marshal(labels)
	if err != nil {
		return err
	}
	s := &layers.Safetensors{Metadata: map[string]string{
		"format":        Format,
		"labels":        string(lb),
		"check.loss":    strconv.FormatFloat(float64(l.Item()), 'g', 9, 64),
		"check.fwd_nfe": strconv.Itoa(m.Block.Stats().Forward.NFE),
	}}
	for _, p := range m.Params() {
		s.Tensors = append(s.Tensors, layers.RawFromTensor(p.Name, p.Value))
	}
	s.Tensors = append(s.Tensors, layers.RawFromTensor("input", x))
	return s.WriteFile(path)
}
