"""A minimal reader of safetensors files for the PyTorch peers of the
benchmarks (the `safetensors` module is not packaged by Debian).

The format: an 8-byte little-endian header length n, n bytes of JSON
mapping each tensor's name to {"dtype", "shape", "data_offsets": [begin,
end]} (offsets into the data after the header) and "__metadata__" to a
string map, then the tensors' little-endian bytes.
"""

import json
import struct

import torch

_DTYPES = {"F32": torch.float32, "F64": torch.float64, "F16": torch.float16,
           "BF16": torch.bfloat16, "I64": torch.int64, "I32": torch.int32}


def read_safetensors(path):
    """Returns ({name: tensor}, metadata) of the file at path."""
    with open(path, "rb") as f:
        b = f.read()
    if len(b) < 8:
        raise ValueError("%s: too short for a safetensors file" % path)
    (n,) = struct.unpack("<Q", b[:8])
    if 8 + n > len(b):
        raise ValueError("%s: header length %d past the end of the file" % (path, n))
    header = json.loads(b[8:8 + n].decode("utf-8"))
    meta = header.pop("__metadata__", {}) or {}
    data = b[8 + n:]
    tensors = {}
    for name, e in header.items():
        dt = _DTYPES.get(e["dtype"])
        if dt is None:
            raise ValueError("%s: tensor %r has dtype %s, not one this reader knows" % (path, name, e["dtype"]))
        lo, hi = e["data_offsets"]
        t = torch.frombuffer(bytearray(data[lo:hi]), dtype=dt) if hi > lo else torch.empty(0, dtype=dt)
        tensors[name] = t.reshape(e["shape"]).clone()
    return tensors, meta
