#!/usr/bin/env bash
# End-to-end tests of the dtsim binary on shipped files. Expected values come from closed forms with the
# constants of tests/data/node8.yaml (alpha = 2us, B = 100 GB/s per GPU per direction) and from the hand
# counts of the capture in traces/samples/README.md, never from an earlier run.
# usage: tests/e2e_cli.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: e2e_cli.sh DTSIM}
source "$(dirname "$0")/e2e-lib.sh"

# --- version and help
check "version" '"$DTSIM" --version | grep -q "^dtsim [0-9]"'
check "help lists run" '"$DTSIM" help | grep -q "run "'
"$DTSIM" frobnicate >/dev/null 2>"$tmp/err"; rc=$?
check "unknown command exits 2" '[ $rc -eq 2 ] && grep -q "unknown command" "$tmp/err"'
"$DTSIM" run >/dev/null 2>&1; rc=$?
check "run without arguments exits 2" '[ $rc -eq 2 ]'

# --- closed form: ring all-reduce on one node, 2(n-1)a + 2(n-1)/n S/B
for fid in flow step; do
  "$DTSIM" run --json --fidelity $fid tests/data/node8.yaml tests/data/allreduce8.dtt >"$tmp/ar.json" 2>"$tmp/ar.err"; rc=$?
  check "allreduce8 $fid exits 0" '[ $rc -eq 0 ]'
  want=$(awk 'BEGIN { n = 8; a = 2e-6; B = 100e9; S = 67108864; printf "%.12g", 2*(n-1)*a + 2*(n-1)/n*S/B }')
  got=$(jq -r .makespan_s "$tmp/ar.json")
  check "allreduce8 $fid makespan $got = closed form $want" 'close "$got" "$want" 1e-6'
  got=$(jq -r .by_kind.allreduce.time_s "$tmp/ar.json")
  check "allreduce8 $fid instance time = closed form" 'close "$got" "$want" 1e-6'
  busbw=$(jq -r .by_kind.allreduce.busbw_GBps "$tmp/ar.json")
  wantbw=$(awk -v t="$want" 'BEGIN { printf "%.12g", 67108864 / t * 2 * 7 / 8 / 1e9 }')
  check "allreduce8 $fid busbw = S/t * 2(n-1)/n" 'close "$busbw" "$wantbw" 1e-6'
  check "allreduce8 $fid count 1, bytes per rank" '[ "$(jq -r .by_kind.allreduce.count "$tmp/ar.json")" = 1 ] && [ "$(jq -r .by_kind.allreduce.bytes "$tmp/ar.json")" = 67108864 ]'
done

# --- SimGrid settings pass through; a bad one is an input error, not an abort
"$DTSIM" run --json --cfg contexts/factory:thread tests/data/node8.yaml tests/data/allreduce8.dtt >"$tmp/cfg.json" 2>/dev/null; rc=$?
check "--cfg KEY:VALUE reaches SimGrid and the run succeeds" '[ $rc -eq 0 ] && jq -e .makespan_s "$tmp/cfg.json" >/dev/null'
"$DTSIM" run --cfg no/such:1 tests/data/node8.yaml tests/data/allreduce8.dtt >/dev/null 2>"$tmp/cfg.err"; rc=$?
check "an unknown SimGrid key exits 2 with a message" '[ $rc -eq 2 ] && grep -q "accepts only the SimGrid settings.*found .no/such." "$tmp/cfg.err"'

# --- a forced algorithm that cannot run: an error naming why (NCCL >= 2.24, the default model); with an older
# nccl.version it falls back to the op's default and the notes say so, not silently replaced
"$DTSIM" run --json --algo nvls platforms/dgx-a100.yaml tests/data/allreduce8.dtt >"$tmp/fa.json" 2>"$tmp/fa.err"; rc=$?
check "strict --algo: a forced algorithm that cannot run is exit 2 naming the op, group and why" '[ $rc -eq 2 ] && grep -q "allreduce8.dtt:[0-9]*: algorithm .nvls. cannot run allreduce on group .world. (8 members on 1 node): it needs .intra_node.nvls." "$tmp/fa.err"'
sed 's/^nccl:$/nccl:\n  version: "2.23.4"/' platforms/dgx-a100.yaml >"$tmp/a100-2.23.yaml"
"$DTSIM" run --json --algo nvls "$tmp/a100-2.23.yaml" tests/data/allreduce8.dtt >"$tmp/fa.json" 2>/dev/null
check "nccl.version 2.23: forced algorithm fallback is in the notes" 'jq -r ".notes[]" "$tmp/fa.json" | grep -q "forced algorithm .nvls. cannot run 1 instance"'
check "nccl.version 2.23: the fallback note says why and which version the platform follows" 'jq -r ".notes[]" "$tmp/fa.json" | grep -q "forced algorithm .nvls. cannot run 1 instance: it needs .intra_node.nvls. on an NVSwitch node; platform .dgx-a100. follows NCCL 2.23.4 (.nccl.version.)"'
sed 's/allreduce/allgather/' tests/data/allreduce8.dtt >"$tmp/ag8.dtt"
"$DTSIM" run --json --algo pat tests/data/node8.yaml "$tmp/ag8.dtt" >"$tmp/fa.json" 2>/dev/null; rc=$?
check "--algo pat without an nccl: section: exit 0, the note says the section is missing" '[ $rc -eq 0 ] && jq -r ".notes[]" "$tmp/fa.json" | grep -q "forced algorithm .pat. cannot run 1 instance: it needs the NCCL model.*; platform .test-node8. has no .nccl:. section"'

