// Package models builds the paper's six image classifiers — NODE, ANODE,
// SONODE, HBNODE, GHBNODE and AdamNODE — in the configurations of the
// authors' code (the widths of each family, read from it, are in
// paperWidths), from the modules of package layers and the ODE block of
// package odeblock. It also holds recurrent building blocks for irregular
// time series: GRUODE (De Brouwer et al.'s continuous GRU, as Dynamics)
// and ODERNN (Rubanova et al.'s ODE-RNN over a data.SeriesBatch, the
// latent ODE's encoder).
//
// # The architecture
//
// Every model maps an image x [B, in, H, W] to class scores in three
// stages:
//
//   - The initial state. NODE and ANODE start from the image padded with
//     zero channels up to c channels. The second-order families (SONODE,
//     HBNODE, GHBNODE, AdamNODE) run an initial-state net
//     conv1×1(in → nhid) · LeakyReLU(0.3) · conv3×3(nhid → nhid, pad 1) ·
//     LeakyReLU(0.3) · conv1×1(nhid → 2c − in), concatenate the image in
//     front of its output and split the 2c channels into h0 and the
//     velocity (u0 or m0); AdamNODE adds v0 = m0².
//   - The ODE block on t ∈ [0, T1] with the vector field f, the same conv
//     net for every family: cat t → conv1×1(c+1 → nhid) · ReLU · cat t →
//     conv3×3(nhid+1 → nhid, pad 1) · ReLU · cat t → conv1×1(nhid+1 → c).
//     SONODE's f sees [h, u] (2c channels in, c out).
//   - The head: h(T1) flattened and mapped by Linear(c·H·W → classes).
//     Only h enters the head, never the velocity or v.
//
// The family scalars start as in the authors' code: HBNODE γ_raw = −3;
// GHBNODE γ_raw = −3, ξ_raw = 2, φ = tanh; AdamNODE r1 = −5, r2 = 5 and
// s(v) = √softplus(v) + ε. Paper returns a Config with the paper's widths
// (c and nhid) for MNIST-shaped or CIFAR-10-shaped inputs, its solver
// (dopri5, rtol = atol = 1e-4 for MNIST and 1e-5 for CIFAR-10) and the
// adjoint gradient; every field may be changed before New.
//
// # Names
//
// Parameters are named by their path in the model, as a PyTorch state dict
// would name them, and are saved under these names by layers.SaveCheckpoint:
//
//	init.conv1.weight … init.conv3.bias   the initial-state net
//	f.conv1.weight … f.conv3.bias         the vector field
//	ode.gamma, ode.xi, ode.r1, ode.r2     the family's raw scalars
//	head.weight, head.bias                the linear head
//
// # Precision
//
// The models are generic over the element type: float32 trains, float64
// runs the gradient checks through the same code.
package models
