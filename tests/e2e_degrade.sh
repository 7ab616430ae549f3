#!/usr/bin/env bash
# End-to-end tests of slow, failed and flapping links (docs/whatif.md): --degrade, --fail, --flap against closed
# forms computed by hand on tests/data/degrade/ft8.yaml (8 single-GPU nodes, 2 leaves, 4 spines, every NIC and
# cable B = 12.5 GB/s, alpha across the spines 4 us), the shortcuts against --exact, the report's comparison with
# the run without faults, and the errors.
# usage: tests/e2e_degrade.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: e2e_degrade.sh DTSIM}
source "$(dirname "$0")/e2e-lib.sh"
P=tests/data/degrade/ft8.yaml
S=125000000        # bytes per flow: S / B = 10 ms
B=12500000000      # bytes/s
A=0.000004         # alpha of a route across the spines, s

# A spine-crossing permutation, both ways in one batch per rank: rank i of leaf 0 exchanges S bytes with rank
# i + 4 of leaf 1. Destination-mod-k puts rank i's flow (key i + 4) on spine i and the reverse flow (key i) on
# spine i too: one flow per cable and direction. $1: compute before it (a duration, or empty).
perm() {
  echo "dtsim_trace 1"
  echo "ranks 8"
  for r in 0 1 2 3 4 5 6 7; do
    echo "rank $r"
    [ -n "${1:-}" ] && echo "s0 compute dur=$1"
    p=$(( (r + 4) % 8 ))
    echo "s0 send peer=$p bytes=$S batch=1"
    echo "s0 recv peer=$p bytes=$S batch=1"
  done
}
perm >"$tmp/perm.dtt"
perm 1ms >"$tmp/perm-late.dtt"
# one ring all-reduce of S bytes per rank over the 8 nodes
{
  echo "dtsim_trace 1"; echo "ranks 8"; echo "group world 0-7"
  for r in 0 1 2 3 4 5 6 7; do echo "rank $r"; echo "s0 allreduce group=world bytes=$S"; done
} >"$tmp/ring.dtt"

js() { jq -r "$2" "$1"; }
run() { # run OUT args...: the JSON report, exit status in $tmp/rc
  local out=$1
  shift
  "$DTSIM" run --json "$@" >"$out" 2>"$tmp/err"
  echo $? >"$tmp/rc"
}

# 1. the permutation alone: every flow alpha + S/B
run "$tmp/base.json" $P "$tmp/perm.dtt"
check "permutation: makespan alpha + S/B" "close $(js "$tmp/base.json" .makespan_s) $(awk -v a=$A -v s=$S -v b=$B 'BEGIN{print a + s / b}')"

# 2. cable leaf0-spine3 failed from the start: the flows of spine 3 (3 -> 7, key 7; 7 -> 3, key 3) take spine
#    (key mod 3) of the 3 left, spines 1 and 0, where they share a cable with 1 -> 5 and 4 -> 0: those two pairs
#    of flows get B/2, so the makespan is alpha + 2 S/B (4 flows per direction over 3 spines: at most 2 per cable)
run "$tmp/fail0.json" $P "$tmp/perm.dtt" --fail leaf0-spine3@0 --top 100
check "fail leaf0-spine3@0: makespan alpha + 2 S/B (remaining spines)" \
  "close $(js "$tmp/fail0.json" .makespan_s) $(awk -v a=$A -v s=$S -v b=$B 'BEGIN{print a + 2 * s / b}')"
check "fail leaf0-spine3@0: the failed cable carries nothing" \
  "[ \"\$(js $tmp/fail0.json '[.links.top[] | select(.name | startswith(\"cable:leaf0-spine3 \"))] | length')\" = 0 ]"
check "fail leaf0-spine3@0: leaf0-spine1 up carries two flows" \
  "[ \"\$(js $tmp/fail0.json '.links.top[] | select(.name == \"cable:leaf0-spine1 up\") | .peak_flows')\" = 2 ]"
check "fail@0: the report compares with the run without it (send +S/B)" \
  "close $(js "$tmp/fail0.json" .faults.by_kind.send.added_s) $(awk -v s=$S -v b=$B 'BEGIN{print 4 * s / b}')"
