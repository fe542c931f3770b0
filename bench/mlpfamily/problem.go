package mlpfamily

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
)

// Problem is one configuration built and ready to train: the field, the
// dynamics, the ODE block, the data and the optimizer.
type Problem struct {
	Config Config
	// Field is f: a Sequential of TimeConcat, then Linear and activation
	// pairs, then the output Linear, its parameters named f.1.weight,
	// f.1.bias, f.3.weight, ... (the Sequential's positions).
	Field *layers.Sequential[float32]
	Dyn   odeblock.Dynamics[float32]
	Block *odeblock.Block[float32]
	// H0 and M0 [B, D] are the initial position and velocity (M0 is unused
	// by NODE); the initial state is h0 (NODE), (h0, m0) (HBNODE) or
	// (h0, m0, m0²) (AdamNODE), parts stacked along the leading axis.
	H0, M0, Target *tensor.Tensor[float32]
	// Params lists every trained parameter: f's, then the family's scalars
	// (γ_raw, or r1 and r2).
	Params []*autograd.Param[float32]
	Opt    *optim.Adam[float32]

	fam   odeblock.Family // Config.Family's
	eng   tensor.Engine[float32]
	tp    *autograd.Tape[float32]
	share []float64 // stepShared's buffer of weighted gradients, reused
}

// IterStats describes one training iteration.
type IterStats struct {
	Loss   float64 // the loss before the Adam step
	FwdNFE int     // evaluations of the dynamics in the forward solve
	BwdNFE int     // backward evaluations (see odeblock.BlockStats)
}

// timeField adapts the Sequential to odeblock.Field: f(h, t) = seq([h, t]).
type timeField struct{ seq *layers.Sequential[float32] }

func (f timeField) ForwardT(tp *autograd.Tape[float32], t float64, h autograd.Var[float32]) autograd.Var[float32] {
	return f.seq.ForwardT(tp, t, h)
}

func (f timeField) Params() []*autograd.Param[float32] { return f.seq.Params() }

// New builds the problem of c with weights and data drawn from c.Seed: the
// Linear layers in order (PyTorch's default initialisation, weight then
// bias uniform on ±1/√fan_in), then h0 ~ N(0, 1), m0 ~ N(0, 0.5²) and the
// target ~ N(0, 1), each [Batch, D].
func New(c Config) (*Problem, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0))
	seq := newField(c, rng)
	p := &Problem{
		Config: c,
		Field:  seq,
		H0:     tensor.RandN[float32](rng, 0, 1, c.Batch, c.D),
		M0:     tensor.RandN[float32](rng, 0, 0.5, c.Batch, c.D),
		Target: tensor.RandN[float32](rng, 0, 1, c.Batch, c.D),
	}
	if err := p.build(); err != nil {
		return nil, err
	}
	return p, nil
}

// newField returns f for c, its weights drawn from rng.
func newField(c Config, rng *rand.Rand) *layers.Sequential[float32] {
	mods := []layers.Layer[float32]{layers.TimeConcat[float32]{}}
	in := c.D + 1
	for range c.Layers {
		mods = append(mods, layers.NewLinear[float32](rng, in, c.Width), activation(c.Act))
		in = c.Width
	}
	mods = append(mods, layers.NewLinear[float32](rng, in, c.D))
	seq := layers.NewSequential(mods...)
	layers.Prefix("f", seq)
	return seq
}

// ShardField makes New and Load wrap f in odeblock.ShardedField(f, 0):
// f evaluated on one shard of the batch per worker where the batch is
// large enough to pay, what a user of the package would write for an MLP
// field. False gives the plain field (mlpbench -shard=false).
var ShardField = true

// ShardSolve is the Block.Shards New and Load set: 2 or more solves the
// batch as that many separate ODEs at once, one per worker (mlpbench
// -shard-solve); 0 one solve of the whole batch.
var ShardSolve = 0

// ShardCount is the number of shards ShardField asks for: 0 lets the
// batch's size decide (odeblock.ShardedField).
var ShardCount = 0

// build makes the dynamics, block, tape and optimizer around p.Field.
func (p *Problem) build() error {
	c := p.Config
	var field odeblock.Field[float32] = timeField{p.Field}
	if ShardField {
		field = odeblock.ShardedField(field, ShardCount)
	}
	fam, err := c.family()
	if err != nil {
		return err
	}
	p.fam = fam
	p.Dyn, _ = odeblock.NewFamily(fam, field, c.scalars())
	if d, ok := p.Dyn.(*odeblock.AdamNODE[float32]); ok {
		d.Eps = c.Eps
	}
	mode, err := odeblock.ParseGradMode(c.Mode)
	if err != nil {
		return err
	}
	p.Block = &odeblock.Block[float32]{
		Dynamics: p.Dyn, Times: []float64{0, c.T1}, Mode: mode,
		Solver: odeblock.Options{Method: "dopri5", RTol: c.RTol, ATol: c.ATol},
		Shards: ShardSolve,
	}
	p.Params = p.Dyn.Params()
	cfg := optim.AdamDefaults()
	cfg.LR = c.LR
	if c.LR == 0 {
		cfg.LR = optim.Zero // a zero in the config is a zero, not torch's default
	}
	p.Opt = optim.NewAdam(p.Params, cfg)
	p.eng = engine()
	p.tp = newTape(p.eng)
	return nil
}

