package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
)

// Format is the value of the weights file's "format" metadata.
const Format = "adamnode-ffjord/1"

// Config is one benchmark problem, written into the weights file as JSON.
type Config struct {
	Name  string  `json:"name"`
	Trace string  `json:"trace"` // "exact" or "hutchinson"
	Width int     `json:"width"`
	Batch int     `json:"batch"`
	D     int     `json:"d"` // 2: the toy densities' dimension
	T1    float64 `json:"t1"`
	RTol  float64 `json:"rtol"`
	ATol  float64 `json:"atol"`
	LR    float64 `json:"lr"`
	Seed  uint64  `json:"seed"`
}

func (c Config) defaultName() string {
	return fmt.Sprintf("ffjord_%s_w%d_b%d", c.Trace, c.Width, c.Batch)
}

// paramNames are the field's parameters in the order of Problem.Params:
// the three Linear layers of [z, t] → W → W → D, each weight [out, in+1]
// (the time is the last input column), as torch.nn.Linear.
var paramNames = []string{"W1", "b1", "W2", "b2", "W3", "b3"}

// Problem is a configuration built and ready to train.
type Problem struct {
	Config Config
	Params []*autograd.Param[float32] // paramNames
	X      *tensor.Tensor[float32]    // the fixed batch of data [B, D]
	Probe0 *tensor.Tensor[float32]    // the probe of the reference values (Hutchinson)
	CNF    *odeblock.CNF[float32]
	Block  *odeblock.Block[float32]
	Opt    *optim.Adam[float32]

	rng *rand.Rand // the training iterations' probes
	eng tensor.Engine[float32]
	tp  *autograd.Tape[float32]
}

// IterStats describes one training iteration.
type IterStats struct {
	Loss      float64
	FwdNFE    int
	BwdNFE    int
	Recovered int     // adjoint stretches re-solved after a drifting reconstruction
	FwdSecs   float64 // seconds of the forward solve and the loss (the rest: backward and Adam)
}

// New draws the problem of c from c.Seed: the three Linear layers in order
// (PyTorch's default initialisation), then the data, then the reference
// probe; the training iterations' probes come from the same generator
// afterwards.
func New(c Config) (*Problem, error) {
	if c.Trace != "exact" && c.Trace != "hutchinson" {
		return nil, fmt.Errorf("trace %q: want exact or hutchinson", c.Trace)
	}
	if c.Width < 1 || c.Batch < 1 || c.D < 1 {
		return nil, fmt.Errorf("width %d, batch %d, d %d: want positive", c.Width, c.Batch, c.D)
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0))
	p := &Problem{Config: c, rng: rng}
	ins := []int{c.D + 1, c.Width + 1, c.Width + 1}
	outs := []int{c.Width, c.Width, c.D}
	for i := range 3 {
		l := layers.NewLinear[float32](rng, ins[i], outs[i])
		p.Params = append(p.Params,
			autograd.NewParam(paramNames[2*i], l.Weight.Value),
			autograd.NewParam(paramNames[2*i+1], l.Bias.Value))
	}
	p.X = moons(rng, c.Batch)
	p.Probe0 = autograd.RademacherProbe[float32](rng, c.Batch, c.D)
	p.CNF = &odeblock.CNF[float32]{F: odeblock.FieldFunc(p.Params, p.field)}
	p.Block = &odeblock.Block[float32]{
		Dynamics: p.CNF, Times: []float64{0, c.T1}, Mode: odeblock.Adjoint{},
		Solver: odeblock.Options{Method: "dopri5", RTol: c.RTol, ATol: c.ATol},
	}
	cfg := optim.AdamDefaults()
	cfg.LR = c.LR
	p.Opt = optim.NewAdam(p.Params, cfg)
	p.eng = tensor.EngineFor[float32](tensor.Default())
	p.tp = autograd.NewTape(p.eng)
	return p, nil
}

// field is FFJORD's toy field with the time concatenated to every layer's
// input: h1 = tanh(W1·[z, t] + b1), h2 = tanh(W2·[h1, t] + b2),
// f = W3·[h2, t] + b3 (autograd.LinearTime: the concatenation fused).
func (p *Problem) field(tp *autograd.Tape[float32], t float64, z autograd.Var[float32]) autograd.Var[float32] {
	ps := p.Params
	tv := float32(t)
	h := autograd.LinearTimeAct(z, tv, tp.Param(ps[0]), tp.Param(ps[1]), autograd.TanhAct)
	h = autograd.LinearTimeAct(h, tv, tp.Param(ps[2]), tp.Param(ps[3]), autograd.TanhAct)
	return autograd.LinearTime(h, tv, tp.Param(ps[4]), tp.Param(ps[5]))
}