# --- batched exchange completes at alpha + S/B; unbatched deadlocks (exit 1, JSON still printed)
"$DTSIM" run --json tests/data/node8.yaml tests/data/exchange.dtt >"$tmp/ex.json" 2>/dev/null; rc=$?
want=$(awk 'BEGIN { printf "%.12g", 2e-6 + 1048576 / 100e9 }')
check "batched exchange exits 0 and takes a + S/B" '[ $rc -eq 0 ] && close "$(jq -r .makespan_s "$tmp/ex.json")" "$want" 1e-6'
check "send pair counted once" '[ "$(jq -r .by_kind.send.count "$tmp/ex.json")" = 2 ]'
"$DTSIM" run --json tests/data/node8.yaml tests/data/batch-skew.dtt >"$tmp/bs.json" 2>/dev/null; rc=$?
want=$(awk 'BEGIN { printf "%.12g", 2 * (2e-6 + 1048576 / 100e9) }')
check "pairs in a batch are timed on their own, not with the batch's slowest peer" '[ $rc -eq 0 ] && close "$(jq -r .by_kind.send.time_s "$tmp/bs.json")" "$want" 1e-6'
timeout 60 "$DTSIM" run --json tests/data/node8.yaml tests/data/deadlock.dtt >"$tmp/dl.json" 2>"$tmp/dl.err"; rc=$?
check "unbatched exchange is a deadlock: exit 1" '[ $rc -eq 1 ]'
check "deadlock JSON lists the blocked ops" '[ "$(jq -r ".deadlock | length" "$tmp/dl.json")" -ge 2 ]'

# --- bad input: exit 2 with a position, quickly
timeout 20 "$DTSIM" run tests/data/node8.yaml tests/data/mismatch.dtt >/dev/null 2>"$tmp/mm.err"; rc=$?
check "mismatched send/recv exits 2" '[ $rc -eq 2 ]'
check "mismatch names both lines" 'grep -q "mismatch.dtt:5" "$tmp/mm.err" && grep -q "mismatch.dtt:7" "$tmp/mm.err"'
"$DTSIM" run tests/data/bad-key.yaml tests/data/allreduce8.dtt >/dev/null 2>"$tmp/bk.err"; rc=$?
check "unknown platform key exits 2 with line:col and hint" '[ $rc -eq 2 ] && grep -q "bad-key.yaml:8:3" "$tmp/bk.err" && grep -q "bandwidth" "$tmp/bk.err"'
printf 'dtsim_trace 1\nranks 2147483647\n' >"$tmp/big.dtt"
timeout 20 "$DTSIM" run tests/data/node8.yaml "$tmp/big.dtt" >/dev/null 2>"$tmp/big.err"; rc=$?
check "an absurd rank count is refused with its line, not an out-of-memory abort" '[ $rc -eq 2 ] && grep -q "big.dtt:2" "$tmp/big.err"'
timeout 20 "$DTSIM" run tests/data/node8.yaml <(cat tests/data/allreduce8.dtt) >/dev/null 2>"$tmp/pipe.err"; rc=$?
check "a pipe is refused with a message, not a hang" '[ $rc -eq 2 ] && grep -q "not a regular file" "$tmp/pipe.err"'
"$DTSIM" run tests/data/node8.yaml /nonexistent.dtt >/dev/null 2>"$tmp/ne.err"; rc=$?
check "missing trace file exits 2" '[ $rc -eq 2 ] && grep -q "nonexistent.dtt" "$tmp/ne.err"'

# --- the shipped real capture: 15 all-reduce (306,684,384 bytes) and 6 broadcast (638,712 bytes) on rank 0,
# expanded to the capture's 2 ranks (traces/samples/README.md)
sample=traces/samples/allreduce_bcast_2ranks_rank0.json.gz
"$DTSIM" run --json platforms/dgx-a100.yaml "$sample" >"$tmp/k1.json" 2>"$tmp/k1.err"; rc=$?
check "capture runs: exit 0" '[ $rc -eq 0 ]'
check "capture: 2 ranks" '[ "$(jq -r .ranks "$tmp/k1.json")" = 2 ]'
check "capture: 15 all-reduce, 306684384 bytes" '[ "$(jq -r .by_kind.allreduce.count "$tmp/k1.json")" = 15 ] && [ "$(jq -r .by_kind.allreduce.bytes "$tmp/k1.json")" = 306684384 ]'
check "capture: 6 broadcast, 638712 bytes" '[ "$(jq -r .by_kind.broadcast.count "$tmp/k1.json")" = 6 ] && [ "$(jq -r .by_kind.broadcast.bytes "$tmp/k1.json")" = 638712 ]'
check "capture: stdout is only JSON" 'jq -e . "$tmp/k1.json" >/dev/null'
check "capture: expansion assumption in notes" '[ "$(jq -r ".notes | length" "$tmp/k1.json")" -ge 1 ]'
"$DTSIM" run --json platforms/dgx-a100.yaml "$sample" >"$tmp/k2.json" 2>/dev/null
check "capture: byte-identical output for the same input" 'cmp -s "$tmp/k1.json" "$tmp/k2.json"'
"$DTSIM" run platforms/dgx-a100.yaml "$sample" >"$tmp/k.txt" 2>&1; rc=$?
check "capture text report shows captured step beside simulated" '[ $rc -eq 0 ] && grep -q "captured step" "$tmp/k.txt"'

"$DTSIM" run --json --expand 8 platforms/dgx-a100.yaml "$sample" >"$tmp/k8.json" 2>/dev/null; rc=$?
check "capture expanded to 8: the world group grows (still 15 all-reduce instances, 8 ranks)" '[ $rc -eq 0 ] && [ "$(jq -r .ranks "$tmp/k8.json")" = 8 ] && [ "$(jq -r .by_kind.allreduce.count "$tmp/k8.json")" = 15 ]'