check "fail@0: iteration delta S/B" "close $(js "$tmp/fail0.json" .faults.iteration_delta_s) 0.01"
check "fail@0: baseline makespan alpha + S/B" "close $(js "$tmp/fail0.json" .faults.baseline_makespan_s) 0.010004"
# the same cable named without the cable: prefix or with it gives the same run
run "$tmp/fail0b.json" $P "$tmp/perm.dtt" --fail cable:leaf0-spine3@0
check "fail cable:leaf0-spine3@0 = fail leaf0-spine3@0" "[ $(js "$tmp/fail0b.json" .makespan_s) = $(js "$tmp/fail0.json" .makespan_s) ]"

# 3. a failure at 0.5 ms, during the 1 ms compute: nothing in flight, the flows started later take the detour
run "$tmp/late.json" $P "$tmp/perm-late.dtt" --fail leaf0-spine3@0.5ms --top 100
check "fail during compute: the per-link accounting follows the detour (leaf0-spine1 up: 2 flows, spine3: none)" \
  "[ \"\$(js $tmp/late.json '.links.top[] | select(.name == \"cable:leaf0-spine1 up\") | .peak_flows')\" = 2 ] && [ \"\$(js $tmp/late.json '[.links.top[] | select(.name | startswith(\"cable:leaf0-spine3 \"))] | length')\" = 0 ]"
check "fail during compute: makespan 1 ms + alpha + 2 S/B" \
  "close $(js "$tmp/late.json" .makespan_s) $(awk -v a=$A -v s=$S -v b=$B 'BEGIN{print 0.001 + a + 2 * s / b}')"
check "fail during compute: exit 0, not aborted" "[ \$(cat $tmp/rc) = 0 ] && [ \"\$(js $tmp/late.json '.aborted // empty')\" = '' ]"
check "a link changing during the run turns the shortcuts off (note)" \
  "js $tmp/late.json '.notes[]' | grep -q 'shortcuts are off'"

# 4. a failure at 2 ms, while the flows cross it: NCCL would abort; the run stops there, exit 1, not a deadlock
run "$tmp/abort.json" $P "$tmp/perm-late.dtt" --fail leaf0-spine3@2ms
check "fail during the flows: exit 1" "[ \$(cat $tmp/rc) = 1 ]"
check "fail during the flows: aborted at 2 ms, naming the link" \
  "close $(js "$tmp/abort.json" .aborted.time_s) 0.002 && js $tmp/abort.json .aborted.reason | grep -q 'cable:leaf0-spine3 failed'"
check "fail during the flows: no deadlock key, the unfinished ops listed" \
  "[ \"\$(js $tmp/abort.json '.deadlock // empty')\" = '' ] && [ \$(js $tmp/abort.json '.aborted.unfinished | length') -gt 0 ]"
check "fail during the flows: stderr says aborted, its times written as the report writes them (was '0.002 s')" \
  "grep -q 'dtsim: aborted at 2 ms: link cable:leaf0-spine3 failed at 2 ms while' $tmp/err && js $tmp/abort.json .aborted.reason | grep -q 'failed at 2 ms while'"
check "fail during the flows: a trace without marks completed no iteration, nothing to compare" \
  "[ \$(js $tmp/abort.json '.iterations_s | length') = 0 ] && [ \"\$(js $tmp/abort.json '.faults.iteration_s')\" = null ] && [ \"\$(js $tmp/abort.json '.faults.iteration_delta_s')\" = null ]"

# a failure at 1.002 ms, while the flows (started at 1 ms) still pay their 4 us latency: SimGrid counts them on the
# link already, so they abort as well (they were routed over it before it failed)
run "$tmp/abort2.json" $P "$tmp/perm-late.dtt" --fail leaf0-spine3@1.002ms
check "fail during the flows' latency: exit 1, aborted at 1.002 ms" \
  "[ \$(cat $tmp/rc) = 1 ] && close $(js "$tmp/abort2.json" .aborted.time_s) 0.001002"

