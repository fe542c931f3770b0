#!/usr/bin/env bash
# serve_load.sh — issue 51's load test: the MLP AdamNODE (bench/mlpfamily's
# base configuration) and the MNIST AdamNODE (bench/mnistnode) served by
# the Go server (package serve, through bench/cmd/loadtest serve) with and
# without batching, and by the minimal batched PyTorch loop
# (bench/serve_torch.py) with and without batching, the same weights on
# both sides, each measured by bench/cmd/loadtest run on loopback.
#
#   TORCHDIFFEQ=/path/to/torchdiffeq bench/serve_load.sh [-d SECONDS]
#       [-w SECONDS] [-c "1 8 64"] [-m "mlp mnist"] [-s SERVERS]
#       [-n MEMORY_REQUESTS] [-o DIR]
#
# Defaults: rounds of 5 s after 1 s of warm-up at each concurrency of
# "1 8 64", both models, the servers "go-batched go-unbatched
# torch-batched torch-unbatched", DIR out/serve-load. Each round is also
# capped at 20000 requests. Every server runs alone (one at a time) on
# 127.0.0.1, started fresh for its model, Go with GOMAXPROCS as the
# machine's, PyTorch with torch.set_num_threads(THREADS) (default 2).
# After the rounds, with -n N > 0 (default 100000), N requests at
# concurrency 64 against the batched Go server of the MLP AdamNODE, its
# resident memory read before, every second during and after them
# (memory.jsonl).
# Writes DIR/results.jsonl (one line per server, model and concurrency:
# throughput, p50/p95/p99/max latency, the Go server's batches, mean rows
# and mean solve time, the server's RSS, the load average), DIR/table.md
# and DIR/env.txt.
set -euo pipefail

dur=5 warm=1 conc="1 8 64" modelset="mlp mnist" servers="go-batched go-unbatched torch-batched torch-unbatched"
memreq=100000 out=out/serve-load threads=${THREADS:-2} python=${PYTHON:-/usr/bin/python3}
usage() { sed -n '9,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while getopts "d:w:c:m:s:n:o:h" opt; do
	case $opt in
	d) dur=$OPTARG ;;
	w) warm=$OPTARG ;;
	c) conc=$OPTARG ;;
	m) modelset=$OPTARG ;;
	s) servers=$OPTARG ;;
	n) memreq=$OPTARG ;;
	o) out=$OPTARG ;;
	*) usage ;;
	esac
done
: "${TORCHDIFFEQ:?set TORCHDIFFEQ to a directory holding the torchdiffeq package}"
export TORCHDIFFEQ
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
go build -o "$out/loadtest" "$here/cmd/loadtest"
lt=$out/loadtest
port=18090
pid=

stop() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		pid=
	fi
}
trap stop EXIT

# start SERVER MODEL: starts the server in the background and waits for it.
start() {
	local server=$1 model=$2 w=$out/$2.safetensors
	port=$((port + 1))
	case $server in
	go-batched) "$lt" serve -model "$model" -weights "$w" -addr 127.0.0.1:$port >"$out/server.log" 2>&1 & ;;
	go-unbatched) "$lt" serve -model "$model" -weights "$w" -addr 127.0.0.1:$port -no-batching >"$out/server.log" 2>&1 & ;;
	torch-batched) "$python" "$here/serve_torch.py" --model "$model" --weights "$w" --addr 127.0.0.1:$port --threads "$threads" >"$out/server.log" 2>&1 & ;;
	torch-unbatched) "$python" "$here/serve_torch.py" --model "$model" --weights "$w" --addr 127.0.0.1:$port --threads "$threads" --no-batching >"$out/server.log" 2>&1 & ;;
	*) echo "serve_load.sh: unknown server $server" >&2; exit 2 ;;
	esac
	pid=$!
	for _ in $(seq 200); do
		if curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then return 0; fi
		if ! kill -0 "$pid" 2>/dev/null; then cat "$out/server.log" >&2; echo "serve_load.sh: $server did not start" >&2; exit 1; fi
		sleep 0.1
	done
	echo "serve_load.sh: $server did not answer /healthz in 20 s" >&2
	exit 1
}

{
	date -u
	grep -m1 'model name' /proc/cpuinfo || true
	echo "cores: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg)"
	go version
	"$python" -c 'import torch; print("torch", torch.__version__)'
} >"$out/env.txt"

: >"$out/results.jsonl"
for model in $modelset; do
	"$lt" weights -model "$model" -out "$out/$model.safetensors"
	for server in $servers; do
		start "$server" "$model"
		"$lt" run -url "http://127.0.0.1:$port" -model "$model" -concurrency "${conc// /,}" \
			-duration "${dur}s" -warmup "${warm}s" -pid "$pid" -label "$server" | tee -a "$out/results.jsonl"
		stop
	done
done

if [ "$memreq" -gt 0 ]; then
	"$lt" weights -model mlp -out "$out/mlp.safetensors"
	start go-batched mlp
	"$lt" run -url "http://127.0.0.1:$port" -model mlp -concurrency 64 -requests "$memreq" -duration 10m \
		-warmup 2s -pid "$pid" -rss-every 1s -label go-batched-memory | tee "$out/memory.jsonl"
	stop
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/env.txt"

"$python" - "$out" <<'EOF'
import json, sys
d = sys.argv[1]
rows = [json.loads(l) for l in open(d + "/results.jsonl")]
with open(d + "/table.md", "w") as f:
    f.write("| model | server | clients | req/s | p50 ms | p95 ms | p99 ms | batch rows | batch solve ms | errors | load1 |\n")
    f.write("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    for r in rows:
        f.write("| %s | %s | %d | %.0f | %.1f | %.1f | %.1f | %s | %s | %d | %.1f |\n" % (
            r["model"], r["label"], r["concurrency"], r["rps"], r["p50_ms"], r["p95_ms"], r["p99_ms"],
            "%.1f" % r["mean_batch_rows"] if r.get("mean_batch_rows") else "",
            "%.2f" % r["mean_batch_solve_ms"] if r.get("mean_batch_solve_ms") else "",
            r["errors"], r["load1"]))
print(open(d + "/table.md").read())
EOF
