#!/usr/bin/env bash
# End-to-end tests of the report's analysis sections (docs/report.md): per-link accounting, bound, critical path,
# exposed communication per dimension, histogram, timeline. Expected values come from closed forms and hand counts
# with the constants of the shipped test platforms, never from an earlier run.
# usage: tests/e2e_report.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: e2e_report.sh DTSIM}
source "$(dirname "$0")/e2e-lib.sh"

# --- shared NIC: ranks 0 and 1 send 1 GB each through node 0's one NIC (25 GB/s): 2 GB / 25 GB/s = 80 ms,
# the NIC busy the whole makespan (less the route latency before the first byte), two flows at once
"$DTSIM" run --json tests/data/shared-nic.yaml tests/data/shared-nic.dtt >"$tmp/nic.json" 2>"$tmp/nic.err"; rc=$?
check "shared NIC exits 0" '[ $rc -eq 0 ]'
check "shared NIC: busiest link is nic0.0 up or nic1.0 down" \
  '[ "$(jq -r ".links.top[0].name" "$tmp/nic.json")" = "nic0.0 up" ] || [ "$(jq -r ".links.top[0].name" "$tmp/nic.json")" = "nic1.0 down" ]'
got=$(jq -r '.links.top[] | select(.name == "nic0.0 up") | .bytes' "$tmp/nic.json")
check "shared NIC: nic0.0 up carries 2e9 bytes ($got)" 'close "$got" 2e9 1e-12'
got=$(jq -r '.links.top[] | select(.name == "nic0.0 up") | .busy' "$tmp/nic.json")
check "shared NIC: nic0.0 up busy $got > 0.999" 'awk -v b="$got" "BEGIN { exit !(b > 0.999 && b <= 1) }"'
check "shared NIC: two flows at once" '[ "$(jq -r ".links.top[] | select(.name == \"nic0.0 up\") | .peak_flows" "$tmp/nic.json")" = 2 ]'
check "shared NIC: gpu-nic class, 2 of 4 directions used" \
  '[ "$(jq -c ".links.classes[] | select(.class == \"gpu-nic\") | [.links, .used]" "$tmp/nic.json")" = "[4,2]" ]'
"$DTSIM" run --json --no-links tests/data/shared-nic.yaml tests/data/shared-nic.dtt >"$tmp/nolinks.json" 2>/dev/null
check "--no-links: no links key, same makespan" \
  '[ "$(jq -r "has(\"links\")" "$tmp/nolinks.json")" = false ] && [ "$(jq .makespan_s "$tmp/nolinks.json")" = "$(jq .makespan_s "$tmp/nic.json")" ]'
"$DTSIM" run tests/data/shared-nic.yaml tests/data/shared-nic.dtt >"$tmp/nic.txt" 2>&1
check "text report lists the busiest links" 'grep -q "^busiest links" "$tmp/nic.txt" && grep -q "nic0.0 up" "$tmp/nic.txt"'
sentence=$(jq -r .bound.sentence "$tmp/nic.json")
check "shared NIC: the bound sentence names the NIC ($sentence)" \
  'echo "$sentence" | grep -Eq "gpu-nic tier.*(nic0.0 up|nic1.0 down), busy 100 %"'
check "shared NIC: bound is send/recv communication on nic0.0 up" \
  '[ "$(jq -r "[.bound.what, .bound.kind, .bound.link] | join(\" \")" "$tmp/nic.json")" = "comm send nic0.0 up" ]'

