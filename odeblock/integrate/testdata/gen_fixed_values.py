"""Writes torchdiffeq_fixed_values.json: y(1) of torchdiffeq's own odeint
with each fixed-grid method at step 0.05 from y(0) on two problems, for
odeblock's TestFixedGridAsTorchdiffeq. Run with Debian's python3-torch and
torchdiffeq's source on PYTHONPATH:

    PYTHONPATH=path/to/torchdiffeq python3 gen_fixed_values.py > torchdiffeq_fixed_values.json
"""
import json
import sys

import torch
from torchdiffeq import odeint

torch.set_default_dtype(torch.float64)
PROBLEMS = {
    "rotation": (lambda t, y: torch.stack([-y[1], y[0]]), [1.0, 0.0]),
    "nonlinear": (lambda t, y: -2 * t * y * y, [1.0]),
}
# torchdiffeq's name → odeblock's; gl4 is left out (torchdiffeq's second
# node equals its first); the Adams methods run with max_order 5 (order 4
# at most) and with torchdiffeq's default (12).
METHODS = {"euler": "euler", "midpoint": "midpoint", "heun2": "heun2", "heun3": "heun3", "rk4": "rk38",
           "explicit_adams": "explicit_adams", "implicit_adams": "implicit_adams",
           "implicit_euler": "implicit_euler", "implicit_midpoint": "implicit_midpoint", "trapezoid": "trapezoid",
           "radauIIA3": "radauIIA3", "radauIIA5": "radauIIA5", "gl6": "gl6", "sdirk2": "sdirk2", "trbdf2": "trbdf2"}
out = []
for tname, name in METHODS.items():
    for pname, (f, y0) in PROBLEMS.items():
        for max_order in ([5, 12] if "adams" in tname else [0]):
            options, tol = {"step_size": 0.05}, 1e-12
            if max_order:
                # A tolerance the corrector's four iterations meet
                # (torchdiffeq warns and drops history else).
                options["max_order"], tol = max_order, 1e-6
            y = odeint(f, torch.tensor(y0), torch.tensor([0.0, 1.0]), method=tname, options=options, rtol=tol, atol=tol)
            out.append({"method": name, "problem": pname, "tol": tol, "max_order": max_order, "y0": y0, "y1": y[-1].tolist()})
json.dump(out, sys.stdout)
