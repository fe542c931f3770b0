// Package optim updates parameters from their gradients: the optimizers SGD
// (momentum, dampening, Nesterov, weight decay), Adam, AdamW and RMSprop,
// learning-rate schedules (StepLR, CosineLR), and clipping by global gradient
// norm (ClipGradNorm).
//
// # Update rules
//
// Each optimizer applies exactly the update rule of its torch.optim
// namesake with one parameter group (the formulas are on each type), so
// that runs compare with PyTorch's. The arithmetic of one element is done in
// float64 and the results (parameters, moment buffers) are stored in the
// parameter's element type T.
//
// # Defaults
//
// A hyperparameter left at 0 in a config takes torch.optim's default, as a
// keyword argument left out of the torch call does, so what a PyTorch user
// writes means what it means there:
//
//	optim.AdamConfig{LR: 1e-3}          torch.optim.Adam(params, lr=1e-3): betas (0.9, 0.999), eps 1e-8
//	NewAdamW(ps, optim.AdamConfig{})    torch.optim.AdamW(params): lr 1e-3, weight_decay 1e-2
//	optim.RMSpropConfig{Momentum: 0.9}  torch.optim.RMSprop(params, momentum=0.9): lr 1e-2, alpha 0.99, eps 1e-8
//	optim.SGDConfig{Momentum: 0.9}      torch.optim.SGD(params, momentum=0.9): lr 1e-3
//
// The defaults are those of SGDDefaults, AdamDefaults, AdamWDefaults and
// RMSpropDefaults. A real zero where the default is not zero (eps=0, an
// AdamW without weight decay, beta1=0) is asked for with the constant
// Zero: AdamConfig{LR: 1e-3, Eps: optim.Zero}. Zero is the negative
// float64 nearest 0, the one negative value a config accepts. An
// optimizer's Config reports the values in effect, in the same terms.
//
// # The contract
//
// An optimizer holds the parameters it was given (the *autograd.Param
// values, not copies) and state buffers of its own, allocated when it is
// made. Step reads each parameter's Grad and updates its Value in place; a
// parameter whose Grad is nil is skipped, as torch skips a parameter whose
// .grad is None, and its step count does not advance. Step never zeroes the
// gradients: call ZeroGrad (or autograd.ZeroGrads) before the next forward
// pass. Step allocates nothing.
//
// Every parameter must have a non-empty name, unique among the optimizer's
// parameters: state is saved under names derived from it (see below).
//
// # On a device
//
// After UseEngine with an engine that has a tensor.Elementwise (package
// cuda's GPU engine), Step of SGD, Adam, AdamW and RMSprop updates the
// parameters with the engine's elementwise kernels: values, gradients and
// state buffers stay in the engine's memory, and ZeroGrad zeroes the
// gradients there (ClipGradNormOn clips them there). The update is then
// formed in T, operation by operation, and agrees with the host's within
// T's rounding. Step makes a few scratch tensors at its first call
// (one per parameter shape) and none after.
//
// # State and checkpoints
//
// StateDict returns the optimizer's state as named tensors and string
// metadata, ready to be written by layers.SaveCheckpoint:
//
//	tensors  optim.<kind>.<buffer>.<param>   e.g. optim.adam.exp_avg.f.conv2.weight
//	metadata optim.type = <kind>,  optim.<kind>.lr,  optim.<kind>.step.<param>
//
// plus the hyperparameters (optim.<kind>.beta1, ...) for whoever reads the
// file. LoadStateDict restores buffers, step counts and the learning rate;
// the other hyperparameters stay those the optimizer was made with. Every
// tensor and metadata key of an optimizer's state starts with "optim.".
//
// # Errors and panics
//
// Misuse panics: invalid hyperparameters (a negative learning rate other
// than Zero, a beta outside [0, 1), Nesterov without momentum), a gradient shaped unlike its
// parameter (a *tensor.ShapeError naming both shapes). Parameter names
// matter only for the state, which is saved by name: duplicate or empty
// names are an error of StateDict and LoadStateDict, not of training. A
// state that does not fit the optimizer (another kind, a missing or extra
// tensor, a wrong shape, a malformed step count) is a returned error, as is
// a non-finite gradient norm in ClipGradNorm.
//
// Optimizers are not safe for concurrent use. Nothing in this package keeps
// mutable package-level state.
package optim
