#!/usr/bin/env bash
# End-to-end tests of Kineto captures through the dtsim binary: the three shipped real captures
# (traces/samples/, counts from traces/samples/README.md) and small hand-made ones in tests/data/. Expected
# values are hand counts (jq on the capture) and closed forms derived from the capture's dependency
# structure, never earlier output.
# usage: tests/e2e_kineto.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: e2e_kineto.sh DTSIM}
source "$(dirname "$0")/e2e-lib.sh"
S=traces/samples
AR2=$S/allreduce_bcast_2ranks_rank0.json.gz

# --- the shipped capture on the platform it was captured on (A100, 2 ranks): the host launch timeline
# reproduces the captured step time (mean ProfilerStep duration, from jq) within 5 %
captured=$(zcat $AR2 | jq '[.traceEvents[] | select(.name | startswith("ProfilerStep#")) | .dur] | add / length / 1e6')
"$DTSIM" run --json platforms/dgx-a100.yaml $AR2 >"$tmp/a100.json" 2>"$tmp/err"; rc=$?
mean_a100=$(jq '.iterations_s | add / length' "$tmp/a100.json")
check "shipped capture on dgx-a100 runs" '[ $rc -eq 0 ]'
check "host timeline within 5% of the captured step ($mean_a100 s vs $captured s)" 'close "$mean_a100" "$captured" 0.05'
check "host timeline is the default and says so" 'jq -e "[.notes[] | select(test(\"host launch timeline\"))] | length == 1" "$tmp/a100.json" >/dev/null'

# --- the host timeline is plain native format: host threads are streams of delay ops (s1000, s1001), launches
# and waits are after= edges; written out and read back it replays the same
"$DTSIM" import $AR2 -o "$tmp/host.dtt" 2>/dev/null
"$DTSIM" run --json platforms/dgx-a100.yaml "$tmp/host.dtt" >"$tmp/host.json" 2>/dev/null
check "host timeline written as native ops replays identically" \
  'grep -q "^s1001 delay dur=" "$tmp/host.dtt" && grep -q "^s7 compute .*after=s100[01]:" "$tmp/host.dtt" && [ "$(jq -c "[.iterations_s, .by_kind]" "$tmp/host.json")" = "$(jq -c "[.iterations_s, .by_kind]" "$tmp/a100.json")" ]'

# --- expanded to 32 ranks on dgx-h100-4node. Derivation: under the host timeline every op waits only for its
# launch, its stream predecessor and captured edges, so no op can start later than in the capture unless a
# simulated collective outlasts its captured kernel. The longest simulated all-reduce (the largest bucket,
# 30764 KiB, on 32 ranks: dtsim bench) is shorter than the shortest captured all-reduce kernel (jq), so the
# expected growth of the iteration is zero although the all-reduce time grows several-fold.
big=$(zcat $AR2 | jq '[.traceEvents[] | select(.cat=="kernel" and (.name|startswith("ncclKernel_AllReduce"))) | .args."In msg nelems" * 4] | max')
dmin=$(zcat $AR2 | jq '[.traceEvents[] | select(.cat=="kernel" and (.name|startswith("ncclKernel_AllReduce"))) | .dur] | min / 1e6')
t32=$("$DTSIM" bench all_reduce --platform platforms/dgx-h100-4node.yaml -b "$big" -e "$big" --json 2>/dev/null | jq '.[0].time_us / 1e6')
check "premise: longest 32-rank all-reduce ($t32 s) is shorter than the shortest captured one ($dmin s)" \
  'awk -v a="$t32" -v b="$dmin" "BEGIN { exit !(a > 0 && a < b) }"'
"$DTSIM" run --json platforms/dgx-h100-4node.yaml $AR2 --expand 2 >"$tmp/h2.json" 2>/dev/null
"$DTSIM" run --json platforms/dgx-h100-4node.yaml $AR2 --expand 32 >"$tmp/h32.json" 2>"$tmp/err"; rc=$?
m2=$(jq '.iterations_s | add / length' "$tmp/h2.json")
m32=$(jq '.iterations_s | add / length' "$tmp/h32.json")
a2=$(jq '.by_kind.allreduce.time_s' "$tmp/h2.json")
a32=$(jq '.by_kind.allreduce.time_s' "$tmp/h32.json")
check "32-rank expansion runs" '[ $rc -eq 0 ] && [ "$(jq .ranks "$tmp/h32.json")" = 32 ]'
check "all-reduce time grows more than 5x at 32 ranks ($a2 -> $a32 s)" 'awk -v a="$a2" -v b="$a32" "BEGIN { exit !(b > 5 * a) }"'
check "iteration grows by the derived 0 ($m2 -> $m32 s)" 'close "$m32" "$m2" 0.002'

