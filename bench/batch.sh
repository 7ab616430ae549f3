#!/usr/bin/env bash
# What a batch of send/recv pairs costs against the same pairs unbatched (issue 9 item 6). Not a test: CPU and
# memory depend on the machine. For each size N (default 5000 50000 150000) writes a 2-rank trace of N pairs
# 0 -> 1 of 1 KiB, once as one batch (`batch=1` on every op) and once without, runs each REPEAT times (default
# 3, alternating) on tests/data/node8.yaml and prints the median CPU seconds (user + sys) and median peak RSS
# (GNU time) of each, and their ratios (batched / unbatched).
#   bench/batch.sh [path/to/dtsim] [REPEAT]     (from the repo root; SIZES="5000 50000" picks the sizes)
set -euo pipefail
DTSIM=${1:-build/dtsim}
REPEAT=${2:-3}
SIZES=${SIZES:-5000 50000 150000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# pairs N SUFFIX: N sends 0 -> 1 and the N matching receives, each op line ending in SUFFIX
pairs() {
  printf 'dtsim_trace 1\nranks 2\nrank 0\n'
  awk -v n="$1" -v b="$2" 'BEGIN { for (i = 0; i < n; i++) print "s0 send peer=1 bytes=1024" b }'
  echo "rank 1"
  awk -v n="$1" -v b="$2" 'BEGIN { for (i = 0; i < n; i++) print "s0 recv peer=0 bytes=1024" b }'
}

printf '%-8s  %-22s  %-22s  %s\n' pairs "batched CPU s, RSS" "unbatched CPU s, RSS" "ratio CPU, RSS"
for n in $SIZES; do
  pairs "$n" " batch=1" >"$tmp/batched.dtt"
  pairs "$n" "" >"$tmp/unbatched.dtt"
  : >"$tmp/batched"
  : >"$tmp/unbatched"
  for _ in $(seq "$REPEAT"); do
    for mode in batched unbatched; do
      /usr/bin/time -f "%U %S %M" -o "$tmp/time" "$DTSIM" run tests/data/node8.yaml "$tmp/$mode.dtt" >/dev/null 2>&1
      read -r user sys rss <"$tmp/time"
      awk -v u="$user" -v s="$sys" -v m="$rss" 'BEGIN { printf "%.2f %d\n", u + s, m }' >>"$tmp/$mode"
    done
  done
  cb=$(cut -d' ' -f1 "$tmp/batched" | median) cu=$(cut -d' ' -f1 "$tmp/unbatched" | median)
  mb=$(cut -d' ' -f2 "$tmp/batched" | median) mu=$(cut -d' ' -f2 "$tmp/unbatched" | median)
  awk -v n="$n" -v cb="$cb" -v cu="$cu" -v mb="$mb" -v mu="$mu" 'BEGIN {
    r = cu > 0 ? cb / cu : 0
    printf "%-8d  %6.2f s %8.1f MiB  %6.2f s %8.1f MiB  x%.2f, x%.2f\n", n, cb, mb / 1024, cu, mu / 1024, r, mb / mu }'
done
