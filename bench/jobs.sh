#!/usr/bin/env bash
# Several jobs on one fabric (docs/whatif.md): two generated GPT-3 175B jobs of 512 GPUs each (TP 8, PP 8, DP 8)
# on the 1,024 GPUs of bench/h100-128node.yaml, side by side and interleaved node by node. Not a test: prints,
# per row, wall time and peak RSS of the whole command (GNU time), the CPU seconds of the together run and of
# the alone runs (dtsim's own note), and each job's iteration alone and together.
#   bench/jobs.sh [path/to/dtsim]      (from the repo root; EXACT=1 adds the rows with --exact)
set -euo pipefail
DTSIM=${1:-build/dtsim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
J="--gen gpt3-175b --tp 8 --pp 8 --dp 8 --global-batch 64"
EVEN=$(seq -s, 0 2 127)
ODD=$(seq -s, 1 2 127)

row() {
  local label=$1
  shift
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$DTSIM" run --json "$@" >"$tmp/out" 2>"$tmp/err"
  local wall rss
  read -r wall rss <"$tmp/time"
  printf "%-28s wall %7.2f s  RSS %6.0f MiB  %s\n" "$label" "$wall" "$((rss / 1024))" \
    "$(grep -o 'the together run took.*' "$tmp/err")"
  jq -r '.jobs[] | "    job \(.name): alone \(.alone_s) s, together \(.together_s) s, slowdown \(.slowdown)"' "$tmp/out"
}

for exact in "" ${EXACT:+--exact}; do
  row "side by side ${exact}" $exact bench/h100-128node.yaml --job a $J --job b $J
  row "interleaved ${exact}" $exact bench/h100-128node.yaml --job a $J --nodes "$EVEN" --job b $J --nodes "$ODD"
done
