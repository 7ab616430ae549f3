#!/usr/bin/env bash
# End-to-end tests of the replay's exact shortcuts (docs/replay.md, Shortcuts): closed-form waits and folded
# ranks must give what simulating every flow of every rank gives (--exact), to 1e-6, in every reported number
# (iteration, per kind, per rank, per link class), and must be refused where they would not be exact (a shared
# NIC, a DP group sharing the tensor-parallel GPUs' ports).
# usage: tests/e2e_shortcuts.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: e2e_shortcuts.sh DTSIM}
source "$(dirname "$0")/e2e-lib.sh"

# numbers A.json B.json: every number of the report except notes, flattened as path=value lines
numbers() { jq -r '[paths(numbers) as $p | "\($p | map(tostring) | join("/"))=\(getpath($p))"] | .[]' "$1"; }

# same NAME A.json B.json: every reported number agrees within 1e-6 relative (and the same numbers exist)
same() {
  numbers "$2" >"$tmp/a" && numbers "$3" >"$tmp/b" || { bad "$1 (no report)"; return; }
  if paste -d'\n' "$tmp/a" "$tmp/b" | awk -F= 'NR % 2 { k = $1; v = $2; next }
      { if ($1 != k) { print "path " k " vs " $1; bad = 1; exit }
        d = v - $2; if (d < 0) d = -d; s = ($2 < 0 ? -$2 : $2);
        if (d > 1e-6 * s + 1e-12) { print k ": " v " vs " $2; bad = 1; exit } }
      END { exit bad }' >"$tmp/why" && [ "$(wc -l <"$tmp/a")" = "$(wc -l <"$tmp/b")" ]; then
    ok "$1"
  else
    bad "$1: $(head -1 "$tmp/why")"
  fi
}

# run NAME OUT [args]: dtsim run --json args, notes kept
run() {
  local out=$1
  shift
  "$DTSIM" run --json "$@" >"$out" 2>"$tmp/err" || { cat "$tmp/err"; return 1; }
}
has_note() { jq -e --arg s "$2" '[.notes[] | select(contains($s))] | length > 0' "$1" >/dev/null; }

# 1. GPT-3 layers, TP 8 inside a node, PP and DP across nodes on a rail fat-tree: TP rings in closed form and
#    the 8 tensor-parallel ranks folded into one
G="bench/h100-16node.yaml --gen gpt3-175b --tp 8 --pp 4 --dp 2 --global-batch 8 --layers 8"
run "$tmp/fast.json" $G && run "$tmp/exact.json" $G --exact
check "gpt tp8: ranks folded" 'has_note "$tmp/fast.json" "ranks folded: 1 of every 8"'
check "gpt tp8: rings in closed form" 'has_note "$tmp/fast.json" "waited in closed form"'
check "gpt tp8: --exact takes no shortcut" '! has_note "$tmp/exact.json" "shortcuts:"'
same "gpt tp8: same report with and without --exact" "$tmp/fast.json" "$tmp/exact.json"

# 2. one NIC per node: the tensor-parallel ranks' PP and DP traffic would share it, so no folding (rings in a
#    node still in closed form), and the same report
sed -e 's/per_node: 8, bandwidth/per_node: 1, bandwidth/' bench/h100-16node.yaml >"$tmp/onenic.yaml"
G1="$tmp/onenic.yaml --gen gpt3-175b --tp 8 --pp 4 --dp 2 --global-batch 8 --layers 8"
run "$tmp/fast1.json" $G1 && run "$tmp/exact1.json" $G1 --exact
check "one NIC: no folding" '! has_note "$tmp/fast1.json" "ranks folded"'
check "one NIC: rings still in closed form" 'has_note "$tmp/fast1.json" "waited in closed form"'
same "one NIC: same report with and without --exact" "$tmp/fast1.json" "$tmp/exact1.json"

