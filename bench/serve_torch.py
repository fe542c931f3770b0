"""serve_torch.py — the PyTorch peer of adamnode's model server: a minimal
batched serving loop in Python, answering the JSON API of package serve
(POST /v1/predict with {"model": M, "input": [...]} or {"inputs": [...]})
so that bench/cmd/loadtest measures both alike.

    TORCHDIFFEQ=/path/to/torchdiffeq python3 bench/serve_torch.py \\
        --model mlp|mnist --weights FILE [--addr 127.0.0.1:8091] \\
        [--max-batch 64] [--max-wait-ms 2] [--threads 2] [--no-batching]

The weights file is the one the Go server loads (loadtest weights): the
MLP AdamNODE of bench/mlpfamily's base configuration (h(1) from h(0) = x,
m(0) = v(0) = 0, dopri5 at its rtol = atol) or the MNIST AdamNODE of
bench/mnistnode (class scores of [1, 28, 28] images; bench/torch_mnist.py's
model). One thread per connection (ThreadingHTTPServer) queues each
request; one worker thread takes the first request in the queue, waits up
to --max-wait-ms for more (up to --max-batch instances), runs them as one
batch under torch.inference_mode() and hands each request its rows.
--no-batching runs each request alone, in the order they arrive.
Listens on loopback only.
"""

import argparse
import json
import os
import queue
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", choices=["mlp", "mnist"], required=True)
    ap.add_argument("--weights", required=True, help="the weights file (loadtest weights -model M -out FILE)")
    ap.add_argument("--addr", default="127.0.0.1:8091", help="host:port on loopback")
    ap.add_argument("--max-batch", type=int, default=64)
    ap.add_argument("--max-wait-ms", type=float, default=2.0)
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    ap.add_argument("--no-batching", action="store_true")
    a = ap.parse_args()
    host = a.addr.rsplit(":", 1)[0]
    if host not in ("127.0.0.1", "localhost", "::1", "[::1]"):
        ap.error("--addr must be a loopback address")
    if a.max_batch < 1 or a.max_wait_ms < 0 or a.threads < 1:
        ap.error("--max-batch and --threads must be at least 1, --max-wait-ms at least 0")
    if a.no_batching:
        a.max_batch = 1
    return a


ARGS = parse_args()
os.environ.setdefault("OMP_NUM_THREADS", str(ARGS.threads))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from peer import import_torchdiffeq, read_safetensors  # noqa: E402

tde = import_torchdiffeq("serve_torch.py")


class MLPAdamNODE(nn.Module):
    """bench/mlpfamily's AdamNODE: f(h, t) an MLP on [h, t] (Linear, tanh or
    the configuration's activation, ..., Linear), h' = -m/s(v),
    m' = sigmoid(r1)(-f - m), v' = sigmoid(r2)(f^2 - v),
    s(v) = sqrt(softplus(v)) + eps; the state (h, m, v) stacked on the
    batch axis."""

    ACTS = {"tanh": torch.tanh, "softplus": F.softplus, "relu": F.relu}

    def __init__(self, cfg, tensors):
        super().__init__()
        if cfg["family"] != "adamnode":
            raise ValueError("serve_torch.py serves the AdamNODE family only, not %r" % cfg["family"])
        self.act = self.ACTS[cfg["act"]]
        self.lins = nn.ModuleList()
        for i in range(cfg["layers"] + 1):
            w, b = tensors["f.%d.weight" % (2 * i + 1)], tensors["f.%d.bias" % (2 * i + 1)]
            lin = nn.Linear(w.shape[1], w.shape[0])
            with torch.no_grad():
                lin.weight.copy_(w)
                lin.bias.copy_(b)
            self.lins.append(lin)
        self.r1 = nn.Parameter(tensors["r1"].clone())
        self.r2 = nn.Parameter(tensors["r2"].clone())
        self.eps = float(torch.tensor(cfg["eps"], dtype=torch.float32))
        self.t = torch.tensor([0.0, cfg["t1"]])
        self.kw = dict(rtol=cfg["rtol"], atol=cfg["atol"], method="dopri5")

    def field(self, t, h):
        x = torch.cat([h, t.to(h.dtype).expand(h.shape[0], 1)], 1)
        for lin in self.lins[:-1]:
            x = self.act(lin(x))
        return self.lins[-1](x)

    def dynamics(self, t, z):
        h, m, v = z.chunk(3, 0)
        g = self.field(t, h)
        s = torch.sqrt(F.softplus(v)) + self.eps
        return torch.cat([-(m / s), -(g + m) * torch.sigmoid(self.r1), (g * g - v) * torch.sigmoid(self.r2)], 0)

    def forward(self, x):
        zero = torch.zeros_like(x)
        z0 = torch.cat([x, zero, zero], 0)
        return tde.odeint(self.dynamics, z0, self.t, **self.kw)[-1].chunk(3, 0)[0]


