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

# --- the bound says why when host/launch time bounds the iteration: the README's capture (its host thread's time
# between launches is the whole path) and a native trace whose delay op outlasts its compute
"$DTSIM" run --json platforms/dgx-a100.yaml traces/samples/allreduce_bcast_2ranks_rank0.json.gz >"$tmp/cap.json" 2>/dev/null
check "capture: the bound is host/launch and says the host thread issues work slower than the GPUs run it" \
  '[ "$(jq -r .bound.what "$tmp/cap.json")" = host ] && jq -r .bound.why "$tmp/cap.json" | grep -q "^the capture.s host (CPU) thread issues work slower than the GPUs run it"'
"$DTSIM" run platforms/dgx-a100.yaml traces/samples/allreduce_bcast_2ranks_rank0.json.gz 2>/dev/null >"$tmp/cap.txt"
check "capture: the text's 'why' line follows the bound" 'grep -A1 "^bound  *host/launch" "$tmp/cap.txt" | grep -q "^why  *the capture.s host (CPU) thread"'
{ echo "dtsim_trace 1"; echo "ranks 2"
  for r in 0 1; do echo "rank $r"; echo "s0 delay dur=5ms"; echo "s0 compute dur=1ms"; done; } >"$tmp/delay.dtt"
"$DTSIM" run --json tests/data/node2.yaml "$tmp/delay.dtt" >"$tmp/delay.json" 2>/dev/null
check "native delay ops: host bound, the trace's delay ops named" \
  '[ "$(jq -r .bound.what "$tmp/delay.json")" = host ] && jq -r .bound.why "$tmp/delay.json" | grep -q "^the trace.s delay ops"'
check "communication bound: no why" '[ "$(jq -r ".bound | has(\"why\")" "$tmp/plain.json")" = false ]'

# --- --explain on a textbook platform: the 2-rank all-reduce above, alone on its links
"$DTSIM" run --json --explain tests/data/node2.yaml "$tmp/ar2.dtt" >"$tmp/ex.json" 2>/dev/null; rc=$?
check "--explain --json exits 0" '[ $rc -eq 0 ]'
check "--explain: one shape" '[ "$(jq ".explain | length" "$tmp/ex.json")" = 1 ]'
check "--explain: ring, 2 ranks, 1 node, group dp0, 1 instance" \
  '[ "$(jq -r ".explain[0] | [.choice, .ranks, .nodes, .group, .count, .bytes] | join(\" \")" "$tmp/ex.json")" = "ring 2 1 dp0 1 $S" ]'
got=$(jq -r '.explain[0].alphabeta_latency_s' "$tmp/ex.json")
check "--explain: latency term $got = 2(n-1)a = 4 us" 'close "$got" 4e-6 1e-9'
got=$(jq -r '.explain[0].alphabeta_bandwidth_s' "$tmp/ex.json")
check "--explain: bandwidth term $got = 2(n-1)/n S/B = S / 10 GB/s" "close $got $(awk -v S=$S 'BEGIN { printf "%.17g", S / 10e9 }') 1e-9"
got=$(jq -r '.explain[0].mean_s' "$tmp/ex.json")
check "--explain: simulated $got = 2a + S/B" 'close "$got" "$want" 1e-8'
got=$(jq -r '.explain[0].busbw_GBps' "$tmp/ex.json")
check "--explain: busbw $got = S / time x 2(n-1)/n" "close $got $(awk -v S=$S -v t=$want 'BEGIN { printf "%.17g", S / t / 1e9 }') 1e-8"
check "--explain: same makespan as without" '[ "$(jq .makespan_s "$tmp/ex.json")" = "$(jq .makespan_s "$tmp/plain.json")" ]'
check "no --explain: no explain key" '[ "$(jq "has(\"explain\")" "$tmp/plain.json")" = false ]'
"$DTSIM" run --explain tests/data/node2.yaml "$tmp/ar2.dtt" >"$tmp/ex.txt" 2>/dev/null
check "--explain text: the formula with its numbers" 'grep -q "alpha-beta     2(n-1)a + 2(n-1)/n S/B, a = 2 us, B = 10 GB/s: 2 x 2 us + 1 x 38.15 MiB / 10 GB/s = 4 us + 4 ms = 4.004 ms" "$tmp/ex.txt"'
check "--explain text: contention-free" 'grep -q "difference     +0.0 % from the estimate: contention-free" "$tmp/ex.txt"'
check "--explain text: what bounds it" 'grep -q "^what bounds it" "$tmp/ex.txt" && grep -q "Communication bounds it" "$tmp/ex.txt"'

