"""Writes cnf_torch.json: a small continuous normalizing flow (FFJORD-style)
solved by torchdiffeq's odeint with fixed steps and differentiated by plain
backprop through the solver (not odeint_adjoint), in float64, as reference
values for odeblock's CNF tests. Every input (weights, data, probe) is in
the file. Each tensor is {"shape": [...], "data": [row-major floats]};
floats are written with repr, which round-trips float64 exactly.

Field f(t, z) = L2(tanh(L1([z, t]))), L(u) = u·Wᵀ + b as torch.nn.Linear,
[z, t] = z [6,2] with the time appended as a third column. State s = [z, Δ]
[6,3] from s(0) = [x, 0] over t ∈ [0, 1]: dz/dt = f, dΔ/dt = −tr(∂f/∂z) per
row, exact (one autograd.grad per dimension, create_graph) or Hutchinson's
−epsᵀ(∂f/∂z)eps with a fixed Rademacher probe eps [6,2].
log p(xₙ) = −½‖zₙ(1)‖² − log 2π − Δₙ(1); the gradients are of its mean.

torchdiffeq's method 'rk4' with options {'step_size': 0.25} (grid 0, ¼, ½,
¾, 1) is NOT the classic RK4: its RK4 solver (_impl/fixed_grid.py) steps
with rk4_alt_step_func (_impl/rk_common.py), Kutta's 3/8 rule, c = (0, ⅓,
⅔, 1), b = (⅛, ⅜, ⅜, ⅛) — odeblock's "rk38", written as "go_method".

Run with Debian's python3-torch and torchdiffeq's source (0.2.5) on PYTHONPATH:
    PYTHONPATH=path/to/torchdiffeq python3 gen_cnf.py > cnf_torch.json
"""
import json
import math
import sys

import torch
from torchdiffeq import odeint

torch.manual_seed(7)
torch.set_default_dtype(torch.float64)
METHOD, GO_METHOD, STEP = "rk4", "rk38", 0.25
NAMES = ["W1", "b1", "W2", "b2"]
params = [(torch.randn(s) * sc).requires_grad_() for s, sc in [((16, 3), 0.8), ((16,), 0.5), ((2, 16), 0.4), ((2,), 0.3)]]
W1, b1, W2, b2 = params
x = torch.randn(6, 2)
eps = (torch.randint(0, 2, (6, 2)) * 2 - 1).to(torch.float64)


def T(t):
    return {"shape": list(t.shape), "data": t.detach().flatten().tolist()}


def field(t, z):
    zt = torch.cat([z, t.expand(z.shape[0], 1)], 1)
    return torch.tanh(zt @ W1.T + b1) @ W2.T + b2


def exact_trace(t, f, z):
    return sum(torch.autograd.grad(f[:, i].sum(), z, create_graph=True)[0][:, i] for i in range(z.shape[1]))


def hutchinson(t, f, z):
    return (torch.autograd.grad(f, z, eps, create_graph=True)[0] * eps).sum(1)


def row_jacobians(t, z):
    """∂fₙ/∂zₙ per row, [6,2,2], from the full Jacobian [6,2,6,2]."""
    J = torch.autograd.functional.jacobian(lambda zz: field(t, zz), z, create_graph=True)
    return J.diagonal(dim1=0, dim2=2).permute(2, 0, 1)


def jacobian_trace(t, f, z):
    return row_jacobians(t, z).diagonal(dim1=1, dim2=2).sum(1)


def jacobian_hutchinson(t, f, z):
    return torch.einsum("ni,nij,nj->n", eps, row_jacobians(t, z), eps)


def solve(trace):
    def rhs(t, s):
        with torch.enable_grad():
            z = s[:, :2]
            if not z.requires_grad:  # s(0) is data
                z = z.detach().requires_grad_()
            f = field(t, z)
            return torch.cat([f, -trace(t, f, z)[:, None]], 1)

    s0 = torch.cat([x, torch.zeros(6, 1)], 1)
    s1 = odeint(rhs, s0, torch.tensor([0.0, 1.0]), method=METHOD, options={"step_size": STEP})[-1]
    z1, delta1 = s1[:, :2], s1[:, 2]
    logp = -0.5 * (z1 ** 2).sum(1) - math.log(2 * math.pi) - delta1
    mean = logp.mean()
    return z1, delta1, logp, mean, torch.autograd.grad(mean, params)


def record(z1, delta1, logp, mean, grad):
    return {"z1": T(z1), "delta1": T(delta1), "logp": T(logp), "mean_logp": mean.item(),
            "grad": {n: T(g) for n, g in zip(NAMES, grad)}}


def agree(a, b, what):
    """Δ(1), mean log p and its gradients of two solves agree to 1e-12."""
    for p, q in [(a[1], b[1]), (a[3], b[3]), *zip(a[4], b[4])]:
        err = (p - q).abs().max().item()
        assert err < 1e-12, (what, err)


exact = solve(exact_trace)
hutch = solve(hutchinson)
# The same solves with the trace taken from torch's full Jacobian.
agree(exact, solve(jacobian_trace), "exact")
agree(hutch, solve(jacobian_hutchinson), "hutchinson")
assert torch.equal(exact[0], hutch[0])  # z does not see Δ

out = {
    "method": METHOD, "go_method": GO_METHOD, "step_size": STEP, "t0": 0.0, "t1": 1.0,
    "params": {n: T(p) for n, p in zip(NAMES, params)}, "x": T(x),
    "exact": record(*exact),
    "hutchinson": {"eps": T(eps), **record(*hutch)},
}
json.dump(out, sys.stdout)
