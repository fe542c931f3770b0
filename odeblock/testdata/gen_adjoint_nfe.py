"""Writes torchdiffeq_adjoint_nfe.json: forward and backward evaluation
counts (and gradients) of torchdiffeq's odeint_adjoint with dopri5 on small
autonomous tanh fields, for odeblock's TestAdjointNFEGolden.

Run with Debian's python3-torch and torchdiffeq's source on PYTHONPATH:
    PYTHONPATH=path/to/torchdiffeq python3 gen_adjoint_nfe.py > torchdiffeq_adjoint_nfe.json
"""
import json
import sys

import torch
from torchdiffeq import odeint_adjoint

torch.set_default_dtype(torch.float64)


class Field(torch.nn.Module):
    """f(h) = tanh(h·W1ᵀ + b1)·W2ᵀ: autonomous, so torchdiffeq's time
    adjoint stays zero and its norm is the mixed norm over the state, its
    adjoint and each parameter's gradient."""

    def __init__(self, w1, b1, w2):
        super().__init__()
        self.w1 = torch.nn.Parameter(torch.tensor(w1))
        self.b1 = torch.nn.Parameter(torch.tensor(b1))
        self.w2 = torch.nn.Parameter(torch.tensor(w2))
        self.nfe = 0

    def forward(self, t, h):
        self.nfe += 1
        return torch.tanh(h @ self.w1.T + self.b1) @ self.w2.T


def problem(name, seed, batch, d, hidden, times, tol, scale):
    g = torch.Generator().manual_seed(seed)
    rnd = lambda *s: (torch.randn(*s, generator=g) * scale).tolist()
    w1, b1, w2 = rnd(hidden, d), rnd(hidden), rnd(d, hidden)
    y0 = torch.randn(batch, d, generator=g).tolist()
    weights = torch.randn(len(times), batch, d, generator=g).tolist()
    f = Field(w1, b1, w2)
    z0 = torch.tensor(y0, requires_grad=True)
    sol = odeint_adjoint(f, z0, torch.tensor(times), rtol=tol, atol=tol, method="dopri5")
    fwd = f.nfe
    f.nfe = 0
    (sol * torch.tensor(weights)).sum().backward()
    return {
        "name": name, "times": times, "tol": tol, "w1": w1, "b1": b1, "w2": w2, "y0": y0,
        "weights": weights, "fwd_nfe": fwd, "bwd_nfe": f.nfe,
        "grad_y0": z0.grad.tolist(), "grad_w1": f.w1.grad.tolist(),
        "grad_b1": f.b1.grad.tolist(), "grad_w2": f.w2.grad.tolist(),
    }


probs = [
    problem("small", 1, 3, 2, 4, [0.0, 0.5, 1.5], 1e-6, 1.0),
    problem("wide", 2, 8, 4, 32, [0.0, 2.0], 1e-5, 0.5),
    problem("long", 3, 2, 3, 8, [0.0, 1.0, 2.0, 4.0], 1e-7, 0.8),
]
json.dump(probs, sys.stdout)