# 5. leaf0-spine0 flapping, down 1 ms every 4 ms from 0: the flows on spine 0 (0 <-> 4) move data only while it
#    is up ([1,4), [5,8), [9,12), [13,14) ms: 10 ms of S/B), the others end at alpha + S/B
run "$tmp/flap.json" $P "$tmp/perm.dtt" --flap leaf0-spine0=4ms,1ms
check "flap 1 ms every 4 ms: makespan 14 ms" "close $(js "$tmp/flap.json" .makespan_s) 0.014 1e-5"
run "$tmp/flap2.json" $P "$tmp/perm.dtt" --flap leaf0-spine0=4ms,1ms,2ms
# down [2,3), [6,7), [10,11) ms: data moves in [0.004,2), [3,6), [7,10), [11,13.004) ms: 10 ms of S/B
check "flap from 2 ms: makespan alpha + S/B + 3 outages" "close $(js "$tmp/flap2.json" .makespan_s) 0.013004 1e-5"

# 6. --degrade on a bandwidth-bound ring all-reduce across the nodes: the ring's two spine-crossing flows
#    (3 -> 4, 7 -> 0) set its time; at half bandwidth its bandwidth term 2(n-1)/n S/B doubles, the latency stays
run "$tmp/ring.json" $P "$tmp/ring.dtt"
bwterm=$(awk -v s=$S -v b=$B 'BEGIN{print 2 * 7 / 8 * s / b}')
for cls in leaf-spine nic-leaf gpu-nic; do
  run "$tmp/ring-$cls.json" $P "$tmp/ring.dtt" --degrade $cls=0.5
  d=$(awk -v x="$(js "$tmp/ring-$cls.json" .makespan_s)" -v y="$(js "$tmp/ring.json" .makespan_s)" 'BEGIN{print x - y}')
  check "degrade $cls=0.5: the ring all-reduce's bandwidth term doubles" "close $d $bwterm"
  check "degrade $cls=0.5: the report's allreduce added time is the bandwidth term" \
    "close $(js "$tmp/ring-$cls.json" .faults.by_kind.allreduce.added_s) $bwterm"
done
check "degrade leaf-spine=0.5: applied to the 8 leaf-spine cables" "[ $(js "$tmp/ring-leaf-spine.json" '.faults.applied[0].links') = 8 ]"
run "$tmp/ring-q.json" $P "$tmp/ring.dtt" --degrade nic3.0=0.25
d=$(awk -v x="$(js "$tmp/ring-q.json" .makespan_s)" -v y="$(js "$tmp/ring.json" .makespan_s)" 'BEGIN{print x - y}')
check "degrade nic3.0=0.25: the bandwidth term grows 4x (3 x the term added)" "close $d $(awk -v t=$bwterm 'BEGIN{print 3 * t}')"

# 7. shortcuts stay honest: TP-8 ring inside one NVSwitch node of dgx-h100-4node (waited in closed form); a degraded
#    class is seen by the closed form, a single slow port makes the ring non-uniform; --exact agrees every time
T=tests/data/allreduce8.dtt
H=platforms/dgx-h100-4node.yaml
for deg in nvswitch-port=0.5 gpu3=0.5; do
  run "$tmp/sc.json" $H $T --degrade $deg
  run "$tmp/sc-exact.json" $H $T --degrade $deg --exact
  check "degrade $deg: shortcut run = --exact" "close $(js "$tmp/sc.json" .makespan_s) $(js "$tmp/sc-exact.json" .makespan_s) 1e-9"
  run "$tmp/sc-base.json" $H $T
  # 64 MiB at 450 GB/s per port: bandwidth term 2 x 7/8 x S / B, doubled by a half-speed port on the ring
  d=$(awk -v x="$(js "$tmp/sc.json" .makespan_s)" -v y="$(js "$tmp/sc-base.json" .makespan_s)" 'BEGIN{print x - y}')
  check "degrade $deg: TP ring bandwidth term doubles" "close $d $(awk 'BEGIN{print 2 * 7 / 8 * 67108864 / 450e9}')"
