#!/usr/bin/env bash
# compare_mlp.sh — the MLP neural-ODE family (package bench/mlpfamily) timed
# in Go (this repository, OpenBLAS build) and in PyTorch + torchdiffeq
# (bench/torch_mlp.py), side by side.
#
#   TORCHDIFFEQ=/tmp/torchdiffeq bench/compare_mlp.sh [-r ROUNDS] [-i ITERS]
#       [-w WARMUP] [-t "THREADS ..."] [-d float32|float64] [-o DIR] [CONFIG ...]
#
# Defaults: 3 rounds, 10 timed iterations after 2 warm-up ones, threads
# "1 2", dtype float32, DIR out/mlp-compare (out/mlp-compare-float64 with
# -d float64), every configuration (mlpbench -list).
# -d float64 runs every chosen configuration in float64 on both sides: the
# Go side builds and trains it in float64 (mlpbench -dtype float64), its
# weights file holds F64 tensors and "dtype": "float64" in its config, and
# the PyTorch side builds its model in torch.float64 from them and checks it
# at float64's tolerances (bench/torch_mlp.py). Every result line carries
# "dtype", and table.md's headings name float64.
# REPLICAS=k (environment) has the Go side split each batch over k
# data-parallel replicas of one worker each (mlpbench -replicas).
# SHARD_SOLVE=k has the Go side's block solve each batch as k separate ODEs
# at once (mlpbench -shard-solve; odeblock.Block.Shards); the default is the
# thread count, one solve per core, and SHARD_SOLVE=0 one solve of the batch.
#
# 1. Builds bench/cmd/mlpbench with -tags openblas into DIR.
# 2. Writes every configuration's weights file into DIR/weights and has the
#    PyTorch side check all of them (right-hand side and initial loss against
#    the Go reference values) before anything is timed: one failure stops
#    the run.
# 3. For each thread count, each configuration, each round: one Go process
#    and one PyTorch process, one after the other, alternating who goes
#    first (Go in odd rounds); each process runs WARMUP + ITERS training
#    iterations and reports the median of the ITERS. Checkpoint-mode
#    configurations have no torchdiffeq equivalent and run on the Go side
#    only. Go runs with GOMAXPROCS=T (its OpenBLAS single-threaded: the engine
#    splits GEMMs over GOMAXPROCS workers), PyTorch with
#    torch.set_num_threads(T), OMP_NUM_THREADS=T and OPENBLAS_NUM_THREADS=B,
#    B from the environment variable TORCH_BLAS_THREADS (default 1, the Go
#    side's OpenBLAS setting; "T" means B = T), and OMP_WAIT_POLICY from
#    TORCH_OMP_WAIT_POLICY (default: unset, libgomp's own policy, whose
#    spinning workers make a 2-thread iteration 10-40x slower when another
#    process shares the 2 cores; PASSIVE avoids that — see bench/README.md).
#    Each process gets RUN_TIMEOUT seconds (default 300); a run that fails
#    or times out is reported on stderr and in DIR/failures.txt, and the
#    comparison goes on.
# 4. Writes DIR/results.jsonl (every run's JSON line, with "round" and
#    "load1", the 1-minute load average as the run started, added),
#    DIR/env.txt (date, CPU, versions, load before and after each thread
#    count) and DIR/table.md (bench/mlp_table.py: medians over the rounds).
# GOTAGS (environment; default "openblas") are the Go build tags: GOTAGS= times
# the default build (no tags, no cgo BLAS); ADAMNODE_CPU=avx2 (or generic) forces
# the Go side onto a slower kernel path (tensor.KernelPath).
set -euo pipefail

rounds=3 iters=10 warmup=2 threads="1 2" out= dtype=float32
usage() { sed -n '6,7p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while getopts "r:i:w:t:d:o:h" opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	i) iters=$OPTARG ;;
	w) warmup=$OPTARG ;;
	t) threads=$OPTARG ;;
	d) dtype=$OPTARG ;;
	o) out=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
case $dtype in
float32) out=${out:-out/mlp-compare} ;;
float64) out=${out:-out/mlp-compare-float64} ;;
*) echo "compare_mlp.sh: -d $dtype: want float32 or float64" >&2; usage ;;
esac

cd "$(dirname "$0")/.."
python=${PYTHON:-/usr/bin/python3}
. bench/openblas_core.sh
if [ -z "${TORCHDIFFEQ:-}" ]; then
	echo "compare_mlp.sh: set TORCHDIFFEQ to a directory holding the torchdiffeq package:" >&2
	echo "  git clone https://github.com/rtqichen/torchdiffeq /tmp/torchdiffeq   # or any copy of its source" >&2
	echo "  export TORCHDIFFEQ=/tmp/torchdiffeq" >&2
	exit 1
