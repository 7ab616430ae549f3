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

# --- workload files: repeated keys, value errors at the key that set them, one source only
printf 'dtsim_workload: 1\npreset: neox-1.3b\nparallel: {tp: 2, tp: 4}\n' >"$tmp/dup.yaml"
"$DTSIM" gen --workload "$tmp/dup.yaml" --summary >/dev/null 2>"$tmp/e7"; rc=$?
check "repeated key exits 2 at line:col with the first line" '[ $rc -eq 2 ] && grep -q "dup.yaml:3:19: duplicate key .tp. in .parallel. (first given at line 3)" "$tmp/e7"'
printf 'dtsim_workload: 1\npreset: neox-1.3b\nparallel: {tp: 2}\nparallel: {dp: 2}\n' >"$tmp/dup2.yaml"
"$DTSIM" gen --workload "$tmp/dup2.yaml" --summary >/dev/null 2>"$tmp/e8"; rc=$?
check "repeated section exits 2" '[ $rc -eq 2 ] && grep -q "dup2.yaml:4:1: duplicate key .parallel. at the top level (first given at line 3)" "$tmp/e8"'
printf 'dtsim_workload: 1\npreset: neox-1.3b\nparallel: {tp: 3}\n' >"$tmp/tp3.yaml"
"$DTSIM" gen --workload "$tmp/tp3.yaml" --summary >/dev/null 2>"$tmp/e9"; rc=$?
check "a bad value from a file names file:line:col" '[ $rc -eq 2 ] && grep -q "tp3.yaml:3:12: tensor parallel size 3 does not divide the 16 attention heads" "$tmp/e9"'
printf 'dtsim_workload: 1\npreset: neox-1.3b\ntraining: {global_batch: 16}\nparallel: {pp: 2, zero: 3}\n' >"$tmp/z3pp.yaml"
"$DTSIM" run --json platforms/dgx-a100.yaml --gen "$tmp/z3pp.yaml" >/dev/null 2>"$tmp/e10"; rc=$?
check "run --gen: ZeRO-3 with pp from a file at the zero key" '[ $rc -eq 2 ] && grep -q "z3pp.yaml:4:19: ZeRO stage 3 with pipeline" "$tmp/e10"'
printf 'dtsim_workload: 1\nparallel: {tp: 2}\n' >"$tmp/nomodel.yaml"
"$DTSIM" gen --workload "$tmp/nomodel.yaml" --summary >/dev/null 2>"$tmp/e11"; rc=$?
check "missing model names the file" '[ $rc -eq 2 ] && grep -q "nomodel.yaml: no model" "$tmp/e11"'
"$DTSIM" gen --workload "$tmp/w2.yaml" --workload "$tmp/tp3.yaml" --summary >/dev/null 2>"$tmp/e12"; rc=$?
check "two --workload flags: exit 2 naming the option and both files (docs/cli.md, Options given twice)" '[ $rc -eq 2 ] && grep -q "gen: --workload given twice (.*w2.yaml. and .*tp3.yaml.): it takes one value" "$tmp/e12"'
"$DTSIM" run --json platforms/dgx-a100.yaml --gen neox-19m --workload "$tmp/w2.yaml" >"$tmp/o13" 2>"$tmp/e13"; rc=$?
check "run: --gen then --workload: exit 2, both name the workload" '[ $rc -eq 2 ] && [ ! -s "$tmp/o13" ] && grep -q "run: --gen .neox-19m. and --workload .*w2.yaml. both name the workload" "$tmp/e13"'
"$DTSIM" gen neox-19m --workload "$tmp/w2.yaml" --summary >/dev/null 2>"$tmp/e13b"; rc=$?
check "gen: the PRESET argument and --workload exit 2" '[ $rc -eq 2 ] && grep -q "both name the workload" "$tmp/e13b"'
"$DTSIM" gen --workload "$tmp" --summary >/dev/null 2>"$tmp/e14"; rc=$?
check "a directory as workload says so" '[ $rc -eq 2 ] && grep -q "is a directory, not a workload file" "$tmp/e14" && ! grep -q "unknown preset" "$tmp/e14"'
"$DTSIM" gen neox-19m --microbatch 1000000000 --summary >/dev/null 2>"$tmp/e15"; rc=$?
check "too large a count states the bound" '[ $rc -eq 2 ] && grep -q "from 1 to 100000000, found .1000000000." "$tmp/e15"'