# --- import then run the native file gives the same prediction
"$DTSIM" import "$sample" -o "$tmp/k.dtt" 2>/dev/null; rc=$?
check "import writes a native trace" '[ $rc -eq 0 ] && head -1 "$tmp/k.dtt" | grep -q "^dtsim_trace 1"'
"$DTSIM" run --json platforms/dgx-a100.yaml "$tmp/k.dtt" >"$tmp/k3.json" 2>/dev/null
check "imported trace keeps the importer's assumptions in notes" 'jq -r ".notes[]" "$tmp/k3.json" | grep -q "expanded"'
check "imported trace replays to the same makespan" '[ "$(jq -r .makespan_s "$tmp/k3.json")" = "$(jq -r .makespan_s "$tmp/k1.json")" ]'
mkdir -p "$tmp/per"
"$DTSIM" import "$sample" -o "$tmp/per/" 2>/dev/null; rc=$?
check "import to a directory writes per-rank files" '[ $rc -eq 0 ] && [ "$(ls "$tmp/per" | wc -l)" -eq 2 ]'
"$DTSIM" run --json platforms/dgx-a100.yaml "$tmp"/per/*.dtt >"$tmp/k4.json" 2>/dev/null
check "per-rank files replay to the same makespan" '[ "$(jq -r .makespan_s "$tmp/k4.json")" = "$(jq -r .makespan_s "$tmp/k1.json")" ]'

# import -o DIR/ into a directory that holds an earlier import's .dtt files: refused (a run of DIR would read
# both), the directory untouched; --force removes those .dtt files (and only those) once the new trace is read
mkdir -p "$tmp/re"
"$DTSIM" import traces/samples/alltoall_allreduce_8ranks_rank3.json.gz -o "$tmp/re/" 2>/dev/null
echo keep >"$tmp/re/README"
"$DTSIM" import "$sample" -o "$tmp/re/" >/dev/null 2>"$tmp/re.err"; rc=$?
check "import -o DIR/ over an earlier import: exit 2 naming the directory, its .dtt files and --force; nothing changed" \
  '[ $rc -eq 2 ] && grep -q "^dtsim: error: -o .*re/ already holds 8 .dtt files (.trace.0.dtt., ...): a run of the directory reads every .dtt in it.*dtsim import --force" "$tmp/re.err" && [ "$(ls "$tmp/re" | grep -c "\.dtt$")" -eq 8 ]'
"$DTSIM" import "$sample" -o "$tmp/re/" --force >/dev/null 2>"$tmp/re.err"; rc=$?
check "import --force: the 8 old .dtt files removed, the 2 new written, other files kept" \
  '[ $rc -eq 0 ] && grep -q "removed 8 .dtt files of an earlier run" "$tmp/re.err" && [ "$(ls "$tmp/re" | grep -c "\.dtt$")" -eq 2 ] && [ -f "$tmp/re/README" ]'
"$DTSIM" run --json platforms/dgx-a100.yaml "$tmp/re" >"$tmp/re.json" 2>/dev/null
check "the directory then runs as the new 2-rank trace alone" '[ "$(jq -r .ranks "$tmp/re.json")" = 2 ] && [ "$(jq -r .makespan_s "$tmp/re.json")" = "$(jq -r .makespan_s "$tmp/k1.json")" ]'
"$DTSIM" import /nonexistent.json -o "$tmp/re/" --force >/dev/null 2>&1
check "a failed import with --force removes nothing" '[ "$(ls "$tmp/re" | grep -c "\.dtt$")" -eq 2 ]'
"$DTSIM" scale "$sample" --dp 2 --grad pg0 -o "$tmp/re/" >/dev/null 2>"$tmp/re.err"; rc=$?
check "scale -o DIR/ over .dtt files: exit 2 the same way" '[ $rc -eq 2 ] && grep -q "already holds 2 .dtt files.*dtsim scale --force" "$tmp/re.err"'

# --- the command line's own messages (fresh-user findings): what was wrong, the value given, what was expected
# every algorithm dtsim has, in help and in the error of an unknown one: the list of platforms/dt_platform.c
for a in ring tree nvls nvls-tree hier collnet chain direct pat; do
  check "help run lists --algo $a" '"$DTSIM" help run | grep -A1 -- "--algo A" | grep -q "[ ,]$a\(,\|$\)"'
  check "help bench lists --algo $a" '"$DTSIM" help bench | grep -A1 -- "--algo A" | grep -q "[ ,]$a\(,\|$\)"'
done
"$DTSIM" run --algo bogus tests/data/node8.yaml tests/data/allreduce8.dtt >/dev/null 2>"$tmp/algo.err"; rc=$?
check "--algo bogus: exit 2 listing every algorithm, pat included, and the value" \
  '[ $rc -eq 2 ] && grep -q "expects auto, ring, tree, nvls, nvls-tree, hier, collnet, chain, direct or pat, found .bogus." "$tmp/algo.err"'
"$DTSIM" bench all_reduce --platform tests/data/node8.yaml --algo bogus >/dev/null 2>"$tmp/algo.err"; rc=$?
check "bench --algo bogus: the same list" '[ $rc -eq 2 ] && grep -q "direct or pat, found .bogus." "$tmp/algo.err"'
# an unwritable --timeline: which option, which path, why (the temporary file next to it); before the run
"$DTSIM" run --timeline /proc/version tests/data/node8.yaml tests/data/allreduce8.dtt >"$tmp/tl.out" 2>"$tmp/tl.err"; rc=$?
check "--timeline /proc/version: exit 2 naming the option, the path, the folder and the temporary file" \
  '[ $rc -eq 2 ] && [ ! -s "$tmp/tl.out" ] && grep -q "^dtsim: error: --timeline /proc/version: cannot create a file in ./proc. (.*): dtsim writes the timeline to a temporary file next to it, ./proc/version.tmp" "$tmp/tl.err"'
"$DTSIM" run --timeline "$tmp/no/such/t.json" tests/data/node8.yaml tests/data/allreduce8.dtt >/dev/null 2>"$tmp/tl.err"; rc=$?
check "--timeline in a missing folder names the folder" '[ $rc -eq 2 ] && grep -q "^dtsim: error: --timeline .*/no/such/t.json: the folder .*/no/such. does not exist" "$tmp/tl.err"'
"$DTSIM" run --timeline "$tmp" tests/data/node8.yaml tests/data/allreduce8.dtt >/dev/null 2>"$tmp/tl.err"; rc=$?
check "--timeline DIR says it is a directory" '[ $rc -eq 2 ] && grep -q "^dtsim: error: --timeline .* is a directory: expected the name of the file" "$tmp/tl.err"'
# --timeline-ranks: the value given and the form expected, for a bad form (before the run) and a bad range
"$DTSIM" run --timeline "$tmp/t.json" --timeline-ranks 3-x tests/data/node8.yaml tests/data/allreduce8.dtt >/dev/null 2>"$tmp/tr.err"; rc=$?
check "--timeline-ranks 3-x: exit 2 with the value and the form" '[ $rc -eq 2 ] && grep -q "expects ranks and ranges separated by commas, like 0-7,16, found .3-x." "$tmp/tr.err"'
"$DTSIM" run --timeline "$tmp/t.json" --timeline-ranks 0-99 tests/data/node8.yaml tests/data/allreduce8.dtt >/dev/null 2>"$tmp/tr.err"; rc=$?
check "--timeline-ranks 0-99 on 8 ranks: exit 2 with the trace's ranks and the value" '[ $rc -eq 2 ] && grep -q "within the trace.s ranks 0-7, found .0-99." "$tmp/tr.err"'
# arguments swapped: the trace first, the platform second (by extension, and by content without one)
"$DTSIM" run tests/data/allreduce8.dtt tests/data/node8.yaml >/dev/null 2>"$tmp/sw.err"; rc=$?
check "run TRACE PLATFORM: exit 2, 'arguments swapped?' with the usage" \
  '[ $rc -eq 2 ] && grep -q "arguments swapped? .tests/data/allreduce8.dtt. is a trace (format native) and .tests/data/node8.yaml. a platform; usage: dtsim run \[options\] PLATFORM TRACE" "$tmp/sw.err"'
