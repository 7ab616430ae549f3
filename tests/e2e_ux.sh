#!/usr/bin/env bash
# End-to-end tests of what a fresh user ran into (runs that stop early, --samples with a failed seed, long-run
# estimates, names and messages): each against values worked out by hand on tests/data/degrade/ft8.yaml (8
# single-GPU nodes, 2 leaves, 4 spines, every NIC and cable B = 12.5 GB/s, alpha across the spines 4 us).
# usage: tests/e2e_ux.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: e2e_ux.sh DTSIM}
source "$(dirname "$0")/e2e-lib.sh"
P=tests/data/degrade/ft8.yaml
S=125000000 # bytes per flow: S / B = 10 ms
js() { jq -r "$2" "$1"; }
run() { # run OUT args...: the JSON report, exit status in $tmp/rc, stderr in $tmp/err
  local out=$1
  shift
  "$DTSIM" run --json "$@" >"$out" 2>"$tmp/err"
  echo $? >"$tmp/rc"
}

# A spine-crossing permutation on s0 (rank i <-> i + 4, S bytes each way, alpha + S/B = 10.004 ms) beside a 5 ms
# compute on s1 of every rank: at 7 ms the computes are done (8 of 24 ops) and the flows still cross the spines.
{
  echo "dtsim_trace 1"; echo "ranks 8"
  for r in 0 1 2 3 4 5 6 7; do
    p=$(( (r + 4) % 8 ))
    echo "rank $r"
    echo "s0 send peer=$p bytes=$S batch=1"
    echo "s0 recv peer=$p bytes=$S batch=1"
    echo "s1 compute dur=5ms"
  done
} >"$tmp/permc.dtt"
# ft8 with power and prices: 8 GPUs at 500 W busy, 100 W idle, 3.6 USD per GPU-hour, nothing else priced
sed 's/efficiency: 0.5}/efficiency: 0.5, power: {idle: 100W, busy: 500W}}/' $P >"$tmp/ft8c.yaml"
echo "cost: {currency: USD, gpu_hour: 3.6, nic_hour: 0, switch_hour: 0, energy_kwh: 0}" >>"$tmp/ft8c.yaml"

# 1. a run aborted while ops run: the stop time and what completed, beside the makespan (the last completed op)
run "$tmp/ab.json" "$tmp/ft8c.yaml" "$tmp/permc.dtt" --fail leaf0-spine3@7ms
check "aborted at 7 ms: exit 1" "[ \$(cat $tmp/rc) = 1 ]"
check "aborted: stopped_s 7 ms, makespan_s 5 ms (the computes)" \
  "close $(js "$tmp/ab.json" .stopped_s) 0.007 && close $(js "$tmp/ab.json" .makespan_s) 0.005"
check "aborted: 8 of 24 ops completed" \
  "[ $(js "$tmp/ab.json" .ops.completed) = 8 ] && [ $(js "$tmp/ab.json" .ops.total) = 24 ]"
check "aborted: rank 0 computed 5 ms, no iteration completed" \
  "close $(js "$tmp/ab.json" '.per_rank[0].compute_s') 0.005 && [ $(js "$tmp/ab.json" '.iterations_s | length') = 0 ]"
"$DTSIM" run "$tmp/ft8c.yaml" "$tmp/permc.dtt" --fail leaf0-spine3@7ms >"$tmp/ab.txt" 2>/dev/null
check "aborted, text: no makespan, the time the run reached and the ops completed (was 'makespan 5 ms (...)')" \
  "grep -q '^makespan  *none (the run did not finish): it stopped at 7 ms, aborted; 8 of 24 ops completed, the last at 5 ms' $tmp/ab.txt"