done
run "$tmp/sc.json" $H $T --degrade nvswitch-port=0.5
check "degrade nvswitch-port=0.5: still waited in closed form" "js $tmp/sc.json '.notes[]' | grep -q 'waited in closed form'"
# a failure or a flap that starts at or after the run's natural end (the run without it: 275 us) cannot act: "no
# effect", and the run keeps its shortcuts (it turned them off and said so); one during the run turns them off
for f in "--fail gpu0@1s" "--flap gpu0=4ms,1ms,1s"; do
  run "$tmp/late-end.json" $H $T $f
  check "$f after the run's end: no effect, the shortcuts stay on (closed form, no 'shortcuts are off' note), same makespan" \
    "js $tmp/late-end.json '.notes[]' | grep -q 'waited in closed form' && ! js $tmp/late-end.json '.notes[]' | grep -q 'shortcuts are off' &&
     close \$(js $tmp/late-end.json .makespan_s) \$(js $tmp/sc-base.json .makespan_s) 1e-12 && [ \$(cat $tmp/rc) = 0 ]"
done
run "$tmp/mid.json" $H $T --fail gpu0@100us
check "--fail gpu0@100us, during the run: the shortcuts are off, and it aborts" \
  "js $tmp/mid.json '.notes[]' | grep -q 'shortcuts are off' && [ \$(cat $tmp/rc) = 1 ]"

# 7b. --fail inside a batch of pairs (it printed ~19 SimGrid backtraces, listed completed pairs as running and, with
#     a p2p cost, counted on the links the flows of pairs still in that cost: busy 102 %, an invalid report).
#     tests/data/node8.yaml (alpha = 2 us GPU to GPU, B = 100 GB/s) with an nccl: section whose Simple protocol costs
#     c = 30 + 30 = 60 us per pair after its data arrived; one batch of N = 1000 pairs of S = 1 MiB from rank 0 to 1.
#     A queue moves 8 pairs at a time: round k's data arrives at k (alpha + 8 S/B) = k x 85.886 us and its pairs
#     complete c later (the closed form ceil(N/8) alpha + N S/B, plus c). gpu0 fails at T = 1 ms: the pairs whose
#     round completes by T are done, k = floor((T - c) / (alpha + 8 S/B)) = 10 rounds (80 pairs, 160 ops); round 11
#     moved its data (at 944.9 us) but was still in its p2p cost.
{ cat tests/data/node8.yaml; printf 'nccl:\n  protocols:\n    Simple: {latency: 30us, hop_latency: 30us, efficiency: 1.0}\n'; } >"$tmp/n8nccl.yaml"
{
  printf 'dtsim_trace 1\nranks 2\nrank 0\n'
  awk 'BEGIN { for (i = 0; i < 1000; i++) print "s0 send peer=1 bytes=1048576 batch=1" }'
  echo "rank 1"
  awk 'BEGIN { for (i = 0; i < 1000; i++) print "s0 recv peer=0 bytes=1048576 batch=1" }'
} >"$tmp/b1000.dtt"
run "$tmp/bfail.json" "$tmp/n8nccl.yaml" "$tmp/b1000.dtt" --fail gpu0@1ms
rd=$(awk 'BEGIN { printf "%.12g", 2e-6 + 8 * 1048576 / 100e9 }')
k=$(awk -v r="$rd" 'BEGIN { print int((1e-3 - 60e-6) / r) }')
check "fail inside a batch: exit 1, aborted at 1 ms" "[ \$(cat $tmp/rc) = 1 ] && close \$(js $tmp/bfail.json .aborted.time_s) 0.001"
check "fail inside a batch: no SimGrid backtrace on stderr (was ~19: Comm::~Comm <- dt_sg_comm_wait_any_times)" \
  "! grep -q -e Backtrace -e 'Comm::' $tmp/err && grep -q '^dtsim: aborted at 1 ms: link gpu0 failed' $tmp/err"
done_ops=$(js "$tmp/bfail.json" .ops.completed)
check "fail inside a batch: $done_ops ops completed, 2 x 8 x $k = $((16 * k)) by the closed form (within a round)" \
  "[ $done_ops -ge $((16 * (k - 1))) ] && [ $done_ops -le $((16 * (k + 1))) ]"
check "fail inside a batch: completed + listed unfinished = 2000 (it listed all 2000)" \
  "[ \$(( $done_ops + \$(js $tmp/bfail.json '.aborted.unfinished | length') )) = 2000 ] && [ \$(js $tmp/bfail.json .ops.total) = 2000 ]"
