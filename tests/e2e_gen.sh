#!/usr/bin/env bash
# End-to-end tests of `dtsim gen` and `dtsim run --gen`: a generated trace written to per-rank files and replayed
# gives the same makespan as the in-memory one; --summary prints the closed-form volumes, computed here by hand;
# bad flags exit 2.
# usage: tests/e2e_gen.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: e2e_gen.sh DTSIM}
source "$(dirname "$0")/e2e-lib.sh"

GEN="neox-19m --tp 2 --pp 2 --dp 2 --global-batch 32"
check "help lists gen" '"$DTSIM" help | grep -q "^  gen "'
check "help gen lists the flags" '"$DTSIM" help gen | grep -q -- "--virtual-stages"'

# --- written trace equals the in-memory one
"$DTSIM" gen $GEN -o "$tmp/tr/" 2>"$tmp/gen.err"; rc=$?
check "gen -o DIR/ exits 0" '[ $rc -eq 0 ]'
check "gen writes one file per rank" '[ "$(ls "$tmp/tr" | wc -l)" -eq 8 ]'
"$DTSIM" run --json platforms/dgx-a100.yaml "$tmp/tr/" >"$tmp/a.json" 2>/dev/null; rc1=$?
"$DTSIM" run --json platforms/dgx-a100.yaml --gen $GEN >"$tmp/b.json" 2>/dev/null; rc2=$?
check "run on the files and run --gen exit 0" '[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ]'
a=$(jq -r .makespan_s "$tmp/a.json"); b=$(jq -r .makespan_s "$tmp/b.json")
check "same makespan from files ($a) and --gen ($b)" '[ -n "$a" ] && [ "$a" = "$b" ]'
check "run --gen reports 8 ranks" '[ "$(jq -r .ranks "$tmp/b.json")" = 8 ]'
check "same by_kind" '[ "$(jq -c .by_kind "$tmp/a.json")" = "$(jq -c .by_kind "$tmp/b.json")" ]'
"$DTSIM" gen $GEN -o "$tmp/one.dtt" 2>/dev/null
check "gen -o FILE writes one trace" 'head -1 "$tmp/one.dtt" | grep -q "^dtsim_trace 1"'
check "gen -o - streams to stdout" '"$DTSIM" gen $GEN -o - 2>/dev/null | grep -c "^rank " | grep -qx 8'

# --- summary: TP/PP message b*s*h*e = 4*2048*512*2 = 8 MiB; gradients per GPU of stage 0 (by hand):
# layers 3 x (QKV 512*1536/2 + proj 512*512/2 + MLP 2*512*2048/2 + norms 4*512) + embedding Vp*512/2 with the
# vocabulary 50277 padded to a multiple of 128 * tp = 256: Vp = 197 * 256 = 50432
m=$(awk 'BEGIN { l = 512*1536/2 + 512*512/2 + 2*512*2048/2 + 4*512; print 3*l + 50432*512/2 }')
"$DTSIM" gen $GEN --summary >"$tmp/sum.txt" 2>&1; rc=$?
check "summary exits 0" '[ $rc -eq 0 ]'
check "summary prints the TP message 8 MiB" 'grep -q "TP message b\*s\*h\*e *8 MiB" "$tmp/sum.txt"'
check "summary prints the PP message 8 MiB" 'grep -q "PP message b\*s\*h\*e *8 MiB" "$tmp/sum.txt"'
check "summary prints the gradient parameters ($m)" 'grep -q "($m parameters per GPU)" "$tmp/sum.txt"'
check "summary has DP, TP and PP rows and the histogram" 'grep -q "^DP " "$tmp/sum.txt" && grep -q "^TP " "$tmp/sum.txt" && grep -q "^PP " "$tmp/sum.txt" && grep -q "message sizes" "$tmp/sum.txt"'
"$DTSIM" gen neox-19m --dp 4 --global-batch 16 --zero 3 --summary >"$tmp/z3.txt" 2>&1
check "ZeRO-3 summary names the 1.5x closed form" 'grep -q "ZeRO-3 ~1.5" "$tmp/z3.txt" && grep -q "^ZeRO " "$tmp/z3.txt"'

# --- bad input exits 2 with a message
"$DTSIM" gen neox-19m --tpp 2 -o "$tmp/x" >/dev/null 2>"$tmp/e1"; rc=$?
check "unknown flag exits 2" '[ $rc -eq 2 ] && grep -q "unknown option" "$tmp/e1"'
"$DTSIM" gen neox-19m --tp 3 -o "$tmp/x" >/dev/null 2>"$tmp/e2"; rc=$?
check "tp not dividing heads exits 2" '[ $rc -eq 2 ] && grep -q "does not divide the 8 attention heads" "$tmp/e2"'
"$DTSIM" gen neox-19 --summary >/dev/null 2>"$tmp/e3"; rc=$?
check "unknown preset exits 2 with a hint" '[ $rc -eq 2 ] && grep -q "did you mean" "$tmp/e3"'
"$DTSIM" run --json platforms/dgx-a100.yaml --gen neox-19m --dp 16 --global-batch 64 >/dev/null 2>"$tmp/e4"; rc=$?
check "world larger than the platform exits 2" '[ $rc -eq 2 ] && grep -q "needs more GPUs than the platform" "$tmp/e4"'
"$DTSIM" gen neox-19m --recompute sometimes --summary >/dev/null 2>"$tmp/e5"; rc=$?
check "bad recompute value exits 2" '[ $rc -eq 2 ] && grep -q "none, full or selective" "$tmp/e5"'
"$DTSIM" gen neox-19m >/dev/null 2>&1; rc=$?
check "gen without -o or --summary exits 2" '[ $rc -eq 2 ]'
printf 'dtsim_workload: 1\npreset: neox-19m\nparallel: {tp: 2, pipline: 2}\n' >"$tmp/w.yaml"
"$DTSIM" gen --workload "$tmp/w.yaml" --summary >/dev/null 2>"$tmp/e6"; rc=$?
check "workload unknown key exits 2 at line:col" '[ $rc -eq 2 ] && grep -q "w.yaml:3:19: unknown key .pipline." "$tmp/e6"'
printf 'dtsim_workload: 1\npreset: neox-19m\ntraining: {global_batch: 16}\nparallel: {tp: 2, dp: 2}\n' >"$tmp/w2.yaml"
check "workload file runs" '"$DTSIM" run --json platforms/dgx-a100.yaml --gen "$tmp/w2.yaml" 2>/dev/null | jq -e ".ranks == 4" >/dev/null'

finish
