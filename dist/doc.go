// Package dist is probability distributions on autograd Vars, as
// torch.distributions: Normal, Bernoulli and Categorical with their
// log-probabilities, entropies, samples (reparameterised for the Normal)
// and the Kullback–Leibler divergence between two of a kind, written once
// for float32 and float64.
//
// A distribution is a small struct of Vars (its parameters), built by the
// caller from any ops: Normal[T]{Loc: mu, Scale: sigma}. Its methods
// record ops on the parameters' tape and return Vars, so everything is
// differentiable with respect to the parameters (and to the value scored),
// to any order: every result is a composition of the tape's differentiable
// ops (Sub, Mul, Div, Square, Log, Exp, Softplus, Sigmoid, SumAxis, ...),
// so Backward, Grad with CreateGraph, JVP and HVP all apply.
//
// # The distributions and their PyTorch names
//
//	dist                       torch.distributions
//	Normal{Loc, Scale}         Normal(loc, scale)
//	  LogProb(x)               .log_prob(x)
//	  Sample, SampleN          .rsample(), .rsample((n,))
//	  Entropy, Mean, Stddev,   .entropy(), .mean, .stddev, .variance
//	  Variance
//	KLNormal(p, q)             kl_divergence(p, q) for two Normals
//	Bernoulli{Logits}          Bernoulli(logits=...)
//	BernoulliProbs(p)          Bernoulli(probs=p)
//	  LogProb(x), Entropy,     .log_prob(x), .entropy(), .probs, .mean
//	  Probs, Mean
//	  Sample                   .sample() (no gradient)
//	KLBernoulli(p, q)          kl_divergence(p, q) for two Bernoullis
//	Categorical{Logits}        Categorical(logits=...) on [B, K] logits
//	  LogProb(labels)          .log_prob(labels)
//	  LogProbs, Probs          .logits (normalised), .probs
//	  Entropy                  .entropy()
//	  Sample                   .sample() (classes as ints)
//	KLCategorical(p, q)        kl_divergence(p, q) for two Categoricals
//
// Shapes broadcast as in PyTorch, through the ops' own broadcasting: a
// Normal with Loc and Scale of shape [D] scores x of shape [N, D]; LogProb,
// Entropy and KLNormal are elementwise (no sum over an event axis), as
// torch's are for these univariate distributions. Sum them with
// autograd.Sum or autograd.SumAxis for a joint log-likelihood.
//
// # The math
//
// Normal(μ, σ):
//
//	log p(x) = −(x − μ)²/(2σ²) − log σ − ½ log 2π
//	H        = ½ + ½ log 2π + log σ
//	sample   = μ + σ·ε,  ε ~ N(0, 1)
//
// KL(N(μp, σp) ‖ N(μq, σq)) = log σq/σp + (σp² + (μp − μq)²)/(2σq²) − ½,
// computed as torch does: with r = (σp/σq)², ½(r + ((μp − μq)/σq)² − 1 − log r).
//
// Bernoulli with logit l (p = σ(l)), for x in {0, 1}:
//
//	log p(x) = x·l − softplus(l)
//	H        = softplus(l) − σ(l)·l
//
// KL(Bern(σ(lp)) ‖ Bern(σ(lq))) = σ(lp)·(lp − lq) + softplus(lq) − softplus(lp).
//
// Categorical with logits z over K classes:
//
//	log p(k) = z_k − logsumexp(z)
//	H        = −Σ_k p_k log p_k
//	KL(p ‖ q) = Σ_k p_k (log p_k − log q_k)
//
// # Numerical stability
//
// Nothing exponentiates a logit that can be large. The Bernoulli forms
// use softplus(l) = max(l, 0) + log1p(e^−|l|) (the tape's Softplus), never
// log σ(l) or log(1 − σ(l)), so logits of ±50 and ±500 give finite
// log-probabilities (−50, −500, or 0) and entropies, with gradients
// x − σ(l) that stay finite. Categorical normalises with a log-sum-exp
// shifted by the row's maximum, the maximum taken as a constant
// (autograd.Detach: the log-sum-exp does not depend on the shift, so its
// derivatives are exact): every exponent is ≤ 0 and the sum is ≥ 1, so
// rows such as [500, −500, 499, 0] give exact log-probabilities and no NaN.
// The Categorical entropy multiplies p_k = exp(log p_k) by the finite
// log p_k, so a probability that underflows to 0 contributes 0, as in
// torch (which clamps the logits to the type's smallest finite value).
// The two discrete KLs stay finite where torch's return +Inf because a
// probability of q rounded to 0 or 1 (a Bernoulli logit of q above 37, a
// class 745 below its row's maximum): they never form q itself. The
// Normal's scale must be positive; nothing clamps it.
//
// The package's tests compare every value and the gradients of a fixed
// loss with torch.distributions in float64 (testdata/gen_dist.py), logits of
// ±50 and ±500 included, check first derivatives against central
// differences and second derivatives with autograd.CheckHigherOrder.
//
// Misuse — parameters whose shapes do not broadcast, labels that do not fit
// the logits (their number, or a class out of range), no samples — panics
// with a *tensor.ShapeError naming the operation ("dist.Normal",
// "dist.Categorical.LogProb") and the shapes, which tensor.Recover turns
// into an error at an API edge.
package dist
