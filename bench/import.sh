#!/usr/bin/env bash
# Import speed and peak memory of the log and trace importers on large synthetic captures (bench/gen_captures.py).
# Not a test. usage: bench/import.sh [path/to/dtsim] [MB per format, default 100]   (from the repo root)
# Prints, per format: input MB (uncompressed), CPU seconds (user + sys) of `dtsim import --explain` (parse,
# build and validate the trace; nothing written), MB/s = input / CPU seconds, and peak resident memory.
set -euo pipefail
DTSIM=${1:-build/dtsim}
MB=${2:-100}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$(dirname "$0")/gen_captures.py" "$tmp" "$MB"

measure() {
  local label=$1 bytes=$2
  shift 2
  /usr/bin/time -f "%U %S %M" -o "$tmp/time" "$DTSIM" import --explain "$@" >"$tmp/out" 2>"$tmp/err" ||
    { echo "$label: failed"; cat "$tmp/err"; return 1; }
  read -r user sys rss <"$tmp/time"
  awk -v l="$label" -v b="$bytes" -v u="$user" -v s="$sys" -v k="$rss" -v ops="$(grep '^trace:' "$tmp/out")" \
    'BEGIN { c = u + s; printf "%-16s %7.1f MB  cpu %6.2f s  %7.1f MB/s  peak RSS %7.1f MiB   %s\n", l, b / 1e6, c, b / 1e6 / c, k / 1024, ops }'
}
size() { cat "$@" | wc -c; }

measure "nccl-log" "$(size "$tmp/nccl.log")" "$tmp/nccl.log"
measure "nccl-inspector" "$(size "$tmp"/node1-pid*.log)" "$tmp"/node1-pid*.log
measure "deepspeed" "$(size "$tmp/deepspeed.log")" --world 64 --group-size allgather=8 --group-size reducescatter=8 "$tmp/deepspeed.log"
measure "chakra" "$(size "$tmp"/trace.*.et)" "$tmp"/trace.*.et
