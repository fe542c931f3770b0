package models

import (
	"fmt"
	"strings"

	"github.com/adamnode/adamnode/odeblock"
)

// Kind is one of the paper's six model families.
type Kind int

// The six families, in the order of the paper's tables.
const (
	NODE     Kind = iota // h' = f(h, t) on the image (zero-padded to c channels)
	ANODE                // NODE with zero-augmented channels
	SONODE               // h'' = f([h, h'], t)
	HBNODE               // heavy ball: h' = −m, m' = f(h, t) − γm
	GHBNODE              // generalised heavy ball: h' = tanh(−m), m' = f(h, t) − γm + ξh
	AdamNODE             // adaptive moments: h' = −m/s(v), m' = a1(−f − m), v' = a2(f² − v)
)

// Kinds returns the six families in the paper's order.
func Kinds() []Kind { return []Kind{NODE, ANODE, SONODE, HBNODE, GHBNODE, AdamNODE} }

// Family returns the family's description from package odeblock, which
// holds what a model needs to know of it (name, parts, field input).
func (k Kind) Family() odeblock.Family {
	if !k.valid() {
		return odeblock.Family{Name: fmt.Sprintf("Kind(%d)", int(k)), Title: fmt.Sprintf("Kind(%d)", int(k))}
	}
	return odeblock.Families()[k]
}

// String returns the family's name in lower case ("adamnode"), as
// ParseKind reads it.
func (k Kind) String() string { return k.Family().Name }

func (k Kind) valid() bool { return k >= NODE && k <= AdamNODE }

// Title returns the family's name as the paper writes it ("AdamNODE").
func (k Kind) Title() string { return k.Family().Title }

// Parts returns the number of parts of the family's ODE state: 1 (h) for
// NODE and ANODE, 2 (h and u or m) for SONODE, HBNODE and GHBNODE, 3 (h, m
// and v) for AdamNODE.
func (k Kind) Parts() int { return k.Family().Parts }

// SecondOrder reports whether the family has a velocity part and so an
// initial-state net.
func (k Kind) SecondOrder() bool { return k.Family().SecondOrder() }

// ParseKind returns the family named s (case-insensitive): node, anode,
// sonode, hbnode, ghbnode or adamnode.
func ParseKind(s string) (Kind, error) {
	var names []string
	for _, k := range Kinds() {
		if strings.EqualFold(s, k.String()) {
			return k, nil
		}
		names = append(names, k.String())
	}
	return 0, fmt.Errorf("models: unknown model %q (want %s)", s, strings.Join(names, ", "))
}

// Dataset selects a column of the paper's table of model widths.
type Dataset int

// The two datasets of the paper. Fashion-MNIST has MNIST's shape and uses
// MNIST's configurations.
const (
	MNIST   Dataset = iota // 1×28×28 images, 10 classes
	CIFAR10                // 3×32×32 images, 10 classes
)

// String returns "mnist" or "cifar10".
func (d Dataset) String() string {
	switch d {
	case MNIST:
		return "mnist"
	case CIFAR10:
		return "cifar10"
	}
	return fmt.Sprintf("Dataset(%d)", int(d))
}

// Config describes one classifier. Paper fills it in for the paper's
// experiments; any field may then be changed (a smaller NHid for a quick
// run, another solver) before New.
type Config struct {
	Kind Kind

	// InC, H and W are the shape of the input images [B, InC, H, W];
	// Classes is the number of outputs.
	InC, H, W, Classes int

	// C is the number of channels of each part of the ODE state (h, and u
	// or m, and v); NHid the width of the hidden layers of f and of the
	// initial-state net.
	C, NHid int

	// T1 is the end of the integration interval [0, T1].
	T1 float64
	// Solver configures the forward solve; Mode how gradients are
	// computed (with its options: the backward solve of Adjoint{…}).
	Solver odeblock.Options
	Mode   odeblock.GradMode

	// The family's raw scalars at initialisation (γ_raw, ξ_raw, r1, r2)
	// and its functions (AdamNODE's s(v), GHBNODE's φ).
	odeblock.Scalars
}

// paperWidths returns c and nhid of family k on d, read from the authors'
// code (their model definitions for MNIST and CIFAR-10).
func paperWidths(k Kind, d Dataset) (c, nhid int) {
	type cn struct{ c, nhid int }
	var w [2]cn
	switch k {
	case NODE:
		w = [2]cn{{1, 92}, {3, 125}}
	case ANODE:
		w = [2]cn{{6, 64}, {13, 64}}
	case SONODE:
		w = [2]cn{{5, 50}, {12, 50}}
	case HBNODE:
		w = [2]cn{{5, 50}, {12, 51}}
	case GHBNODE:
		w = [2]cn{{6, 45}, {12, 51}}
	case AdamNODE:
		w = [2]cn{{5, 50}, {12, 31}}
	}
	return w[d].c, w[d].nhid
}

