#!/usr/bin/env bash
# How dtsim's cost grows with the work (bench/README.md). Not a test: wall and CPU depend on the machine; read the
# ratios between rows of one run. Prints, per row: wall and CPU seconds, peak RSS (GNU time), the simulated
# iteration, and the CPU ratio to the previous row of its section.
#   bench/scaling.sh [path/to/dtsim] [MAX_GPUS]     (from the repo root; MAX_GPUS default 16384)
# Environment: EXACT=1 runs every row again with --exact and prints the relative difference of the simulated
# iteration (the shortcuts' exactness, docs/replay.md); SECTIONS="gpt gpt8 target bench moe mlperf megascale" picks
# sections (mlperf and megascale are not in the default list: their rows grow with DP and take minutes from 1,024
# GPUs up).
set -euo pipefail
DTSIM=${1:-build/dtsim}
MAX_GPUS=${2:-16384}
SECTIONS=${SECTIONS:-gpt gpt8 target bench moe}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prev_cpu=""

# row LABEL SIMKEY -- dtsim args...: SIMKEY is a jq expression giving the simulated time from the JSON report
row() {
  local label=$1 key=$2
  shift 3
  if ! /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$DTSIM" "$@" >"$tmp/out" 2>"$tmp/err"; then
    echo "$label: failed"
    tail -3 "$tmp/err"
    return 1
  fi
  local wall user sys rss cpu sim ratio
  read -r wall user sys rss <"$tmp/time"
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
  sim=$(jq -r "$key" "$tmp/out")
  ratio=$([ -n "$prev_cpu" ] && awk -v a="$cpu" -v b="$prev_cpu" 'BEGIN { printf "%.2fx", (b > 0 ? a / b : 0) }' || echo "-")
  printf "%-46s wall %8.2f s  CPU %8.2f s  RSS %7.0f MiB  sim %-22s CPU ratio %s\n" "$label" "$wall" "$cpu" \
    "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" "$sim" "$ratio"
  prev_cpu=$cpu
  if [ "${EXACT:-0}" = 1 ]; then
    cp "$tmp/out" "$tmp/fast"
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$DTSIM" "$@" --exact >"$tmp/out" 2>"$tmp/err"
    read -r wall user sys rss <"$tmp/time"
    local simx
    simx=$(jq -r "$key" "$tmp/out")
    printf "%-46s wall %8.2f s  CPU %8.2f s  --exact: sim %s, rel. diff %s\n" "  the same with --exact" "$wall" \
      "$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')" "$simx" \
      "$(awk -v a="$sim" -v b="$simx" 'BEGIN { d = a - b; if (d < 0) d = -d; printf "%.2g", b != 0 ? d / b : d }')"
  fi
}

platform_of() { # GPUs -> the shipped rail fat-tree with that many (8-GPU nodes)
  echo "bench/h100-$(($1 / 8))node.yaml"
}

