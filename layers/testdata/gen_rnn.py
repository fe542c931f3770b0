"""Writes rnn_torch.json: PyTorch's RNNCell (tanh and relu), GRUCell and
LSTMCell run for three steps on a fixed input sequence, in float64, with
the gradients of a fixed loss, for layers' TestRNNCellsMatchPyTorch; and
rnn_torch.safetensors: the state_dict of a ModuleDict holding the tanh
RNNCell, the GRUCell and the LSTMCell as rnn, gru and lstm (F64), for
TestRNNCellLoadsTorchSafetensors.

For each cell: its parameters (by their state_dict names), the inputs x
[steps, B, In], the initial state h0 (and c0) [B, H], the state after each
step, and the gradients of

    loss = Σ h_T² (+ Σ c_T² for the LSTM)

with respect to every parameter, x, h0 (and c0). "state_dict_keys" are the
keys of the ModuleDict. Tensors are {"shape": [...], "data": [...]},
row-major.

The safetensors file is written from the format's spec with the standard
library (the safetensors package is not in Debian): an 8-byte
little-endian header length, the JSON header padded with spaces to a
multiple of 8 (as safetensors.torch.save_file pads it), then the tensors'
little-endian bytes in state_dict order.

Run from this directory with Debian's python3-torch:
    python3 gen_rnn.py > rnn_torch.json
"""
import json
import os
import struct
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


def write_safetensors(path, state):
    header, data = {"__metadata__": {"format": "pt"}}, b""
    for k, v in state.items():
        b = struct.pack("<%dd" % v.numel(), *v.flatten().tolist())
        header[k] = {"dtype": "F64", "shape": list(v.shape),
                     "data_offsets": [len(data), len(data) + len(b)]}
        data += b
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


cells = torch.nn.ModuleDict({
    "rnn": torch.nn.RNNCell(IN, H, nonlinearity="tanh"),
    "gru": torch.nn.GRUCell(IN, H),
    "lstm": torch.nn.LSTMCell(IN, H),
})
out = {"state_dict_keys": list(cells.state_dict().keys())}
out["rnn_tanh"] = run(cells["rnn"], False)
out["rnn_relu"] = run(torch.nn.RNNCell(IN, H, nonlinearity="relu"), False)
out["gru"] = run(cells["gru"], False)
out["lstm"] = run(cells["lstm"], True)
json.dump(out, sys.stdout)
write_safetensors(os.path.join(os.path.dirname(os.path.abspath(__file__)), "rnn_torch.safetensors"),
                  cells.state_dict())