# --- contention (tests/data/shared-nic.yaml: one 25 GB/s NIC per node, route latency a = 2 x 1 us + 2 x 100 ns):
# all-reduces on {0,2} and {1,3} at once share both NICs, so each takes 2a + 2 S/B instead of 2a + S/B
S2=100000000
{ echo "dtsim_trace 1"; echo "ranks 4"; echo "group dpa 0,2"; echo "group dpb 1,3"
  for r in 0 2; do echo "rank $r"; echo "s0 allreduce group=dpa bytes=$S2"; done
  for r in 1 3; do echo "rank $r"; echo "s0 allreduce group=dpb bytes=$S2"; done; } >"$tmp/two.dtt"
"$DTSIM" run --json --explain tests/data/shared-nic.yaml "$tmp/two.dtt" >"$tmp/two.json" 2>/dev/null
check "shared NIC: one shape over 2 groups, 2 instances" '[ "$(jq -r ".explain[0] | [.groups, .count, .nodes] | join(\" \")" "$tmp/two.json")" = "2 2 2" ]'
got=$(jq -r '.explain[0].estimate_s' "$tmp/two.json")
check "shared NIC: estimate $got = 2a + S/B (contention-free)" "close $got $(awk -v S=$S2 'BEGIN { printf "%.17g", 2 * 2.2e-6 + S / 25e9 }') 1e-8"
got=$(jq -r '.explain[0].mean_s' "$tmp/two.json")
check "shared NIC: simulated $got = 2a + 2 S/B" "close $got $(awk -v S=$S2 'BEGIN { printf "%.17g", 2 * 2.2e-6 + 2 * S / 25e9 }') 1e-6"
"$DTSIM" run --explain tests/data/shared-nic.yaml "$tmp/two.dtt" >"$tmp/two.txt" 2>/dev/null
check "shared NIC: the text says contention and names a NIC" \
  'grep "difference" "$tmp/two.txt" | grep -q "over the contention-free estimate: its flows shared links.*nic[01].0 \(up\|down\), gpu-nic"'

# --- send/recv rows: tests/data/shared-nic.dtt sends 1 GB from ranks 0 and 1 (node 0) to ranks 2 and 3 (node 1);
# each route is NIC, cable, cable, NIC: a = 2 x 1 us + 2 x 100 ns, B = min(25 GB/s NIC, 50 GB/s cable) = 25 GB/s, so
# alpha-beta says a + S/B; both flows share node 0's NIC, so each takes a + 2 S/B
"$DTSIM" run --json --explain tests/data/shared-nic.yaml tests/data/shared-nic.dtt >"$tmp/p2p.json" 2>/dev/null; rc=$?
check "send/recv explain exits 0, one row of 2 pairs between nodes 0 and 1" \
  '[ $rc -eq 0 ] && [ "$(jq -c "[(.explain_p2p | length), .explain_p2p[0].count, .explain_p2p[0].src_node, .explain_p2p[0].dst_node]" "$tmp/p2p.json")" = "[1,2,0,1]" ]'
got=$(jq .explain_p2p[0].alpha_s "$tmp/p2p.json")
check "send/recv: route latency $got = 2 x 1 us + 2 x 100 ns" 'close "$got" 2.2e-6 1e-12'
got=$(jq .explain_p2p[0].bandwidth_Bps "$tmp/p2p.json")
check "send/recv: route bandwidth $got = 25 GB/s (the NIC)" 'close "$got" 25e9 1e-12'
got=$(jq .explain_p2p[0].alphabeta_s "$tmp/p2p.json")
check "send/recv: alpha-beta $got = a + S/B" "close $got $(awk 'BEGIN { printf "%.17g", 2.2e-6 + 1e9 / 25e9 }') 1e-12"
got=$(jq .explain_p2p[0].mean_s "$tmp/p2p.json")
check "send/recv: simulated $got = a + 2 S/B (the NIC shared)" "close $got $(awk 'BEGIN { printf "%.17g", 2.2e-6 + 2 * 1e9 / 25e9 }') 1e-6"
check "send/recv: contention named: nic0.0 up, busy 1, 2 flows" \
  '[ "$(jq -r ".explain_p2p[0] | [.busiest_link, .busiest_link_busy, .busiest_link_peak_flows] | join(\" \")" "$tmp/p2p.json")" = "nic0.0 up 1 2" ]'
"$DTSIM" run --explain tests/data/shared-nic.yaml tests/data/shared-nic.dtt >"$tmp/p2p.txt" 2>/dev/null
check "send/recv text: the formula with its numbers" \
  'grep -q "^  alpha-beta     a + S/B, a = 2.2 us (the route.s latencies summed), B = 25 GB/s (its slowest link, nic0.0 up): 2.2 us + 953.7 MiB / 25 GB/s = 2.2 us + 40 ms = 40 ms" "$tmp/p2p.txt"'
