// Package optim updates parameters from their gradients: the optimizers SGD
// (momentum, dampening, Nesterov, weight decay), Adam, AdamW and RMSprop,
// learning-rate schedules (StepLR, CosineLR), and clipping by global gradient
// norm (ClipGradNorm).
//
// # A field means what it says: 0 is 0
//
// Each field of SGDConfig, AdamConfig and RMSpropConfig is the value used,
// 0 included: AdamConfig{LR: 1e-4, Beta1: 0, Beta2: 0.9, Eps: 1e-8} is
// WGAN-GP's Adam, with β₁ = 0, and AdamConfig{LR: 1e-4, Beta2: 0.9} is
// Adam with β₁ = 0 and ε = 0. torch.optim's defaults are one call away, in
// SGDDefaults, AdamDefaults, AdamWDefaults and RMSpropDefaults: start from
// them and set what you change.
//
//	c := optim.AdamDefaults()             // torch.optim.Adam(params): lr 1e-3, betas (0.9, 0.999), eps 1e-8
//	c.LR, c.Beta1, c.Beta2 = 1e-4, 0, 0.9 // torch.optim.Adam(params, lr=1e-4, betas=(0, 0.9))
//	opt := optim.NewAdam(params, c)
//	opt = optim.NewAdam(params, optim.AdamDefaults().WithLR(3e-4)) // torch.optim.Adam(params, lr=3e-4)
//
// An optimizer's Config reports the values in effect.
//
// # One step
//
// Minimize(opt, tp, loss) is PyTorch's opt.zero_grad(); loss.backward();
// opt.step(): it zeroes the gradients, runs the tape's Backward and steps
// only if that succeeded (a failed adjoint solve, or an error the pass
// remembered with autograd's Tape.Check, steps nothing).
//
// # Migrating from "a field left at 0 takes torch's default"
//
// Earlier versions read a field left at 0 as torch's default, and the
// constant Zero asked for a real zero. Code written for that rule now
// means something else. The constructors refuse what it produces and
// cannot mean, with a panic that names the field, its value and the
// Defaults function to start from:
//
//   - a learning rate ≤ 0, for every optimizer (SGDConfig{Momentum: 0.9}
//     meant lr 1e-3); SetLR(0) still stops an optimizer made;
//   - Beta2 = 0 for Adam and AdamW (AdamConfig{LR: 1e-3} meant betas
//     (0.9, 0.999) and eps 1e-8);
//   - Alpha = 0 for RMSprop (RMSpropConfig{LR: 1e-3} meant alpha 0.99 and
//     eps 1e-8).
//
// AdamW: A WEIGHT DECAY LEFT AT 0 IS NOW 0, NOT TORCH'S 1e-2, AND NOTHING
// REFUSES IT. NewAdamW(ps, AdamConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999,
// Eps: 1e-8}) decayed the weights by 1e-2 and now does not decay them:
// start from AdamWDefaults(), or set WeightDecay: 1e-2.
//
// Silent too: a Beta1 or Eps left at 0 beside a Beta2 that is set is now
// 0 (it was 0.9 or 1e-8), and so is RMSprop's Eps left at 0 beside an
// Alpha that is set. Zero is deprecated: it is 0.
//
// # Update rules
//
// Each optimizer applies exactly the update rule of its torch.optim
// namesake with one parameter group (the formulas are on each type), so
// that runs compare with PyTorch's. The arithmetic of one element is done in
// float64 and the results (parameters, moment buffers) are stored in the
// parameter's element type T.
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
// Misuse panics: invalid hyperparameters (a learning rate ≤ 0, a negative
// or infinite field, Beta1 outside [0, 1), Beta2 outside (0, 1), Alpha = 0,
// Nesterov without momentum; see each config's Validate), a negative
// learning rate given to SetLR, a gradient shaped unlike its
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