cp tests/data/node8.yaml "$tmp/plat"
"$DTSIM" run traces/samples/allreduce_bcast_2ranks_rank0.json.gz "$tmp/plat" >/dev/null 2>"$tmp/sw.err"; rc=$?
check "a Kineto capture before a platform without .yaml (sniffed): 'arguments swapped?'" \
  '[ $rc -eq 2 ] && grep -q "arguments swapped? .*rank0.json.gz. is a trace (format kineto)" "$tmp/sw.err"'
"$DTSIM" run tests/data/bad-key.yaml tests/data/allreduce8.dtt >/dev/null 2>"$tmp/sw.err"
check "a broken platform in the right place is its own error, not 'swapped'" '! grep -q swapped "$tmp/sw.err"'
# ranks beyond the limit in a native header: the value, the limit and the line
printf 'dtsim_trace 1\nranks 999999999999\n' >"$tmp/r12.dtt"
"$DTSIM" run tests/data/node8.yaml "$tmp/r12.dtt" >/dev/null 2>"$tmp/r12.err"; rc=$?
check "ranks 999999999999: exit 2 with file:line, the value and the limit" \
  '[ $rc -eq 2 ] && grep -q "r12.dtt:2:7: .ranks 999999999999. is more than dtsim supports (at most 1048576 ranks)" "$tmp/r12.err"'
printf 'dtsim_trace 1\nranks -3\n' >"$tmp/rneg.dtt"
"$DTSIM" run tests/data/node8.yaml "$tmp/rneg.dtt" >/dev/null 2>"$tmp/rneg.err"; rc=$?
check "ranks -3: exit 2 with the range and the value" '[ $rc -eq 2 ] && grep -q "rneg.dtt:2:7: expected .ranks N. with N a whole number from 1 to 1048576, found .-3." "$tmp/rneg.err"'
# sweep --shard: the points that cannot run are counted in the shard, not in the whole grid (points 0-2 of the
# 4 cannot run: shard 0/2 holds 0 and 2, shard 1/2 holds 1 and the one that runs)
for sh in 0 1; do
  "$DTSIM" sweep run --shard $sh/2 --set platform=tests/data/sweep/base.yaml --set workload.gen=neox-19m \
    --set workload.global_batch=32 --set workload.dp=4 --axis network.radix=2,8 --axis tp=1,2 --dir "$tmp/shard" \
    >/dev/null 2>"$tmp/shard$sh.err"
done
check "sweep --shard 0/2: 2 cannot run in this shard" 'grep -q "0 ok, 0 failed, 2 cannot run in this shard" "$tmp/shard0.err"'
"$DTSIM" sweep tests/data/sweep/grid.yaml -o /proc/x.csv --dir "$tmp/swo" >/dev/null 2>"$tmp/swo.err"; rc=$?
check "sweep -o in a folder that takes no file: exit 2 before any point ran (no sweep folder made)" \
  '[ $rc -eq 2 ] && grep -q "^dtsim: error: -o /proc/x.csv: cannot create a file in ./proc." "$tmp/swo.err" && [ ! -e "$tmp/swo" ]'
check "sweep --shard 1/2: 1 ok, 1 cannot run in this shard" 'grep -q "1 ok, 0 failed, 1 cannot run in this shard" "$tmp/shard1.err" && grep -q "1 point in this shard: .*, 1 cannot run" "$tmp/shard1.err"'

