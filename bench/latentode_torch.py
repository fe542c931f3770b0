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

With --weights FILE (written by `go test ./examples/latentode -run TestPeer
-weights FILE`) it trains nothing: it loads Go's weights and fixed batch,
checks one forward and backward pass with Go's samples eps against Go's
loss, NFE and gradients (exit status 1 if they differ; the check's odeint
gets the last output time as step_t: Go's solver ends its last step there,
where torchdiffeq's dopri5 steps past it and interpolates back, so that only
then do the two take the same steps; both take the other output times from
the dense output), then, with --time N, runs --warmup and N timed training
iterations on that batch (forward, loss, backward, Adam step) as the
example runs them and prints one JSON line: the median seconds per
iteration, the mean forward NFE, the peak RSS (VmHWM), as the Go side's
(bench/compare_seq.sh runs both). --step-to times dopri5 stepping to every
output time instead.

    PYTHONPATH=/tmp/tdq python3 bench/latentode_torch.py --threads 1 --weights FILE --time 20

The model and training loop are the lines between the "lines:" markers
below (bench/count_lines.py counts them) (collate, which pads a batch to its union of times, is
data.NewSeriesBatch on the Go side and is counted separately).
"""

import argparse
import json
import statistics
import sys
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
parser.add_argument('--weights', help='peer mode: the weights file of examples/latentode TestPeer -weights')
parser.add_argument('--time', type=int, default=0, help='peer mode: timed iterations (0: the check only)')
parser.add_argument('--warmup', type=int, default=2, help='peer mode: untimed iterations before them')
parser.add_argument('--step-to', action='store_true',
                    help="peer mode: the timed dopri5 steps to every output time (step_t), as Go's Backprop mode, instead of interpolating")
parser.add_argument('--loss-rtol', type=float, default=1e-4, help='peer mode: limit of the check on the loss (relative)')
parser.add_argument('--grad-rtol', type=float, default=1e-3, help='peer mode: on each gradient (max abs error / max abs)')
args = parser.parse_args()
if args.weights:  # the peer mode (after the "end" marker): no training run of the default
    import os
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from peer import read_safetensors
    TENSORS, META = read_safetensors(args.weights)
    CFG = json.loads(META['config'])
    args.tol, args.lr, args.batch, args.iters = CFG['tol'], CFG['lr'], CFG['batch'], 0
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
# lines: begin


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

# lines: end
# --- end ---


def peer():
    """The --weights mode: check one pass against Go's, then time."""
    global odeint
    plain = odeint
    # The check: Go's solver ends its last step on the last output time,
    # where torchdiffeq's dopri5 steps past it and interpolates back: with
    # that time as step_t the two take the same steps.
    odeint = lambda f, z0, ts, **kw: plain(f, z0, ts, options=dict(step_t=ts[-1:]), **kw)  # noqa: E731
    names = [k[len('check.grad.'):] for k in TENSORS if k.startswith('check.grad.')]
    model = LatentODE()
    with torch.no_grad():
        sd = model.state_dict()
        for n in names:
            if sd[n].shape != TENSORS[n].shape:
                sys.exit(f'latentode_torch.py: {n}: {tuple(TENSORS[n].shape)} in the file, {tuple(sd[n].shape)} here')
            sd[n].copy_(TENSORS[n])
    nfe = [0]
    model.field.register_forward_hook(lambda *_: nfe.__setitem__(0, nfe[0] + 1))
    times, x, mask = TENSORS['times'], TENSORS['x'], TENSORS['mask']
    # One pass with Go's eps as the reparameterisation's noise.
    normal, draw = torch.distributions.normal, torch.distributions.normal._standard_normal
    normal._standard_normal = lambda shape, dtype, device: TENSORS['eps'].to(dtype)
    loss = model.loss(times, x, mask)
    normal._standard_normal = draw
    loss.backward()
    go_loss, go_nfe = float(META['check.loss']), int(META['check.fwd_nfe'])
    errs = {n: ((p.grad - TENSORS['check.grad.' + n]).abs().max() / TENSORS['check.grad.' + n].abs().max()).item()
            for n, p in model.named_parameters()}
    check = {'check_loss': loss.item(), 'check_loss_go': go_loss, 'check_loss_rel_err': abs(loss.item() - go_loss) / abs(go_loss),
             'check_fwd_nfe': nfe[0], 'check_fwd_nfe_go': go_nfe, 'check_grad_rel_err_max': max(errs.values()),
             'check_grad_worst': max(errs, key=errs.get)}
    if nfe[0] != go_nfe or check['check_loss_rel_err'] > args.loss_rtol or check['check_grad_rel_err_max'] > args.grad_rtol:
        print(json.dumps(check), file=sys.stderr)
        sys.exit(f'latentode_torch.py: the pass differs from Go\'s (NFE {nfe[0]} vs {go_nfe}, loss rel err '
                 f'{check["check_loss_rel_err"]:.1e} > {args.loss_rtol:g} or gradients {check["check_grad_rel_err_max"]:.1e} > {args.grad_rtol:g})')
    if args.time <= 0:
        print(json.dumps(check))
        return
    odeint = plain  # the example's: dopri5 as torchdiffeq runs it
    if args.step_to:
        odeint = lambda f, z0, ts, **kw: plain(f, z0, ts, options=dict(step_t=ts), **kw)  # noqa: E731
    opt, secs, losses = torch.optim.Adam(model.parameters(), lr=args.lr), [], []
    opt.zero_grad()
    nfes = 0
    for i in range(args.warmup + args.time):
        start, nfe[0] = time.perf_counter(), 0
        loss = model.loss(times, x, mask)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if i >= args.warmup:
            secs.append(time.perf_counter() - start)
            nfes += nfe[0]
    rss = next(float(l.split()[1]) / 1024 for l in open('/proc/self/status') if l.startswith('VmHWM:'))
    print(json.dumps({'side': 'pytorch', 'model': 'latentode', 'mode': 'backprop' + ('-stepto' if args.step_to else ''), 'iter_seconds': statistics.median(secs),
                      'fwd_nfe': nfes / args.time, 'peak_rss_mb': rss, 'threads': torch.get_num_threads(), 'iters': args.time,
                      'warmup': args.warmup, 'loss_first': losses[0], 'loss_last': losses[-1], **check}))


if args.weights:
    peer()