check "send/recv text: contention on nic0.0 up" 'grep -q "^  difference     +100.0 % over the contention-free prediction.*contention on nic0.0 up, gpu-nic: busy 100 %" "$tmp/p2p.txt"'
# the NCCL model (platforms/dgx-h100.yaml): a pipeline's pairs, alone on their links, take the estimate
"$DTSIM" run --json --explain platforms/dgx-h100.yaml --gen neox-1.3b --pp 8 --global-batch 64 >"$tmp/pp.json" 2>/dev/null
check "NCCL model send/recv: simulated = a + S / eff / B + fixed, the protocol named" \
  '[ "$(jq "[.explain_p2p[] | ((.mean_s - (.alpha_s + .bytes / .efficiency / .bandwidth_Bps + .fixed_s)) | fabs) < 1e-9 * .mean_s and (.protocol | length) > 0] | all" "$tmp/pp.json")" = true ]'

# --- a batch of pairs is explained as the batch (it compared each pair with a single uncontended pair: +13,139 % on
# node8 for the 300 below, +903,746 % elsewhere, for batches at 98 % of the link). tests/data/node8.yaml: a = 2 us, B = 100 GB/s; a queue
# of N pairs of S moves 8 at a time: ceil(N/8) a + N S/B. 300 pairs of 1 MiB from rank 0 to 1 in one batch, then 5
# more in another: rows of N = 300 and N = 5; on the NCCL model (Simple: c = 60 us per pair) the last pair adds c.
{
  printf 'dtsim_trace 1\nranks 2\nrank 0\n'
  awk 'BEGIN { for (i = 0; i < 300; i++) print "s0 send peer=1 bytes=1048576 batch=1"; for (i = 0; i < 5; i++) print "s0 send peer=1 bytes=1048576 batch=2" }'
  echo "rank 1"
  awk 'BEGIN { for (i = 0; i < 300; i++) print "s0 recv peer=0 bytes=1048576 batch=1"; for (i = 0; i < 5; i++) print "s0 recv peer=0 bytes=1048576 batch=2" }'
} >"$tmp/b300.dtt"
"$DTSIM" run --json --explain tests/data/node8.yaml "$tmp/b300.dtt" >"$tmp/b300.json" 2>/dev/null; rc=$?
b300() { jq -r "[.explain_p2p[] | select(.batch_pairs == $1)][0] | $2" "$tmp/b300.json"; }
w300=$(awk 'BEGIN { printf "%.17g", 38 * 2e-6 + 300 * 1048576 / 100e9 }')
w5=$(awk 'BEGIN { printf "%.17g", 1 * 2e-6 + 5 * 1048576 / 100e9 }')
check "batch explain: two rows, queues of 300 and of 5 pairs, one queue each, no per-pair row" \
  '[ $rc -eq 0 ] && [ "$(jq -c "[.explain_p2p[] | [.batch_pairs, .count, .bytes, .batch_bytes]] | sort" "$tmp/b300.json")" = "[[5,1,1048576,5242880],[300,1,1048576,314572800]]" ]'
check "batch explain: 300 pairs: alpha-beta ceil(300/8) a + 300 S/B = $w300 s, simulated the same (contention-free)" \
  'close "$(b300 300 .alphabeta_s)" "$w300" 1e-12 && close "$(b300 300 .mean_s)" "$w300" 1e-9 && [ "$(b300 300 .formula)" = "ceil(N/8) a + N S/B" ]'
check "batch explain: 5 pairs: a + 5 S/B = $w5 s, simulated the same" \
  'close "$(b300 5 .alphabeta_s)" "$w5" 1e-12 && close "$(b300 5 .mean_s)" "$w5" 1e-9'
check "batch explain: N S / time = $(awk -v t="$w300" 'BEGIN { printf "%.4g", 314572800 / t / 1e9 }') GB/s" \
  "close \"\$(b300 300 .GBps)\" $(awk -v t="$w300" 'BEGIN { printf "%.17g", 314572800 / t / 1e9 }') 1e-9"