# --- options given twice (docs/cli.md, "Options given twice"): exit 2 naming the option and both values
"$DTSIM" run --top 3 --top 5 tests/data/node8.yaml tests/data/allreduce8.dtt >"$tmp/tw.out" 2>"$tmp/tw.err"; rc=$?
check "run --top 3 --top 5: exit 2 naming --top and both values, nothing run" \
  '[ $rc -eq 2 ] && [ ! -s "$tmp/tw.out" ] && grep -q "^dtsim run: --top given twice (.3. and .5.): it takes one value" "$tmp/tw.err"'
"$DTSIM" run --json --json --exact --exact tests/data/node8.yaml tests/data/allreduce8.dtt >"$tmp/tw.json" 2>/dev/null; rc=$?
check "flags without a value may be repeated (--json --json)" '[ $rc -eq 0 ] && jq -e .makespan_s "$tmp/tw.json" >/dev/null'
"$DTSIM" run --json --cfg contexts/factory:thread --cfg contexts/stack-size:128 tests/data/node8.yaml tests/data/allreduce8.dtt >/dev/null 2>&1; rc=$?
check "repeatable --cfg collects both" '[ $rc -eq 0 ]'
"$DTSIM" import -o "$tmp/a.dtt" --output "$tmp/b.dtt" tests/data/allreduce8.dtt 2>"$tmp/tw.err"; rc=$?
check "import -o a --output b: exit 2 naming -o/--output, nothing written" \
  '[ $rc -eq 2 ] && grep -q "import: -o/--output given twice (.*a.dtt. and .*b.dtt.)" "$tmp/tw.err" && [ ! -e "$tmp/a.dtt" ] && [ ! -e "$tmp/b.dtt" ]'
"$DTSIM" gen neox-19m --tp 2 --set tp=4 --summary >/dev/null 2>"$tmp/tw.err"; rc=$?
check "gen --tp 2 --set tp=4: exit 2, the key given twice with both values" \
  '[ $rc -eq 2 ] && grep -q "gen: the generator key .tp. is given twice (.2. and .4.)" "$tmp/tw.err"'
"$DTSIM" gen neox-19m --sp --sp --tp 2 --summary >/dev/null 2>&1; rc=$?
check "gen --sp --sp: a flag repeated with its same value is taken" '[ $rc -eq 0 ]'
"$DTSIM" run tests/data/node8.yaml --gen neox-19m --gen neox-125m >/dev/null 2>"$tmp/tw.err"; rc=$?
check "run --gen a --gen b: exit 2 naming --gen and both" '[ $rc -eq 2 ] && grep -q "run: --gen given twice (.neox-19m. and .neox-125m.)" "$tmp/tw.err"'
"$DTSIM" run tests/data/node8.yaml --job a --gen neox-19m --dp 8 --dp 4 >/dev/null 2>"$tmp/tw.err"; rc=$?
check "run --job a ... --dp 8 --dp 4: exit 2 naming the job's option" '[ $rc -eq 2 ] && grep -q "^dtsim run --job a: --dp given twice (.8. and .4.)" "$tmp/tw.err"'
"$DTSIM" bench --platform tests/data/node8.yaml -b 1K --minbytes 2K all_reduce >/dev/null 2>"$tmp/tw.err"; rc=$?
check "bench -b 1K --minbytes 2K: exit 2 naming -b/--minbytes" '[ $rc -eq 2 ] && grep -q "bench: -b/--minbytes given twice (.1K. and .2K.)" "$tmp/tw.err"'

# --- a write that fails at the end names the option, the path and the reason
"$DTSIM" run --timeline /dev/full tests/data/node8.yaml tests/data/allreduce8.dtt >/dev/null 2>"$tmp/wf.err"; rc=$?
check "--timeline /dev/full: exit 2 naming --timeline, the path and ENOSPC" \
  '[ $rc -eq 2 ] && grep -q "^dtsim: error: --timeline /dev/full: cannot write.*: No space left on device" "$tmp/wf.err"'
for c in "import tests/data/allreduce8.dtt" "gen neox-19m"; do
  "$DTSIM" $c -o /dev/full >/dev/null 2>"$tmp/wf.err"; rc=$?
  check "$c -o /dev/full: exit 2 naming -o and the reason" '[ $rc -eq 2 ] && grep -q "^dtsim: error: -o /dev/full: cannot write: No space left on device" "$tmp/wf.err"'
done
"${DTSIM_REAL:-$DTSIM}" run --json tests/data/node8.yaml tests/data/allreduce8.dtt >/dev/full 2>"$tmp/wf.err"; rc=$? # not the report-keeping wrapper: its cat would meet /dev/full
check "run --json >/dev/full: exit 2, one message with the reason" \
  '[ $rc -eq 2 ] && [ "$(grep -c "^dtsim: error:" "$tmp/wf.err")" -eq 1 ] && grep -q "standard output: No space left on device" "$tmp/wf.err"'
(trap '' XFSZ; ulimit -f 1; exec "$DTSIM" run --timeline "$tmp/tl.json" tests/data/node8.yaml tests/data/allreduce8.dtt) >/dev/null 2>"$tmp/wf.err"; rc=$?
check "--timeline past a 1 KiB file-size limit: exit 2 naming --timeline and 'File too large', no file nor temporary" \
  '[ $rc -eq 2 ] && grep -q "^dtsim: error: --timeline .*tl.json: cannot write the timeline file: File too large" "$tmp/wf.err" && [ -z "$(ls "$tmp" | grep "^tl\.json")" ]'

# --- a trace where the platform goes: say so (was "expected a mapping of platform keys")
"$DTSIM" run tests/data/allreduce8.dtt tests/data/allreduce8.dtt >/dev/null 2>"$tmp/tt.err"; rc=$?
check "run TRACE TRACE: exit 2, the first file must be a platform YAML and this one looks like a trace" \
  '[ $rc -eq 2 ] && grep -q "allreduce8.dtt. looks like a trace (format native), not a platform: the first file of .dtsim run. must be a platform YAML" "$tmp/tt.err" && ! grep -q "mapping of platform keys" "$tmp/tt.err"'

