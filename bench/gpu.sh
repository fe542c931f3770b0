#!/usr/bin/env bash
# gpu.sh — the GPU checks and the side-by-side timings, as one prepared run for
# a lent GPU machine (docs/gpu.md): adamnode, PyTorch + torchdiffeq and JAX +
# diffrax on the same card and the same weights files, alternating.
#
#   bench/gpu.sh prepare           # here: builds into gpu/ what the run needs
#   bench/gpu.sh run [ROUNDS]      # there: checks, then times (default 2 rounds),
#                                  # all of it within BUDGET_S seconds (460)
#
# prepare (on the development machine, which has Go and torchdiffeq's source
# in $TORCHDIFFEQ) builds the cuda test binary, mnistbench and mlpbench into
# gpu/ (add "/gpu/" to .git/info/exclude and name gpu in the device tool's
# carry), copies torchdiffeq's source to gpu/tdq and writes the weights files
# of the MNIST model (gpu/mnist.safetensors with its batch of 32,
# gpu/mnist-b256.safetensors with one of 256) and of the MLP configurations
# in $MLP_CONFIGS (default: the base AdamNODE with the adjoint and with
# backprop, NODE, width 256).
#
# run (on the GPU machine, from the repository's root; nothing is built
# there) writes into $OUT (default out/gpu):
#   cuda-tests.txt  the cuda package's tests on the card, for at most
#                   CUDA_TESTS_S seconds (150; CUDA_TESTS: a -test.run
#                   pattern, default all) (ADAMNODE_CUDA_DIR: CUDA 13's
#                   lib64 under /usr/local and the system's cuDNN, unless set)
#   mnist.jsonl     the MNIST AdamNODE (adjoint), ROUNDS rounds: at batch 32
#                   adamnode's GPU engine and PyTorch on the GPU, then both on
#                   every core; at batch 256 both on the GPU; each line with
#                   its batch, loss_first (the same on both sides: PyTorch
#                   checks it before timing) and on the GPU device_peak_mb
#                   (adamnode: cuda.Stats' PeakBytes; PyTorch:
#                   torch.cuda.max_memory_allocated)
#   mlp.jsonl       each MLP weights file, MLP_ROUNDS rounds (1): adamnode on
#                   every core (one solve of the batch), PyTorch on the GPU,
#                   diffrax under jax.jit on the GPU
# each process in turn, every line one process's JSON; a process that fails,
# times out or finds the budget spent leaves a line with its error and the
# run goes on. Then a summary, a line a process. PYTHON: the Python with
# torch (and jax), default python3.
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
	./gpu/mnistbench -batch 256 -out gpu/mnist-b256.safetensors -iters 1 -warmup 1 >/dev/null
	for c in ${MLP_CONFIGS:-adamnode_w64_l2_tanh_b512_adjoint adamnode_w64_l2_tanh_b512_backprop node_w64_l2_tanh_b512_adjoint adamnode_w256_l2_tanh_b512_adjoint}; do
		./gpu/mlpbench -config "$c" -out gpu/mlpw -save-only >/dev/null
	done
	du -sh gpu
	;;
