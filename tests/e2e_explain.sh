#!/usr/bin/env bash
# End-to-end tests of the teaching aids: SimGrid log categories (--log), --explain and --plot. Expected values
# come from closed forms with the constants of the shipped test platforms, never from an earlier run.
# usage: tests/e2e_explain.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: e2e_explain.sh DTSIM}
source "$(dirname "$0")/e2e-lib.sh"

# tests/data/node2.yaml: 2 GPUs, NVSwitch 10 GB/s, 2 us, textbook: a 2-rank ring all-reduce of S bytes takes
# 2(n-1)a + 2(n-1)/n S/B = 2a + S/B
S=40000000
{ echo "dtsim_trace 1"; echo "ranks 2"; echo "group dp0 0-1"
  for r in 0 1; do echo "rank $r"; echo "s0 allreduce group=dp0 bytes=$S"; done; } >"$tmp/ar2.dtt"
want=$(awk -v S=$S 'BEGIN { printf "%.17g", 2 * 2e-6 + S / 10e9 }')

# --- logs: one category per replay module, thresholds through --log
"$DTSIM" run --json tests/data/node2.yaml "$tmp/ar2.dtt" >"$tmp/plain.json" 2>/dev/null
"$DTSIM" run --json --log dtsim_replay.thres:verbose --log dtsim_coll.thres:verbose tests/data/node2.yaml \
  "$tmp/ar2.dtt" >"$tmp/log.json" 2>"$tmp/log.err"; rc=$?
check "--log exits 0" '[ $rc -eq 0 ]'
check "--log leaves stdout unchanged" 'cmp -s "$tmp/plain.json" "$tmp/log.json"'
line=$(grep "dtsim_replay/VERBOSE" "$tmp/log.err")
check "dtsim_replay logs the instance once ($line)" '[ "$(grep -c "dtsim_replay/VERBOSE" "$tmp/log.err")" = 1 ]'
check "dtsim_replay: kind, group, size, algorithm" 'echo "$line" | grep -q "allreduce #0 on dp0 (2 ranks): $S bytes, ring/-, arrival 0 s"'
got=$(echo "$line" | sed -n 's/.*, end \([0-9.e+-]*\) s.*/\1/p')
check "dtsim_replay: end $got = 2a + S/B = $want" 'close "$got" "$want" 1e-8'
check "dtsim_coll logs the choice" 'grep "dtsim_coll/VERBOSE" "$tmp/log.err" | grep -q "allreduce #0 on dp0 (2 ranks): $S bytes, last member arrived at 0 s: ring/-"'
"$DTSIM" run --json tests/data/node2.yaml "$tmp/ar2.dtt" 2>"$tmp/quiet.err" >/dev/null
check "no --log: nothing logged" '! grep -q "VERBOSE" "$tmp/quiet.err"'
"$DTSIM" run --json --log dtsim_platform.thres:verbose tests/data/node2.yaml "$tmp/ar2.dtt" 2>"$tmp/plat.err" >/dev/null
check "dtsim_platform: 2 hosts" 'grep -q "dtsim_platform/VERBOSE.*built 2 hosts" "$tmp/plat.err"'
for bad in nosuch.thres:debug dtsim.thres:loud dtsim dtsim.thres dtsim.fmt:%m; do
  "$DTSIM" run --log "$bad" tests/data/node2.yaml "$tmp/ar2.dtt" >/dev/null 2>"$tmp/bad.err"; rc=$?
  check "--log $bad is exit 2 with a message" '[ $rc -eq 2 ] && grep -q "^dtsim run: --log" "$tmp/bad.err"'
done

finish
