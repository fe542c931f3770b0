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

// ProblemOf is one configuration built and ready to train in the element
// type T (Config.DType's): the field, the dynamics, the ODE block, the data
// and the optimizer.
type ProblemOf[T tensor.Float] struct {
	Config Config
	// Field is f: a Sequential of TimeConcat, then Linear and activation
	// pairs, then the output Linear, its parameters named f.1.weight,
	// f.1.bias, f.3.weight, ... (the Sequential's positions).
	Field *layers.Sequential[T]
	Dyn   odeblock.Dynamics[T]
	Block *odeblock.Block[T]
	// H0 and M0 [B, D] are the initial position and velocity (M0 is unused
	// by NODE); the initial state is h0 (NODE), (h0, m0) (HBNODE) or
	// (h0, m0, m0²) (AdamNODE), parts stacked along the leading axis.
	H0, M0, Target *tensor.Tensor[T]
	// Params lists every trained parameter: f's, then the family's scalars
	// (γ_raw, or r1 and r2).
	Params []*autograd.Param[T]
	Opt    *optim.Adam[T]

	fam   odeblock.Family // Config.Family's
	eng   tensor.Engine[T]
	tp    *autograd.Tape[T]
	share []float64 // stepShared's buffer of weighted gradients, reused
}

// Problem is a problem in float32, the family's default dtype.
type Problem = ProblemOf[float32]

// IterStats describes one training iteration.
type IterStats struct {
	Loss   float64 // the loss before the Adam step
	FwdNFE int     // evaluations of the dynamics in the forward solve
	BwdNFE int     // backward evaluations (see odeblock.BlockStats)
}

// timeField adapts the Sequential to odeblock.Field: f(h, t) = seq([h, t]).
type timeField[T tensor.Float] struct{ seq *layers.Sequential[T] }

// ForwardT records f(h, t): the Sequential on [h, t].
func (f timeField[T]) ForwardT(tp *autograd.Tape[T], t float64, h autograd.Var[T]) autograd.Var[T] {
	return f.seq.ForwardT(tp, t, h)
}

// Params returns the Sequential's parameters.
func (f timeField[T]) Params() []*autograd.Param[T] { return f.seq.Params() }

// New builds the problem of c in float32 (NewOf[float32]); a c whose
// DType is float64 is an error.
func New(c Config) (*Problem, error) { return NewOf[float32](c) }

// NewOf builds the problem of c in T, which must be c's DType, with
// weights and data drawn from c.Seed: the Linear layers in order (PyTorch's
// default initialisation, weight then bias uniform on ±1/√fan_in), then
// h0 ~ N(0, 1), m0 ~ N(0, 0.5²) and the target ~ N(0, 1), each [Batch, D].
// The draws are float64 numbers rounded to T, so the float32 problem of a
// configuration holds its float64 twin's numbers rounded to float32.
func NewOf[T tensor.Float](c Config) (*ProblemOf[T], error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if want := DTypeOf[T](); c.ElemType() != want {
		return nil, fmt.Errorf("mlpfamily: %s: dtype %s built as %s", c.Name, c.ElemType(), want)
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0))
	seq := newField[T](c, rng)
	p := &ProblemOf[T]{
		Config: c,
		Field:  seq,
		H0:     tensor.RandN[T](rng, 0, 1, c.Batch, c.D),
		M0:     tensor.RandN[T](rng, 0, 0.5, c.Batch, c.D),
		Target: tensor.RandN[T](rng, 0, 1, c.Batch, c.D),
	}
	if err := p.build(); err != nil {
		return nil, err
	}
	return p, nil
}

