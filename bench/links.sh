#!/usr/bin/env bash
# What the per-link accounting costs (bench/README.md, docs/report.md "Per-link accounting"). Not a test: CPU and
# memory depend on the machine. Runs each row REPEAT times (default 3) with the accounting and with --no-links,
# alternating, and prints the median CPU seconds (user + sys) and the median peak RSS (GNU time) of each, and
# their ratios (with / without).
#   bench/links.sh [path/to/dtsim] [REPEAT]     (from the repo root)
# Environment: ROWS="1024 128" picks rows: 1024, GPT-3 175B TP 8, PP 16, DP 8 on bench/h100-128node.yaml (1,024
# GPUs, bench/scaling.sh's 'target' row); 128, GPT-3 175B TP 4, PP 8, VP 12, DP 4 on bench/h100-16node.yaml (128
# GPUs, its 'gpt' section's first row). CACHEGRIND=1: instead, each row once with and once without under valgrind's
# cachegrind with a 1 MiB last-level cache (load-independent; a few minutes per row), printing instructions and
# last-level misses and their ratios.
set -euo pipefail
DTSIM=${1:-build/dtsim}
REPEAT=${2:-3}
ROWS=${ROWS:-1024 128}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/lib.sh"

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
    for mode in with without; do
      extra=()
      [ $mode = without ] && extra=(--no-links)
      valgrind --tool=cachegrind --cache-sim=yes --LL=1048576,16,64 --cachegrind-out-file=/dev/null \
        "$DTSIM" "${args[@]}" "${extra[@]}" >/dev/null 2>"$tmp/cg.$mode"
      # totals: "I refs: N" and "LL misses: N (...)"
      awk '/I +refs:/ { gsub(",", "", $4); i = $4 } /LL misses:/ { gsub(",", "", $4); m = $4 } END { print i, m }' \
        "$tmp/cg.$mode" >"$tmp/$mode"
    done
    read -r iw mw <"$tmp/with"
    read -r io mo <"$tmp/without"
    printf "%-38s instructions with %s without %s ratio %.3f; LL misses with %s without %s ratio %.3f\n" "$label" \
      "$iw" "$io" "$(awk -v a="$iw" -v b="$io" 'BEGIN { print a / b }')" "$mw" "$mo" \
      "$(awk -v a="$mw" -v b="$mo" 'BEGIN { print a / b }')"
    continue
  fi
  : >"$tmp/with"
  : >"$tmp/without"
  for i in $(seq "$REPEAT"); do
    for mode in with without; do
      extra=()
      [ $mode = without ] && extra=(--no-links)
      bench_time "$tmp/$mode" "$tmp/out.$mode" "$DTSIM" "${args[@]}" "${extra[@]}"
    done
  done
  cw=$(bench_col 1 "$tmp/with") co=$(bench_col 1 "$tmp/without")
  mw=$(bench_col 2 "$tmp/with") mo=$(bench_col 2 "$tmp/without")
  printf "%-38s with: CPU %6.2f s RSS %5.0f MiB  without: CPU %6.2f s RSS %5.0f MiB  ratio CPU %.3f RSS %.3f  " \
    "$label" "$cw" "$(awk -v k="$mw" 'BEGIN { print k / 1024 }')" "$co" "$(awk -v k="$mo" 'BEGIN { print k / 1024 }')" \
    "$(awk -v a="$cw" -v b="$co" 'BEGIN { print (b > 0 ? a / b : 0) }')" "$(awk -v a="$mw" -v b="$mo" 'BEGIN { print a / b }')"
  echo "(CPU s of each run: with $(cut -d' ' -f1 "$tmp/with" | tr '\n' ' ')/ without $(cut -d' ' -f1 "$tmp/without" | tr '\n' ' '))"
  # the accounting must not change the simulation: the reports agree but for the links key
  if [ "$(jq -S -c 'del(.links)' "$tmp/out.with")" != "$(jq -S -c . "$tmp/out.without")" ]; then
    echo "  the reports with and without --no-links differ beyond the links key" >&2
    exit 1
  fi
done
