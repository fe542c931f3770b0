package models

import (
	"fmt"
	"math/rand/v2"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// Model is an image classifier built around an ODE block, as the training
// loop of cmd/adamnode sees it.
type Model[T tensor.Float] interface {
	// Forward records the class scores [B, classes] of the images
	// x [B, C, H, W] on tp. A failed forward solve is returned as an
	// error; a failed backward solve is returned later by tp.Backward.
	Forward(tp *autograd.Tape[T], x autograd.Var[T]) (autograd.Var[T], error)
	// Params returns every parameter, each named by its path.
	Params() []*autograd.Param[T]
	// Stats returns the work of the ODE block's last forward and
	// backward passes (NFE, steps).
	Stats() odeblock.BlockStats
	// NumParams returns the number of scalar parameters.
	NumParams() int
}

// ParamCounts breaks a classifier's parameter count down by part.
type ParamCounts struct {
	Init    int // the initial-state net (0 for NODE and ANODE)
	Field   int // the vector field f
	Scalars int // the family's raw scalars (γ, ξ, r1, r2)
	Head    int // the linear head
	Total   int
}

// Classifier is one of the paper's image classifiers: initial state, ODE
// block, linear head (see the package documentation). It implements Model.
// A Classifier is not safe for concurrent use: its ODE block keeps work
// buffers between passes.
type Classifier[T tensor.Float] struct {
	cfg    Config
	init   *layers.Sequential[T] // nil for NODE and ANODE
	f      *layers.Sequential[T]
	dyn    odeblock.Dynamics[T]
	block  *odeblock.Block[T]
	head   *layers.Linear[T]
	params []*autograd.Param[T]
	counts ParamCounts
}

// New builds the classifier cfg describes, initialising its layers as
// PyTorch does from rng: the initial-state net first, then f, then the
// head (the order of the authors' models). It returns an error naming the
// field when cfg cannot make a model.
func New[T tensor.Float](rng *rand.Rand, cfg Config) (*Classifier[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if rng == nil {
		return nil, fmt.Errorf("models: New: nil random generator")
	}
	m := &Classifier[T]{cfg: cfg}
	c, nhid := cfg.C, cfg.NHid
	if cfg.Kind.SecondOrder() {
		m.init = layers.NewSequential[T]()
		m.init.Add("conv1", layers.NewConv2D[T](rng, cfg.InC, nhid, 1, tensor.ConvParams{}))
		m.init.Add("act1", layers.LeakyReLU[T]{Slope: 0.3})
		m.init.Add("conv2", layers.NewConv2D[T](rng, nhid, nhid, 3, tensor.ConvParams{Pad: 1}))
		m.init.Add("act2", layers.LeakyReLU[T]{Slope: 0.3})
		m.init.Add("conv3", layers.NewConv2D[T](rng, nhid, 2*c-cfg.InC, 1, tensor.ConvParams{}))
		layers.Prefix("init", m.init)
	}
	fam := cfg.Kind.Family()
	m.f = layers.NewSequential[T]()
	m.f.Add("time1", layers.TimeConcat[T]{})
	m.f.Add("conv1", layers.NewConv2D[T](rng, fam.FieldIn*c+1, nhid, 1, tensor.ConvParams{}))
	m.f.Add("relu1", layers.ReLU[T]{})
	m.f.Add("time2", layers.TimeConcat[T]{})
	m.f.Add("conv2", layers.NewConv2D[T](rng, nhid+1, nhid, 3, tensor.ConvParams{Pad: 1}))
	m.f.Add("relu2", layers.ReLU[T]{})
	m.f.Add("time3", layers.TimeConcat[T]{})
	m.f.Add("conv3", layers.NewConv2D[T](rng, nhid+1, c, 1, tensor.ConvParams{}))
	layers.Prefix("f", m.f)
	// The family knows its dynamics and its own scalars (odeblock); they
	// are named ode.gamma, ode.r1, ...
	dyn, scalars := odeblock.NewFamily(fam, m.f, cfg.Scalars)
	m.dyn = dyn
	for _, p := range scalars {
		p.Name = "ode." + p.Name
	}
	m.block = &odeblock.Block[T]{
		Dynamics: m.dyn,
		Times:    []float64{0, cfg.T1},
		Solver:   cfg.Solver,
		Mode:     cfg.Mode,
	}

	m.head = layers.NewLinear[T](rng, c*cfg.H*cfg.W, cfg.Classes)
	layers.Prefix("head", m.head)

	if m.init != nil {
		m.params = append(m.params, m.init.Params()...)
		m.counts.Init = numel(m.init.Params())
	}
	m.params = append(m.params, m.f.Params()...)
	m.params = append(m.params, scalars...)
	m.params = append(m.params, m.head.Params()...)
	m.counts.Field = numel(m.f.Params())
	m.counts.Scalars = numel(scalars)
	m.counts.Head = numel(m.head.Params())
	m.counts.Total = numel(m.params)
	return m, nil
}

func numel[T tensor.Float](ps []*autograd.Param[T]) int {
	n := 0
	for _, p := range ps {
		n += p.Value.Len()
	}
	return n
}

// Config returns the configuration the classifier was built from.
func (m *Classifier[T]) Config() Config { return m.cfg }

// Block returns the classifier's ODE block. Its solver options, gradient
// mode and adjoint options may be changed between passes.
func (m *Classifier[T]) Block() *odeblock.Block[T] { return m.block }

// Dynamics returns the ODE's right-hand side (the family wrapping f).
func (m *Classifier[T]) Dynamics() odeblock.Dynamics[T] { return m.dyn }

// Params returns every parameter in a fixed order: the initial-state net,
// f, the family's scalars, the head.
func (m *Classifier[T]) Params() []*autograd.Param[T] { return m.params }

// NumParams returns the number of scalar parameters.
func (m *Classifier[T]) NumParams() int { return m.counts.Total }

// Counts returns the parameter count by part.
func (m *Classifier[T]) Counts() ParamCounts { return m.counts }

// Stats returns the work of the ODE block's last forward and backward
// passes.
func (m *Classifier[T]) Stats() odeblock.BlockStats { return m.block.Stats() }

// NFE returns the evaluations of the ODE block's dynamics in the last
// forward and backward passes, as Stats counts them: a Classifier is a
// train.Counted.
func (m *Classifier[T]) NFE() (forward, backward int) { return m.block.Stats().NFE() }

// InitialState records the ODE's initial state for images x [B, InC, H, W]:
// [B, C, H, W] for NODE and ANODE, the parts stacked along the leading
// axis ([P·B, C, H, W], h first) for the others.
func (m *Classifier[T]) InitialState(tp *autograd.Tape[T], x autograd.Var[T]) autograd.Var[T] {
	cfg := m.cfg
	if !cfg.Kind.SecondOrder() {
		if cfg.C == cfg.InC {
			return x
		}
		return odeblock.AugmentChannels(tp, x, cfg.C-cfg.InC)
	}
	z := autograd.Concat(1, x, m.init.Forward(tp, x))
	parts := autograd.Split(z, 1, cfg.C, cfg.C)
	return odeblock.InitialState(cfg.Kind.Family(), parts[0], parts[1])
}

// Forward records the class scores [B, Classes] of images x
// [B, InC, H, W]: the initial state, the ODE solve on [0, T1], the head on
// h(T1). A failed solve is returned as an error, with NaNs shaped like the
// scores (see autograd.Tape.Check). Shapes that do not fit
// the configuration panic with both shapes (as every op does).
func (m *Classifier[T]) Forward(tp *autograd.Tape[T], x autograd.Var[T]) (autograd.Var[T], error) {
	zt, err := m.block.Forward(tp, m.InitialState(tp, x))
	if err != nil {
		return tp.NaNs(x.Shape()[0], m.cfg.Classes), fmt.Errorf("%v: %w", m.cfg.Kind.Title(), err)
	}
	h := zt
	if p := m.cfg.Kind.Parts(); p > 1 {
		h = odeblock.Part(zt, 0, p)
	}
	return m.head.Forward(tp, autograd.Flatten(h)), nil
}