"$DTSIM" run --explain tests/data/node8.yaml "$tmp/b300.dtt" >"$tmp/b300.txt" 2>/dev/null
check "batch explain text: the queue's closed form with its numbers, +0.0 %" \
  'grep -q "^  alpha-beta     ceil(N/8) a + N S/B (a queue moves 8 pairs at a time, NCCL_STEPS), N = 300, a = 2 us .*: 38 x 2 us + 300 MiB / 100 GB/s = 76 us + 3.146 ms = 3.222 ms" "$tmp/b300.txt" &&
   grep -A3 "queues of 300 pairs" "$tmp/b300.txt" | grep -q "^  difference     +0.0 % from the alpha-beta prediction: contention-free, the queue had its route to itself"'
{ cat tests/data/node8.yaml; printf 'nccl:\n  protocols:\n    Simple: {latency: 30us, hop_latency: 30us, efficiency: 1.0}\n'; } >"$tmp/n8nccl.yaml"
"$DTSIM" run --json --explain "$tmp/n8nccl.yaml" "$tmp/b300.dtt" >"$tmp/b300n.json" 2>/dev/null
check "batch explain, NCCL model: estimate = simulated = ceil(300/8) a + 300 S/B + c (the last pair's fixed cost)" \
  "close \"\$(jq -r '.explain_p2p[] | select(.batch_pairs == 300) | .estimate_s' $tmp/b300n.json)\" $(awk -v t="$w300" 'BEGIN { printf "%.17g", t + 60e-6 }') 1e-12 &&
   close \"\$(jq -r '.explain_p2p[] | select(.batch_pairs == 300) | .mean_s' $tmp/b300n.json)\" $(awk -v t="$w300" 'BEGIN { printf "%.17g", t + 60e-6 }') 1e-9"

# --- the NCCL model (platforms/dgx-h100.yaml): the choice is the least of the candidates' estimates
{ echo "dtsim_trace 1"; echo "ranks 8"; echo "group tp0 0-7"
  for r in 0 1 2 3 4 5 6 7; do echo "rank $r"; echo "s0 allreduce group=tp0 bytes=65536"; echo "s0 allreduce group=tp0 bytes=268435456"; done; } >"$tmp/ar8.dtt"
"$DTSIM" run --json --explain platforms/dgx-h100.yaml "$tmp/ar8.dtt" >"$tmp/h100.json" 2>/dev/null
check "NCCL model: two shapes" '[ "$(jq ".explain | length" "$tmp/h100.json")" = 2 ]'
check "NCCL model: each choice is its least candidate" \
  '[ "$(jq "[.explain[] | (.candidates | min_by(.estimate_s) | .choice) == .choice] | all" "$tmp/h100.json")" = true ]'
check "NCCL model: the choices are those of the notes" \
  'for c in $(jq -r ".explain[] | .choice" "$tmp/h100.json"); do jq -r ".notes[]" "$tmp/h100.json" | grep "^allreduce:" | grep -q "$c" || exit 1; done'
check "NCCL model: 64 KiB is latency-bound (latency part > half), 256 MiB is not" \
  '[ "$(jq -r "[.explain[] | select(.bytes == 65536) | .estimate_latency_s / .estimate_s > 0.5], [.explain[] | select(.bytes == 268435456) | .estimate_latency_s / .estimate_s < 0.5] | .[0]" "$tmp/h100.json" | tr "\n" " ")" = "true true " ]'

# --- --plot DIR: the data files hold the JSON report's numbers; PNGs when gnuplot is installed
"$DTSIM" run --json --plot "$tmp/pl" platforms/dgx-h100-4node.yaml --gen neox-1.3b --tp 8 --pp 2 --dp 2 \
  >"$tmp/pl.json" 2>"$tmp/pl.err"; rc=$?
check "--plot exits 0" '[ $rc -eq 0 ]'
for n in critical_path per_rank link_classes histogram; do
  check "--plot wrote $n.dat and $n.gp" '[ -s "$tmp/pl/$n.dat" ] && [ -s "$tmp/pl/$n.gp" ]'
  if command -v gnuplot >/dev/null; then
    check "--plot rendered $n.png" '[ "$(head -c 8 "$tmp/pl/$n.png" | od -An -tx1 | tr -d " \n")" = 89504e470d0a1a0a ]'
  fi
done
row() { awk -F'\t' -v k="$2" -v c="$3" '$1 == k { print $c }' "$tmp/pl/$1.dat"; }
got=$(row critical_path compute 2); want=$(jq .bound.compute_s "$tmp/pl.json")
check "critical_path.dat compute $got = bound.compute_s" 'close "$got" "$want" 1e-12'
got=$(row critical_path "TP allreduce" 2); want=$(jq .bound.comm_s.TP.allreduce "$tmp/pl.json")
check "critical_path.dat TP allreduce $got = bound.comm_s.TP.allreduce" 'close "$got" "$want" 1e-12'
sum=$(awk -F'\t' '!/^#/ { s += $3 } END { printf "%.17g", s }' "$tmp/pl/critical_path.dat")
check "critical_path.dat fractions sum to 1 ($sum)" 'close "$sum" 1 1e-9'
check "per_rank.dat: one row per rank" '[ "$(grep -vc "^#" "$tmp/pl/per_rank.dat")" = "$(jq .ranks "$tmp/pl.json")" ]'
jq -r '.per_rank[] | [.rank, .compute_s, .exposed_comm_s] | @tsv' "$tmp/pl.json" >"$tmp/pr.json.tsv"
grep -v "^#" "$tmp/pl/per_rank.dat" | cut -f1-3 >"$tmp/pr.dat.tsv"
check "per_rank.dat: compute and exposed communication of per_rank[]" \
  'awk -F"\t" "NR == FNR { c[\$1] = \$2; e[\$1] = \$3; next } { d = c[\$1] - \$2; f = e[\$1] - \$3; if (d*d + f*f > 1e-24) bad = 1 } END { exit bad }" "$tmp/pr.json.tsv" "$tmp/pr.dat.tsv"'