// Paper returns the configuration of family k in the paper's experiment on
// d: the widths c and nhid of the authors' code, t ∈ [0, 1], dopri5 with
// rtol = atol = 1e-4 (MNIST, as the authors' MNIST code) or 1e-5
// (CIFAR-10), the adjoint gradient, and the family scalars γ_raw = −3,
// ξ_raw = 2, r1 = −5, r2 = 5, s(v) = √softplus(v) + ε, φ = tanh.
//
// Where the authors' code is irregular this makes one choice for all
// families: AdamNODE's
// initial state is (h0, m0, m0²) with the same initial-state net as the
// other second-order families (the code instead splits [x, g, g²] into
// three parts, and its CIFAR-10 AdamNODE widens h to c + 3 channels), and
// ξ_raw = 2 is used for CIFAR-10 too (the CIFAR-10 code has no ξh term).
// It panics if k or d is not one of the constants.
func Paper(k Kind, d Dataset) Config {
	if !k.valid() || d < MNIST || d > CIFAR10 {
		panic(fmt.Sprintf("models: Paper(%v, %v): no such model or dataset", k, d))
	}
	c, nhid := paperWidths(k, d)
	tol := PaperTraining(d).Tol
	cfg := Config{
		Kind: k, InC: 1, H: 28, W: 28, Classes: 10, C: c, NHid: nhid,
		T1:      1,
		Solver:  odeblock.Options{Method: "dopri5", RTol: tol, ATol: tol},
		Mode:    odeblock.Adjoint{},
		Scalars: odeblock.PaperScalars(),
	}
	if d == CIFAR10 {
		cfg.InC, cfg.H, cfg.W = 3, 32, 32
	}
	return cfg
}

// Training is the paper's training setup on a dataset, from the authors'
// scripts: the batch size, Adam's learning rate and the solver tolerance
// (rtol = atol, forward and adjoint).
type Training struct {
	Batch   int
	LR, Tol float64
}

// PaperTraining returns the setup of the paper's runs on d: batch 32, lr
// 1e-4, tolerance 1e-4 on MNIST shapes; batch 64, lr 1e-3, tolerance 1e-5
// on CIFAR-10. Paper's solver and the command line's defaults read it.
func PaperTraining(d Dataset) Training {
	if d == CIFAR10 {
		return Training{Batch: 64, LR: 1e-3, Tol: 1e-5}
	}
	return Training{Batch: 32, LR: 1e-4, Tol: 1e-4}
}

// Validate reports the first field of cfg that cannot make a model: a
// non-positive size, too few state channels for the image, a bad interval
// or an unknown family.
func (cfg Config) Validate() error {
	switch {
	case !cfg.Kind.valid():
		return fmt.Errorf("models: unknown model kind %d", int(cfg.Kind))
	case cfg.InC <= 0 || cfg.H <= 0 || cfg.W <= 0:
		return fmt.Errorf("models: %v: input shape %d×%d×%d is not positive", cfg.Kind, cfg.InC, cfg.H, cfg.W)
	case cfg.Classes <= 0:
		return fmt.Errorf("models: %v: %d classes", cfg.Kind, cfg.Classes)
	case cfg.NHid <= 0:
		return fmt.Errorf("models: %v: hidden width %d is not positive", cfg.Kind, cfg.NHid)
	case !cfg.Kind.SecondOrder() && cfg.C < cfg.InC:
		return fmt.Errorf("models: %v: %d state channels cannot hold a %d-channel image", cfg.Kind, cfg.C, cfg.InC)
	case cfg.Kind.SecondOrder() && 2*cfg.C <= cfg.InC:
		return fmt.Errorf("models: %v: %d channels per part leave no room for the initial-state net's output next to a %d-channel image (need 2c > in)", cfg.Kind, cfg.C, cfg.InC)
	case !(cfg.T1 > 0):
		return fmt.Errorf("models: %v: end time %v is not positive", cfg.Kind, cfg.T1)
	}
	if _, err := odeblock.NewSolver[float32](cfg.Solver); err != nil {
		return fmt.Errorf("models: %v: %w", cfg.Kind, err)
	}
	return nil
}