check "fail inside a batch: makespan k rounds + c = $k x $rd + 60 us" \
  "close \$(js $tmp/bfail.json .makespan_s) \$(awk -v k=$k -v r=$rd 'BEGIN { printf \"%.12g\", k * r + 60e-6 }') 1e-9"
# the links (docs/report.md, "A run that stopped"): every flow counts what it moved while it ran, up to the stop T =
# 1 ms: the m = floor(T / r) rounds whose data arrived (round 11 too, still in its p2p cost), and round m + 1's 8
# flows for the (T - m r - alpha) x B bytes they moved after its latency; the flows run back to back: busy T / T
m=$(awk -v r="$rd" 'BEGIN { print int(1e-3 / r) }')
check "fail inside a batch: the links carry the $m rounds that moved their data and the round the stop cut ($((8 * m + 8)) transfers; was $((8 * k)), the completed pairs only)" \
  "[ \$(js $tmp/bfail.json .links.transfers) = $((8 * m + 8)) ] && close \$(js $tmp/bfail.json .stopped_s) 0.001"
check "fail inside a batch: gpu0 up carries m S + (T - m r - alpha) B bytes" \
  "close \$(js $tmp/bfail.json '.links.top[] | select(.name == \"gpu0 up\") | .bytes') \$(awk -v m=$m -v r=$rd 'BEGIN { printf \"%.12g\", 8 * m * 1048576 + (1e-3 - m * r - 2e-6) * 100e9 }') 1e-6"
check "fail inside a batch: busy over the time the run reached = T / T = 1, never above (was 1.028 over the makespan)" \
  "close \$(js $tmp/bfail.json .bound.link_busy) 1 1e-9 && [ \$(js $tmp/bfail.json '[.links.top[].busy | select(. > 1)] | length') = 0 ]"
check "fail inside a batch: the send row has the completed pairs' span (was 0 s, algbw 0)" \
  "[ \$(js $tmp/bfail.json .by_kind.send.count) = $((8 * k)) ] && close \$(js $tmp/bfail.json .by_kind.send.time_s) \$(js $tmp/bfail.json .makespan_s) 1e-9"
# the same batch with a p2p cost c = 200 us, longer than a round r: a round's pairs complete c after its data, while
# the sending actor waits for the next round's; at T = 1 ms the pairs of round 9 (9 r + c = 973 us) had completed
# with no wake-up since (the last was round 11's data at 945 us): they completed, k = floor((T - c) / r) = 9 rounds,
# 144 ops (they were listed as running: 128)
{ cat tests/data/node8.yaml; printf 'nccl:\n  protocols:\n    Simple: {latency: 100us, hop_latency: 100us, efficiency: 1.0}\n'; } >"$tmp/n8slow.yaml"
run "$tmp/bslow.json" "$tmp/n8slow.yaml" "$tmp/b1000.dtt" --fail gpu0@1ms
k2=$(awk -v r="$rd" 'BEGIN { print int((1e-3 - 200e-6) / r) }')
check "fail inside a batch, p2p cost c > r: $((16 * k2)) ops completed (k = $k2 rounds), the rest listed, makespan k r + c" \
  "[ \$(js $tmp/bslow.json .ops.completed) = $((16 * k2)) ] && [ \$(js $tmp/bslow.json '.aborted.unfinished | length') = $((2000 - 16 * k2)) ] &&
   close \$(js $tmp/bslow.json .makespan_s) \$(awk -v k=$k2 -v r=$rd 'BEGIN { printf \"%.12g\", k * r + 200e-6 }') 1e-9"