// moons is a two-moons batch (scikit-learn's make_moons with noise 0.1,
// the angle drawn uniformly, scaled by 2 and shifted by (−1, −0.2) as
// FFJORD's toy data), rows alternating between the moons.
func moons(rng *rand.Rand, n int) *tensor.Tensor[float32] {
	x := tensor.New[float32](n, 2)
	d := x.Data()
	for i := range n {
		a := math.Pi * rng.Float64()
		u, v := math.Cos(a), math.Sin(a)
		if i%2 == 1 {
			u, v = 1-u, 0.5-v
		}
		d[2*i] = float32(2*(u+0.1*rng.NormFloat64()) - 1)
		d[2*i+1] = float32(2*(v+0.1*rng.NormFloat64()) - 0.2)
	}
	return x
}

// gradients records the forward solve from [x, 0] with the given probe
// (nil: the exact trace), the loss −mean log p(x), and runs the backward
// pass into the parameters' gradients (zeroed first).
func (p *Problem) gradients(probe *tensor.Tensor[float32]) (IterStats, error) {
	tp := p.tp
	tp.Reset()
	p.Opt.ZeroGrad()
	p.CNF.Probe = probe
	start := time.Now()
	s, err := p.Block.Forward(tp, p.CNF.Augment(tp.Const(p.X)))
	if err != nil {
		return IterStats{}, fmt.Errorf("%s: forward: %w", p.Config.Name, err)
	}
	loss := autograd.Neg(autograd.Mean(p.CNF.LogProb(s)))
	st := IterStats{Loss: float64(loss.Item()), FwdSecs: time.Since(start).Seconds()}
	if err := tp.Backward(loss); err != nil {
		return st, fmt.Errorf("%s: backward: %w", p.Config.Name, err)
	}
	bs := p.Block.Stats()
	st.FwdNFE, st.BwdNFE, st.Recovered = bs.Forward.NFE, bs.Backward.NFE, bs.Recovered
	return st, nil
}

// Step runs one training iteration: a fresh Rademacher probe (Hutchinson),
// the forward solve, the loss, the adjoint backward pass and an Adam step.
func (p *Problem) Step() (IterStats, error) {
	var probe *tensor.Tensor[float32]
	if p.Config.Trace == "hutchinson" {
		probe = autograd.RademacherProbe[float32](p.rng, p.Config.Batch, p.Config.D)
	}
	st, err := p.gradients(probe)
	if err != nil {
		return st, err
	}
	p.Opt.Step()
	return st, nil
}

// refProbe is the probe of the reference values: Probe0 for Hutchinson,
// nil for the exact trace.
func (p *Problem) refProbe() *tensor.Tensor[float32] {
	if p.Config.Trace == "hutchinson" {
		return p.Probe0
	}
	return nil
}

// RHS returns the augmented dynamics [f(t, x), −tr] at s = [x, 0] with
// the reference probe, [B, D+1].
func (p *Problem) RHS(t float64) *tensor.Tensor[float32] {
	tp := autograd.NewTape(p.eng)
	tp.SetNoGrad(true)
	p.CNF.Probe = p.refProbe()
	return p.CNF.Eval(tp, t, p.CNF.Augment(tp.Const(p.X))).Value().Clone()
}

// The weights file (safetensors, all tensors F32) holds
//
//	W1, b1, W2, b2, W3, b3  the field's Linear layers, weight [out, in] as
//	                        nn.Linear, the time the last input column
//	x                       the data [B, D]
//	probe                   the reference probe [B, D] (Hutchinson's check)
//	check.rhs0, check.rhs_mid  the augmented dynamics at [x, 0], t = 0 and T1/2
//	check.grad.NAME         the gradient of the loss for each parameter
//
// and the metadata format, config (JSON), check.loss (−mean log p(x) of
// the reference solve), check.fwd_nfe, check.bwd_nfe and check.recovered.
//
// Save computes the reference values (one forward and adjoint backward
// pass with the reference probe; the Adam state is untouched, the
// gradients zeroed again) and writes the file.
func (p *Problem) Save(path string) error {
	st, err := p.gradients(p.refProbe())
	if err != nil {
		return fmt.Errorf("reference solve: %w", err)
	}
	cfg, err := json.Marshal(p.Config)
	if err != nil {
		return err
	}
	s := &layers.Safetensors{Metadata: map[string]string{
		"format":          Format,
		"config":          string(cfg),
		"check.loss":      strconv.FormatFloat(st.Loss, 'g', 9, 64),
		"check.fwd_nfe":   strconv.Itoa(st.FwdNFE),
		"check.bwd_nfe":   strconv.Itoa(st.BwdNFE),
		"check.recovered": strconv.Itoa(st.Recovered),
	}}
	for _, q := range p.Params {
		s.Tensors = append(s.Tensors, layers.RawFromTensor(q.Name, q.Value))
	}
	for _, q := range p.Params {
		s.Tensors = append(s.Tensors, layers.RawFromTensor("check.grad."+q.Name, q.Grad.Clone()))
	}
	p.Opt.ZeroGrad()
	s.Tensors = append(s.Tensors,
		layers.RawFromTensor("x", p.X),
		layers.RawFromTensor("probe", p.Probe0),
		layers.RawFromTensor("check.rhs0", p.RHS(0)),
		layers.RawFromTensor("check.rhs_mid", p.RHS(p.Config.T1/2)),
	)
	return s.WriteFile(path)
}
