"""Writes rnn_torch.json: PyTorch's RNNCell (tanh and relu), GRUCell and
LSTMCell run for three steps on a fixed input sequence, in float64, with
the gradients of a fixed loss, for layers' TestRNNCellsMatchPyTorch.

For each cell: its parameters (by their state_dict names), the inputs x
[steps, B, In], the initial state h0 (and c0) [B, H], the state after each
step, and the gradients of

    loss = Σ h_T² (+ Σ c_T² for the LSTM)

with respect to every parameter, x, h0 (and c0). "state_dict_keys" are the
keys of a ModuleDict holding the cells as rnn, gru and lstm. Tensors are
{"shape": [...], "data": [...]}, row-major.

Run with Debian's python3-torch:
    python3 gen_rnn.py > rnn_torch.json
"""
import json
import sys

import torch

torch.manual_seed(32)
torch.set_default_dtype(torch.float64)
IN, H, B, STEPS = 3, 4, 2, 3


def tensor(t):
    return {"shape": list(t.shape), "data": t.detach().flatten().tolist()}


def run(cell, lstm):
    # Weights wider than PyTorch's initialisation, so that the gates and the
    # relu are exercised away from their linear regions.
    with torch.no_grad():
        for p in cell.parameters():
            p.copy_(torch.randn(p.shape) * 0.8)
    x = (torch.randn(STEPS, B, IN) * 1.5).requires_grad_()
    h0 = torch.randn(B, H).requires_grad_()
    c0 = torch.randn(B, H).requires_grad_()
    h, c = h0, c0
    hs, cs = [], []
    for s in range(STEPS):
        if lstm:
            h, c = cell(x[s], (h, c))
            cs.append(tensor(c))
        else:
            h = cell(x[s], h)
        hs.append(tensor(h))
    loss = (h * h).sum()
    if lstm:
        loss = loss + (c * c).sum()
    loss.backward()
    out = {
        "params": {k: tensor(v) for k, v in cell.named_parameters()},
        "x": tensor(x), "h0": tensor(h0), "h": hs, "loss": loss.item(),
        "grad": {k: tensor(v.grad) for k, v in cell.named_parameters()},
    }
    out["grad"]["x"] = tensor(x.grad)
    out["grad"]["h0"] = tensor(h0.grad)
    if lstm:
        out["c0"] = tensor(c0)
        out["c"] = cs
        out["grad"]["c0"] = tensor(c0.grad)
    return out


cells = torch.nn.ModuleDict({
    "rnn": torch.nn.RNNCell(IN, H),
    "gru": torch.nn.GRUCell(IN, H),
    "lstm": torch.nn.LSTMCell(IN, H),
})
out = {"state_dict_keys": list(cells.state_dict().keys())}
out["rnn_tanh"] = run(torch.nn.RNNCell(IN, H, nonlinearity="tanh"), False)
out["rnn_relu"] = run(torch.nn.RNNCell(IN, H, nonlinearity="relu"), False)
out["gru"] = run(torch.nn.GRUCell(IN, H), False)
out["lstm"] = run(torch.nn.LSTMCell(IN, H), True)
json.dump(out, sys.stdout)