# --- exposed communication (tests/data/node2.yaml: a 2-rank ring all-reduce of S bytes takes 2a + S/B, a = 2 us,
# B = 10 GB/s): beside a 10 ms compute on another stream, 50 MB (5.004 ms) is hidden, 200 MB (20.004 ms) is exposed
# for exactly 20.004 - 10 = 10.004 ms, under DP (the group is dp0)
for S in 50000000 200000000; do
  { echo "dtsim_trace 1"; echo "ranks 2"; echo "group dp0 0-1"
    for r in 0 1; do echo "rank $r"; echo "s0 compute dur=10ms"; echo "s1 allreduce group=dp0 bytes=$S"; done; } >"$tmp/ex$S.dtt"
  "$DTSIM" run --json tests/data/node2.yaml "$tmp/ex$S.dtt" >"$tmp/ex$S.json" 2>/dev/null
  t=$(awk -v S=$S 'BEGIN { printf "%.12g", 2 * 2e-6 + S / 10e9 }')
  want=$(awk -v t=$t 'BEGIN { e = t - 0.01; printf "%.12g", (e > 0 ? e : 0) }')
  for r in 0 1; do
    got=$(jq -r ".per_rank[$r].exposed_by_dim_s.DP" "$tmp/ex$S.json")
    if [ $S = 50000000 ]; then
      check "exposed: $S B hidden behind the compute, rank $r DP exposed $got = 0" '[ "$got" = 0 ]'
    else
      check "exposed: $S B, rank $r DP exposed $got = t - 10 ms = $want" 'close "$got" "$want" 1e-9'
    fi
  done
  got=$(jq -r '.bound.comm_s.DP.allreduce // 0' "$tmp/ex$S.json")
  check "exposed: $S B, critical path DP all-reduce $got = $want" 'close "$got" "$want" 1e-9 || [ "$got" = "$want" ]'
  got=$(jq -r .bound.compute_s "$tmp/ex$S.json")
  check "exposed: $S B, critical path compute $got = 10 ms" 'close "$got" 0.01 1e-9'
done
check "exposed: 200 MB, the bound is the DP all-reduce" \
  '[ "$(jq -r "[.bound.what, .bound.dim, .bound.kind] | join(\" \")" "$tmp/ex200000000.json")" = "comm DP allreduce" ]'
check "exposed: 50 MB, the bound is compute" '[ "$(jq -r .bound.what "$tmp/ex50000000.json")" = compute ]'
# the text report's two measures have two names: the critical path's share (10.004 ms of the 20.004 ms makespan,
# 50.0 %) is "comm on the path", the per-rank time not covered by compute (10.004 ms) "exposed comm"
"$DTSIM" run tests/data/node2.yaml "$tmp/ex200000000.dtt" >"$tmp/ex.txt" 2>/dev/null
check "text: the critical-path line says 'comm on the path DP allreduce 50.0 %', not 'exposed comm'" \
  'grep -q "^critical path .*waiting 0.0 %, comm on the path DP allreduce 50.0 %$" "$tmp/ex.txt" && ! grep "^critical path" "$tmp/ex.txt" | grep -q exposed'
check "the bound sentence uses the same term, text and JSON: 'comm on the path DP allreduce ...: 50.0 %' (was 'exposed DP allreduce')" \
  'grep -q "^bound  *comm on the path DP allreduce.*: 50.0 % of the iteration" "$tmp/ex.txt" && ! grep "^bound" "$tmp/ex.txt" | grep -q exposed &&
   jq -r .bound.sentence "$tmp/ex200000000.json" | grep -q "^comm on the path DP allreduce.*: 50.0 % of the iteration"'
check "text: the per-rank table keeps 'exposed comm' (10 ms, rank 0)" \
  'grep -q "^per rank .* exposed comm " "$tmp/ex.txt" && grep -Eq "^  rank 0 .* 10(\.0*)? ms" "$tmp/ex.txt"'

# --- oversubscribed fat-tree permutation (tests/data/fat-tree-perm.yaml: 2 leaves of 6 nodes, 2 up-ports each,
# every link 25 GB/s): after a 10 ms compute, node i sends S to node i+6 mod 12 and receives from it. Uplink =
# destination NIC mod 2, so each of the 8 leaf-spine directions carries 3 flows: each flow gets B/3 and all end at
# T = alpha + 3S/B, alpha = 2 NICs x 1 us + 4 cables x 100 ns. Leaf-spine bytes: 12 flows x 2 cables x S; every
# leaf-spine direction is busy T of the makespan 10 ms + T.
S=250000000
{ echo "dtsim_trace 1"; echo "ranks 12"
  for r in $(seq 0 11); do p=$(( (r + 6) % 12 )); echo "rank $r"; echo "s0 compute dur=10ms"
    echo "s0 send peer=$p bytes=$S batch=1"; echo "s0 recv peer=$p bytes=$S batch=1"; done; } >"$tmp/perm.dtt"
