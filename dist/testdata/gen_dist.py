"""Writes dist_torch.json: torch.distributions' Normal, Bernoulli and
Categorical (log-probabilities, entropies, the KL divergence between two
of a kind) on fixed inputs, in float64, with the gradients of one fixed
loss per distribution with respect to its parameters, for dist's
Test*MatchesPyTorch.

The Bernoulli and Categorical logits include ±50 and ±500, where a naive
log(sigmoid) or softmax would give -inf or NaN and torch's stable forms give
finite values.

Tensors are {"shape": [...], "data": [...]} in row-major order. Each loss is
sum(w_lp * log_prob) + sum(w_ent * entropy) (sum(w * kl) for the KL), with
the fixed weights stored next to it.

Run with Debian's python3-torch:
    python3 gen_dist.py > dist_torch.json
"""
import json
import sys

import torch
from torch.distributions import Bernoulli, Categorical, Normal, kl_divergence

torch.manual_seed(32)
torch.set_default_dtype(torch.float64)


def t(x):
    x = x.detach()
    return {"shape": list(x.shape), "data": x.flatten().tolist()}


def leaf(x):
    return x.clone().requires_grad_(True)


out = {}

# Normal: loc and scale of shape [2, 3]; x of shape [4, 2, 3] broadcasts
# against them, as a batch of samples would.
loc = leaf(torch.randn(2, 3))
scale = leaf(torch.rand(2, 3) * 2 + 0.1)
x = torch.randn(4, 2, 3) * 1.5
w_lp = torch.randn(4, 2, 3)
w_ent = torch.randn(2, 3)
n = Normal(loc, scale)
lp, ent = n.log_prob(x), n.entropy()
(w_lp * lp).sum().add((w_ent * ent).sum()).backward()
out["normal"] = {
    "loc": t(loc), "scale": t(scale), "x": t(x), "w_lp": t(w_lp), "w_ent": t(w_ent),
    "log_prob": t(lp), "entropy": t(ent),
    "grad_loc": t(loc.grad), "grad_scale": t(scale.grad),
}

# KL(p || q) between Normals of shape [5].
lp_, sp_ = leaf(torch.randn(5)), leaf(torch.rand(5) * 2 + 0.1)
lq_, sq_ = leaf(torch.randn(5)), leaf(torch.rand(5) * 2 + 0.1)
w = torch.randn(5)
kl = kl_divergence(Normal(lp_, sp_), Normal(lq_, sq_))
(w * kl).sum().backward()
out["kl_normal"] = {
    "loc_p": t(lp_), "scale_p": t(sp_), "loc_q": t(lq_), "scale_q": t(sq_), "w": t(w),
    "kl": t(kl),
    "grad_loc_p": t(lp_.grad), "grad_scale_p": t(sp_.grad),
    "grad_loc_q": t(lq_.grad), "grad_scale_q": t(sq_.grad),
}

# Bernoulli: logits of shape [12], with extremes, each scored at 0 and 1.
logits = leaf(torch.cat([torch.randn(4) * 2,
                         torch.tensor([50.0, -50.0, 500.0, -500.0, 50.0, -50.0, 500.0, -500.0])]))
xb = torch.tensor([1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0])
w_lp, w_ent = torch.randn(12), torch.randn(12)
b = Bernoulli(logits=logits)
lp, ent = b.log_prob(xb), b.entropy()
(w_lp * lp).sum().add((w_ent * ent).sum()).backward()
out["bernoulli"] = {
    "logits": t(logits), "x": t(xb), "w_lp": t(w_lp), "w_ent": t(w_ent),
    "log_prob": t(lp), "entropy": t(ent), "probs": t(b.probs),
    "grad_logits": t(logits.grad),
}

# Categorical: logits [6, 4]; rows 3 to 5 are extreme.
logits = leaf(torch.cat([torch.randn(3, 4) * 2,
                         torch.tensor([[50.0, -50.0, 0.0, 1.0],
                                       [500.0, -500.0, 499.0, 0.0],
                                       [-500.0, -500.0, -500.0, -499.0]])]))
labels = torch.tensor([0, 3, 2, 1, 1, 3])
w_lp, w_ent = torch.randn(6), torch.randn(6)
c = Categorical(logits=logits)
lp, ent = c.log_prob(labels), c.entropy()
(w_lp * lp).sum().add((w_ent * ent).sum()).backward()
out["categorical"] = {
    "logits": t(logits), "labels": labels.tolist(), "w_lp": t(w_lp), "w_ent": t(w_ent),
    "log_prob": t(lp), "entropy": t(ent), "probs": t(c.probs),
    "grad_logits": t(logits.grad),
}

# KL(p || q) between Bernoullis of shape [8] and Categoricals of shape
# [4, 3], with extreme logits. torch returns inf where a probability of q
# rounds to 0 or 1 (a Bernoulli logit of q above 37 or below -745, a
# Categorical class of q below the row's maximum by 745 or more): those
# are left out here (dist gives the finite value; TestKLBeyondTorch).
lp_ = leaf(torch.cat([torch.randn(4) * 2, torch.tensor([50.0, -50.0, 500.0, -500.0])]))
lq_ = leaf(torch.cat([torch.randn(4) * 2, torch.tensor([-50.0, 30.0, -500.0, 20.0])]))
w = torch.randn(8)
kl = kl_divergence(Bernoulli(logits=lp_), Bernoulli(logits=lq_))
(w * kl).sum().backward()
out["kl_bernoulli"] = {
    "logits_p": t(lp_), "logits_q": t(lq_), "w": t(w), "kl": t(kl),
    "grad_logits_p": t(lp_.grad), "grad_logits_q": t(lq_.grad),
}
lp_ = leaf(torch.cat([torch.randn(2, 3) * 2, torch.tensor([[500.0, -500.0, 499.0], [50.0, 0.0, -50.0]])]))
lq_ = leaf(torch.cat([torch.randn(2, 3) * 2, torch.tensor([[-300.0, 0.0, 300.0], [0.0, 50.0, 1.0]])]))
w = torch.randn(4)
kl = kl_divergence(Categorical(logits=lp_), Categorical(logits=lq_))
(w * kl).sum().backward()
out["kl_categorical"] = {
    "logits_p": t(lp_), "logits_q": t(lq_), "w": t(w), "kl": t(kl),
    "grad_logits_p": t(lp_.grad), "grad_logits_q": t(lq_.grad),
}

json.dump(out, sys.stdout, indent=1)
sys.stdout.write("\n")