run)
	rounds=${2:-2}
	out=${OUT:-out/gpu}
	budget=${BUDGET_S:-460}
	began=$SECONDS
	mkdir -p "$out"
	export TORCHDIFFEQ=$PWD/gpu/tdq
	export ADAMNODE_CUDA_DIR=${ADAMNODE_CUDA_DIR:-$(ls -d /usr/local/cuda-13*/lib64 /usr/local/cuda/lib64 2>/dev/null | head -1):/usr/lib/x86_64-linux-gnu}
	cores=$(nproc)
	py=${PYTHON:-python3}
	# step FILE LIMIT CMD...: CMD's last line of output into FILE, CMD run
	# for at most LIMIT seconds and never past the budget; a failure, a
	# timeout or a step the budget leaves no room for is a JSON line with
	# its error and the command.
	step() {
		local file=$1 limit=$2 left o rc
		shift 2
		left=$((budget - (SECONDS - began)))
		if ((left < 20)); then
			printf '{"error": "skipped: %d s of the %d s budget left", "cmd": "%s"}\n' "$left" "$budget" "$*" >>"$file"
			return
		fi
		o=$(timeout $((limit < left ? limit : left)) "$@" 2>&1)
		rc=$?
		o=$(printf '%s\n' "$o" | tail -1)
		if ((rc != 0)) || [ -z "$o" ]; then
			o=$(printf '%s' "$o" | tr -d '"\\' | cut -c1-300)
			((rc == 124)) && o="timed out; $o"
			printf '{"error": "rc=%d: %s", "cmd": "%s"}\n' "$rc" "$o" "$*" >>"$file"
			return
		fi
		printf '%s\n' "$o" >>"$file"
	}
	# The cuda package's tests on the card, for at most CUDA_TESTS_S
	# seconds (CUDA_TESTS: a -test.run pattern; default all of them).
	(cd cuda && timeout "${CUDA_TESTS_S:-150}" ../gpu/cuda.test -test.v -test.count=1 ${CUDA_TESTS:+-test.run "$CUDA_TESTS"}; echo "rc=$?") >"$out/cuda-tests.txt" 2>&1
	grep -E '^(--- FAIL|FAIL|ok|PASS|rc=)' "$out/cuda-tests.txt"
	: >"$out/mnist.jsonl"
	: >"$out/mlp.jsonl"
	# The MNIST AdamNODE, adamnode then PyTorch, ROUNDS rounds: batch 32 on
	# the card and on every core, batch 256 on the card (on the cores alone
	# it would take minutes).
	for r in $(seq "$rounds"); do
		for b in 32 256; do
			w=gpu/mnist.safetensors
			[ "$b" = 32 ] || w=gpu/mnist-b$b.safetensors
			for dev in cuda cpu; do
				[ "$b" = 32 ] || [ "$dev" = cuda ] || continue
				step "$out/mnist.jsonl" 120 env GOMAXPROCS="$cores" ./gpu/mnistbench -device $dev -batch "$b" -iters 10 -warmup 2
				step "$out/mnist.jsonl" 180 "$py" bench/torch_mnist.py --weights "$w" --batch "$b" --device $dev --iters 10 --warmup 2 --threads "$cores"
			done
		done
	done
	# The MLP weights files, MLP_ROUNDS rounds (default 1), in what the
	# budget leaves.
	for r in $(seq "${MLP_ROUNDS:-1}"); do
		for f in gpu/mlpw/*.safetensors; do
			step "$out/mlp.jsonl" 90 env GOMAXPROCS="$cores" ./gpu/mlpbench -load "$f" -iters 10 -warmup 2 -shard-solve 0
			step "$out/mlp.jsonl" 120 "$py" bench/torch_mlp.py "$f" --iters 10 --warmup 2 --threads "$cores" --device cuda
			step "$out/mlp.jsonl" 120 "$py" bench/jax_mlp.py "$f" --iters 10 --warmup 2
		done
	done
	"$py" - "$out" <<'EOF'
import json, sys
for name in ("mnist.jsonl", "mlp.jsonl"):
    for line in open(f"{sys.argv[1]}/{name}"):
        try:
            d = json.loads(line)
        except ValueError:
            print(name, "not JSON:", line.strip()[:200])
            continue
        if "error" in d:
            print(name, "error:", d["error"][:200], "--", d.get("cmd", ""))
            continue
        peak = d.get("device_peak_mb")
        print(name, d.get("config", "mnist"), d.get("side"), d.get("device", d.get("backend")),
              "batch %s" % d["batch"] if "batch" in d else "",
              "%.2f ms" % (1e3 * (d.get("iter_seconds") or 0)),
              "loss_first %.7g" % d["loss_first"] if "loss_first" in d else "",
              "device_peak_mb %.1f" % peak if peak is not None else "", d.get("error", ""))
EOF
	echo "run: $((SECONDS - began)) s of its $budget s budget"
	;;
*)
	echo "usage: bench/gpu.sh prepare | run [ROUNDS]" >&2
	exit 2
	;;
esac