// newField returns f for c, its weights drawn from rng.
func newField[T tensor.Float](c Config, rng *rand.Rand) *layers.Sequential[T] {
	mods := []layers.Layer[T]{layers.TimeConcat[T]{}}
	in := c.D + 1
	for range c.Layers {
		mods = append(mods, layers.NewLinear[T](rng, in, c.Width), activation[T](c.Act))
		in = c.Width
	}
	mods = append(mods, layers.NewLinear[T](rng, in, c.D))
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
func (p *ProblemOf[T]) build() error {
	c := p.Config
	var field odeblock.Field[T] = timeField[T]{p.Field}
	if ShardField {
		field = odeblock.ShardedField(field, ShardCount)
	}
	fam, err := c.family()
	if err != nil {
		return err
	}
	p.fam = fam
	p.Dyn, _ = odeblock.NewFamily(fam, field, c.scalars())
	if d, ok := p.Dyn.(*odeblock.AdamNODE[T]); ok {
		d.Eps = c.Eps
	}
	mode, err := odeblock.ParseGradMode(c.Mode)
	if err != nil {
		return err
	}
	p.Block = &odeblock.Block[T]{
		Dynamics: p.Dyn, Times: []float64{0, c.T1}, Mode: mode,
		Solver: odeblock.Options{Method: "dopri5", RTol: c.RTol, ATol: c.ATol},
		Shards: ShardSolve,
	}
	p.Params = p.Dyn.Params()
	p.Opt = optim.NewAdam(p.Params, optim.AdamDefaults())
	p.Opt.SetLR(c.LR) // after NewAdam, which refuses the lr 0 that Validate allows
	p.eng = engineOf[T]()
	p.tp = newTape(p.eng)
	return nil
}

func newTape[T tensor.Float](e tensor.Engine[T]) *autograd.Tape[T] { return autograd.NewTape(e) }

// UseEngine makes p run on e from its next step (a new problem runs on
// the default backend's kind; package cuda's tests run one on the GPU).
func (p *ProblemOf[T]) UseEngine(e tensor.Engine[T]) {
	p.eng = e
	p.tp = newTape(e)
}

// engineBackend returns the backend a new problem runs on: the default
// backend's kind (OpenBLAS when built with the tag openblas) with as many
// workers as GOMAXPROCS is now. (tensor.Default's worker count is fixed at
// its first use, so a benchmark run with -cpu 1,2 would run its second pass
// on the first's workers.) Tests replace it.
var engineBackend = func() tensor.Backend { return backend(runtime.GOMAXPROCS(0)) }

// engineOf returns the engine in T of engineBackend's backend.
func engineOf[T tensor.Float]() tensor.Engine[T] { return tensor.EngineFor[T](engineBackend()) }

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

// activation returns the activation module called name (tanh for an
// unknown name: Validate rules those out).
func activation[T tensor.Float](name string) layers.Module[T] {
	switch name {
	case "softplus":
		return layers.Softplus[T]{}
	case "relu":
		return layers.ReLU[T]{}
	}
	return layers.Tanh[T]{}
}

// z0 records the initial state on tp.
func (p *ProblemOf[T]) z0(tp *autograd.Tape[T]) autograd.Var[T] {
	h := tp.Const(p.H0)
	if !p.fam.SecondOrder() {
		return h
	}
	return odeblock.InitialState(p.fam, h, tp.Const(p.M0))
}

// Step runs one training iteration: the forward solve, the loss, the
// backward pass and an Adam step.
func (p *ProblemOf[T]) Step() (IterStats, error) {
	st, err := p.gradients()
	if err != nil {
		return st, err
	}
	p.Opt.Step()
	return st, nil
}

// gradients records the forward solve and the loss, and runs the backward
// pass into the parameters' gradients.
func (p *ProblemOf[T]) gradients() (IterStats, error) {
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
func (p *ProblemOf[T]) RHS(t float64) *tensor.Tensor[T] {
	tp := autograd.NewTape(p.eng)
	tp.SetNoGrad(true)
	return p.Dyn.Eval(tp, t, p.z0(tp)).Value().Clone()
}

// ForwardLoss solves forward from z0 at the current weights (a block of
// its own, so p.Block's statistics are kept) and returns the loss and the
// forward NFE.
func (p *ProblemOf[T]) ForwardLoss() (float64, int, error) {
	tp := autograd.NewTape(p.eng)
	tp.SetNoGrad(true)
	b := &odeblock.Block[T]{Dynamics: p.Dyn, Times: p.Block.Times, Solver: p.Block.Solver, Mode: odeblock.Adjoint{}}
	z, err := b.Forward(tp, p.z0(tp))
	if err != nil {
		return 0, 0, err
	}
	loss := layers.MSE(odeblock.Part(z, 0, p.Config.Parts()), p.Target)
	return float64(loss.Item()), b.Stats().Forward.NFE, nil
}