ms=$(jq .makespan_s "$tmp/pl.json")
check "per_rank.dat: compute + exposed + rest = makespan" \
  'awk -F"\t" -v m="$ms" "!/^#/ { d = \$2 + \$3 + \$4 - m; if (d < 0) d = -d; if (d > 1e-9 * m) bad = 1 } END { exit bad }" "$tmp/pl/per_rank.dat"'
for cls in nvswitch-port gpu-nic nic-leaf; do
  got=$(row link_classes $cls 4); want=$(jq ".links.classes[] | select(.class == \"$cls\") | .bytes" "$tmp/pl.json")
  check "link_classes.dat $cls bytes $got = links.classes" 'close "$got" "$want" 1e-12'
  got=$(row link_classes $cls 5); want=$(jq ".links.classes[] | select(.class == \"$cls\") | .busy_mean" "$tmp/pl.json")
  check "link_classes.dat $cls busy_mean $got = links.classes" 'close "$got" "$want" 1e-12'
done
jq -r '.histogram.by_kind.allreduce[] | [.min_bytes, .count] | @tsv' "$tmp/pl.json" | sort -n >"$tmp/h.json.tsv"
awk -F'\t' '!/^#/ && $3 > 0 { print $1 "\t" $3 }' "$tmp/pl/histogram.dat" | sort -n >"$tmp/h.dat.tsv"
check "histogram.dat allreduce counts = histogram.by_kind.allreduce" 'cmp -s "$tmp/h.json.tsv" "$tmp/h.dat.tsv"'
check "histogram.dat counts 25856 allreduces (as by_kind)" \
  '[ "$(awk -F"\t" "!/^#/ { s += \$3 } END { print s }" "$tmp/pl/histogram.dat")" = "$(jq .by_kind.allreduce.count "$tmp/pl.json")" ]'
# --- the leaf x spine heatmap and the per-tier picture (tests/data/fat-tree-perm.yaml: leaf 0 holds nodes 0-5, leaf 1
# nodes 6-11, 2 spines, every NIC and cable 25 GB/s; a leaf's uplink is the destination NIC mod 2). Flows of S bytes:
# 0->6 and 1->8 share leaf0-spine0 up and leaf1-spine0 down (B/2 each), 2->7 (spine 1) and 7->0 (spine 0) run alone,
# so the makespan is T = alpha + 2S/B (alpha = 2 NICs x 1 us + 4 cables x 100 ns), and a cell carrying k flows has
# utilisation k S / (B T): up (leaf, spine) (0,0) 2, (0,1) 1, (1,0) 1, (1,1) 0; down (1,0) 2, (1,1) 1, (0,0) 1, (0,1) 0.
S=250000000
{ echo "dtsim_trace 1"; echo "ranks 12"
  for r in $(seq 0 11); do echo "rank $r"
    case $r in
      0) echo "s0 send peer=6 bytes=$S batch=1"; echo "s0 recv peer=7 bytes=$S batch=1" ;;
      1) echo "s0 send peer=8 bytes=$S" ;;
      2) echo "s0 send peer=7 bytes=$S" ;;
      6) echo "s0 recv peer=0 bytes=$S" ;;
      7) echo "s0 recv peer=2 bytes=$S batch=1"; echo "s0 send peer=0 bytes=$S batch=1" ;;
      8) echo "s0 recv peer=1 bytes=$S" ;;
    esac
  done; } >"$tmp/hperm.dtt"
"$DTSIM" run --json --top 100 --plot "$tmp/hm" tests/data/fat-tree-perm.yaml "$tmp/hperm.dtt" >"$tmp/hm.json" 2>"$tmp/hm.err"; rc=$?
check "heatmap run exits 0" '[ $rc -eq 0 ]'
T=$(awk -v S=$S 'BEGIN { printf "%.17g", 2e-6 + 4 * 100e-9 + 2 * S / 25e9 }')
got=$(jq .makespan_s "$tmp/hm.json")
check "heatmap run: makespan $got = alpha + 2S/B = $T" 'close "$got" "$T" 1e-9'
for n in fabric_heatmap tiers; do
  check "--plot wrote $n.dat and $n.gp" '[ -s "$tmp/hm/$n.dat" ] && [ -s "$tmp/hm/$n.gp" ]'
  if command -v gnuplot >/dev/null; then
    check "--plot rendered $n.png" '[ "$(head -c 8 "$tmp/hm/$n.png" | od -An -tx1 | tr -d " \n")" = 89504e470d0a1a0a ]'
  fi
