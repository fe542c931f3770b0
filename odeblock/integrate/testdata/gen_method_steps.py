"""Writes torchdiffeq_method_steps.json: the accepted steps (t, dt) that
torchdiffeq's own odeint takes with each adaptive method on four problems,
for odeblock's TestMethodStepsAsTorchdiffeq. Run with Debian's python3-torch
and torchdiffeq's source on PYTHONPATH:

    PYTHONPATH=path/to/torchdiffeq python3 gen_method_steps.py > torchdiffeq_method_steps.json
"""
import json
import sys

import torch
from torchdiffeq import odeint

torch.set_default_dtype(torch.float64)

PROBLEMS = {
    "decay": (lambda t, y: -y, [1.0], 0.0, 5.0, 1e-6),
    "nonlinear": (lambda t, y: -2 * t * y * y, [1.0], 0.0, 3.0, 1e-8),
    "vanderpol": (lambda t, y: torch.stack([y[1], 2 * (1 - y[0] ** 2) * y[1] - y[0]]), [2.0, 0.0], 0.0, 10.0, 1e-6),
    "rotation": (lambda t, y: torch.stack([-y[1], y[0]]), [1.0, 0.0], 0.0, 6.0, 1e-4),
}


class Recorder(torch.nn.Module):
    def __init__(self, f):
        super().__init__()
        self.f, self.steps = f, []

    def forward(self, t, y):
        return self.f(t, y)

    def callback_accept_step(self, t0, y0, dt):
        self.steps.append([float(t0), float(dt)])


out = {}
# adaptive_heun and fehlberg2 are left out: torchdiffeq reuses their last
# stage as the next step's f(t, y) although it is evaluated elsewhere, so
# their steps differ from those of a solver that evaluates f at y1.
for method in ["dopri8", "bosh3"]:
    for name, (f, y0, t0, t1, tol) in PROBLEMS.items():
        rec = Recorder(f)
        odeint(rec, torch.tensor(y0), torch.tensor([t0, t1]), rtol=tol, atol=tol, method=method)
        out[method + "/" + name] = {"method": method, "problem": name, "y0": y0, "t0": t0, "t1": t1, "tol": tol, "steps": rec.steps}
json.dump(out, sys.stdout)