# --- gen -o DIR/ twice: the earlier run's rank files are refused, --force removes them (as import and scale)
"$DTSIM" gen neox-19m --dp 8 -o "$tmp/gd/" 2>/dev/null
"$DTSIM" gen neox-19m --dp 4 -o "$tmp/gd/" 2>"$tmp/gd.err"; rc=$?
check "gen -o DIR/ over 8 rank files: exit 2 naming them and --force, the 8 files untouched" \
  '[ $rc -eq 2 ] && grep -q "already holds 8 .dtt files.*dtsim gen --force" "$tmp/gd.err" && [ "$(ls "$tmp/gd" | wc -l)" -eq 8 ]'
"$DTSIM" gen neox-19m --dp 4 -o "$tmp/gd/" --force 2>"$tmp/gd.err"; rc=$?
check "gen -o DIR/ --force: the 8 old files removed, 4 new ones, and the directory replays as 4 ranks" \
  '[ $rc -eq 0 ] && grep -q "removed 8 .dtt files" "$tmp/gd.err" && [ "$(ls "$tmp/gd" | wc -l)" -eq 4 ] && [ "$("$DTSIM" run --json tests/data/node8.yaml "$tmp/gd/" 2>/dev/null | jq .ranks)" = 4 ]'

# --- --max-output: the form with its units; the message's one estimate; a pipe is counted and stopped too
"$DTSIM" gen neox-19m -o "$tmp/m.dtt" --max-output -5 2>"$tmp/mo.err"; rc=$?
check "gen --max-output -5: exit 2 with the form and the units" '[ $rc -eq 2 ] && grep -q "max-output expects a size in bytes from 0 to 18446744073709551615 .*: digits with an optional K, M, G or T (powers of 1024), such as 512K or 64G, found .-5." "$tmp/mo.err"'
# neox-19m is one rank of 7168 ops, ~233 bytes each (~1.6 MiB): stopped past 100K, no "fewer ranks" for one rank
"$DTSIM" gen neox-19m -o "$tmp/m.dtt" --max-output 100K 2>"$tmp/mo.err"; rc=$?
check "gen of 1 rank past --max-output: one estimate, a SIZE that holds it, no 'fewer ranks' nor 'at least'" \
  '[ $rc -eq 2 ] && grep -q "the whole trace would take about 1.[0-9]* MiB; nothing was kept; to write it, raise the limit (.gen --max-output 2M.)$" "$tmp/mo.err" && ! grep -q "fewer ranks\|at least" "$tmp/mo.err"'
"$DTSIM" gen neox-19m -o - --max-output 100K 2>"$tmp/mo.err" | cat >"$tmp/mo.out"; rc=${PIPESTATUS[0]}
n=$(wc -c <"$tmp/mo.out")
check "gen -o - into a pipe, --max-output 100K: exit 2, stopped within a few hundred ops past 100 KiB ($n bytes)" \
  '[ $rc -eq 2 ] && [ "$n" -gt 102400 ] && [ "$n" -lt 204800 ] && grep -q "^dtsim: error: -o -: stopped after writing $n bytes" "$tmp/mo.err" && grep -q "standard output has the part written" "$tmp/mo.err"'
"$DTSIM" gen neox-19m -o - --max-output 2M 2>/dev/null | cat >"$tmp/mo.out"; rc=${PIPESTATUS[0]}
check "gen -o - into a pipe under the limit: the whole trace, and it reads back" \
  '[ $rc -eq 0 ] && [ "$("$DTSIM" run --json tests/data/node8.yaml "$tmp/mo.out" 2>/dev/null | jq .ranks)" = 1 ]'

# --- validate outside the repository root: says which option to give (was: only the first CSV's path)
real=${DTSIM_REAL:-$DTSIM} # the binary itself: the report-keeping wrapper runs it by a relative path
abs=$(cd "$(dirname "$real")" && pwd)/$(basename "$real")
(cd "$tmp" && "$abs" validate) >/dev/null 2>"$tmp/va.err"; rc=$?
check "validate outside the root: exit 2 naming the folder, the current folder, --references DIR and --platforms DIR" \
  '[ $rc -eq 2 ] && grep -q "read from .validation/references. by default, relative to the current folder, and $tmp has none.*give --references DIR .* and --platforms DIR" "$tmp/va.err"'
"$DTSIM" validate --references "$tmp/nope" >/dev/null 2>"$tmp/va.err"; rc=$?
check "validate --references MISSING: exit 2 naming the option" '[ $rc -eq 2 ] && grep -q "validate: --references .*nope: cannot read it as the folder of the reference measurements: No such file" "$tmp/va.err"'

