#!/usr/bin/env bash
# Side by side: the paper's MNIST AdamNODE (batch 32, dopri5 at 1e-4) in
# adamnode (OpenBLAS build) and in PyTorch + torchdiffeq, alternating the
# two sides for ROUNDS rounds, each run ITERS timed iterations after one
# warm-up; prints every run's JSON line, then a Markdown table of medians.
#
#   TORCHDIFFEQ=/path/to/torchdiffeq-source bench/compare_mnist.sh
#
# Settings (environment): ROUNDS (5), ITERS (3), THREADS (2), MODES
# ("adjoint backprop"), PYTHON (/usr/bin/python3), REPLICAS (1: adamnode's
# data-parallel replicas, each with one worker, splitting the batch — as
# adamnode train --replicas), SHARDS (0: one solve of the batch; k: the
# block solves it as k separate ODEs at once, mnistbench -shards). Run it on
# a quiet machine: both sides use THREADS threads.
# GOTAGS (environment; default "openblas") are the Go build tags: GOTAGS= times
# the default build (no tags, no cgo BLAS); ADAMNODE_CPU=avx2 (or generic) forces
# the Go side onto a slower kernel path (tensor.KernelPath).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
ITERS=${ITERS:-3}
THREADS=${THREADS:-2}
REPLICAS=${REPLICAS:-1}
SHARDS=${SHARDS:-0}
MODES=${MODES:-adjoint backprop}
PYTHON=${PYTHON:-/usr/bin/python3}
python=$PYTHON
. bench/openblas_core.sh
: "${TORCHDIFFEQ:?set TORCHDIFFEQ to the directory holding the torchdiffeq source tree}"
export TORCHDIFFEQ

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
GOTAGS=${GOTAGS-openblas}
go build -tags "$GOTAGS" -o "$work/mnistbench" ./bench/cmd/mnistbench
weights="$work/mnist.safetensors"

for mode in $MODES; do
  GOMAXPROCS=$THREADS OPENBLAS_NUM_THREADS=1 "$work/mnistbench" -out "$weights" -iters 1 -mode "$mode" >/dev/null
  for r in $(seq "$ROUNDS"); do
    GOMAXPROCS=$THREADS OPENBLAS_NUM_THREADS=1 "$work/mnistbench" -iters "$ITERS" -mode "$mode" -replicas "$REPLICAS" -shards "$SHARDS" | tee -a "$work/go-$mode.jsonl"
    OMP_NUM_THREADS=$THREADS "$PYTHON" bench/torch_mnist.py --weights "$weights" --iters "$ITERS" --threads "$THREADS" --mode "$mode" | tee -a "$work/py-$mode.jsonl"
  done
done

echo
echo "cpu: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; OpenBLAS: $(openblas_core) kernels (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}); commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
"$PYTHON" - "$work" "$MODES" "$THREADS" <<'EOF'
import json, statistics, sys
work, modes, threads = sys.argv[1], sys.argv[2].split(), sys.argv[3]
print()
print("| gradient | adamnode s/iter | PyTorch s/iter | ratio (PyTorch/adamnode) | NFE fwd+bwd (adamnode / PyTorch) | peak RSS MB (adamnode / PyTorch) |")
print("|---|---|---|---|---|---|")
for mode in modes:
    g = [json.loads(l) for l in open("%s/go-%s.jsonl" % (work, mode))]
    p = [json.loads(l) for l in open("%s/py-%s.jsonl" % (work, mode))]
    gs = statistics.median(r["iter_seconds"] for r in g)
    ps = statistics.median(r["iter_seconds"] for r in p)
    gn = statistics.median(r["fwd_nfe"] + r["bwd_nfe"] for r in g)
    pn = statistics.median(r["fwd_nfe"] + r["bwd_nfe"] for r in p)
    gm = max(r["peak_rss_mb"] for r in g)
    pm = max(r["peak_rss_mb"] for r in p)
    print("| %s | %.3f | %.3f | %.2fx | %g / %g | %.0f / %.0f |" % (mode, gs, ps, ps / gs, gn, pn, gm, pm))
print()
print("%d threads each side (adamnode: %d replicas); medians over %d runs per side, alternating." % (int(threads), g[0].get("replicas", 1), len(g)))
EOF