# 7c. --fail in the middle of unbatched ring all-reduces at step fidelity (busy was 1.238: the completed ring steps
#     of the op the failure cut were on the links, the shares over the makespan of the completed ops). dgx-a100: the
#     NVSwitch port B = 300 GB/s x 0.8, route latency l = 0.1 us; NCCL Simple: a = 8.4 us per op, h = 7 us per hop.
#     4 ranks, 8 all-reduces of S = 100 MiB in a row: an op is a, then 2(n-1) = 6 steps of a flow of S/4 (l + S/4/B)
#     and a hop, D = a + 6 (l + S/4/B + h). gpu0 fails at T = 1 ms: op 2 (from D) has done 2 steps; its third flow
#     started at D + a + 2 (l + S/4/B + h) and moved (T - its start - l) B bytes by T.
{
  echo "dtsim_trace 1"; echo "ranks 4"; echo "group world 0-3"
  for r in 0 1 2 3; do echo "rank $r"; for i in 1 2 3 4 5 6 7 8; do echo "s0 allreduce group=world bytes=104857600"; done; done
} >"$tmp/ar8.dtt"
A100=platforms/dgx-a100.yaml
run "$tmp/ar8step.json" $A100 "$tmp/ar8.dtt" --fidelity step --fail gpu0@1ms
tau=$(awk 'BEGIN { printf "%.15g", 0.1e-6 + 104857600 / 4 / 240e9 }')
D=$(awk -v t="$tau" 'BEGIN { printf "%.15g", 8.4e-6 + 6 * (t + 7e-6) }')
s3=$(awk -v t="$tau" -v d="$D" 'BEGIN { printf "%.15g", d + 8.4e-6 + 2 * (t + 7e-6) }')
check "abort at step fidelity: exit 1, makespan = one op D = a + 6 (l + S/4/B + h), the run reached 1 ms" \
  "[ \$(cat $tmp/rc) = 1 ] && close \$(js $tmp/ar8step.json .makespan_s) $D 1e-6 && close \$(js $tmp/ar8step.json .stopped_s) 0.001"
check "abort at step fidelity: gpu0 up busy (8 (l + S/4/B) + T - start of the cut step) / T (was 1.238)" \
  "close \$(js $tmp/ar8step.json '.links.top[] | select(.name == \"gpu0 up\") | .busy') \$(awk -v t=$tau -v s=$s3 'BEGIN { printf \"%.12g\", (8 * t + 1e-3 - s) / 1e-3 }') 1e-6 &&
   [ \$(js $tmp/ar8step.json '[.links.top[].busy | select(. > 1)] | length') = 0 ] && awk -v b=\$(js $tmp/ar8step.json .bound.link_busy) 'BEGIN { exit !(b <= 1) }'"
check "abort at step fidelity: gpu0 up carries 8 S/4 + (T - start - l) B bytes (the cut step counts what it moved)" \
  "close \$(js $tmp/ar8step.json '.links.top[] | select(.name == \"gpu0 up\") | .bytes') \$(awk -v s=$s3 'BEGIN { printf \"%.12g\", 8 * 104857600 / 4 + (1e-3 - s - 0.1e-6) * 240e9 }') 1e-6"
# 7d. an abort before any op completed (it counted no link bytes): at flow fidelity an op is a, then one flow per
#     channel; gpu0 fails at T = 10 us, so every direction of the ring moved (T - a - l) B bytes and was busy T - a
run "$tmp/ar8early.json" $A100 "$tmp/ar8.dtt" --fail gpu0@10us
check "abort before any op completed: gpu0 up carries (T - a - l) B bytes (was none), busy (T - a) / T" \
  "close \$(js $tmp/ar8early.json '.links.top[] | select(.name == \"gpu0 up\") | .bytes') \$(awk 'BEGIN { print (10e-6 - 8.4e-6 - 0.1e-6) * 240e9 }') 1e-6 &&
   close \$(js $tmp/ar8early.json '.links.top[] | select(.name == \"gpu0 up\") | .busy') \$(awk 'BEGIN { print (10e-6 - 8.4e-6) / 10e-6 }') 1e-6 &&
   [ \$(js $tmp/ar8early.json .ops.completed) = 0 ]"
check "abort at 10 us: stderr writes its times as the report does, '10 us' (was '1e-05 s')" \
  "grep -q '^dtsim: aborted at 10 us: link gpu0 failed at 10 us while flows crossed it' $tmp/err"