def load_model():
    tensors, meta = read_safetensors(ARGS.weights)
    if ARGS.model == "mlp":
        if meta.get("format") != "adamnode-mlpfamily/1":
            sys.exit("serve_torch.py: %s is not a weights file of mlpfamily" % ARGS.weights)
        cfg = json.loads(meta["config"])
        return MLPAdamNODE(cfg, tensors), [cfg["d"]]
    from torch_mnist import Model
    if meta.get("format") != "adamnode-mnistnode/1":
        sys.exit("serve_torch.py: %s is not a weights file of mnistnode" % ARGS.weights)
    model = Model(tde.odeint)
    with torch.no_grad():
        for name, p in model.named_go().items():
            p.copy_(tensors[name])
    return model, [1, 28, 28]


class Pending:
    __slots__ = ("x", "done", "y", "err")

    def __init__(self, x):
        self.x, self.done, self.y, self.err = x, threading.Event(), None, None


QUEUE = queue.Queue()


def worker(model):
    while True:
        batch = [QUEUE.get()]
        rows = batch[0].x.shape[0]
        deadline = time.monotonic() + ARGS.max_wait_ms / 1e3
        while rows < ARGS.max_batch:
            left = deadline - time.monotonic()
            try:
                p = QUEUE.get(timeout=left) if left > 0 else QUEUE.get_nowait()
            except queue.Empty:
                break
            batch.append(p)
            rows += p.x.shape[0]
        try:
            with torch.inference_mode():
                y = model(torch.cat([p.x for p in batch], 0))
            off = 0
            for p in batch:
                n = p.x.shape[0]
                p.y = y[off:off + n].tolist()
                off += n
        except Exception as e:  # a failed batch fails its requests, the server goes on
            for p in batch:
                p.err = str(e)
        for p in batch:
            p.done.set()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # The headers and the body go out in two writes: without TCP_NODELAY,
    # Nagle's algorithm and the client's delayed ACK hold the body ~40 ms.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def reply(self, code, obj):
        b = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def do_GET(self):
        if self.path in ("/healthz", "/readyz"):
            self.reply(200, {"status": "ok"})
        else:
            self.reply(404, {"error": {"code": 404, "message": "no endpoint " + self.path}})

    def do_POST(self):
        if self.path != "/v1/predict":
            return self.reply(404, {"error": {"code": 404, "message": "no endpoint " + self.path}})
        try:
            req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            single = "input" in req
            x = torch.tensor([req["input"]] if single else req["inputs"], dtype=torch.float32)
            x = x.reshape([x.shape[0]] + SHAPE)
        except Exception as e:
            return self.reply(400, {"error": {"code": 400, "field": "body", "message": str(e)}})
        p = Pending(x)
        QUEUE.put(p)
        p.done.wait()
        if p.err is not None:
            return self.reply(422, {"error": {"code": 422, "field": "inputs", "message": p.err}})
        if single:
            return self.reply(200, {"model": ARGS.model, "output": p.y[0]})
        self.reply(200, {"model": ARGS.model, "outputs": p.y})


torch.set_num_threads(ARGS.threads)
MODEL, SHAPE = load_model()
MODEL.eval()
threading.Thread(target=worker, args=(MODEL,), daemon=True).start()
host, port = ARGS.addr.rsplit(":", 1)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's default backlog of 5 drops the SYNs of 64 clients
    # connecting at once (each retried after 1 s).
    request_queue_size = 1024


server = Server((host.strip("[]"), int(port)), Handler)
print("serving %s on http://%s (max batch %d, max wait %g ms)" % (ARGS.model, ARGS.addr, ARGS.max_batch, ARGS.max_wait_ms), flush=True)
try:
    server.serve_forever()
except KeyboardInterrupt:
    pass
