"""Writes torch_half.safetensors: half-precision tensors as PyTorch stores
them (F16 and BF16, their bits from torch itself), an I64 counter like
BatchNorm's num_batches_tracked, and in the metadata the float32 values
torch converts them to — for layers' TestLoadHalfPrecision.

Run with Debian's python3-torch:  python3 gen_half.py
"""
import json
import struct

import torch

w = torch.tensor([[0.5, -1.0, 65504.0], [6e-8, -0.0, 0.1]], dtype=torch.float16)
b = torch.tensor([1.5, -3.14159], dtype=torch.bfloat16)
n = torch.tensor(7, dtype=torch.int64)
blobs = [
    ("fc.weight", "F16", list(w.shape), w.view(torch.int16).numpy().tobytes()),
    ("fc.bias", "BF16", list(b.shape), b.view(torch.int16).numpy().tobytes()),
    ("bn.num_batches_tracked", "I64", [], n.numpy().tobytes()),
]
header = {"__metadata__": {
    "format": "pt",
    "fc.weight": json.dumps(w.float().flatten().tolist()),
    "fc.bias": json.dumps(b.float().flatten().tolist()),
}}
data = b""
for name, dtype, shape, raw in blobs:
    header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
    data += raw
h = json.dumps(header).encode()
h += b" " * (-len(h) % 8)
with open("torch_half.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + data)