# --- --sp with tp 1 is turned off with a note (Megatron-LM does the same)
"$DTSIM" gen neox-19m --sp --summary >"$tmp/sp.txt" 2>"$tmp/sp.err"; rc=$?
check "--sp with tp 1 runs with a note" '[ $rc -eq 0 ] && grep -q "note: sequence parallelism turned off: tp is 1" "$tmp/sp.err"'
check "--sp with tp 1: the summary does not say sequence parallel" '! grep -q "sequence parallel" "$tmp/sp.txt" && ! grep -q "b\*s\*h\*e/t" "$tmp/sp.txt"'
"$DTSIM" gen neox-19m --sp --tp 2 --summary >"$tmp/sp2.txt" 2>"$tmp/sp2.err"
check "--sp with tp 2 stays on, no note" 'grep -q "sequence parallel" "$tmp/sp2.txt" && ! grep -q "note:" "$tmp/sp2.err"'

# --- --tp-overlap without --sp exits 2 saying why (as --overlap-param-gather without --zero 1); --p2p-overlap
# with pp 1 changes nothing and says so in a note; with --sp and tp 2, and pp 2, neither says anything
"$DTSIM" gen neox-19m --tp 2 --tp-overlap -o "$tmp/ov1.dtt" 2>"$tmp/ov1.err"; rc=$?
check "--tp-overlap without --sp exits 2 saying it needs sp, writing nothing" \
  '[ $rc -eq 2 ] && grep -q "tp_overlap needs sp" "$tmp/ov1.err" && [ ! -e "$tmp/ov1.dtt" ]'
"$DTSIM" gen neox-19m --tp 1 --sp --tp-overlap --summary >/dev/null 2>"$tmp/ov1b.err"; rc=$?
check "--tp-overlap with --sp at tp 1 exits 2: sp is off since tp is 1" \
  '[ $rc -eq 2 ] && grep -q "note: sequence parallelism turned off" "$tmp/ov1b.err" && grep -q "(sp is off: tp is 1)" "$tmp/ov1b.err"'
"$DTSIM" gen neox-19m --tp 2 -o "$tmp/ov0.dtt" 2>/dev/null
"$DTSIM" gen neox-19m --tp 2 --p2p-overlap -o "$tmp/ov2.dtt" 2>"$tmp/ov2.err"; rc=$?
check "--p2p-overlap with pp 1: exit 0, a note, and the same trace" \
  '[ $rc -eq 0 ] && grep -q "note: p2p_overlap has no effect: pp is 1" "$tmp/ov2.err" && cmp -s "$tmp/ov0.dtt" "$tmp/ov2.dtt"'
"$DTSIM" gen neox-19m --tp 2 --sp --tp-overlap --pp 2 --p2p-overlap --summary >/dev/null 2>"$tmp/ov3.err"; rc=$?
check "--tp-overlap with --sp and --p2p-overlap with pp 2: exit 0, no note" '[ $rc -eq 0 ] && ! grep -q "note:" "$tmp/ov3.err"'

# --- --bucket takes bench's sizes; 0 and sizes below a layer issue each gradient unit alone: neox-19m at pp 1
# has 8 (output layer, 6 layers, embedding); 1G holds them all
nb() { "$DTSIM" gen neox-19m --dp 2 --global-batch 8 --bucket "$1" -o - 2>/dev/null | awk '/^rank 1$/ { exit } /name=dp\.bucket/ { n++ } END { print n + 0 }'; }
check "--bucket 0 gives one bucket per layer (8)" '[ "$(nb 0)" = 8 ]'
check "--bucket 512K gives one bucket per layer (8)" '[ "$(nb 512K)" = 8 ]'
check "--bucket 1G gives one bucket" '[ "$(nb 1G)" = 1 ]'
check "--bucket 25M is accepted" '"$DTSIM" gen neox-19m --dp 2 --global-batch 8 --bucket 25M --summary >/dev/null 2>&1'
"$DTSIM" gen neox-19m --bucket 25X --summary >/dev/null 2>"$tmp/e16"; rc=$?
check "a bad --bucket names the units" '[ $rc -eq 2 ] && grep -q "powers of 1024" "$tmp/e16"'
check "help says K is 1024" '"$DTSIM" help gen | grep -q "K, M, G, T are powers of 1024"'

