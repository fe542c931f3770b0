package odeblock

import (
	"fmt"
	"strings"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// Family describes one of the paper's six model families: what a model
// built around it needs to know, in one place.
type Family struct {
	Name  string // "node", "anode", "sonode", "hbnode", "ghbnode", "adamnode"
	Title string // "NODE", ..., "AdamNODE"
	// Parts is the number of parts the state stacks along its leading
	// axis: 1 (h), 2 (h and a velocity), 3 (AdamNODE's h, m, v).
	Parts int
	// FieldIn is the factor by which the field's input channels exceed
	// h's: 2 for SONODE, whose f sees [h, u]; else 1.
	FieldIn int
	// Augment says the family's state is the input padded with zero
	// channels (ANODE; NODE too when h has more channels than the input).
	Augment bool
}

// SecondOrder reports whether the state holds a velocity beside h.
func (f Family) SecondOrder() bool { return f.Parts > 1 }

// Families returns the six families, in the paper's order.
func Families() []Family {
	return []Family{
		{Name: "node", Title: "NODE", Parts: 1, FieldIn: 1},
		{Name: "anode", Title: "ANODE", Parts: 1, FieldIn: 1, Augment: true},
		{Name: "sonode", Title: "SONODE", Parts: 2, FieldIn: 2},
		{Name: "hbnode", Title: "HBNODE", Parts: 2, FieldIn: 1},
		{Name: "ghbnode", Title: "GHBNODE", Parts: 2, FieldIn: 1},
		{Name: "adamnode", Title: "AdamNODE", Parts: 3, FieldIn: 1},
	}
}

// FamilyNamed returns the family of that name (case-insensitive).
func FamilyNamed(name string) (Family, error) {
	var names []string
	for _, f := range Families() {
		if strings.EqualFold(name, f.Name) {
			return f, nil
		}
		names = append(names, f.Name)
	}
	return Family{}, fmt.Errorf("odeblock: unknown family %q (want %s)", name, strings.Join(names, ", "))
}

// Scalars are the families' raw scalars at initialisation and their
// choices of function.
type Scalars struct {
	GammaRaw float64 // HBNODE, GHBNODE: γ = σ(γ_raw)
	XiRaw    float64 // GHBNODE: ξ = softplus(ξ_raw)
	R1, R2   float64 // AdamNODE: a1 = σ(r1), a2 = σ(r2)
	Scale    Scale   // AdamNODE's s(v)
	Phi      Phi     // GHBNODE's φ
}

// PaperScalars returns the scalars of the authors' code: γ_raw = −3,
// ξ_raw = 2, r1 = −5, r2 = 5, s(v) = √softplus(v) + ε, φ = tanh.
func PaperScalars() Scalars {
	return Scalars{GammaRaw: -3, XiRaw: 2, R1: -5, R2: 5, Scale: ScaleSoftplus, Phi: PhiTanh}
}

// NewFamily returns the family's dynamics around the field f with the
// scalars s, and the family's own parameters (its scalars; none for NODE,
// ANODE and SONODE), which come after f's in the dynamics' Params. A
// Family of another name than Families' panics, naming it.
func NewFamily[T tensor.Float](fam Family, f Field[T], s Scalars) (Dynamics[T], []*autograd.Param[T]) {
	switch fam.Name {
	case "sonode":
		return &SONODE[T]{F: f}, nil
	case "hbnode":
		d := NewHBNODE(f, s.GammaRaw)
		return d, []*autograd.Param[T]{d.GammaRaw}
	case "ghbnode":
		d := NewGHBNODE(f, s.GammaRaw, s.XiRaw)
		d.Phi = s.Phi
		return d, []*autograd.Param[T]{d.GammaRaw, d.XiRaw}
	case "adamnode":
		d := NewAdamNODE(f, s.R1, s.R2, s.Scale)
		return d, []*autograd.Param[T]{d.R1, d.R2}
	case "node", "anode":
		return &NODE[T]{F: f}, nil
	}
	panic(fmt.Sprintf("odeblock: NewFamily: no family is named %q (Families and FamilyNamed give them)", fam.Name))
}

// InitialState returns the family's state from h0 and, for the
// second-order families, the velocity v0 (u0 for SONODE, m0 for HBNODE
// and GHBNODE, m0 with v = m0² for AdamNODE); v0 is ignored by NODE and
// ANODE.
func InitialState[T tensor.Float](fam Family, h0, v0 autograd.Var[T]) autograd.Var[T] {
	switch fam.Parts {
	case 1:
		return h0
	case 3:
		return AdamInitialState(h0, v0)
	}
	return Stack(h0, v0)
}
