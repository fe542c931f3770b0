package optim

import (
	"fmt"
	"math"
)

// Schedule gives the learning rate for an epoch (or step) counted from 0.
// Apply it with opt.SetLR(s.LR(epoch)) at the start of each epoch.
type Schedule interface {
	LR(epoch int) float64
}

// StepLR decays the learning rate by Gamma every StepSize epochs, as
// torch.optim.lr_scheduler.StepLR:
//
//	lr(e) = Base · Gamma^⌊e / StepSize⌋
type StepLR struct {
	Base     float64 // the learning rate at epoch 0
	StepSize int     // epochs between decays, > 0
	Gamma    float64 // the factor of each decay (torch's default 0.1)
}

// LR returns the learning rate for epoch e ≥ 0. It panics if e < 0 or
// StepSize ≤ 0.
func (s StepLR) LR(e int) float64 {
	if s.StepSize <= 0 {
		panic(fmt.Sprintf("optim: StepLR: step size %d ≤ 0", s.StepSize))
	}
	checkEpoch("StepLR", e)
	return s.Base * math.Pow(s.Gamma, float64(e/s.StepSize))
}

// CosineLR anneals the learning rate from Base to EtaMin along a half
// cosine over TMax epochs, as torch.optim.lr_scheduler.CosineAnnealingLR
// (which implements the cosine part of SGDR, not its restarts):
//
//	lr(e) = EtaMin + (Base − EtaMin) · (1 + cos(π·e / TMax)) / 2
//
// Past TMax the rate follows the same cosine back up (period 2·TMax), as
// torch's does.
type CosineLR struct {
	Base   float64 // the learning rate at epoch 0
	EtaMin float64 // the learning rate at epoch TMax
	TMax   int     // epochs of the half period, > 0
}

// LR returns the learning rate for epoch e ≥ 0. It panics if e < 0 or
// TMax ≤ 0.
func (s CosineLR) LR(e int) float64 {
	if s.TMax <= 0 {
		panic(fmt.Sprintf("optim: CosineLR: TMax %d ≤ 0", s.TMax))
	}
	checkEpoch("CosineLR", e)
	return s.EtaMin + (s.Base-s.EtaMin)*(1+math.Cos(math.Pi*float64(e)/float64(s.TMax)))/2
}

func checkEpoch(name string, e int) {
	if e < 0 {
		panic(fmt.Sprintf("optim: %s: epoch %d < 0", name, e))
	}
}
