#!/usr/bin/env bash
# gpu.sh — the GPU checks and the side-by-side timings, as one prepared run for
# a lent GPU machine (docs/gpu.md): adamnode, PyTorch + torchdiffeq and JAX +
# diffrax on the same card and the same weights files, alternating.
#
#   bench/gpu.sh prepare           # here: builds into gpu/ what the run needs
#   bench/gpu.sh run [ROUNDS]      # there: checks, then times (default 2 rounds)
#
# prepare (on the development machine, which has Go and torchdiffeq's source
# in $TORCHDIFFEQ) builds the cuda test binary, mnistbench and mlpbench into
# gpu/ (add "/gpu/" to .git/info/exclude and name gpu in the device tool's
# carry), copies torchdiffeq's source to gpu/tdq and writes the weights files
# of the MNIST model and of the MLP configurations in $MLP_CONFIGS (default:
# the base AdamNODE with the adjoint and with backprop, NODE, width 256).
#
# run (on the GPU machine, from the repository's root; nothing is built
# there) writes into $OUT (default out/gpu):
#   cuda-tests.txt  the cuda package's tests on the card (ADAMNODE_CUDA_DIR:
#                   CUDA 13's lib64 under /usr/local and the system's cuDNN,
#                   unless set)
#   mnist.jsonl     the MNIST AdamNODE: adamnode's GPU engine and its CPU
#                   engine on every core, PyTorch on the GPU and on every core
#   mlp.jsonl       each MLP weights file: adamnode on every core (one solve of
#                   the batch), PyTorch on the GPU, diffrax under jax.jit on
#                   the GPU
# each process in turn, ROUNDS times, every line one process's JSON; a process
# that fails or times out leaves its error in the file and the run goes on.
set -u
cd "$(dirname "$0")/.."
mode=${1:-}
case "$mode" in
prepare)
	set -e
	: "${TORCHDIFFEQ:?set TORCHDIFFEQ to the directory holding the torchdiffeq package}"
	mkdir -p gpu/mlpw
	go test -c -o gpu/cuda.test ./cuda
	go build -o gpu/mnistbench ./bench/cmd/mnistbench
	go build -o gpu/mlpbench ./bench/cmd/mlpbench
	rm -rf gpu/tdq && cp -r "$TORCHDIFFEQ" gpu/tdq
	./gpu/mnistbench -out gpu/mnist.safetensors -iters 1 -warmup 1 >/dev/null
	for c in ${MLP_CONFIGS:-adamnode_w64_l2_tanh_b512_adjoint adamnode_w64_l2_tanh_b512_backprop node_w64_l2_tanh_b512_adjoint adamnode_w256_l2_tanh_b512_adjoint}; do
		./gpu/mlpbench -config "$c" -out gpu/mlpw -save-only >/dev/null
	done
	du -sh gpu
	;;
run)
	rounds=${2:-2}
	out=${OUT:-out/gpu}
	mkdir -p "$out"
	export TORCHDIFFEQ=$PWD/gpu/tdq
	export ADAMNODE_CUDA_DIR=${ADAMNODE_CUDA_DIR:-$(ls -d /usr/local/cuda-13*/lib64 /usr/local/cuda/lib64 2>/dev/null | head -1):/usr/lib/x86_64-linux-gnu}
	cores=$(nproc)
	(cd cuda && timeout 300 ../gpu/cuda.test -test.v -test.count=1; echo "rc=$?") >"$out/cuda-tests.txt" 2>&1
	grep -E '^(--- FAIL|FAIL|ok|PASS|rc=)' "$out/cuda-tests.txt"
	: >"$out/mnist.jsonl"
	: >"$out/mlp.jsonl"
	for r in $(seq "$rounds"); do
		for dev in cuda cpu; do
			GOMAXPROCS=$cores timeout 120 ./gpu/mnistbench -device $dev -iters 10 -warmup 2 2>&1 | tail -1 >>"$out/mnist.jsonl"
			timeout 180 python3 bench/torch_mnist.py --weights gpu/mnist.safetensors --device $dev --iters 10 --warmup 2 --threads "$cores" 2>&1 | tail -1 >>"$out/mnist.jsonl"
		done
		for f in gpu/mlpw/*.safetensors; do
			GOMAXPROCS=$cores timeout 120 ./gpu/mlpbench -load "$f" -iters 10 -warmup 2 -shard-solve 0 2>&1 | tail -1 >>"$out/mlp.jsonl"
			timeout 180 python3 bench/torch_mlp.py "$f" --iters 10 --warmup 2 --threads "$cores" --device cuda 2>&1 | tail -1 >>"$out/mlp.jsonl"
			timeout 180 python3 bench/jax_mlp.py "$f" --iters 10 --warmup 2 2>&1 | tail -1 >>"$out/mlp.jsonl"
		done
	done
	python3 - "$out" <<'EOF'
import json, sys
for name in ("mnist.jsonl", "mlp.jsonl"):
    for line in open(f"{sys.argv[1]}/{name}"):
        try:
            d = json.loads(line)
        except ValueError:
            print(name, "not JSON:", line.strip()[:200])
            continue
        print(name, d.get("config", "mnist"), d.get("side"), d.get("device", d.get("backend")),
              "%.2f ms" % (1e3 * (d.get("iter_seconds") or 0)), d.get("error", ""))
EOF
	;;
*)
	echo "usage: bench/gpu.sh prepare | run [ROUNDS]" >&2
	exit 2
	;;
esac