# 8. errors: unknown names (with near matches and how to list them), bad factors and times, a class to --fail,
#    a partition naming a pair
err() { # err NAME PATTERN args...: exit 2 and stderr matching PATTERN
  local name=$1 pat=$2
  shift 2
  "$DTSIM" run $P "$tmp/perm.dtt" "$@" >/dev/null 2>"$tmp/e"
  local rc=$?
  if [ $rc = 2 ] && grep -q -- "$pat" "$tmp/e"; then ok "$name"; else bad "$name (exit $rc: $(head -2 "$tmp/e"))"; fi
}
err "unknown class: did you mean" "no link or link class 'leaf-spne'.*did you mean 'leaf-spine'" --degrade leaf-spne=0.5
err "unknown link: did you mean, how to list" "did you mean 'leaf0-spine0', 'leaf0-spine1', 'leaf0-spine2'?.*platform show $P --links" --fail leaf0-spine9@0
err "factor above 1" "expected a number from 1e-09 to 1, found '1.5'" --degrade leaf-spine=1.5
err "factor 0" "expected a number from 1e-09 to 1, found '0'" --degrade leaf-spine=0
err "factor 1e-300 (was a false deadlock)" "expected a number from 1e-09 to 1, found '1e-300'" --degrade leaf-spine=1e-300
err "degrades that multiply below 1 B/s" "leaves link cable:leaf0-spine0 at .* B/s, below the smallest bandwidth" \
  --degrade leaf-spine=1e-9 --degrade leaf0-spine0=1e-9
err "flap period under 1 ms (was a run that crawled)" "the period must be at least 0.001 s" --flap leaf0-spine3=1us,0.5us
err "factor not a number" "found 'half'" --degrade leaf-spine=half
err "bad time" "the failure time: expected a time" --fail leaf0-spine3@soon
err "time without a unit" "the failure time" --fail leaf0-spine3@5
err "no time" "expects LINK@TIME" --fail leaf0-spine3
err "class to --fail" "expects one link, found the link class 'leaf-spine'" --fail leaf-spine@0
err "two flaps on one link (the second's up ended the first's outage)" "\-\-flap cable:leaf0-spine3 is given twice" \
  --flap leaf0-spine3=4ms,1ms --flap cable:leaf0-spine3=5ms,1ms
"$DTSIM" run $P "$tmp/perm-late.dtt" --jitter 0.1 --samples 2 --fail leaf0-spine3@2ms >/dev/null 2>"$tmp/smp.err"
check "--samples: a seed that a link failure stops is aborted, not a deadlock" \
  "grep -q 'samples: 2 of 2 seeds stopped early (2 aborted, 0 deadlocked)' $tmp/smp.err && ! grep -q 'deadlock:' $tmp/smp.err"
err "flap downtime above its period" "downtime must be above 0 and below the period" --flap leaf0-spine3=1ms,2ms
err "partition: a NIC cable failed" "partition the fabric: ranks 0 and 4" --fail nic0-leaf0@0
err "partition: every spine of leaf 0 failed" "partition the fabric: ranks 0 and 4" \
  --fail leaf0-spine0@0 --fail leaf0-spine1@0 --fail leaf0-spine2@0 --fail leaf0-spine3@0
# three of four spines failed: everything crosses spine 3 (4 flows per direction: 4 S/B)
run "$tmp/one.json" $P "$tmp/perm.dtt" --fail leaf0-spine0@0 --fail leaf0-spine1@0 --fail leaf0-spine2@0
check "three spines failed: makespan alpha + 4 S/B" "close $(js "$tmp/one.json" .makespan_s) $(awk -v a=$A -v s=$S -v b=$B 'BEGIN{print a + 4 * s / b}')"

# 9. unused: the report is byte-identical without the options (the baseline run is one)
"$DTSIM" run --json $P "$tmp/perm.dtt" >"$tmp/plain1.json" 2>/dev/null
"$DTSIM" run --json $P "$tmp/perm.dtt" >"$tmp/plain2.json" 2>/dev/null
check "no fault option: no faults key" "[ \"\$(js $tmp/plain1.json '.faults // empty')\" = '' ] && cmp -s $tmp/plain1.json $tmp/plain2.json"
check "text report: the comparison section" "\"$DTSIM\" run $P $tmp/perm.dtt --fail leaf0-spine3@0 | grep -q 'slow and failed links (against the same run without them)'"
finish
