"""Writes higher_order_torch.json: PyTorch's second-order autodiff on small
fixed models, in float64, as reference values for autograd's higher-order
tests. Every input (weights, data, directions) is in the file, so a test
rebuilds the exact models. Linear(x) = x·Wᵀ + b as torch.nn.Linear;
softplus(u) = log(1 + eᵘ) (no pre-activation reaches torch's threshold 20).
Each tensor is {"shape": [...], "data": [row-major floats]}; floats are
written with repr, which round-trips float64 exactly.

- gradient_penalty: D(x) = L3(softplus(L2(tanh(L1(x))))), g = ∂ΣD(xₙ)/∂x
  (create_graph), GP = meanₙ (‖gₙ‖₂ − 1)², and ∂GP/∂(W1, b1, W2, b2, W3, b3)
  (∂GP/∂b3 = 0: g does not depend on b3).
- hvp: y = L2(tanh(L1(x))), L = mean((y − y*)²); ∇L, H·v for a direction v
  per parameter, and (∇²ₓL)·vx with the parameters fixed.
- jvp: the same MLP, weights and x; J·tx of x ↦ y.

Run with Debian's python3-torch:
    python3 gen_higher_order.py > higher_order_torch.json
"""
import json
import sys

import torch
import torch.nn.functional as F

torch.manual_seed(11)
torch.set_default_dtype(torch.float64)


def T(t):
    return {"shape": list(t.shape), "data": t.detach().flatten().tolist()}


def Ts(names, ts):
    return {n: T(t) for n, t in zip(names, ts)}


def lin(x, w, b):
    return x @ w.T + b


def params(shapes, scale=0.6):
    return [(torch.randn(s) * scale).requires_grad_() for s in shapes]


def rel(a, b):
    return ((a - b).norm() / b.norm()).item()


# (a) gradient penalty of a critic
GP_NAMES = ["W1", "b1", "W2", "b2", "W3", "b3"]
gp_p = params([(8, 3), (8,), (8, 8), (8,), (1, 8), (1,)])
W1, b1, W2, b2, W3, b3 = gp_p
gx = torch.randn(5, 3).requires_grad_()
pre2 = lin(torch.tanh(lin(gx, W1, b1)), W2, b2)
assert pre2.abs().max() < 20  # softplus stays log(1 + eᵘ)
D = lin(F.softplus(pre2), W3, b3)
g, = torch.autograd.grad(D.sum(), gx, create_graph=True)
gp = ((g.norm(dim=1) - 1) ** 2).mean()
# g does not depend on b3, so ∂GP/∂b3 is zero (written as zeros).
gp_grad = torch.autograd.grad(gp, gp_p, allow_unused=True)
gp_grad = [torch.zeros_like(q) if d is None else d for q, d in zip(gp_p, gp_grad)]
gradient_penalty = {"params": Ts(GP_NAMES, gp_p), "x": T(gx), "D": T(D), "g": T(g),
                    "gp": gp.item(), "grad": Ts(GP_NAMES, gp_grad)}

# (b) Hessian-vector products of an MLP's MSE loss
NAMES = ["W1", "b1", "W2", "b2"]
p = params([(8, 3), (8,), (2, 8), (2,)])
x = torch.randn(6, 3)
target = torch.randn(6, 2)
v = [torch.randn(q.shape) for q in p]
vx = torch.randn(6, 3)


def mlp(x, p):
    return lin(torch.tanh(lin(x, p[0], p[1])), p[2], p[3])


def loss(x, p):
    return ((mlp(x, p) - target) ** 2).mean()


L = loss(x, p)
grad = torch.autograd.grad(L, p, create_graph=True)
hv = torch.autograd.grad(sum((gi * vi).sum() for gi, vi in zip(grad, v)), p)
xr = x.clone().requires_grad_()
gxL, = torch.autograd.grad(loss(xr, p), xr, create_graph=True)
hvx, = torch.autograd.grad((gxL * vx).sum(), xr)

# Central differences of the gradient along v (and vx): relative error < 1e-6.
h = 1e-5


def grad_at(shift):
    q = [(pi + shift * vi).detach().requires_grad_() for pi, vi in zip(p, v)]
    return torch.cat([gi.flatten() for gi in torch.autograd.grad(loss(x, q), q)])


def gradx_at(shift):
    xs = (x + shift * vx).requires_grad_()
    return torch.autograd.grad(loss(xs, p), xs)[0]


fd = (grad_at(h) - grad_at(-h)) / (2 * h)
assert rel(fd, torch.cat([t.flatten() for t in hv])) < 1e-6, rel(fd, torch.cat([t.flatten() for t in hv]))
fdx = (gradx_at(h) - gradx_at(-h)) / (2 * h)
assert rel(fdx, hvx) < 1e-6, rel(fdx, hvx)
hvp = {"params": Ts(NAMES, p), "x": T(x), "target": T(target), "y": T(mlp(x, p)), "loss": L.item(),
       "grad": Ts(NAMES, grad), "v": Ts(NAMES, v), "hv": Ts(NAMES, hv), "vx": T(vx), "hvx": T(hvx)}

# (c) Jacobian-vector product of x ↦ y, same MLP and x
tx = torch.randn(6, 3)
y, jtx = torch.autograd.functional.jvp(lambda x: mlp(x, p), x, tx)
u = lin(x, p[0], p[1])
by_hand = ((1 - torch.tanh(u) ** 2) * (tx @ p[0].T)) @ p[2].T
assert rel(jtx, by_hand) < 1e-13, rel(jtx, by_hand)
jvp = {"params": Ts(NAMES, p), "x": T(x), "tx": T(tx), "y": T(y), "jtx": T(jtx)}

json.dump({"gradient_penalty": gradient_penalty, "hvp": hvp, "jvp": jvp}, sys.stdout)