done
check "fabric_heatmap.dat: every leaf x spine cell (2 x 2)" '[ "$(grep -v "^#" "$tmp/hm/fabric_heatmap.dat" | grep -c .)" = 4 ]'
cell() { awk -F'\t' -v l="$1" -v s="$2" -v c="$3" '!/^#/ && NF && $1 == l && $2 == s { print $c }' "$tmp/hm/fabric_heatmap.dat"; }
for spec in "0 0 3 2" "0 1 3 1" "1 0 3 1" "1 1 3 0" "1 0 4 2" "1 1 4 1" "0 0 4 1" "0 1 4 0"; do
  set -- $spec
  want=$(awk -v k=$4 -v S=$S -v T=$T 'BEGIN { printf "%.17g", k * S / (25e9 * T) }')
  got=$(cell $1 $2 $3)
  check "heatmap leaf $1 spine $2 $([ $3 = 3 ] && echo up || echo down): $got = $4 S / (B T) = $want" 'close "$got" "$want" 1e-9'
done
# the same cells from the JSON report: bytes / (bandwidth x makespan) of links.top[] by the cable's name
jq -r '.makespan_s as $m | .links.top[] | select(.class == "leaf-spine") | [.name, .bytes / (.bandwidth_Bps * $m), .busy] | @tsv' \
  "$tmp/hm.json" >"$tmp/hm.top.tsv"
awk -F'\t' '!/^#/ && NF { print "cable:leaf" $1 "-spine" $2 " up\t" $3 "\t" $5; print "cable:leaf" $1 "-spine" $2 " down\t" $4 "\t" $6 }' \
  "$tmp/hm/fabric_heatmap.dat" >"$tmp/hm.dat.tsv"
check "fabric_heatmap.dat: utilisation and busy of every used cable = links.top[]" \
  'awk -F"\t" "NR == FNR { u[\$1] = \$2; b[\$1] = \$3; n++; next } (\$1 in u) { m++; d = u[\$1] - \$2; e = b[\$1] - \$3; if (d*d + e*e > 1e-24) bad = 1 } END { exit bad || m != n || n != 6 }" "$tmp/hm.top.tsv" "$tmp/hm.dat.tsv"'
# tiers: the 8 leaf-spine directions carry 2,1,1,0,2,1,1,0 flows: sorted 0 0 1 1 1 1 2 2 (x S / (B T)); quantiles by
# linear interpolation at q (n - 1): p25 at 1.75 -> 0.75, median at 3.5 -> 1, p75 at 5.25 -> 1.25; mean 1
trow() { awk -F'\t' -v k="$1" -v c="$2" '$1 == k { print $c }' "$tmp/hm/tiers.dat"; }
for spec in "6 0" "7 0.75" "8 1" "9 1.25" "10 2" "11 1"; do
  set -- $spec
  want=$(awk -v k=$2 -v S=$S -v T=$T 'BEGIN { printf "%.17g", k * S / (25e9 * T) }')
  got=$(trow leaf-spine $1)
  check "tiers.dat leaf-spine column $1: $got = $2 S / (B T)" 'close "$got" "$want" 1e-9'
done
got=$(trow leaf-spine 4); want=$(jq '.links.classes[] | select(.class == "leaf-spine") | .busy_mean * .used / .links' "$tmp/hm.json")
check "tiers.dat leaf-spine busy_all $got = busy_mean x used / links" 'close "$got" "$want" 1e-12'
got=$(trow gpu-nic 10); want=$(jq -r '.makespan_s as $m | [.links.top[] | select(.class == "gpu-nic") | .bytes / (.bandwidth_Bps * $m)] | max' "$tmp/hm.json")
check "tiers.dat gpu-nic util_max $got = links.top[]" 'close "$got" "$want" 1e-12'
check "tiers.dat: a row per link class of the platform" \
  '[ "$(grep -vc "^#" "$tmp/hm/tiers.dat")" = "$(jq "[.links.classes[] | select(.links > 0)] | length" "$tmp/hm.json")" ]'
"$DTSIM" run --plot "$tmp/nf" tests/data/node2.yaml "$tmp/ar2.dtt" >/dev/null 2>"$tmp/nf.err"; rc=$?
check "--plot on one node: exit 0, the heatmap skipped with a note" \
  '[ $rc -eq 0 ] && [ ! -e "$tmp/nf/fabric_heatmap.dat" ] && [ -s "$tmp/nf/tiers.dat" ] && grep -q "note: --plot: no leaf x spine heatmap (fabric_heatmap): the platform is one node" "$tmp/nf.err"'