# --- a mistyped option says what is wrong with it (was: "unknown option" alone)
"$DTSIM" run --json=1 tests/data/node8.yaml tests/data/allreduce8.dtt >/dev/null 2>"$tmp/bo.err"; rc=$?
check "--json=1: exit 2, the flag takes no value" '[ $rc -eq 2 ] && grep -q "option .--json. takes no value, found .--json=1." "$tmp/bo.err"'
"$DTSIM" run --time t.json tests/data/node8.yaml tests/data/allreduce8.dtt >/dev/null 2>"$tmp/bo.err"; rc=$?
check "--time: exit 2, ambiguous, naming both options it could be" '[ $rc -eq 2 ] && grep -q "option .--time. is ambiguous: it could be --timeline, --timeline-ranks" "$tmp/bo.err"'
"$DTSIM" run --timline t.json tests/data/node8.yaml tests/data/allreduce8.dtt >/dev/null 2>"$tmp/bo.err"; rc=$?
check "--timline: exit 2, did you mean --timeline" '[ $rc -eq 2 ] && grep -q "unknown option .--timline. (did you mean .--timeline.?)" "$tmp/bo.err"'
"$DTSIM" sweep frob tests/data/sweep/grid.yaml >/dev/null 2>"$tmp/bo.err"; rc=$?
check "sweep frob SPEC: exit 2, an unknown verb (was: 'another argument SPEC')" '[ $rc -eq 2 ] && grep -q "unknown verb .frob.: expected run, collect or plan" "$tmp/bo.err"'
"$DTSIM" gen --tp 2 -o "$tmp/np.dtt" >/dev/null 2>"$tmp/bo.err"; rc=$?
check "gen without a preset: exit 2 asking for the preset (was: 'expected -o OUT or --summary')" '[ $rc -eq 2 ] && grep -q "gen: expected a PRESET .* or --workload FILE" "$tmp/bo.err"'
"$DTSIM" gen neox-19m --tp x --summary >/dev/null 2>"$tmp/bo.err"; rc=$?
check "gen --tp x: the error names the flag" '[ $rc -eq 2 ] && grep -q "error: --tp: .tp. expects a whole number" "$tmp/bo.err"'

# --- one standard output for one thing: an output that would share it with the report is refused
"$DTSIM" run --timeline - tests/data/node8.yaml tests/data/allreduce8.dtt >"$tmp/so.out" 2>"$tmp/so.err"; rc=$?
check "run --timeline -: exit 2 before the run (was: the timeline, then the report, on stdout)" \
  '[ $rc -eq 2 ] && [ ! -s "$tmp/so.out" ] && grep -q "timeline - : the report goes to standard output" "$tmp/so.err"'
"$DTSIM" calibrate platforms/dgx-h100.yaml tests/data/h100_all_reduce_perf.txt -o - >"$tmp/so.out" 2>"$tmp/so.err"; rc=$?
check "calibrate -o -: exit 2 before the fit (was: the table, then the YAML, on stdout)" \
  '[ $rc -eq 2 ] && [ ! -s "$tmp/so.out" ] && grep -q "calibrate: -o -: the report goes to standard output" "$tmp/so.err"'
# --- issue 9, the command line's remaining gaps (each failed before)
# a device or a pipe where --plot wants a folder: said so (was: "found a file" for /dev/full)
"$DTSIM" run tests/data/node8.yaml tests/data/allreduce8.dtt --plot /dev/full >/dev/null 2>"$tmp/pd.err"; rc=$?
check "run --plot /dev/full: exit 2, a device, not a folder" \
  '[ $rc -eq 2 ] && grep -q "error: --plot /dev/full: is a device, not a folder: --plot writes several files" "$tmp/pd.err"'
# --max-output past 64 bits states the range (was: the form alone)
"$DTSIM" gen neox-19m --max-output 99999999999999999999T -o "$tmp/mo.dtt" >/dev/null 2>"$tmp/mo.err"; rc=$?
check "gen --max-output 99999999999999999999T: exit 2 stating the range" \
  '[ $rc -eq 2 ] && grep -q -- "--max-output expects a size in bytes from 0 to 18446744073709551615 (2^64-1, 16777215T at most in T).*found .99999999999999999999T., which is more" "$tmp/mo.err"'
"$DTSIM" gen neox-19m --max-output 16777216T -o "$tmp/mo.dtt" >/dev/null 2>"$tmp/mo.err"; rc=$?
check "gen --max-output 16777216T (2^64 bytes): exit 2, more than the range" '[ $rc -eq 2 ] && grep -q "which is more" "$tmp/mo.err"'
# a reversed range says so (was: the form alone)
"$DTSIM" run tests/data/jobs-oversub4.yaml --job a tests/data/jobs-alltoall2.dtt --nodes 1-0 >/dev/null 2>"$tmp/nr.err"; rc=$?
check "run --job --nodes 1-0: exit 2, a reversed range" '[ $rc -eq 2 ] && grep -q "found .1-0.: .1-0. is a reversed range: write the first number first (0-1)" "$tmp/nr.err"'
"$DTSIM" run tests/data/jobs-oversub4.yaml --job a tests/data/jobs-alltoall2.dtt --nodes 0,99 >/dev/null 2>"$tmp/nr.err"; rc=$?
check "run --job --nodes 0,99: exit 2 naming the item past the last node" '[ $rc -eq 2 ] && grep -q "found .0,99.: .99. is past the last one, " "$tmp/nr.err"'
"$DTSIM" run --timeline "$tmp/tr.json" --timeline-ranks 5-2 tests/data/node8.yaml tests/data/allreduce8.dtt >/dev/null 2>"$tmp/nr.err"; rc=$?
check "--timeline-ranks 5-2: exit 2, a reversed range" '[ $rc -eq 2 ] && grep -q "found .5-2.: .5-2. is a reversed range" "$tmp/nr.err"'
# every generator flag's bad value names the flag, in gen and in run --gen
names=0
for f in tp pp dp zero recompute schedule virtual-stages microbatch global-batch seq bucket experts top-k ep dtype \
  layers hidden heads kv-heads ffn vocab cp param-gather-prefetch; do
  "$DTSIM" gen neox-19m --$f 0.3x --summary >/dev/null 2>"$tmp/gf.err"
  [ $? -eq 2 ] && grep -q -- "--$f" "$tmp/gf.err" && names=$((names + 1))
  "$DTSIM" run tests/data/node8.yaml --gen neox-19m --$f 0.3x >/dev/null 2>"$tmp/gf.err"
  [ $? -eq 2 ] && grep -q -- "--$f" "$tmp/gf.err" && names=$((names + 1))