# --- a capture whose host waits for the all-reduce (cudaStreamSynchronize covering it): the communication is on
# the critical path. Hand derivation (tests/data/kineto_sync_rank-0.json, us): the host's delays end at k1's
# launch (5), the all-reduce's (10); k1 runs [5, 1005]; the all-reduce waits for k1 (captured back-to-back, within
# the 5 us window) and runs [1005, 1005 + T]; the sync holds 4 more (1066 - 1062), k2 is launched 9 after
# (1075 - 1066) and runs 1000: makespan = 2018 us + T on any platform, T being the all-reduce's time.
SYNC=tests/data/kineto_sync_rank-0.json
for p in "platforms/dgx-a100.yaml" "platforms/dgx-h100-4node.yaml --expand 32"; do
  "$DTSIM" run --json $p $SYNC >"$tmp/sync.json" 2>"$tmp/err"; rc=$?
  ms=$(jq .makespan_s "$tmp/sync.json")
  T=$(jq .by_kind.allreduce.time_s "$tmp/sync.json")
  check "sync capture on ${p%% *}: makespan = 2018 us + all-reduce time" \
    '[ $rc -eq 0 ] && close "$ms" "$(awk -v t="$T" "BEGIN { printf \"%.15g\", 2018e-6 + t }")" 1e-9'
done
check "rank of a capture without distributedInfo taken from its rank-N file name" \
  'grep -q "capture rank 0 taken from the file name" "$tmp/err"'
cp $SYNC "$tmp/capture.json"
"$DTSIM" run --json platforms/dgx-a100.yaml "$tmp/capture.json" >/dev/null 2>"$tmp/err"; rc=$?
check "no rank anywhere: exit 2 asking for --rank" '[ $rc -eq 2 ] && grep -q -- "--rank" "$tmp/err"'
"$DTSIM" run --json platforms/dgx-a100.yaml "$tmp/capture.json" --rank 1 --expand 2 >"$tmp/r.json" 2>"$tmp/err"; rc=$?
check "--rank gives the rank" '[ $rc -eq 0 ] && grep -q "capture rank 1 taken from the --rank option" "$tmp/err"'
# an element count too large for 64 bits: exit 2, the byte offset, the key and the value found
sed 's/"In msg nelems": 16777216/"In msg nelems": 99999999999999999999999/' $SYNC >"$tmp/huge_rank-0.json"
"$DTSIM" import --explain "$tmp/huge_rank-0.json" >/dev/null 2>"$tmp/err"; rc=$?
check "an element count over 2^63 is exit 2 naming the key, the offset and the value" \
  '[ $rc -eq 2 ] && grep -q "near byte [0-9]*: .In msg nelems. is not a non-negative integer below 2^63 (an element count), found .99999999999999999999999." "$tmp/err"'

# --- several ranks' captures of one run merge into one trace: rank 0's capture and a copy saying rank 1
# (distributedInfo.rank edited) is the same run as the expansion of rank 0's capture, so the same iterations
zcat $AR2 | sed 's/"rank": 0, "world_size": 2/"rank": 1, "world_size": 2/' >"$tmp/r1.json"
"$DTSIM" run --json platforms/dgx-a100.yaml $AR2 "$tmp/r1.json" >"$tmp/merged.json" 2>"$tmp/err"; rc=$?
check "two captures of one run merge" '[ $rc -eq 0 ] && grep -q "2 captures merged into one trace of 2 ranks" "$tmp/err"'
check "  the merged run replays as the expanded capture" \
  '[ "$(jq -c "[.iterations_s, .by_kind]" "$tmp/merged.json")" = "$(jq -c "[.iterations_s, .by_kind]" "$tmp/a100.json")" ]'