"$DTSIM" run --plot "$tmp/df" platforms/frontier-like.yaml --gen neox-125m --dp 8 >/dev/null 2>"$tmp/df.err"; rc=$?
check "--plot on a dragonfly: exit 0, the heatmap skipped with a note" \
  '[ $rc -eq 0 ] && [ ! -e "$tmp/df/fabric_heatmap.dat" ] && grep -q "no leaf x spine heatmap.*dragonfly, not a fat-tree" "$tmp/df.err"'
# a 3-level fat-tree (fat-tree-perm.yaml at radix 4, no oversubscription, 8 nodes: 4 leaves of 2 NICs, 2 uplinks
# each, pods of 2 leaves): rank r sends S to r+4 in the other pod. A leaf's 2 NICs send to NICs d and d+1 over
# uplinks d mod 2 and (d+1) mod 2, then each aggregation switch to its own core: no cable is shared, every flow ends
# at T = alpha + S/B (alpha = 2 NICs x 1 us + 6 cables x 100 ns), and each leaf-aggregation cell carries S: S/(B T)
sed -e 's/levels: 2/levels: 3/' -e 's/radix: 8/radix: 4/' -e 's/oversubscription: 3/oversubscription: 1/' \
  -e 's/^nodes: 12/nodes: 8/' tests/data/fat-tree-perm.yaml >"$tmp/ft3.yaml"
S3=100000000
{ echo "dtsim_trace 1"; echo "ranks 8"
  for r in $(seq 0 7); do p=$(( (r + 4) % 8 )); echo "rank $r"
    echo "s0 send peer=$p bytes=$S3 batch=1"; echo "s0 recv peer=$p bytes=$S3 batch=1"; done; } >"$tmp/p3.dtt"
"$DTSIM" run --plot "$tmp/h3" "$tmp/ft3.yaml" "$tmp/p3.dtt" >/dev/null 2>&1; rc=$?
want=$(awk -v S=$S3 'BEGIN { printf "%.17g", (S / 25e9) / (2.6e-6 + S / 25e9) }')
check "3-level heatmap: exit 0, 4 leaves x 2 aggregation uplinks, every cell up and down S / (B T) = $want" \
  '[ $rc -eq 0 ] && [ "$(grep -v "^#" "$tmp/h3/fabric_heatmap.dat" | grep -c .)" = 8 ] && awk -F"\t" -v w="$want" "!/^#/ && NF { for (c = 3; c <= 4; c++) { d = \$c - w; if (d < 0) d = -d; if (d > 1e-9) bad = 1 } } END { exit bad }" "$tmp/h3/fabric_heatmap.dat"'
if command -v gnuplot >/dev/null; then
  check "3-level heatmap rendered" '[ "$(head -c 8 "$tmp/h3/fabric_heatmap.png" | od -An -tx1 | tr -d " \n")" = 89504e470d0a1a0a ]'
fi
# send/recv rows of the heatmap's permutation: 4 pairs on one route shape (between leaves: NIC, 4 cables, NIC), 2 alone at
# a + S/B and 2 sharing leaf0-spine0 at a + 2S/B
S=250000000
"$DTSIM" run --json --explain tests/data/fat-tree-perm.yaml "$tmp/hperm.dtt" >"$tmp/hpx.json" 2>/dev/null
check "permutation: one send/recv row of 4 pairs, 6 hops" '[ "$(jq -c "[(.explain_p2p | length), .explain_p2p[0].count, .explain_p2p[0].hops]" "$tmp/hpx.json")" = "[1,4,6]" ]'
got=$(jq .explain_p2p[0].min_s "$tmp/hpx.json")
check "permutation: fastest pair $got = a + S/B" "close $got $(awk -v S=$S 'BEGIN { printf "%.17g", 2.4e-6 + S / 25e9 }') 1e-6"
got=$(jq .explain_p2p[0].max_s "$tmp/hpx.json")
check "permutation: slowest pair $got = a + 2S/B" "close $got $(awk -v S=$S 'BEGIN { printf "%.17g", 2.4e-6 + 2 * S / 25e9 }') 1e-6"
got=$(jq .explain_p2p[0].mean_s "$tmp/hpx.json")
check "permutation: mean $got = a + 1.5 S/B" "close $got $(awk -v S=$S 'BEGIN { printf "%.17g", 2.4e-6 + 1.5 * S / 25e9 }') 1e-6"
: >"$tmp/afile"
"$DTSIM" run --plot "$tmp/afile" tests/data/node2.yaml "$tmp/ar2.dtt" >/dev/null 2>"$tmp/pf.err"; rc=$?
check "--plot onto a file is exit 2 with a message" '[ $rc -eq 2 ] && grep -q "is a file, not a folder: --plot writes several files" "$tmp/pf.err"'