func newTape(e tensor.Engine[float32]) *autograd.Tape[float32] { return autograd.NewTape(e) }

// UseEngine makes p run on e from its next step (a new problem runs on
// the default backend's kind; package cuda's tests run one on the GPU).
func (p *Problem) UseEngine(e tensor.Engine[float32]) {
	p.eng = e
	p.tp = newTape(e)
}

// engine returns the engine a new problem runs on: the default backend's
// kind (OpenBLAS when built with the tag openblas) with as many workers as
// GOMAXPROCS is now. (tensor.Default's worker count is fixed at its first
// use, so a benchmark run with -cpu 1,2 would run its second pass on the
// first's workers.)
var engine = func() tensor.Engine[float32] { return tensor.EngineFor[float32](backend(runtime.GOMAXPROCS(0))) }

var backends sync.Map // worker count → tensor.Backend

// backend returns the backend of tensor.Default's kind with the given
// number of workers, one per count for the life of the process.
func backend(workers int) tensor.Backend {
	def := tensor.Default()
	if def.Workers() == workers {
		return def
	}
	if b, ok := backends.Load(workers); ok {
		return b.(tensor.Backend)
	}
	for _, b := range tensor.Backends(workers) {
		if b.Name() == def.Name() {
			got, _ := backends.LoadOrStore(workers, b)
			return got.(tensor.Backend)
		}
	}
	return def // not reached: Default is one of Backends
}

func activation(name string) layers.Module[float32] {
	switch name {
	case "softplus":
		return layers.Softplus[float32]{}
	case "relu":
		return layers.ReLU[float32]{}
	}
	return layers.Tanh[float32]{}
}

// z0 records the initial state on tp.
func (p *Problem) z0(tp *autograd.Tape[float32]) autograd.Var[float32] {
	h := tp.Const(p.H0)
	if !p.fam.SecondOrder() {
		return h
	}
	return odeblock.InitialState(p.fam, h, tp.Const(p.M0))
}

// Step runs one training iteration: the forward solve, the loss, the
// backward pass and an Adam step.
func (p *Problem) Step() (IterStats, error) {
	st, err := p.gradients()
	if err != nil {
		return st, err
	}
	p.Opt.Step()
	return st, nil
}

// gradients records the forward solve and the loss, and runs the backward
// pass into the parameters' gradients.
func (p *Problem) gradients() (IterStats, error) {
	tp := p.tp
	tp.Reset()
	p.Opt.ZeroGrad()
	z, err := p.Block.Forward(tp, p.z0(tp))
	if err != nil {
		return IterStats{}, fmt.Errorf("mlpfamily: %s: %w", p.Config.Name, err)
	}
	loss := layers.MSE(odeblock.Part(z, 0, p.Config.Parts()), p.Target)
	st := IterStats{Loss: float64(loss.Item())}
	if err := tp.Backward(loss); err != nil {
		return st, fmt.Errorf("mlpfamily: %s: %w", p.Config.Name, err)
	}
	bs := p.Block.Stats()
	st.FwdNFE, st.BwdNFE = bs.Forward.NFE, bs.Backward.NFE
	return st, nil
}

// RHS returns the dynamics' right-hand side F(t, z0) at the current
// weights, [P·B, D].
func (p *Problem) RHS(t float64) *tensor.Tensor[float32] {
	tp := autograd.NewTape(p.eng)
	tp.SetNoGrad(true)
	return p.Dyn.Eval(tp, t, p.z0(tp)).Value().Clone()
}

// ForwardLoss solves forward from z0 at the current weights (a block of
// its own, so p.Block's statistics are kept) and returns the loss and the
// forward NFE.
func (p *Problem) ForwardLoss() (float64, int, error) {
	tp := autograd.NewTape(p.eng)
	tp.SetNoGrad(true)
	b := &odeblock.Block[float32]{Dynamics: p.Dyn, Times: p.Block.Times, Solver: p.Block.Solver, Mode: odeblock.Adjoint{}}
	z, err := b.Forward(tp, p.z0(tp))
	if err != nil {
		return 0, 0, err
	}
	loss := layers.MSE(odeblock.Part(z, 0, p.Config.Parts()), p.Target)
	return float64(loss.Item()), b.Stats().Forward.NFE, nil
}