"$DTSIM" run --json tests/data/fat-tree-perm.yaml "$tmp/perm.dtt" >"$tmp/perm.json" 2>"$tmp/perm.err"; rc=$?
check "permutation exits 0" '[ $rc -eq 0 ]'
T=$(awk -v S=$S 'BEGIN { printf "%.12g", 2 * 1e-6 + 4 * 100e-9 + 3 * S / 25e9 }')
got=$(jq -r .makespan_s "$tmp/perm.json")
check "permutation: makespan $got = 10 ms + alpha + 3S/B" 'close "$got" "$(awk -v T=$T "BEGIN { print 0.01 + T }")" 1e-9'
got=$(jq -r '.links.classes[] | select(.class == "leaf-spine") | .bytes' "$tmp/perm.json")
check "permutation: leaf-spine bytes $got = 24 S by hand" 'close "$got" $((24 * S)) 1e-12'
check "permutation: all 8 leaf-spine directions used" \
  '[ "$(jq -c ".links.classes[] | select(.class == \"leaf-spine\") | [.links, .used, .peak_flows]" "$tmp/perm.json")" = "[8,8,3]" ]'
want=$(awk -v T=$T 'BEGIN { printf "%.12g", T / (0.01 + T) }')
for key in busy_mean busy_max; do
  got=$(jq -r ".links.classes[] | select(.class == \"leaf-spine\") | .$key" "$tmp/perm.json")
  check "permutation: leaf-spine $key $got = T / (10 ms + T) = $want" 'close "$got" "$want" 1e-9'
done
got=$(jq -r '.links.classes[] | select(.class == "nic-leaf") | .bytes' "$tmp/perm.json")
check "permutation: nic-leaf bytes $got = 24 S (each flow up and down)" 'close "$got" $((24 * S)) 1e-12'
check "permutation: the bound names the leaf-spine tier" 'jq -r .bound.sentence "$tmp/perm.json" | grep -q "over the leaf-spine tier"'

# --- critical path: contiguous in time, ends at the makespan, sums to it (a generated 2x2x2 iteration)
"$DTSIM" run --json platforms/dgx-h100-4node.yaml --gen gpt3-175b --tp 8 --pp 2 --dp 2 --layers 4 --global-batch 8 \
  >"$tmp/gen.json" 2>/dev/null
ms=$(jq -r .makespan_s "$tmp/gen.json")
check "critical path ends at the makespan" 'close "$(jq -r ".critical_path.segments[-1].end_s" "$tmp/gen.json")" "$ms" 1e-9'
check "critical path starts at 0" '[ "$(jq -r ".critical_path.segments[0].start_s" "$tmp/gen.json")" = 0 ]'
gaps=$(jq -r '.critical_path.segments as $s | [range(1; $s | length) | select(($s[.].start_s - $s[. - 1].end_s) | fabs > 1e-12)] | length' "$tmp/gen.json")
check "critical path: consecutive ops touch ($gaps gaps)" '[ "$gaps" = 0 ]'
check "critical path: all ops listed" '[ "$(jq -r ".critical_path.segments | length" "$tmp/gen.json")" = "$(jq -r .critical_path.ops "$tmp/gen.json")" ]'
sum=$(jq -r '.bound | .compute_s + .host_s + .wait_s + ([.comm_s[][]] | add)' "$tmp/gen.json")
check "critical path split $sum sums to the makespan $ms" 'close "$sum" "$ms" 1e-9'
check "generated run: TP, PP and DP histograms" '[ "$(jq -r ".histogram.by_dim | keys | join(\",\")" "$tmp/gen.json")" = "DP,PP,TP" ]'