# --- the two other shipped captures: every collective counted (hand sums in traces/samples/README.md)
"$DTSIM" run --json platforms/dgx-a100.yaml $S/alltoall_allreduce_8ranks_rank3.json.gz >"$tmp/a2a.json" 2>"$tmp/err"; rc=$?
check "8-rank all-to-all capture runs on dgx-a100" '[ $rc -eq 0 ]'
check "  42 all-to-all of 3865189408 bytes" \
  '[ "$(jq -c "[.by_kind.alltoall.count, .by_kind.alltoall.bytes]" "$tmp/a2a.json")" = "[42,3865189408]" ]'
check "  18 all-reduce of 1200223224 bytes, nothing else" \
  '[ "$(jq -c "[.by_kind.allreduce.count, .by_kind.allreduce.bytes, (.by_kind | keys)]" "$tmp/a2a.json")" = "[18,1200223224,[\"allreduce\",\"alltoall\"]]" ]'
"$DTSIM" run --json platforms/dgx-h100-4node.yaml $S/fsdp_like_16ranks_rank0.json.gz >"$tmp/fsdp.json" 2>"$tmp/err"; rc=$?
check "16-rank FSDP capture runs on dgx-h100-4node" '[ $rc -eq 0 ] && [ "$(jq .ranks "$tmp/fsdp.json")" = 16 ]'
check "  45 all-to-all, 10 reduce-scatter, 10 all-gather, 10 all-reduce, 5 unsized" \
  '[ "$(jq -c "[.by_kind.alltoall.count, .by_kind.reducescatter.count, .by_kind.allgather.count, .by_kind.allreduce.count, .by_kind.other.count]" "$tmp/fsdp.json")" = "[45,10,10,10,5]" ]'
check "  bytes 157873564 / 587202560 / 73400320 / 8965794640" \
  '[ "$(jq -c "[.by_kind.alltoall.bytes, .by_kind.reducescatter.bytes, .by_kind.allgather.bytes, .by_kind.allreduce.bytes]" "$tmp/fsdp.json")" = "[157873564,587202560,73400320,8965794640]" ]'

# --- a zero-byte collective followed by a dependent compute completes (latency only)
cat >"$tmp/zero.dtt" <<'DTT'
dtsim_trace 1
ranks 2
group g 0-1
rank 0
s1 allreduce group=g bytes=0
s0 compute dur=1ms after=s1:0
rank 1
s1 allreduce group=g bytes=0
s0 compute dur=1ms after=s1:0
DTT
"$DTSIM" run --json platforms/dgx-a100.yaml "$tmp/zero.dtt" >"$tmp/zero.json" 2>"$tmp/err"; rc=$?
check "zero-byte all-reduce then dependent compute completes" \
  '[ $rc -eq 0 ] && [ "$(jq .by_kind.allreduce.count "$tmp/zero.json")" = 1 ] && awk -v m="$(jq .makespan_s "$tmp/zero.json")" "BEGIN { exit !(m >= 1e-3 && m < 1.1e-3) }"'

# --- a 16 MiB all-to-all among the 8 GPUs of one node, on a platform with NICs and a fabric: NVLink only. The
# direct all-to-all's closed form with the NVLink route (alpha 1us, 450 GB/s): 1us + 7/8 x 16 MiB / 450 GB/s; a
# flow through a NIC (400 Gb/s) would take at least 7/8 x 16 MiB / 50 GB/s
{ echo "dtsim_trace 1"; echo "ranks 8"; echo "group node0 0-7"
  for r in 0 1 2 3 4 5 6 7; do echo "rank $r"; echo "s0 alltoall group=node0 bytes=16777216"; done; } >"$tmp/a2a8.dtt"
"$DTSIM" run --json platforms/dgx-h100-4node.yaml "$tmp/a2a8.dtt" >"$tmp/a2a8.json" 2>"$tmp/err"; rc=$?
t=$(jq .by_kind.alltoall.time_s "$tmp/a2a8.json")
check "16 MiB all-to-all on one node of dgx-h100-4node is NVLink-only ($t s)" \
  '[ $rc -eq 0 ] && close "$t" "$(awk "BEGIN { printf \"%.15g\", 1e-6 + 7 / 8 * 16777216 / 450e9 }")" 1e-6'

finish
