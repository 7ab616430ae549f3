#!/usr/bin/env bash
# Times dtsim on the benchmark scenarios and prints wall time and peak memory for each (GNU time).
# Not a test: numbers depend on the machine. usage: bench/run.sh [path/to/dtsim]   (from the repo root)
set -euo pipefail
DTSIM=${1:-build/dtsim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# a ring all-reduce of 256 MiB over N ranks, one line per rank
gen_allreduce() {
  awk -v n="$1" 'BEGIN { print "dtsim_trace 1"; print "ranks " n; print "group world 0-" n - 1;
    for (r = 0; r < n; r++) { print "rank " r; print "s0 allreduce group=world bytes=268435456" } }'
}
gen_allreduce 1024 >"$tmp/allreduce1024.dtt"

measure() {
  local label=$1
  shift
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$@" >"$tmp/out" 2>"$tmp/err" || { echo "$label: failed"; cat "$tmp/err"; return 1; }
  read -r wall rss <"$tmp/time"
  printf "%-44s wall %6.2f s   peak RSS %7.1f MiB   %s\n" "$label" "$wall" "$(awk -v k="$rss" 'BEGIN{print k/1024}')" \
    "$(jq -r '"makespan " + (.makespan_s|tostring) + " s"' "$tmp/out" 2>/dev/null || true)"
}

measure "shipped capture on dgx-a100" "$DTSIM" run --json platforms/dgx-a100.yaml \
  traces/samples/allreduce_bcast_2ranks_rank0.json.gz
measure "1,024-GPU ring all-reduce 256 MiB, flow" "$DTSIM" run --json bench/h100-128node.yaml "$tmp/allreduce1024.dtt"
measure "1,024-GPU ring all-reduce 256 MiB, step" "$DTSIM" run --json --fidelity step bench/h100-128node.yaml \
  "$tmp/allreduce1024.dtt"
# generated GPT-3 175B iteration (docs/generator.md): TP 8 x PP 16 x DP 8 = 1,024 GPUs, 192 micro-batches, and
# DP 32 = 4,096 GPUs (48 micro-batches) on a 3-level fat-tree
measure "gen gpt3-175b tp8 pp16 dp8 (1,024 GPUs)" "$DTSIM" run --json bench/h100-128node.yaml --gen gpt3-175b \
  --tp 8 --pp 16 --dp 8
measure "gen gpt3-175b tp8 pp16 dp32 (4,096 GPUs)" "$DTSIM" run --json bench/h100-512node.yaml --gen gpt3-175b \
  --tp 8 --pp 16 --dp 32
# nccl-tests-style sweep (docs/bench.md): all_reduce 8 B to 8 GiB (-f 2, 31 sizes) on all 1,024 GPUs, one simulation
measure "bench all_reduce 8 B-8 GiB, 1,024 GPUs, flow" "$DTSIM" bench all_reduce --platform bench/h100-128node.yaml \
  --gpus 1024 -b 8 -e 8G -f 2 --json
# the same with the NCCL model (nccl: section with its defaults: 8 channels over the NICs, auto algorithm/protocol)
{ cat bench/h100-128node.yaml; echo "nccl: {}"; } >"$tmp/h100-128node-nccl.yaml"
measure "bench all_reduce 8 B-8 GiB, 1,024 GPUs, NCCL model" "$DTSIM" bench all_reduce \
  --platform "$tmp/h100-128node-nccl.yaml" --gpus 1024 -b 8 -e 8G -f 2 --json
