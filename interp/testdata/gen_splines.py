#!/usr/bin/python3
"""Writes splines.json, the reference values interp's tests compare with.

Run from this directory:  /usr/bin/python3 gen_splines.py
(needs numpy and scipy: apt-get install -y python3-scipy)

Knots at irregular times, observations of shape [B, n, C] = [2, 7, 3], and
query times inside the pieces, at every knot and outside both ends. For each
query it writes, shaped [Q, B, C]:

  natural:  SciPy's CubicSpline(bc_type="natural") (extrapolating the end
            pieces, SciPy's default) and its first derivative;
  linear:   numpy.interp inside [t_0, t_{n-1}] and the end pieces' lines
            outside (numpy.interp clamps there; interp extrapolates, as
            torchcde does), with the slope of the piece to the right of a
            knot (the last piece at t_{n-1});
  hermite:  the backward Hermite cubic of diffrax's
            backward_hermite_coefficients, written out below in numpy and
            checked against SciPy's CubicHermiteSpline with the same slopes;
  long:     a natural spline on 60 knots (B = 1, C = 2), to exercise the
            tridiagonal solve.
"""
import json

import numpy as np
from scipy.interpolate import CubicHermiteSpline, CubicSpline

rng = np.random.default_rng(32)
B, n, C = 2, 7, 3
times = np.array([-0.3, 0.1, 0.25, 0.9, 1.0, 1.75, 2.4])
assert times.shape == (n,)
obs = rng.normal(size=(B, n, C))

mids = (times[:-1] + times[1:]) / 2
thirds = times[:-1] + (times[1:] - times[:-1]) / 3
outside = np.array([-1.1, -0.31, 2.41, 3.5])
queries = np.concatenate([times, mids, thirds, outside])

# Which piece a query falls on: the largest i with t_i <= t, clamped to the
# end pieces (so a knot takes the piece to its right; t_{n-1} the last).
piece = np.clip(np.searchsorted(times, queries, side="right") - 1, 0, n - 2)
s = queries - times[piece]  # [Q]
h = np.diff(times)  # [n-1]
dy = np.diff(obs, axis=1)  # [B, n-1, C]
slope = dy / h[None, :, None]  # [B, n-1, C]

# Natural cubic spline: SciPy.
cs = CubicSpline(times, obs, axis=1, bc_type="natural")
nat_val = np.moveaxis(cs(queries), 1, 0)  # [Q, B, C]
nat_der = np.moveaxis(cs(queries, 1), 1, 0)

# Linear: numpy.interp inside, the end pieces' lines outside.
lin_val = np.empty((len(queries), B, C))
lin_der = np.empty((len(queries), B, C))
for q, t in enumerate(queries):
    i = piece[q]
    lin_val[q] = obs[:, i, :] + slope[:, i, :] * s[q]
    lin_der[q] = slope[:, i, :]
    if times[0] <= t <= times[-1]:
        for b in range(B):
            for c in range(C):
                ref = np.interp(t, times, obs[b, :, c])
                assert abs(ref - lin_val[q, b, c]) < 1e-12, (t, b, c)

# Backward Hermite (diffrax): the slope at knot k is the backward difference
# (y_k - y_{k-1}) / (t_k - t_{k-1}), at t_0 the forward one; on piece i,
# with s = t - t_i, h_i, slope D_i and knot slopes m_i, m_{i+1} = D_i:
#   p(s) = y_i + m_i s + c_i s^2 + d_i s^3,
#   c_i = (3 D_i - 2 m_i - m_{i+1}) / h_i = 2 (D_i - m_i) / h_i,
#   d_i = (m_i + m_{i+1} - 2 D_i) / h_i^2 = (m_i - D_i) / h_i^2.
m = np.concatenate([slope[:, :1, :], slope], axis=1)  # [B, n, C]
mi = m[:, :-1, :]
cc = 2 * (slope - mi) / h[None, :, None]
dd = (mi - slope) / (h[None, :, None] ** 2)
her_val = np.empty((len(queries), B, C))
her_der = np.empty((len(queries), B, C))
for q in range(len(queries)):
    i, x = piece[q], s[q]
    her_val[q] = obs[:, i, :] + mi[:, i, :] * x + cc[:, i, :] * x**2 + dd[:, i, :] * x**3
    her_der[q] = mi[:, i, :] + 2 * cc[:, i, :] * x + 3 * dd[:, i, :] * x**2
chs = CubicHermiteSpline(times, obs, m, axis=1)
assert np.allclose(np.moveaxis(chs(queries), 1, 0), her_val, rtol=0, atol=1e-12)
assert np.allclose(np.moveaxis(chs(queries, 1), 1, 0), her_der, rtol=0, atol=1e-12)

# A longer natural spline, to exercise the tridiagonal solve: n = 60 knots
# at irregular spacings (from 0.01 to 1), B = 1, C = 2, queries in every
# piece, at every knot and outside.
long_times = np.cumsum(np.concatenate([[0.0], rng.uniform(0.01, 1.0, size=59)]))
long_obs = rng.normal(size=(1, 60, 2))
long_q = np.concatenate([long_times, (long_times[:-1] + long_times[1:]) / 2, [long_times[0] - 0.5, long_times[-1] + 0.5]])
long_cs = CubicSpline(long_times, long_obs, axis=1, bc_type="natural")

out = {
    "times": times.tolist(),
    "obs": obs.tolist(),
    "queries": queries.tolist(),
    "natural": {"value": nat_val.tolist(), "deriv": nat_der.tolist()},
    "linear": {"value": lin_val.tolist(), "deriv": lin_der.tolist()},
    "hermite": {"value": her_val.tolist(), "deriv": her_der.tolist()},
    "long": {
        "times": long_times.tolist(),
        "obs": long_obs.tolist(),
        "queries": long_q.tolist(),
        "natural": {
            "value": np.moveaxis(long_cs(long_q), 1, 0).tolist(),
            "deriv": np.moveaxis(long_cs(long_q, 1), 1, 0).tolist(),
        },
    },
}
with open("splines.json", "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