# --- timeline: the fabric process's counter tracks (tests/data/shared-nic.dtt: ranks 0 and 1 send 1 GB each through
# node 0's one 25 GB/s NIC at once, 80 ms plus the route latency; the NIC's counter shows 2 flows at 25 GB/s, then 0)
"$DTSIM" run --timeline "$tmp/tl.json" tests/data/shared-nic.yaml tests/data/shared-nic.dtt >/dev/null 2>&1; rc=$?
check "timeline with counters exits 0 and parses" '[ $rc -eq 0 ] && jq -e . "$tmp/tl.json" >/dev/null'
check "timeline: a fabric process after the 4 ranks (pid 4)" \
  '[ "$(jq -r ".traceEvents[] | select(.ph == \"M\" and .pid == 4) | .args.name" "$tmp/tl.json")" = "fabric (busiest links)" ]'
check "timeline: nic0.0 up's counter goes 2 flows, then 0" \
  '[ "$(jq -c "[.traceEvents[] | select(.ph == \"C\" and .name == \"nic0.0 up\") | .args.flows]" "$tmp/tl.json")" = "[2,0]" ]'
got=$(jq '[.traceEvents[] | select(.ph == "C" and .name == "nic0.0 up") | .args.GBps] | max' "$tmp/tl.json")
check "timeline: nic0.0 up carries 2 x 1 GB over the 80 ms (+ latency) = 25 GB/s ($got)" 'close "$got" 25 1e-4'
got=$(jq '[.traceEvents[] | select(.ph == "C" and .name == "nic0.0 up") | .ts] | max' "$tmp/tl.json")
check "timeline: the counter drops at 80 ms + the route latency ($got us)" 'close "$got" 80002.2 1e-6'
check "timeline: at most 8 counter tracks" '[ "$(jq "[.traceEvents[] | select(.ph == \"C\") | .name] | unique | length" "$tmp/tl.json")" -le 8 ]'
"$DTSIM" run --no-links --timeline "$tmp/tl2.json" tests/data/shared-nic.yaml tests/data/shared-nic.dtt >/dev/null 2>&1
check "timeline --no-links: no counters" '[ "$(jq "[.traceEvents[] | select(.ph == \"C\")] | length" "$tmp/tl2.json")" = 0 ]'

# --- --plot on runs with nothing to draw for some charts: skipped with a note, the run's own exit code stands
# (was: exit 2 'gnuplot failed' on a compute-only trace, and on deadlocked or aborted runs, gnuplot's errors leaking)
printf 'dtsim_trace 1\nranks 1\nrank 0\ns0 compute dur=1ms\n' >"$tmp/c1.dtt"
"$DTSIM" run --plot "$tmp/pc" platforms/dgx-h100-4node.yaml "$tmp/c1.dtt" >/dev/null 2>"$tmp/pc.err"; rc=$?
check "--plot on a compute-only trace: exit 0, notes for the histogram and link charts, no gnuplot error" \
  '[ $rc -eq 0 ] && grep -q "no histogram chart: no message completed" "$tmp/pc.err" && grep -q "no link_classes and tiers charts" "$tmp/pc.err" && ! grep -q "gnuplot failed\|line [0-9]*:" "$tmp/pc.err"'
if command -v gnuplot >/dev/null; then
  check "--plot on a compute-only trace: critical_path.png and per_rank.png, no histogram.png" \
    '[ -s "$tmp/pc/critical_path.png" ] && [ -s "$tmp/pc/per_rank.png" ] && [ ! -e "$tmp/pc/histogram.png" ]'
fi
printf 'dtsim_trace 1\nranks 2\nrank 0\ns0 recv peer=1 bytes=8\ns0 send peer=1 bytes=8\nrank 1\ns0 recv peer=0 bytes=8\ns0 send peer=0 bytes=8\n' >"$tmp/dl.dtt"
"$DTSIM" run --plot "$tmp/pd" platforms/dgx-h100-4node.yaml "$tmp/dl.dtt" >/dev/null 2>"$tmp/pd.err"; rc=$?
check "--plot on a deadlocked run: exit 1 (the deadlock's), 'no chart had anything to draw', no gnuplot error" \
  '[ $rc -eq 1 ] && grep -q "deadlock" "$tmp/pd.err" && grep -q "no chart had anything to draw" "$tmp/pd.err" && ! grep -q "gnuplot" "$tmp/pd.err"'

finish