check "aborted, text and JSON: no validated band for a run without a makespan or an iteration (was [4.79 ms, 5.22 ms])" \
  "grep -q '^  makespan  *none: the run did not finish (aborted at 7 ms) and no iteration completed' $tmp/ab.txt &&
   ! grep -q 'measured likely in' $tmp/ab.txt && [ \"\$(js $tmp/ab.json '.validated_error.iteration // \"none\"')\" = none ]"
run "$tmp/ab0.json" $P "$tmp/permc.dtt" --fail leaf0-spine3@2ms
check "aborted during the computes (2 ms): makespan 0, stopped 2 ms, 0 of 24 completed, the bound says so" \
  "[ $(js "$tmp/ab0.json" .makespan_s) = 0 ] && close $(js "$tmp/ab0.json" .stopped_s) 0.002 && [ $(js "$tmp/ab0.json" .ops.completed) = 0 ] && js $tmp/ab0.json .bound.sentence | grep -q 'no op completed before the run stopped (aborted at 2 ms)'"

# 2. energy and cost of an aborted run are the partial run's, said so: GPU busy 8 x 5 ms x 500 W = 20 J, idle
#    100 W x (8 x 5 ms - 40 ms) = 0; 8 GPUs x 3.6 USD/h x 5 ms = 4e-5 USD; no per-token figure
check "aborted: energy 20 J of the partial run" \
  "close $(js "$tmp/ab.json" .energy.per_iteration_J) 20 && [ $(js "$tmp/ab.json" .energy.partial_run) = true ]"
check "aborted: cost 4e-5 USD of the partial run" \
  "close $(js "$tmp/ab.json" .cost.per_iteration) 4e-5 && [ $(js "$tmp/ab.json" .cost.partial_run) = true ]"
check "aborted, text: energy and cost lines say partial run, not per iteration" \
  "grep -q '^energy .*for the partial run (to 5 ms; no iteration completed)' $tmp/ab.txt && grep -q '^cost .*USD for the partial run' $tmp/ab.txt && ! grep -q 'per iteration' $tmp/ab.txt"
run "$tmp/full.json" "$tmp/ft8c.yaml" "$tmp/permc.dtt"
check "a complete run: cost per iteration, no partial_run, no stopped_s" \
  "[ \$(cat $tmp/rc) = 0 ] && [ $(js "$tmp/full.json" '.cost.partial_run // "none"') = none ] && [ $(js "$tmp/full.json" '.stopped_s // "none"') = none ]"

# 1b. a deadlock after some ops: rank 0 computes 3 ms, rank 1 1 ms, then both send before they receive (no
#     batch): exit 1 (never 0), 2 of 6 ops completed, makespan 3 ms, no iteration
{
  echo "dtsim_trace 1"; echo "ranks 2"
  for r in 0 1; do
    echo "rank $r"; echo "s0 compute dur=$((3 - 2 * r))ms"
    echo "s0 send peer=$((1 - r)) bytes=1000"; echo "s0 recv peer=$((1 - r)) bytes=1000"
  done
} >"$tmp/dl.dtt"
run "$tmp/dl.json" $P "$tmp/dl.dtt"
check "deadlock: exit 1, 2 of 6 ops completed, makespan 3 ms, no iteration" \
  "[ \$(cat $tmp/rc) = 1 ] && [ $(js "$tmp/dl.json" .ops.completed) = 2 ] && [ $(js "$tmp/dl.json" .ops.total) = 6 ] && close $(js "$tmp/dl.json" .makespan_s) 0.003 && [ $(js "$tmp/dl.json" '.iterations_s | length') = 0 ]"
"$DTSIM" run $P "$tmp/dl.dtt" >"$tmp/dl.txt" 2>"$tmp/dl.err"
echo $? >"$tmp/rc"
check "deadlock, text: exit 1, the makespan line says deadlock and what completed" \
  "[ \$(cat $tmp/rc) = 1 ] && grep -q '^makespan  *none (the run did not finish): it reached 3 ms, deadlocked; 2 of 6 ops completed, the last at 3 ms' $tmp/dl.txt"
"$DTSIM" run $P tests/data/deadlock.dtt >"$tmp/dl0.txt" 2>/dev/null
check "deadlock at 0 s, text: no 'makespan 0 s', no validated band [0 s, 0 s]" \
  "grep -q '^makespan  *none (the run did not finish): it reached 0 s, deadlocked; none of its' $tmp/dl0.txt &&
   ! grep -q '\[0 s, 0 s\]' $tmp/dl0.txt && grep -q '^  makespan  *none: the run did not finish (deadlock at 0 s)' $tmp/dl0.txt"
"$DTSIM" run $P tests/data/deadlock.dtt >/dev/null 2>&1
check "deadlock at 0 s (tests/data/deadlock.dtt): exit 1, not 0" "[ \$? = 1 ]"
"$DTSIM" run $P --job a tests/data/deadlock.dtt >/dev/null 2>&1
check "deadlock in a job run: exit 1" "[ \$? = 1 ]"

# 3. --samples with seeds that a link failure stops: a 5 ms compute (jittered) before the permutation, the cable of
#    pair 3 <-> 7 failing at 5 ms; a seed aborts when both of its ranks 3 and 7 finish computing before 5 ms. Each
#    seed run alone says which; --samples reports the others' mean, counts the aborted ones and exits 1.
{
  echo "dtsim_trace 1"; echo "ranks 8"
  for r in 0 1 2 3 4 5 6 7; do
    p=$(( (r + 4) % 8 ))
    echo "rank $r"; echo "s0 compute dur=5ms"
    echo "s0 send peer=$p bytes=$S batch=1"; echo "s0 recv peer=$p bytes=$S batch=1"
  done
} >"$tmp/cperm.dtt"
aborted=0; sum=0; n=0; pos=""
for k in 10 11 12 13 14 15; do
  run "$tmp/seed$k.json" $P "$tmp/cperm.dtt" --jitter 0.1 --seed $k --fail leaf0-spine3@5ms
  if [ "$(js "$tmp/seed$k.json" '.aborted.time_s // empty')" != "" ]; then
    aborted=$((aborted + 1)); pos="$pos $((k - 10))"
  else
    sum=$(awk -v a=$sum -v b=$(js "$tmp/seed$k.json" '.iterations_s[0]') 'BEGIN{printf "%.17g", a + b}'); n=$((n + 1))
  fi
done
check "samples: seeds 10-15 run alone, some abort and some complete (the test's premise)" "[ $aborted -ge 1 ] && [ $n -ge 1 ]"
run "$tmp/smp.json" $P "$tmp/cperm.dtt" --jitter 0.1 --seed 10 --samples 6 --fail leaf0-spine3@5ms
check "samples with aborted seeds: exit 1, a report" "[ \$(cat $tmp/rc) = 1 ] && [ $(js "$tmp/smp.json" .samples.n) = 6 ]"
check "samples: completed and aborted counts as the seeds alone say" \
  "[ $(js "$tmp/smp.json" .samples.completed) = $n ] && [ $(js "$tmp/smp.json" .samples.aborted) = $aborted ] && [ $(js "$tmp/smp.json" .samples.deadlocked) = 0 ]"
check "samples: the mean iteration is that of the seeds that completed" \
  "close $(js "$tmp/smp.json" .samples.iteration_s.mean) $(awk -v s=$sum -v n=$n 'BEGIN{printf "%.17g", s / n}') 1e-9"
check "samples: the aborted seeds' places are null in iteration_samples_s" \
  "[ \"$(js "$tmp/smp.json" '[.samples.iteration_samples_s | to_entries[] | select(.value == null) | .key] | map(" " + tostring) | add // ""')\" = \"$pos\" ]"
check "samples: stderr says how many seeds stopped" "grep -q 'dtsim: samples: $aborted of 6 seeds stopped early ($aborted aborted, 0 deadlocked)' $tmp/err"
"$DTSIM" run $P "$tmp/cperm.dtt" --jitter 0.1 --seed 10 --samples 6 --fail leaf0-spine3@5ms 2>/dev/null >"$tmp/smp.txt"
check "samples, text: the summary line counts the aborted seeds" \
  "grep -q '^samples .* over the $n seeds that completed ($aborted aborted: seeds' $tmp/smp.txt"

# 4. long runs say so. A deadlock beside a flapping link ended (the outages kept SimGrid's clock moving: it ran
#    forever); a flap during a 35 ms compute is not taken for one: the flows of spine 0 start at 35 ms, pay alpha
#    4 us, then move data in [35.004, 36), [37, 40), [41, 44), [45, 48) ms and the last 4 us after the outage at
#    48 ms: 49.004 ms
timeout 60 "$DTSIM" run $P tests/data/deadlock.dtt --flap leaf0-spine0=10ms,1ms >/dev/null 2>"$tmp/e"
check "a deadlock with a flapping link ends: exit 1, deadlock" "[ \$? = 1 ] && grep -q 'dtsim: deadlock: 2 ops blocked' $tmp/e"
{
  echo "dtsim_trace 1"; echo "ranks 8"
  for r in 0 1 2 3 4 5 6 7; do
    p=$(( (r + 4) % 8 ))
    echo "rank $r"; echo "s0 compute dur=35ms"
    echo "s0 send peer=$p bytes=$S batch=1"; echo "s0 recv peer=$p bytes=$S batch=1"
  done
} >"$tmp/lperm.dtt"
run "$tmp/lflap.json" $P "$tmp/lperm.dtt" --flap leaf0-spine0=4ms,1ms
check "a flap across a long compute still flaps: makespan 49.004 ms" "[ \$(cat $tmp/rc) = 0 ] && close $(js "$tmp/lflap.json" .makespan_s) 0.049004 1e-6"
# a tiny degrade under a flap: 125 MB at 12.5 GB/s x 1e-6 is 1e4 s, 1e7 outages of 1 ms: said before the run,
# then every 10 s of wall time
timeout 13 "$DTSIM" run $P "$tmp/lperm.dtt" --degrade leaf0-spine0=1e-6 --flap leaf0-spine0=1ms,0.5ms >/dev/null 2>"$tmp/e"
check "flap + tiny degrade: a note up front (at least 1e+07 outages)" \
  "grep -q 'note: --flap leaf0-spine0: the run lasts at least 10000.0 s (the bytes of a degraded link at its new bandwidth), so at least 1e+07 outages' $tmp/e"
check "flap + tiny degrade: a progress line after 10 s" "grep -q 'dtsim: still running after 1[0-9] s of wall time: simulated' $tmp/e"
timeout 5 "$DTSIM" run $P tests/data/allreduce8.dtt --jitter 0.1 --samples 100000 >/dev/null 2>"$tmp/e"
check "--samples 100000: the estimate from the first seed's wall time, up front" \
  "grep -q 'dtsim: --samples 100000: the first seed took .* of wall time, so the 100000 seeds will take about' $tmp/e"

# 5. platform show names link classes as the report and --degrade do: on dgx-h100-4node.yaml 32 GPUs on NVSwitch
#    ports, 4 x 8 NICs, one cable per NIC to its leaf, 8 leaves x 32 up-ports to the spines
"$DTSIM" platform show platforms/dgx-h100-4node.yaml >"$tmp/show.txt" 2>&1
check "platform show: classes nvswitch-port 32, gpu-nic 32, nic-leaf 32, leaf-spine 256" \
  "grep -Eq '^  nvswitch-port +32 x' $tmp/show.txt && grep -Eq '^  gpu-nic +32 x' $tmp/show.txt && grep -Eq '^  nic-leaf +32 x' $tmp/show.txt && grep -Eq '^  leaf-spine +256 x' $tmp/show.txt && ! grep -q 'gpu port' $tmp/show.txt"
classes_ok=1
for c in $(sed -n '/^link classes/,$p' "$tmp/show.txt" | awk 'NR > 1 && /^  [a-z]/ {print $1}' | sort -u); do
  "$DTSIM" run platforms/dgx-h100-4node.yaml --gen neox-19m --tp 8 --dp 4 --global-batch 32 --degrade "$c=0.5" --json >/dev/null 2>&1 || classes_ok=0
done
check "platform show: every class it prints is a --degrade class" "[ $classes_ok = 1 ]"

# 6. messages and notes
err() { # err NAME PATTERN args...: exit 2 and PATTERN on stderr
  local name=$1 pat=$2
  shift 2
  "$DTSIM" "$@" >/dev/null 2>"$tmp/e"
  local rc=$?
  check "$name" "[ $rc = 2 ] && grep -q -- \"$pat\" $tmp/e"
}
cp $P "$tmp/vs.yaml"; printf 'variability:\n  speed: []\n' >>"$tmp/vs.yaml"
err "variability.speed: [] says the list is empty, at its line" "vs.yaml:21:10: 'variability.speed' is an empty list: give at least one" \
  run "$tmp/vs.yaml" tests/data/allreduce8.dtt
sed 's/currency: USD/currency: 5/' "$tmp/ft8c.yaml" >"$tmp/cur.yaml"
err "cost.currency: 5 is refused (a currency code)" "expected a currency code of 1 to 16 letters for 'cost.currency'.*found '5'" \
  platform check "$tmp/cur.yaml"
run "$tmp/late0.json" $P tests/data/allreduce8.dtt --late 3=0
run "$tmp/late00.json" $P tests/data/allreduce8.dtt
check "--late 3=0 is accepted and changes nothing" \
  "[ \$(cat $tmp/rc) = 0 ] && [ $(js "$tmp/late0.json" .makespan_s) = $(js "$tmp/late00.json" .makespan_s) ]"
cp $P "$tmp/vl.yaml"; printf 'variability:\n  late:\n    - {gpus: 1, delay: 0}\n' >>"$tmp/vl.yaml"
run "$tmp/vl.json" "$tmp/vl.yaml" tests/data/allreduce8.dtt
check "variability.late delay: 0 is accepted" "[ \$(cat $tmp/rc) = 0 ] && [ $(js "$tmp/vl.json" .makespan_s) = $(js "$tmp/late00.json" .makespan_s) ]"
printf '0 0 0\n1 1 0\n' >"$tmp/pl.txt"
"$DTSIM" run $P tests/data/allreduce8.dtt --placement "$tmp/pl.txt" >/dev/null 2>"$tmp/e"
check "a placement of 2 of 8 ranks says the other 6 keep the default" \
  "grep -q 'note: --placement .*pl.txt places 2 of the trace.s 8 ranks; the other 6 keep the default placement' $tmp/e"
err "--placement '' is refused by name" "--placement expects a file name" run $P tests/data/allreduce8.dtt --placement ''
err "--plot '' is refused by name" "--plot expects a directory name" run $P tests/data/allreduce8.dtt --plot ''
err "a job's --placement '' is refused by name" "job 'a': --placement expects a file name" \
  run $P --job a tests/data/jobs-allreduce2.dtt --placement ''
"$DTSIM" run $P --job a tests/data/jobs-allreduce2.dtt --nodes 0-5 >/dev/null 2>"$tmp/e"
check "--job --nodes with more nodes than ranks: a note names the idle nodes" \
  "grep -q \"note: job 'a': its 2 ranks fill 2 of the 6 nodes of --nodes 0-5 (1 GPU per node); the other 4 stay idle\" $tmp/e"
# a fault after the run ended (9.45 ms): no effect, delta exactly 0 (the shortcuts are off in the run with it,
# on in the baseline: their sums differ in the last bits)
run "$tmp/late_f.json" platforms/dgx-h100-4node.yaml --gen neox-19m --tp 8 --dp 4 --global-batch 32 --fail leaf0-spine3@100s
check "a --fail after the run ended: iteration delta 0 and a remark" \
  "[ $(js "$tmp/late_f.json" .faults.iteration_delta_s) = 0 ] && js $tmp/late_f.json '.faults.applied[0].remark' | grep -q 'no effect: after the run ended'"
"$DTSIM" run $P tests/data/allreduce8.dtt --fail leaf0-spine3@1ms --fail leaf0-spine3@0.5ms --degrade leaf0-spine3=0.5 \
  --flap leaf0-spine1=10ms,1ms --fail leaf0-spine1@0 >"$tmp/contra.txt" 2>/dev/null
check "contradictory faults on one link get a remark each" \
  "grep -q 'fail leaf0-spine3 at 1 ms: .*; no effect: --fail leaf0-spine3 fails the link at 500 us' $tmp/contra.txt && grep -q 'degrade leaf0-spine3 x0.5: .*; acts until --fail leaf0-spine3 fails the link at 500 us' $tmp/contra.txt && grep -q 'flap leaf0-spine1: .*; no effect: --fail leaf0-spine1@0 fails the link from the start' $tmp/contra.txt && ! grep -q 'fail leaf0-spine3 at 500 us: .*no effect' $tmp/contra.txt"
# gpu.power.busy as a sweep axis: energy(700 W) - energy(500 W) = 200 W x the GPUs' busy time
mkdir -p "$tmp/sw"
"$DTSIM" sweep --set platform=platforms/dgx-h100.yaml --set workload.gen=neox-19m --set workload.dp=8 \
  --set axes.gpu.power.busy=500W,700W --dir "$tmp/sw/d" -o "$tmp/sw/t.jsonl" -q >/dev/null 2>"$tmp/e"
e5=$(jq -r 'select(.point == 0) | .result.energy.per_iteration_J' "$tmp/sw/t.jsonl")
e7=$(jq -r 'select(.point == 1) | .result.energy.per_iteration_J' "$tmp/sw/t.jsonl")
busy=$(jq -r 'select(.point == 0) | .result.energy.gpu_busy_s' "$tmp/sw/t.jsonl")
check "sweep axis gpu.power.busy: the energy moves by 200 W x GPU busy time" \
  "close \$(awk -v a=$e7 -v b=$e5 'BEGIN{printf \"%.17g\", a - b}') \$(awk -v t=$busy 'BEGIN{printf \"%.17g\", 200 * t}') 1e-9"

finish
