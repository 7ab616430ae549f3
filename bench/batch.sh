#!/usr/bin/env bash
# What a batch of send/recv pairs costs against the same pairs unbatched (issue 9 item 6). Not a test: CPU and
# memory depend on the machine. For each size N (default 5000 50000 150000) writes a 2-rank trace of N pairs
# 0 -> 1 of 1 KiB, once as one batch (`batch=1` on every op) and once without, runs each REPEAT times (default
# 3, alternating) on tests/data/node8.yaml and prints the median CPU seconds (user + sys) and median peak RSS
# (GNU time) of each, and their ratios (batched / unbatched). With OLD=path/to/another/dtsim, that binary's
# batched run is measured in the same loop (alternating with the others) and printed beside, old -> new.
#   bench/batch.sh [path/to/dtsim] [REPEAT]     (from the repo root; SIZES="5000 50000" picks the sizes)
set -euo pipefail
DTSIM=${1:-build/dtsim}
REPEAT=${2:-3}
SIZES=${SIZES:-5000 50000 150000}
OLD=${OLD:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/lib.sh"

# pairs N SUFFIX: N sends 0 -> 1 and the N matching receives, each op line ending in SUFFIX
pairs() {
  printf 'dtsim_trace 1\nranks 2\nrank 0\n'
  awk -v n="$1" -v b="$2" 'BEGIN { for (i = 0; i < n; i++) print "s0 send peer=1 bytes=1024" b }'
  echo "rank 1"
  awk -v n="$1" -v b="$2" 'BEGIN { for (i = 0; i < n; i++) print "s0 recv peer=0 bytes=1024" b }'
}
# measure BINARY TRACE ACC: one run, its CPU seconds and peak RSS (KiB) appended to ACC
measure() { bench_time "$3" /dev/null "$1" run tests/data/node8.yaml "$2"; }

if [ -n "$OLD" ]; then
  printf '%-8s  %-22s  %-22s  %-22s  %s\n' pairs "old batched CPU s, RSS" "batched CPU s, RSS" "unbatched CPU s, RSS" \
    "ratio to unbatched CPU, RSS: old -> new"
else
  printf '%-8s  %-22s  %-22s  %s\n' pairs "batched CPU s, RSS" "unbatched CPU s, RSS" "ratio CPU, RSS"
fi
for n in $SIZES; do
  pairs "$n" " batch=1" >"$tmp/batched.dtt"
  pairs "$n" "" >"$tmp/unbatched.dtt"
  : >"$tmp/batched"
  : >"$tmp/unbatched"
  : >"$tmp/old"
  for _ in $(seq "$REPEAT"); do
    [ -z "$OLD" ] || measure "$OLD" "$tmp/batched.dtt" "$tmp/old"
    measure "$DTSIM" "$tmp/batched.dtt" "$tmp/batched"
    measure "$DTSIM" "$tmp/unbatched.dtt" "$tmp/unbatched"
  done
  cb=$(bench_col 1 "$tmp/batched") cu=$(bench_col 1 "$tmp/unbatched")
  mb=$(bench_col 2 "$tmp/batched") mu=$(bench_col 2 "$tmp/unbatched")
  if [ -n "$OLD" ]; then
    co=$(bench_col 1 "$tmp/old") mo=$(bench_col 2 "$tmp/old")
    awk -v n="$n" -v co="$co" -v mo="$mo" -v cb="$cb" -v cu="$cu" -v mb="$mb" -v mu="$mu" 'BEGIN {
      d = cu > 0 ? cu : 1
      printf "%-8d  %6.2f s %8.1f MiB  %6.2f s %8.1f MiB  %6.2f s %8.1f MiB  CPU x%.2f -> x%.2f, RSS x%.2f -> x%.2f\n",
        n, co, mo / 1024, cb, mb / 1024, cu, mu / 1024, co / d, cb / d, mo / mu, mb / mu }'
  else
    awk -v n="$n" -v cb="$cb" -v cu="$cu" -v mb="$mb" -v mu="$mu" 'BEGIN {
      r = cu > 0 ? cb / cu : 0
      printf "%-8d  %6.2f s %8.1f MiB  %6.2f s %8.1f MiB  x%.2f, x%.2f\n", n, cb, mb / 1024, cu, mu / 1024, r, mb / mu }'
  fi
done