done
check "each of the 23 generator flags with a value: a bad value is exit 2 naming the flag (gen and run --gen: $names of 46)" '[ $names -eq 46 ]'
# a check of several keys together names the flags that gave them (was: "tensor parallel size 3 does not divide the
# 8 attention heads" alone)
"$DTSIM" gen neox-19m --tp 3 --set seq=1024 --no-dp-overlap --summary >/dev/null 2>"$tmp/gf.err"; rc=$?
check "gen --tp 3 (8 heads): exit 2 naming the flags given" \
  '[ $rc -eq 2 ] && grep -q "does not divide the 8 attention heads (given on the command line: --tp 3 --set seq=1024 --no-dp-overlap)" "$tmp/gf.err"'
"$DTSIM" run tests/data/node8.yaml --gen neox-19m --microbatch 7 --global-batch 8 >/dev/null 2>"$tmp/gf.err"; rc=$?
check "run --gen --microbatch 7 --global-batch 8: exit 2 naming both flags" \
  '[ $rc -eq 2 ] && grep -q "not a multiple of micro-batch 7 .* (given on the command line: --microbatch 7 --global-batch 8)" "$tmp/gf.err"'
"$DTSIM" gen neox-19m --bucket 0.3 --summary >/dev/null 2>"$tmp/gf.err"; rc=$?
check "gen --bucket 0.3: exit 2 naming --bucket" '[ $rc -eq 2 ] && grep -q -- "--bucket" "$tmp/gf.err"'
# an unreadable --placement names the option (was: "nope.txt: cannot open placement file")
"$DTSIM" run tests/data/node8.yaml tests/data/allreduce8.dtt --placement "$tmp/nope.txt" >/dev/null 2>"$tmp/pl.err"; rc=$?
check "--placement MISSING: exit 2 naming the option" '[ $rc -eq 2 ] && grep -q "error: --placement .*nope.txt: cannot open placement file: No such file" "$tmp/pl.err"'
"$DTSIM" run tests/data/jobs-oversub4.yaml --job a tests/data/jobs-alltoall2.dtt --placement "$tmp/nope.txt" >/dev/null 2>"$tmp/pl.err"; rc=$?
check "--job ... --placement MISSING: exit 2 naming the job and the option" '[ $rc -eq 2 ] && grep -q "error: job .a.: --placement .*nope.txt: cannot open" "$tmp/pl.err"'
# every command refuses a stray argument (was: 'dtsim version extra' printed the version)
stray=0
for c in "version" "help run" "platform check platforms/dgx-a100.yaml" "gen neox-19m --summary" \
  "bench all_reduce --platform platforms/dgx-a100.yaml" "sweep plan tests/data/sweep/grid.yaml" \
  "validate --references validation/references" "run tests/data/node8.yaml --gen neox-19m"; do
  # shellcheck disable=SC2086
  "$DTSIM" $c extra1 extra2 >"$tmp/st.out" 2>"$tmp/st.err"; rc=$?
  if [ $rc -eq 2 ] && grep -q "extra1" "$tmp/st.err" && [ ! -s "$tmp/st.out" ]; then stray=$((stray + 1)); else echo "  stray arguments accepted: dtsim $c extra1 extra2 (exit $rc)"; fi
done
check "every command refuses stray arguments: exit 2 naming the first, nothing on stdout ($stray of 8; was: version printed itself)" '[ $stray -eq 8 ]'
"$DTSIM" version --help >"$tmp/st.out" 2>&1; rc=$?
check "version --help: the usage, exit 0" '[ $rc -eq 0 ] && grep -q "^usage: dtsim version" "$tmp/st.out"'
# one prefix: an error after the command line is 'dtsim: error:' in every command (was 'dtsim calibrate: error:',
# 'dtsim bench: error:', 'dtsim validate: error:')
pre=0
"$DTSIM" calibrate "$tmp/nope.yaml" tests/data/h100_all_reduce_perf.txt >/dev/null 2>"$tmp/pf.err"; grep -q "^dtsim: error: " "$tmp/pf.err" && pre=$((pre + 1))
"$DTSIM" bench all_reduce --platform "$tmp/nope.yaml" >/dev/null 2>"$tmp/pf.err"; grep -q "^dtsim: error: " "$tmp/pf.err" && pre=$((pre + 1))
"$DTSIM" validate --references "$tmp" --platforms "$tmp" >/dev/null 2>"$tmp/pf.err"; grep -q "^dtsim: error: " "$tmp/pf.err" && pre=$((pre + 1))
"$DTSIM" sweep plan "$tmp/nope.yaml" >/dev/null 2>"$tmp/pf.err"; grep -q "^dtsim: error: " "$tmp/pf.err" && pre=$((pre + 1))
"$DTSIM" gen --workload "$tmp/nope.yaml" --summary >/dev/null 2>"$tmp/pf.err"; grep -q "^dtsim: error: " "$tmp/pf.err" && pre=$((pre + 1))
"$DTSIM" run "$tmp/nope.yaml" tests/data/allreduce8.dtt >/dev/null 2>"$tmp/pf.err"; grep -q "^dtsim: error: " "$tmp/pf.err" && pre=$((pre + 1))
"$DTSIM" platform check "$tmp/nope.yaml" >/dev/null 2>"$tmp/pf.err"; grep -q "^dtsim: error: " "$tmp/pf.err" && pre=$((pre + 1))
check "an error after the command line begins 'dtsim: error:' in calibrate, bench, validate, sweep, gen, run, platform ($pre of 7)" '[ $pre -eq 7 ]'
if grep -rhoE '"dtsim [a-z-]+( --e2e)?: (error|note):' sim/ >"$tmp/pf.src"; then bad "no 'dtsim SUBCOMMAND: error:' or ': note:' left in sim/: $(sort -u "$tmp/pf.src" | tr '\n' ' ')"; else ok "no 'dtsim SUBCOMMAND: error:' or ': note:' left in sim/"; fi


finish