# 3. TP 4: two TP groups per node, and DP rings with a hop inside the node that use the same GPU ports. A TP
#    instance is waited in closed form only when, on every member, the DP all-reduces (stream s1, after= the
#    backward op that made their gradients) are ordered before or after it: here the TP ops of s0 up to the op the
#    first DP bucket waits for. The later ones may run while the DP rings do: flows, unless every DP all-reduce
#    they are not ordered with has completed when they start. The count expected (at least) is taken from the
#    trace itself (docs/replay.md, "Time-separated instances").
# closed_tp TRACE: TP instances issued on s0 at or before the op the rank's first DP all-reduce waits for, and all
closed_tp() {
  awk '/^rank /{ r = $2; i = -1; a[r] = -1; next }
    /^s0 /{ i++; if ($0 ~ / group=tp\./) tp[r, i] = 1; next }
    /^s1 / && a[r] < 0 && / group=dp\./ { match($0, /after=s0:[0-9]+/); a[r] = substr($0, RSTART + 9, RLENGTH - 9) + 0 }
    END { for (k in tp) { split(k, q, SUBSEP); if (q[2] <= a[q[1]]) c++; t++ } print c / 4, t / 4 }' "$1"
}
closed_note() { jq -r '[.notes[] | capture("shortcuts: (?<n>[0-9]+) collective instances waited") | .n][0] // 0' "$1"; }
T4="--gen gpt3-175b --tp 4 --pp 2 --dp 4 --global-batch 16 --layers 8"
"$DTSIM" gen ${T4#--gen } -o "$tmp/tp4.dtt" 2>/dev/null
read -r want total < <(closed_tp "$tmp/tp4.dtt")
run "$tmp/fast4.json" bench/h100-16node.yaml $T4 && run "$tmp/exact4.json" bench/h100-16node.yaml $T4 --exact
check "tp4: the TP instances before the DP buckets in closed form (at least $want of $total)" \
  'n=$(closed_note "$tmp/fast4.json"); [ "$n" -ge "$want" ] && [ "$want" -gt 0 ] && [ "$n" -lt "$total" ]'
check "tp4: --exact takes no shortcut" '! has_note "$tmp/exact4.json" "shortcuts:"'
same "tp4: same report with and without --exact" "$tmp/fast4.json" "$tmp/exact4.json"
# without DP overlap every DP all-reduce waits for the whole backward: every TP instance is separated from them,
# and the TP ranks fold (the DP rings of the 4 images on their own GPU ports and rails)
run "$tmp/fast4o.json" bench/h100-16node.yaml $T4 --no-dp-overlap && run "$tmp/exact4o.json" bench/h100-16node.yaml $T4 --no-dp-overlap --exact
check "tp4 --no-dp-overlap: ranks folded" 'has_note "$tmp/fast4o.json" "ranks folded: 1 of every 4"'
same "tp4 --no-dp-overlap: same report with and without --exact" "$tmp/fast4o.json" "$tmp/exact4o.json"
# DP groups inside the node too (PP 4, DP 2 on 2 nodes): the same report
G4="bench/h100-16node.yaml --gen gpt3-175b --tp 4 --pp 4 --dp 2 --global-batch 8 --layers 8"
run "$tmp/fast4b.json" $G4 && run "$tmp/exact4b.json" $G4 --exact
same "tp4, DP inside the node: same report with and without --exact" "$tmp/fast4b.json" "$tmp/exact4b.json"
# by hand: two TP groups of 4 and four DP pairs in one node; each DP all-reduce (s1) waits for TP op 0 and runs
# while TP op 1 may: TP op 0 in closed form (2 instances), TP op 1 and the DP pairs as flows that share the ports
{ echo "dtsim_trace 1"; echo "ranks 8"; echo "group tp0 0-3"; echo "group tp1 4-7"
  for k in 0 1 2 3; do echo "group dp$k $k,$((k + 4))"; done
  for r in $(seq 0 7); do
    echo "rank $r"
    echo "s0 allreduce group=tp$((r / 4)) bytes=268435456"; echo "s0 allreduce group=tp$((r / 4)) bytes=268435456"
    echo "s1 allreduce group=dp$((r % 4)) bytes=268435456 after=s0:0"
  done
} >"$tmp/overlap.dtt"
run "$tmp/fasto.json" bench/h100-16node.yaml "$tmp/overlap.dtt" && run "$tmp/exacto.json" bench/h100-16node.yaml "$tmp/overlap.dtt" --exact
check "TP and DP at once on one port: only the instance before it in closed form" '[ "$(closed_note "$tmp/fasto.json")" = 2 ]'
same "TP and DP at once on one port: same report with and without --exact" "$tmp/fasto.json" "$tmp/exacto.json"
# the same with a compute of DUR between the two TP all-reduces: 10 ms, and the DP pairs (about 0.6 ms) have
# completed when TP op 1 starts, which is then waited in closed form too (4 instances; the DP pairs, which TP op 1
# may follow at any time, stay flows); 1 us, and they still run (2)
for d in 10ms:4 1us:2; do
  sed -e "/^s0 allreduce/{n;s/^s0 allreduce/s0 compute dur=${d%:*}\n&/}" "$tmp/overlap.dtt" >"$tmp/gap.dtt"
  run "$tmp/fastg.json" bench/h100-16node.yaml "$tmp/gap.dtt" && run "$tmp/exactg.json" bench/h100-16node.yaml "$tmp/gap.dtt" --exact
  check "TP, DP pairs, then TP ${d%:*} later: ${d#*:} instances in closed form" '[ "$(closed_note "$tmp/fastg.json")" = "${d#*:}" ]'
  same "TP, DP pairs, then TP ${d%:*} later: same report with and without --exact" "$tmp/fastg.json" "$tmp/exactg.json"
done
# 4. all-to-all of 256 MiB on 64 single-GPU nodes behind one switch: every flow the same share, in closed form
B="bench alltoall --platform bench/switch-1024x1.yaml --gpus 64 -b 256M -e 256M --json"
"$DTSIM" $B >"$tmp/a2a.json" 2>/dev/null && "$DTSIM" $B --exact >"$tmp/a2ax.json" 2>/dev/null
same "alltoall 64 nodes: same row with and without --exact" "$tmp/a2a.json" "$tmp/a2ax.json"
# closed form: alpha + (n-1)/n S / B, alpha = 2 x 1 us (NICs) + 2 x 0.3 us (cables), B = 50 GB/s
check "alltoall 64 nodes: closed form" 'close "$(jq -r ".[0].time_us" "$tmp/a2a.json")" \
  "$(awk "BEGIN { print (2.6e-6 + 63 / 64 * 268435456 / 50e9) * 1e6 }")"'

# 5. the NCCL model's double binary trees in one node (8 channels, each rotated onto its own NIC's GPU: every GPU
#    port carries the same number of flows) in closed form, and across two nodes (hops of two latencies) as flows:
#    every row of the sweep the same with and without --exact
{ cat bench/h100-16node.yaml; echo "nccl: {}"; } >"$tmp/nccl.yaml"
for g in 8 16; do
  B="bench all_reduce --platform $tmp/nccl.yaml --gpus $g -b 8 -e 16M -f 8 --algo tree --json"
  "$DTSIM" $B >"$tmp/tree$g.json" 2>/dev/null && "$DTSIM" $B --exact >"$tmp/treex$g.json" 2>/dev/null
  check "nccl trees $g GPUs: the sweep ran trees" '[ "$(jq "[.[] | select(.algo | startswith(\"tree\"))] | length" "$tmp/tree$g.json")" = 8 ]'
  same "nccl trees $g GPUs: same rows with and without --exact" "$tmp/tree$g.json" "$tmp/treex$g.json"
done

# 5a. trees across 4 nodes (hops of three latencies: NVLink, same rail, across rails through a spine), evaluated
#     (replay/dt_coll_solve.c) and waited: the same report as simulating their flows, every number of it (per rank,
#     per kind, per link class). From 32 B up: at 8 B SimGrid's lazy re-solve can leave a link out when many flows
#     join at once (docs/replay.md, "Evaluated instances"), a difference under a nanosecond, checked to 1e-4 below
{ echo "dtsim_trace 1"; echo "ranks 32"; echo "group world 0-31"
  for r in $(seq 0 31); do echo "rank $r"; for b in 32 4096 1048576 16777216; do echo "s0 allreduce group=world bytes=$b"; done; done
} >"$tmp/tree32.dtt"
run "$tmp/fast32.json" "$tmp/nccl.yaml" "$tmp/tree32.dtt" --algo tree && run "$tmp/exact32.json" "$tmp/nccl.yaml" "$tmp/tree32.dtt" --algo tree --exact
check "nccl trees 4 nodes: evaluated, not simulated" 'has_note "$tmp/fast32.json" "4 collective instances waited"'
same "nccl trees 4 nodes: same report with and without --exact" "$tmp/fast32.json" "$tmp/exact32.json"
B="bench all_reduce --platform $tmp/nccl.yaml --gpus 32 -b 8 -e 8 --algo tree --json"
"$DTSIM" $B >"$tmp/t8.json" 2>/dev/null && "$DTSIM" $B --exact >"$tmp/t8x.json" 2>/dev/null
check "nccl trees 4 nodes, 8 B: within 1e-4 of --exact" \
  'close "$(jq ".[0].time_us" "$tmp/t8.json")" "$(jq ".[0].time_us" "$tmp/t8x.json")" 1e-4'

# 5b. the NCCL model folds the tensor-parallel ranks too (their rings and trees in closed form; the DP and PP
#     traffic of every image on its own rail), with the same report as --exact
GN="$tmp/nccl.yaml --gen gpt3-175b --tp 8 --pp 4 --dp 2 --global-batch 8 --layers 8"
run "$tmp/fastn.json" $GN && run "$tmp/exactn.json" $GN --exact
check "nccl gpt tp8: ranks folded" 'has_note "$tmp/fastn.json" "ranks folded: 1 of every 8"'
same "nccl gpt tp8: same report with and without --exact" "$tmp/fastn.json" "$tmp/exactn.json"
GT="$tmp/nccl.yaml --gen gpt3-175b --tp 8 --pp 2 --dp 1 --global-batch 4 --layers 4 --algo tree"
run "$tmp/fastt.json" $GT && run "$tmp/exactt.json" $GT --exact
check "nccl gpt tp8 --algo tree: ranks folded" 'has_note "$tmp/fastt.json" "ranks folded: 1 of every 8"'
same "nccl gpt tp8 --algo tree: same report with and without --exact" "$tmp/fastt.json" "$tmp/exactt.json"

# 6. a forced algorithm the class cannot wait in closed form turns folding off (folded ranks would never run
#    their part): NCCL's tree over 2 channels in a node of 8 is a chain per channel, and the two channels' heads
#    and tails send or receive fewer flows than the other members (no one fair share)
{ cat bench/h100-16node.yaml; echo "nccl: {channels: 2}"; } >"$tmp/nccl2.yaml"
G="$tmp/nccl2.yaml --gen gpt3-175b --tp 8 --pp 4 --dp 2 --global-batch 8 --layers 8"
run "$tmp/ftree.json" $G --algo tree && run "$tmp/xtree.json" $G --algo tree --exact
check "gpt tp8 --algo tree: no folding" '! has_note "$tmp/ftree.json" "ranks folded"'
check "gpt tp8 --algo tree: it ran" '[ "$(jq ".makespan_s > 0.01" "$tmp/ftree.json")" = true ]'
# (its chains' middle members are alike: which of them has the most exposed time is a tie, left out)
for f in ftree xtree; do jq 'del(.exposed_by_dim[]?.max_rank)' "$tmp/$f.json" >"$tmp/$f.cmp.json"; done
same "gpt tp8 --algo tree: same report with and without --exact" "$tmp/ftree.cmp.json" "$tmp/xtree.cmp.json"

finish
