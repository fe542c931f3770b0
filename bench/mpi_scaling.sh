#!/usr/bin/env bash
# Data-parallel scaling of one training epoch on this machine: the paper's
# MNIST AdamNODE (dopri5 1e-4, adjoint, global batch 32) on a Fashion-MNIST
# subset, as one process with one worker, one process with two, one
# process with two replicas of one worker (--replicas 2), and mpirun's 1
# and 2 ranks of one worker each (GOMAXPROCS=1, one OpenBLAS
# thread); then MPI_Allreduce alone on 2 ranks. Needs Open MPI
# (libopenmpi-dev openmpi-bin) and dataset-fashion-mnist.
#
#   bench/mpi_scaling.sh [SUBSET]      (default 1024 training images)
set -euo pipefail
cd "$(dirname "$0")/.."
SUBSET=${1:-1024}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
TAGS=mpi
if printf 'int main(void){return 0;}' | cc -x c - -lopenblas -o /dev/null 2>/dev/null; then TAGS="mpi openblas"; fi
go build -tags "$TAGS" -o "$TMP/adamnode" ./cmd/adamnode
go test -c -tags mpi -o "$TMP/allreduce.test" ./distributed
ARGS=(train --model adamnode --subset "$SUBSET" --test-subset 64 --epochs 1 --quiet)

seconds() { awk -F, '$2 == "train" { print $8 }' "$1/adamnode.csv"; }
row() { printf '| %s | %s | %.1f |\n' "$1" "$2" "$(seconds "$3")"; }

echo "| setting | ranks × workers | epoch of $SUBSET images, s |"
echo "|---|---|---|"
GOMAXPROCS=1 OPENBLAS_NUM_THREADS=1 "$TMP/adamnode" "${ARGS[@]}" --out "$TMP/p1" >/dev/null
row "one process" "1 × 1" "$TMP/p1"
GOMAXPROCS=2 OPENBLAS_NUM_THREADS=2 "$TMP/adamnode" "${ARGS[@]}" --out "$TMP/p2" >/dev/null
row "one process" "1 × 2" "$TMP/p2"
GOMAXPROCS=2 OPENBLAS_NUM_THREADS=1 "$TMP/adamnode" "${ARGS[@]}" --replicas 2 --out "$TMP/r2" >/dev/null
row "one process, --replicas 2" "2 × 1" "$TMP/r2"
for np in 1 2; do
  mpirun --oversubscribe --bind-to none -np "$np" -x GOMAXPROCS=1 -x OPENBLAS_NUM_THREADS=1 \
    "$TMP/adamnode" "${ARGS[@]}" --distributed --out "$TMP/m$np" >"$TMP/m$np.log"
  row "mpirun --distributed" "$np × 1" "$TMP/m$np"
  grep 'all-reduce' "$TMP/m$np.log" || true
done
echo
echo "MPI_Allreduce alone, 2 ranks:"
mpirun --oversubscribe --bind-to none -np 2 "$TMP/allreduce.test" -test.run '^$' -test.bench AllReduce -test.benchtime 200x | grep '^Benchmark'