# --- histogram: per-rank bytes per instance by powers of two (allreduce8: one 64 MiB instance)
"$DTSIM" run --json tests/data/node8.yaml tests/data/allreduce8.dtt >"$tmp/ar.json" 2>/dev/null
check "histogram: one all-reduce of 64 MiB in [64 MiB, 128 MiB)" \
  '[ "$(jq -c ".histogram.by_kind.allreduce" "$tmp/ar.json")" = "[{\"min_bytes\":67108864,\"below_bytes\":134217728,\"count\":1,\"bytes\":67108864}]" ]'

# --- timeline: Chrome trace event JSON, one slice per op (counted in the same trace written as a native file),
# slice ends equal the simulated times (the last one the makespan; every critical-path op ends where its slice does)
GEN="--gen gpt3-175b --tp 8 --pp 2 --dp 2 --layers 4 --global-batch 8"
"$DTSIM" gen ${GEN#--gen } -o "$tmp/gen.dtt" >/dev/null 2>&1
nops=$(grep -cE '^s[0-9]+ ' "$tmp/gen.dtt")
"$DTSIM" run --json --timeline "$tmp/tl.json" platforms/dgx-h100-4node.yaml $GEN >"$tmp/tlrun.json" 2>/dev/null; rc=$?
check "timeline run exits 0" '[ $rc -eq 0 ]'
cat >"$tmp/tl.py" <<'PY'
import json, sys
tl = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))
nops = int(sys.argv[3])
x = [e for e in tl["traceEvents"] if e["ph"] == "X"]
errors = []
if len(x) != nops:
    errors.append(f"{len(x)} slices for {nops} ops")
end = max(e["ts"] + e["dur"] for e in x)
if abs(end - rep["makespan_s"] * 1e6) > 1e-6 * end:
    errors.append(f"last slice ends at {end} us, makespan {rep['makespan_s']} s")