ITER='.iterations_s[0]'
for s in $SECTIONS; do
  case $s in
  gpt) # GPT-3 175B weak scaling as NVIDIA's DGX Cloud runs it: TP 4, PP 8, interleaved 12, global batch 2 x GPUs
    echo "== GPT-3 175B weak scaling: TP 4, PP 8, VP 12, global batch = 2 x GPUs, rail fat-trees"
    prev_cpu=""
    for g in 128 256 512 1024 2048 4096 8192 16384; do
      [ "$g" -le "$MAX_GPUS" ] || break
      row "gpt3-175b $g GPUs" "$ITER" -- run --json "$(platform_of "$g")" --gen gpt3-175b --tp 4 --pp 8 \
        --dp $((g / 32)) --schedule interleaved --virtual-stages 12 --global-batch $((2 * g))
    done
    ;;
  gpt8) # weak scaling with TP 8 in a node (shortcuts: closed-form TP rings, folded TP ranks), global batch 1.5 x GPUs
    echo "== GPT-3 175B weak scaling: TP 8, PP 16, DP = GPUs / 128, global batch = 1.5 x GPUs, rail fat-trees"
    prev_cpu=""
    for g in 1024 2048 4096 8192 16384; do
      [ "$g" -le "$MAX_GPUS" ] || break
      row "gpt3-175b tp8 pp16 $g GPUs" "$ITER" -- run --json "$(platform_of "$g")" --gen gpt3-175b --tp 8 --pp 16 \
        --dp $((g / 128)) --global-batch $((3 * g / 2))
    done
    ;;
  target) # the issue's 1,024-GPU target: TP 8, PP 16, DP 8 (192 micro-batches per pipeline)
    echo "== GPT-3 175B TP 8, PP 16, DP 8 on bench/h100-128node.yaml (1,024 GPUs)"
    prev_cpu=""
    row "gpt3-175b tp8 pp16 dp8" "$ITER" -- run --json bench/h100-128node.yaml --gen gpt3-175b --tp 8 --pp 16 --dp 8
    ;;
  bench) # nccl-tests sweep on 1,024 GPUs: textbook model, then the NCCL model (nccl: {} appended)
    echo "== bench all_reduce 8 B - 8 GiB (31 sizes), 1,024 GPUs, bench/h100-128node.yaml; ratio: NCCL / textbook"
    prev_cpu=""
    { cat bench/h100-128node.yaml; echo "nccl: {}"; } >"$tmp/h100-128node-nccl.yaml"
    row "all_reduce textbook" '"8B " + (.[0].time_us|tostring) + " us"' -- bench all_reduce \
      --platform bench/h100-128node.yaml --gpus 1024 -b 8 -e 8G -f 2 --json
    row "all_reduce NCCL model" '"8B " + (.[0].time_us|tostring) + " us"' -- bench all_reduce \
      --platform "$tmp/h100-128node-nccl.yaml" --gpus 1024 -b 8 -e 8G -f 2 --json
    ;;
  moe) # all-to-all heavy: 1 GiB all-to-all on 1,024 single-GPU nodes behind one switch (about a million flows),
    # then a mixture-of-experts iteration with expert parallelism across 8 nodes
    echo "== all-to-all"
    prev_cpu=""
    row "bench alltoall 1 GiB, 1,024 x 1 GPU, 1 switch" '(.[0].time_us|tostring) + " us"' -- bench alltoall \
      --platform bench/switch-1024x1.yaml --gpus 1024 -b 1G -e 1G --json
    prev_cpu=""
    row "MoE neox-1.3b 64 experts ep 64, 128 GPUs" "$ITER" -- run --json bench/h100-16node.yaml --gen neox-1.3b \
      --experts 64 --top-k 2 --ep 64 --tp 1 --pp 1 --dp 128
    ;;
  mlperf) # the MLPerf v3.1 end-to-end row scaled down (validation/references/e2e_iterations.csv: GPT-3 175B on
    # 10,752 GPUs, TP 4, PP 8, VP 12, micro-batch 1, 8 micro-batches per pipeline, FP8, ZeRO 1, SP, TP and p2p overlap,
    # per-link accounting off, as `dtsim validate --e2e` runs it) with DP 1, 2, 4, ... on validation/platforms/eos-like.yaml
    # cut to 4 x DP nodes: the work per rank is fixed, so each row doubles the work
    echo "== MLPerf v3.1 GPT-3 175B analogue: TP 4, PP 8, VP 12, mbs 1, 8 micro-batches per pipeline, eos-like cut to 4 x DP nodes"
    prev_cpu=""
    for dp in 1 2 4 8 16 32 64 128 256; do
      g=$((32 * dp))
      [ "$g" -le "$MAX_GPUS" ] || break
      sed "s/^nodes: 1344$/nodes: $((4 * dp))/" validation/platforms/eos-like.yaml >"$tmp/eos-$dp.yaml"
      row "mlperf-like dp $dp, $g GPUs" "$ITER" -- run --json --no-links "$tmp/eos-$dp.yaml" --gen gpt3-175b --tp 4 \
        --pp 8 --dp "$dp" --microbatch 1 --global-batch $((8 * dp)) --seq 2048 --dtype fp8 --zero 1 --sp --tp-overlap \
        --p2p-overlap --schedule interleaved --virtual-stages 12
    done
    ;;
  megascale) # the MegaScale end-to-end row scaled down (validation/references/e2e_iterations.csv: GPT-3 175B with a
    # 64K vocabulary on 12,288 A100, TP 8, PP 8, micro-batch 1, 32 micro-batches per pipeline, bf16, ZeRO 1, SP, TP
    # and p2p overlap, the parameter all-gathers prefetched a model chunk ahead, as `dtsim validate --e2e` runs it)
    # at BLOOM's calibrated A100 bf16 efficiency (0.701, validation/results/e2e-bigscience-tr11.json) with DP 1, 8,
    # 32, 64 on the whole megascale-a100.yaml, at 1F1B and at 6 virtual stages (the row's): each row multiplies the work
    echo "== MegaScale GPT-3 175B analogue: TP 8, PP 8, mbs 1, 32 micro-batches per pipeline, megascale-a100 at efficiency 0.701"
    sed 's/^  efficiency: 1.0$/  efficiency: 0.701/' validation/platforms/megascale-a100.yaml >"$tmp/ms.yaml"
    for sched in "1f1b" "interleaved --virtual-stages 6"; do
      prev_cpu=""
      for dp in 1 8 32 64; do
        g=$((64 * dp))
        [ "$g" -le "$MAX_GPUS" ] || break
        pg=""
        if [ "$dp" -gt 1 ]; then pg="--overlap-param-gather --param-gather-prefetch chunk"; fi
        # shellcheck disable=SC2086 # $sched and $pg are lists of arguments
        row "megascale-like ${sched%% *} dp $dp, $g GPUs" "$ITER" -- run --json --no-links "$tmp/ms.yaml" --gen gpt3-175b \
          --vocab 64000 --tp 8 --pp 8 --dp "$dp" --microbatch 1 --global-batch $((32 * dp)) --seq 2048 --dtype bf16 \
          --zero 1 --sp --tp-overlap --p2p-overlap $pg --schedule $sched
      done
    done
    ;;
  *)
    echo "unknown section '$s' (expected gpt, gpt8, target, bench, moe, mlperf, megascale)" >&2
    exit 2
    ;;
  esac
done
