#!/usr/bin/env python3
"""PyTorch + torchdiffeq peer of examples/latentode, for the line count.

The latent ODE of Rubanova et al. (2019), as torchdiffeq's
examples/latent_ode.py, on irregularly sampled noisy sine waves, written as
a PyTorch user would: the same model and training as the Go example (a
recognition GRU run backwards over the union of a batch's times, the
state held where a series has no observation; q(z0) = N(mu, exp(logvar));
a reparameterised z0; the latent MLP field solved by torchdiffeq's odeint,
dopri5, rtol = atol = 1e-3, backpropagating through the solver; a decoder;
loss = -ELBO with the likelihood's noise fixed at the data's; Adam). The
data are drawn as data.SineWaves draws them, from numpy's generator, so
not the same numbers as the Go run.

    mkdir -p /tmp/tdq && git -C TORCHDIFFEQ_REPO archive HEAD torchdiffeq | tar -x -C /tmp/tdq
    PYTHONPATH=/tmp/tdq python3 bench/latentode_torch.py --iters 5

The model and training loop are the lines between the "model" and "end"
markers below (collate, which pads a batch to its union of times, is
data.NewSeriesBatch on the Go side and is counted separately).
"""

import argparse
import time

import numpy as np
import torch
import torch.nn as nn
from torchdiffeq import odeint

parser = argparse.ArgumentParser()
parser.add_argument('--iters', type=int, default=3000)
parser.add_argument('--batch', type=int, default=50)
parser.add_argument('--lr', type=float, default=1e-2)
parser.add_argument('--tol', type=float, default=1e-3)
parser.add_argument('--seed', type=int, default=1)
parser.add_argument('--threads', type=int, default=2)
args = parser.parse_args()
torch.set_num_threads(args.threads)
torch.manual_seed(args.seed)
rng = np.random.default_rng(args.seed)

NTRAIN, POINTS, GRID, TMAX, SPLIT, NOISE = 1000, 30, 101, 10.0, 5.0, 0.1
LATENT, HIDDEN, RNN_HIDDEN = 4, 20, 25


def sine_waves(n):
    """n series (times, values) of POINTS distinct points of the grid."""
    grid = np.linspace(0, TMAX, GRID)
    out = []
    for _ in range(n):
        freq, phase = rng.uniform(0.1, 0.3), rng.uniform(0, 2 * np.pi)
        t = np.sort(rng.permutation(GRID)[:POINTS]).astype(float) * grid[1]
        out.append((t, np.sin(2 * np.pi * freq * t + phase) + NOISE * rng.standard_normal(POINTS)))
    return out


def collate(series):
    """Pads the series to the union of their times: times [T], x, mask [B, T, 1]."""
    times = np.unique(np.concatenate([t for t, _ in series]))
    x, mask = np.zeros((len(series), len(times), 1)), np.zeros((len(series), len(times), 1))
    for b, (t, v) in enumerate(series):
        idx = np.searchsorted(times, t)
        x[b, idx, 0], mask[b, idx, 0] = v, 1
    return torch.tensor(times, dtype=torch.float32), torch.tensor(x, dtype=torch.float32), torch.tensor(mask, dtype=torch.float32)


observed = [(t[t < SPLIT], v[t < SPLIT]) for t, v in sine_waves(NTRAIN)]

# --- model and training loop ---


class LatentODE(nn.Module):
    def __init__(self):
        super().__init__()
        self.rec = nn.GRUCell(2, RNN_HIDDEN)
        self.to_q = nn.Linear(RNN_HIDDEN, 2 * LATENT)
        self.field = nn.Sequential(nn.Linear(LATENT, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, HIDDEN), nn.Tanh(),
                                   nn.Linear(HIDDEN, LATENT))
        self.dec = nn.Sequential(nn.Linear(LATENT, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, 1))

    def encode(self, times, x, mask):
        h = torch.zeros(x.shape[0], RNN_HIDDEN)
        for j in reversed(range(len(times))):
            inp = torch.cat([x[:, j], times[j].expand(x.shape[0], 1)], dim=1)
            h = h + mask[:, j] * (self.rec(inp, h) - h)
        mu, logvar = self.to_q(h).chunk(2, dim=1)
        return torch.distributions.Normal(mu, torch.exp(0.5 * logvar))

    def decode(self, z0, times):
        ts = times if times[0] == 0 else torch.cat([torch.zeros(1), times])
        z = odeint(lambda t, z: self.field(z), z0, ts, rtol=args.tol, atol=args.tol, method='dopri5')
        return self.dec(z[len(ts) - len(times):]).permute(1, 0, 2)

    def loss(self, times, x, mask):
        q = self.encode(times, x, mask)
        px = torch.distributions.Normal(self.decode(q.rsample(), times), NOISE)
        logpx = (px.log_prob(x) * mask).sum(dim=(1, 2))
        kl = torch.distributions.kl_divergence(q, torch.distributions.Normal(0., 1.)).sum(1)
        return (kl - logpx).mean()


model = LatentODE()
opt = torch.optim.Adam(model.parameters(), lr=args.lr)
start = time.time()
for it in range(1, args.iters + 1):
    batch = [observed[i] for i in rng.integers(0, len(observed), args.batch)]
    loss = model.loss(*collate(batch))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if it % 50 == 0 or it <= 5:
        print(f'iter {it:4d}  loss (-ELBO) {loss.item():8.2f}  {time.time() - start:5.1f}s', flush=True)

# --- end ---
