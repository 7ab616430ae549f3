#!/usr/bin/env bash
# End-to-end tests of hostile input (issue 9): every case ends in a right answer or exit 2 with the file, the
# position and the limit, never a signal, a hang or a false diagnosis. Costs that once grew quadratically are
# measured at n and 4n (CPU seconds of the dtsim process): a linear cost grows about 4x, a quadratic one 16x,
# so a ratio above 8 fails. Closed forms use tests/data/node8.yaml (alpha = 2us, B = 100 GB/s).
# usage: tests/e2e_limits.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: e2e_limits.sh DTSIM}
source "$(dirname "$0")/e2e-lib.sh"

# cpu FILE CMD...: runs CMD (output discarded) and writes its user+system CPU seconds to FILE
cpu() {
  local out=$1
  shift
  local TIMEFORMAT='%U %S'
  { time "$@" >/dev/null 2>&1; } 2>"$out.t"
  awk '{ print $1 + $2 }' "$out.t" >"$out"
}
# ratio_ok SMALL LARGE: the cost at 4n over the cost at n stays below 8 (a floor of 0.05 s keeps noise out)
ratio_ok() { awk -v a="$(cat "$1")" -v b="$(cat "$2")" 'BEGIN { if (a < 0.05) a = 0.05; exit !(b / a < 8) }'; }

# batch N: one batch of N send/recv pairs from rank 0 to rank 1
batch() {
  echo "dtsim_trace 1"
  echo "ranks 2"
  echo "rank 0"
  awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) print "s0 send peer=1 bytes=1024 batch=1" }'
  echo "rank 1"
  awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) print "s0 recv peer=0 bytes=1024 batch=1" }'
}

# --- batches: heap scratch (a batch of 150,000 pairs was SIGSEGV), linear wait, own completion per pair
batch 150000 >"$tmp/b150k.dtt"
"$DTSIM" run --json tests/data/node8.yaml "$tmp/b150k.dtt" >"$tmp/b150k.json" 2>"$tmp/b150k.err"; rc=$?
check "a batch of 150,000 pairs runs (exit 0, every op counted)" \
  '[ $rc -eq 0 ] && [ "$(jq -r .by_kind.send.count "$tmp/b150k.json")" = 150000 ]'
batch 10000 >"$tmp/b10k.dtt"
batch 40000 >"$tmp/b40k.dtt"
cpu "$tmp/c10k" "$DTSIM" run tests/data/node8.yaml "$tmp/b10k.dtt"
cpu "$tmp/c40k" "$DTSIM" run tests/data/node8.yaml "$tmp/b40k.dtt"
check "a batch's cost is linear in its pairs (10k vs 40k: $(cat "$tmp/c10k") s, $(cat "$tmp/c40k") s)" \
  'ratio_ok "$tmp/c10k" "$tmp/c40k"'
# 300 pairs 0 -> 1 share rank 0's port (each alpha + 300 S/B) in the batch of a receive from rank 2, which
# sends 1 ms late (alpha + S/B from its issue): spread over helper actors, each pair keeps its own completion
{
  echo "dtsim_trace 1"
  echo "ranks 3"
  echo "rank 0"
  awk 'BEGIN { for (i = 0; i < 300; i++) print "s0 send peer=1 bytes=1048576 batch=1" }'
  echo "s0 recv peer=2 bytes=1048576 batch=1"
  echo "rank 1"
  awk 'BEGIN { for (i = 0; i < 300; i++) print "s0 recv peer=0 bytes=1048576 batch=1" }'
  echo "rank 2"
  echo "s0 delay dur=1ms"
  echo "s0 send peer=0 bytes=1048576"
} >"$tmp/bigskew.dtt"
"$DTSIM" run --json tests/data/node8.yaml "$tmp/bigskew.dtt" >"$tmp/bigskew.json" 2>/dev/null; rc=$?
want=$(awk 'BEGIN { S = 1048576; B = 100e9; printf "%.12g", 300 * (2e-6 + 300 * S / B) + 2e-6 + S / B }')
check "pairs of a large batch are timed on their own" \
  '[ $rc -eq 0 ] && close "$(jq -r .by_kind.send.time_s "$tmp/bigskew.json")" "$want" 1e-6'

finish
