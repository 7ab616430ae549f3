#!/usr/bin/env bash
# What the per-link accounting costs (bench/README.md, docs/report.md "Per-link accounting"). Not a test: CPU and
# memory depend on the machine. Runs each row REPEAT times (default 3) with the accounting and with --no-links,
# alternating, and prints the median CPU seconds (user + sys) and the median peak RSS (GNU time) of each, their
# ratios (with / without), and the median of the per-pair CPU ratios (each run with the accounting over the run
# without it just after it: robust to a load that drifts during the loop).
#   bench/links.sh [path/to/dtsim] [REPEAT]     (from the repo root)
# Environment: ROWS="1024 128" picks rows: 1024, GPT-3 175B TP 8, PP 16, DP 8 on bench/h100-128node.yaml (1,024
# GPUs, bench/scaling.sh's 'target' row); 128, GPT-3 175B TP 4, PP 8, VP 12, DP 4 on bench/h100-16node.yaml (128
# GPUs, its 'gpt' section's first row). CACHEGRIND=1: instead, each row once with and once without under valgrind's
# cachegrind with a 1 MiB last-level cache (load-independent; a few minutes per row), printing instructions and
# last-level misses and their ratios. OLD=path/to/other/dtsim: the same for that binary too, its runs alternating
# with the first one's in the same loop (so that both see the same load), one line each ('old', 'new').
set -euo pipefail
DTSIM=${1:-build/dtsim}
REPEAT=${2:-3}
ROWS=${ROWS:-1024 128}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/lib.sh"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { print (b > 0 ? a / b : 0) }'; }

bins=("new:$DTSIM")
[ -n "${OLD:-}" ] && bins=("old:$OLD" "new:$DTSIM")

for r in $ROWS; do
  case $r in
  1024) label="gpt3-175b tp8 pp16 dp8, 1,024 GPUs"
    args=(run --json bench/h100-128node.yaml --gen gpt3-175b --tp 8 --pp 16 --dp 8) ;;
  128) label="gpt3-175b tp4 pp8 vp12 dp4, 128 GPUs"
    args=(run --json bench/h100-16node.yaml --gen gpt3-175b --tp 4 --pp 8 --dp 4 --schedule interleaved
      --virtual-stages 12 --global-batch 256) ;;
  *) echo "unknown row '$r' (expected 1024, 128)" >&2; exit 2 ;;
  esac
  if [ "${CACHEGRIND:-0}" = 1 ]; then
    for b in "${bins[@]}"; do
      name=${b%%:*} bin=${b#*:}
      for mode in with without; do
        extra=()
        [ $mode = without ] && extra=(--no-links)
        valgrind --tool=cachegrind --cache-sim=yes --LL=1048576,16,64 --cachegrind-out-file=/dev/null \
          "$bin" "${args[@]}" "${extra[@]}" >/dev/null 2>"$tmp/cg.$mode"
        # totals: "I refs: N" and "LL misses: N (...)"
        awk '/I +refs:/ { gsub(",", "", $4); i = $4 } /LL misses:/ { gsub(",", "", $4); m = $4 } END { print i, m }' \
          "$tmp/cg.$mode" >"$tmp/$mode"
      done
      read -r iw mw <"$tmp/with"
      read -r io mo <"$tmp/without"
      printf "%-38s %s: instructions with %s without %s ratio %.3f; LL misses with %s without %s ratio %.3f\n" \
        "$label" "$name" "$iw" "$io" "$(ratio "$iw" "$io")" "$mw" "$mo" "$(ratio "$mw" "$mo")"
    done
    continue
  fi
  for b in "${bins[@]}"; do
    : >"$tmp/${b%%:*}.with"
    : >"$tmp/${b%%:*}.without"
  done
  for i in $(seq "$REPEAT"); do
    for b in "${bins[@]}"; do
      name=${b%%:*} bin=${b#*:}
      for mode in with without; do
        extra=()
        [ $mode = without ] && extra=(--no-links)
        bench_time "$tmp/$name.$mode" "$tmp/out.$name.$mode" "$bin" "${args[@]}" "${extra[@]}"
      done
    done
  done
  for b in "${bins[@]}"; do
    name=${b%%:*}
    w=$tmp/$name.with o=$tmp/$name.without
    cw=$(bench_col 1 "$w") co=$(bench_col 1 "$o")
    mw=$(bench_col 2 "$w") mo=$(bench_col 2 "$o")
    # per pair: run i with over run i without (the two runs next to each other)
    pairs=$(paste -d' ' "$w" "$o" | awk '{ print ($3 > 0 ? $1 / $3 : 0) }' | bench_median)
    printf "%-38s %s: with: CPU %6.2f s RSS %5.0f MiB  without: CPU %6.2f s RSS %5.0f MiB  ratio CPU %.3f RSS %.3f  " \
      "$label" "$name" "$cw" "$(ratio "$mw" 1024)" "$co" "$(ratio "$mo" 1024)" "$(ratio "$cw" "$co")" \
      "$(ratio "$mw" "$mo")"
    printf "median of pair ratios CPU %.3f  " "$pairs"
    echo "(CPU s of each run: with $(cut -d' ' -f1 "$w" | tr '\n' ' ')/ without $(cut -d' ' -f1 "$o" | tr '\n' ' '))"
    # the accounting must not change the simulation: the reports agree but for the links key
    if [ "$(jq -S -c 'del(.links)' "$tmp/out.$name.with")" != "$(jq -S -c . "$tmp/out.$name.without")" ]; then
      echo "  $name: the reports with and without --no-links differ beyond the links key" >&2
      exit 1
    fi
  done
done