fi
export TORCHDIFFEQ

mkdir -p "$out/weights"
bin=$out/mlpbench
GOTAGS=${GOTAGS-openblas}
go build -tags "$GOTAGS" -o "$bin" ./bench/cmd/mlpbench
if [ $# -gt 0 ]; then
	configs=("$@")
else
	mapfile -t configs < <("$bin" -list)
fi

{
	echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "cpu: $(lscpu | sed -n 's/^Model name: *//p')"
	echo "openblas: $(openblas_core) kernels (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset})"
	echo "cores: $(nproc)"
	echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (working tree differs from it)')"
	echo "go: $(go version) (mlpbench built with -tags \"$GOTAGS\"; kernel path ${ADAMNODE_CPU:-the fastest})"
	echo "python: $($python --version 2>&1)"
	echo "torch: $($python -c 'import torch; print(torch.__version__)')"
	echo "torchdiffeq: $TORCHDIFFEQ ($(sed -n 's/^__version__ = //p' "$TORCHDIFFEQ/torchdiffeq/__init__.py"))"
	echo "dtype: $dtype (both sides)"
	echo "go block shards (SHARD_SOLVE): ${SHARD_SOLVE:-the thread count}, replicas: ${REPLICAS:-1}"
	echo "rounds: $rounds, iters: $iters, warmup: $warmup, threads: $threads, PyTorch OpenBLAS threads: ${TORCH_BLAS_THREADS:-1}, PyTorch OMP_WAIT_POLICY: ${TORCH_OMP_WAIT_POLICY:-unset}"
	echo "load before the checks: $(uptime)"
} >"$out/env.txt"

echo "writing and checking ${#configs[@]} weights files" >&2
files=()
for c in "${configs[@]}"; do
	"$bin" -config "$c" -dtype "$dtype" -save-only -out "$out/weights"
	files+=("$out/weights/$c.safetensors")
done
"$python" bench/torch_mlp.py --check-only "${files[@]}" >"$out/checks.jsonl"

res=$out/results.jsonl
: >"$res"
tag() { "$python" -c 'import json, sys
r, load = int(sys.argv[1]), float(sys.argv[2])
for line in sys.stdin:
    d = json.loads(line); d["round"] = r; d["load1"] = load; print(json.dumps(d))' "$1" "$2"; }
load1() { cut -d" " -f1 /proc/loadavg; }
tmo=${RUN_TIMEOUT:-300}
: >"$out/failures.txt"
failed() { echo "compare_mlp.sh: $1 run of $3 ($2 threads, round $4) failed or ran past ${tmo}s" | tee -a "$out/failures.txt" >&2; }
go_run() {
	local l
	l=$(load1)
	GOMAXPROCS=$1 OPENBLAS_NUM_THREADS=1 timeout "$tmo" "$bin" -config "$2" -dtype "$dtype" -iters "$iters" -warmup "$warmup" -replicas "${REPLICAS:-1}" -shard-solve "${SHARD_SOLVE:-$1}" |
		tag "$3" "$l" >>"$res" || failed go "$@"
}
torch_run() ( # a subshell: OMP_WAIT_POLICY stays out of the Go runs
	local l b=${TORCH_BLAS_THREADS:-1}
	[ "$b" = T ] && b=$1
	l=$(load1)
	local pol=${TORCH_OMP_WAIT_POLICY:-}
	if [ -n "$pol" ]; then export OMP_WAIT_POLICY=$pol; else unset OMP_WAIT_POLICY; fi
	timeout "$tmo" "$python" bench/torch_mlp.py --threads "$1" --blas-threads "$b" --iters "$iters" --warmup "$warmup" \
		"$out/weights/$2.safetensors" | tag "$3" "$l" >>"$res" || failed pytorch "$@"
)

for t in $threads; do
	echo "threads $t: load before: $(uptime)" >>"$out/env.txt"
	for c in "${configs[@]}"; do
		echo "threads $t: $c" >&2
		for r in $(seq 1 "$rounds"); do
			if [[ $c == *_checkpoint ]]; then
				go_run "$t" "$c" "$r"
			elif [ $((r % 2)) -eq 1 ]; then
				go_run "$t" "$c" "$r"
				torch_run "$t" "$c" "$r"
			else
				torch_run "$t" "$c" "$r"
				go_run "$t" "$c" "$r"
			fi
		done
	done
	echo "threads $t: load after: $(uptime)" >>"$out/env.txt"
done

"$python" bench/mlp_table.py "$res" >"$out/table.md"
echo "wrote $out/table.md, $res, $out/env.txt" >&2