names = {(e["pid"], e["args"]["name"]) for e in tl["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"}
ranks = {n for n in names if n[1].startswith("rank ")}
if len(ranks) != rep["ranks"]:
    errors.append(f"{len(ranks)} rank processes for {rep['ranks']} ranks")
if len(names) != len(ranks) + ("links" in rep):  # and the fabric's, when links are counted
    errors.append(f"{len(names) - len(ranks)} other processes")
by = {(e["pid"], e["tid"], e["args"]["index"]): e for e in x}
for s in rep["critical_path"]["segments"]:
    e = by.get((s["rank"], s["stream"], s["op"]))
    if e is None or abs(e["ts"] + e["dur"] - s["end_s"] * 1e6) > 1e-6 * max(1.0, s["end_s"] * 1e6):
        errors.append(f"critical-path op {s} has no slice ending with it")
        break
comm = [e for e in x if e["cat"] == "comm"]
if not comm or any(k not in comm[0]["args"] for k in ("bytes", "dim", "algorithm")):
    errors.append("communication slices lack bytes, dim or algorithm")
print("; ".join(errors) if errors else "ok")
PY
got=$(python3 "$tmp/tl.py" "$tmp/tl.json" "$tmp/tlrun.json" "$nops" 2>&1)
check "timeline: $nops slices, one per op, ends equal the simulated times ($got)" '[ "$got" = ok ]'
"$DTSIM" run --json --timeline "$tmp/tl2.json" --timeline-ranks 0-1,9 platforms/dgx-h100-4node.yaml $GEN >/dev/null 2>&1
check "--timeline-ranks 0-1,9 writes ranks 0, 1 and 9 only" \
  '[ "$(jq -c "[.traceEvents[] | select(.ph == \"X\") | .pid] | unique" "$tmp/tl2.json")" = "[0,1,9]" ]'
"$DTSIM" run --timeline "$tmp/tl3.json" --timeline-ranks 0-99 platforms/dgx-h100-4node.yaml $GEN >/dev/null 2>&1; rc=$?
check "--timeline-ranks outside the trace: exit 2" '[ $rc -eq 2 ]'

# huge values keep the columns: an 8 PiB all-reduce on a 1 EB/s switch (algbw 1e9 GB/s) and 1e7 s of compute
sed 's|100GB/s|1000PB/s|g' tests/data/node8.yaml >"$tmp/fast.yaml"
{
  printf 'dtsim_trace 1\nranks 2\ngroup w 0-1\n'
  for r in 0 1; do
    printf 'rank %d\ns0 allreduce group=w bytes=9007199254740992\n' $r
    for _ in 1 2 3 4 5 6 7 8 9 10; do echo "s0 compute dur=1000000s"; done
  done
} >"$tmp/huge.dtt"
"$DTSIM" run "$tmp/fast.yaml" "$tmp/huge.dtt" >"$tmp/huge.txt" 2>/dev/null
# every value of the by-op-kind row and the per-rank rows starts under its header's word, after a space
aligned() { # HEADER-REGEX ROW-REGEX WORD...
  awk -v h="$1" -v r="$2" -v words="$3" '
    $0 ~ h && hd == "" { hd = $0 } $0 ~ r && hd != "" && row == "" { row = $0 }
    END { n = split(words, w, " "); if (row == "") exit 1
          for (i = 1; i <= n; i++) { c = index(hd, w[i]); if (c < 2 || substr(row, c - 1, 1) != " " || substr(row, c, 1) == " ") exit 1 } }' "$tmp/huge.txt"
}
check "huge values keep the by-op-kind columns (engineering notation)" \
  'aligned "^by op kind" "^  allreduce " "count bytes time algbw busbw" && grep -q "^  allreduce .* 9.99[0-9]e+08 " "$tmp/huge.txt"'
check "huge times keep the per-rank columns" 'aligned "^per rank" "^  rank 0 " "compute comm exposed wait" && grep -q "^makespan *1e+07 s" "$tmp/huge.txt"'

# --- the send row of a batch whose peer posts its receives one after the other (tests/data/node8.yaml: a pair of
# S = 1 MiB takes alpha + S/B = 2 us + 10.49 us): rank 0 batches 10 sends, rank 1 posts 10 receives unbatched, so
# the pairs run one after the other and the row's time is 10 (alpha + S/B), as the makespan (it counted the last
# pair's 12.5 us only: the batch's latest arrival to its last completion, algbw 840 GB/s on a 100 GB/s link)
{ printf 'dtsim_trace 1\nranks 2\nrank 0\n'; for i in 1 2 3 4 5 6 7 8 9 10; do echo "s0 send peer=1 bytes=1048576 batch=1"; done
  echo "rank 1"; for i in 1 2 3 4 5 6 7 8 9 10; do echo "s0 recv peer=0 bytes=1048576"; done; } >"$tmp/seq10.dtt"
"$DTSIM" run --json tests/data/node8.yaml "$tmp/seq10.dtt" >"$tmp/seq10.json" 2>/dev/null
want=$(awk 'BEGIN { printf "%.12g", 10 * (2e-6 + 1048576 / 100e9) }')
check "a batch whose peer posts unbatched: the send row counts 10 (alpha + S/B) = $want s (was the last pair's)" \
  'close "$(jq -r .makespan_s "$tmp/seq10.json")" "$want" 1e-9 && close "$(jq -r .by_kind.send.time_s "$tmp/seq10.json")" "$want" 1e-9'
"$DTSIM" run --json --explain tests/data/node8.yaml "$tmp/seq10.dtt" >"$tmp/seq10x.json" 2>/dev/null
check "--explain times that batch's queue as the send row does: 10 (alpha + S/B) (was 12.5 us)" \
  'close "$(jq -r ".explain_p2p[0].mean_s" "$tmp/seq10x.json")" "$want" 1e-9 && [ "$(jq -r ".explain_p2p[0].batch_pairs" "$tmp/seq10x.json")" = 10 ]'

finish