# --- MoE summary: dense and expert parameters apart, and their ring closed forms add up to the trace's wire
"$DTSIM" gen neox-19m --tp 2 --pp 2 --dp 4 --experts 8 --ep 2 --global-batch 32 --summary >"$tmp/moe.txt" 2>&1
check "MoE summary shows dense and expert parameters" 'grep -q "dense parameters per GPU" "$tmp/moe.txt" && grep -q "expert parameters per GPU" "$tmp/moe.txt" && grep -q "expert all-reduce 2mx" "$tmp/moe.txt"'
sent=$(awk '/sent per GPU with rings/ { print $6, $7; n = split($0, f, " "); print f[n-1], f[n] }' "$tmp/moe.txt")
check "MoE closed forms add up to the trace wire ($(echo $sent))" '[ "$(echo "$sent" | sed -n 1p)" = "$(echo "$sent" | sed -n 2p)" ] && [ -n "$(echo "$sent" | sed -n 1p)" ]'

# --- overlap flags: --overlap-param-gather and --p2p-overlap give the same trace as their workload keys, the
# written trace replays as the in-memory one, and the gathers / early receives are where docs/generator.md says
OV="neox-19m --pp 2 --dp 2 --zero 1 --global-batch 16 --layers 4 --schedule interleaved --virtual-stages 2"
"$DTSIM" gen $OV --overlap-param-gather --p2p-overlap -o "$tmp/ov_flag.trace" 2>/dev/null
printf 'dtsim_workload: 1\npreset: neox-19m\nmodel: {layers: 4}\ntraining: {global_batch: 16}\nparallel: {pp: 2, dp: 2, zero: 1, schedule: interleaved, virtual_stages: 2, overlap_param_gather: true, p2p_overlap: true}\n' >"$tmp/ov.yaml"
"$DTSIM" gen --workload "$tmp/ov.yaml" -o "$tmp/ov_yaml.trace" 2>/dev/null
check "--overlap-param-gather --p2p-overlap and their workload keys write the same trace" 'cmp -s "$tmp/ov_flag.trace" "$tmp/ov_yaml.trace"'
"$DTSIM" gen $OV -o "$tmp/ov_off.trace" 2>/dev/null
check "the flags change the trace" '! cmp -s "$tmp/ov_flag.trace" "$tmp/ov_off.trace"'
# rank 0: its first op is a parameter all-gather on s1 (the window's start); without the flag, compute on s0
first_s1() { awk '/^rank 1$/ { exit } /^s[0-9]/ { print $1, $2; exit }' "$1"; }
check "with the flag the window opens with a parameter all-gather on s1" '[ "$(first_s1 "$tmp/ov_flag.trace")" = "s1 allgather" ]'
check "without it the first op is compute on s0" '[ "$(first_s1 "$tmp/ov_off.trace")" = "s0 compute" ]'
check "early receives on s5 and s6, none on s0" 'grep -q "^s5 recv" "$tmp/ov_flag.trace" && grep -q "^s6 recv" "$tmp/ov_flag.trace" && ! grep -q "^s0 recv" "$tmp/ov_flag.trace"'
"$DTSIM" run --json platforms/dgx-a100.yaml "$tmp/ov_flag.trace" >"$tmp/ov_a.json" 2>/dev/null; rc1=$?
"$DTSIM" run --json platforms/dgx-a100.yaml --workload "$tmp/ov.yaml" >"$tmp/ov_b.json" 2>/dev/null; rc2=$?
check "the written overlap trace replays as the generated one" '[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && jq -e ".makespan_s > 0" "$tmp/ov_a.json" >/dev/null && [ "$(jq .makespan_s "$tmp/ov_a.json")" = "$(jq .makespan_s "$tmp/ov_b.json")" ]'
"$DTSIM" gen neox-19m --dp 2 --global-batch 8 --overlap-param-gather --summary >/dev/null 2>"$tmp/e17"; rc=$?
check "--overlap-param-gather without --zero 1 exits 2 saying why" '[ $rc -eq 2 ] && grep -q "overlap_param_gather needs ZeRO stage 1" "$tmp/e17"'
check "help gen lists --overlap-param-gather" '"$DTSIM" help gen | grep -q -- "--overlap-param-gather"'

finish
