#!/usr/bin/env bash
# End-to-end tests of energy and cost per iteration (docs/whatif.md): a compute-only trace gives busy power x
# compute time + idle power x the rest, per GPU; a send between nodes gives the NIC and switch load terms; cost per
# iteration and per million tokens; the sweep's columns; bad power and cost values are exit-2 errors with
# file:line:col. Expected values are hand computations with tests/data/energy-2node.yaml's round numbers.
# usage: tests/e2e_energy.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: e2e_energy.sh DTSIM}
DTSIM=$(cd "$(dirname "$DTSIM")" && pwd)/$(basename "$DTSIM")
source "$(dirname "$0")/e2e-lib.sh"
P=tests/data/energy-2node.yaml
j() { jq -r "$1" "$2"; }
# calc EXPR: awk arithmetic with %.17g output
calc() { awk "BEGIN { printf \"%.17g\", $1 }"; }

# --- compute only: 3 ranks on 4 GPUs (GPU 3 has none). Rank 0 computes 1 ms; rank 1 2 ms then 2 ms (4 ms); rank 2
# 3 ms on s0 beside 2 ms on s1 (their union: 3 ms). Makespan 4 ms. Per GPU: busy 400 W x its compute time, idle
# 50 W x (4 ms - it): GPU compute 400 x 8e-3 = 3.2 J, GPU idle 50 x (16e-3 - 8e-3) = 0.4 J. NICs: 2 x 10 W x 4 ms =
# 0.08 J (no traffic: no load term); the switch 100 W x 4 ms = 0.4 J. Total 4.08 J.
cat >"$tmp/compute.dtt" <<'T'
dtsim_trace 1
ranks 3
rank 0
s0 compute dur=1ms
rank 1
s0 compute dur=2ms
s0 compute dur=2ms
rank 2
s0 compute dur=3ms
s1 compute dur=2ms
T
"$DTSIM" run --json $P "$tmp/compute.dtt" >"$tmp/c.json" 2>"$tmp/c.err"; rc=$?
check "compute-only run exits 0" '[ $rc -eq 0 ]'
check "compute-only makespan is 4 ms" 'close "$(j .makespan_s "$tmp/c.json")" 4e-3 1e-12'
check "GPU compute energy 400 W x 8 ms = 3.2 J ($(j .energy.gpu_compute_J "$tmp/c.json"))" \
  'close "$(j .energy.gpu_compute_J "$tmp/c.json")" 3.2 1e-12'
check "GPU idle energy 50 W x (4 x 4 ms - 8 ms) = 0.4 J ($(j .energy.gpu_idle_J "$tmp/c.json"))" \
  'close "$(j .energy.gpu_idle_J "$tmp/c.json")" 0.4 1e-12'
check "NIC energy 2 x 10 W x 4 ms = 0.08 J" 'close "$(j .energy.nic_J "$tmp/c.json")" 0.08 1e-12'
check "switch energy 100 W x 4 ms = 0.4 J" 'close "$(j .energy.switch_J "$tmp/c.json")" 0.4 1e-12'
check "energy per iteration 4.08 J ($(j .energy.per_iteration_J "$tmp/c.json"))" \
  'close "$(j .energy.per_iteration_J "$tmp/c.json")" 4.08 1e-12'
check "mean power 4.08 J / 4 ms = 1020 W" 'close "$(j .energy.mean_power_W "$tmp/c.json")" 1020 1e-12'
check "counts: 4 GPUs, 1 without a rank, 2 NICs, 1 switch, busy 8 ms" \
  '[ "$(jq -c "[.energy.gpus, .energy.gpus_without_rank, .energy.nics, .energy.switches]" "$tmp/c.json")" = "[4,1,2,1]" ] &&
   close "$(j .energy.gpu_busy_s "$tmp/c.json")" 8e-3 1e-12'
check "a trace that says no tokens has no per-token figure" \
  '[ "$(jq "(.energy | has(\"per_token_J\")), (.cost | has(\"per_million_tokens\"))" "$tmp/c.json" | sort -u)" = false ]'
# per GPU, again by hand from the per-rank compute times the report prints: sum busy x c + idle x (T - c)
T=$(j .makespan_s "$tmp/c.json")
byhand=$(jq -r --argjson T "$T" '[.per_rank[].compute_s] | (map(400 * . + 50 * ($T - .)) | add) + 50 * $T' "$tmp/c.json")
check "per GPU: sum over ranks of busy x compute + idle x rest, plus the idle GPU = $byhand J" \
  'close "$(calc "$(j .energy.gpu_compute_J "$tmp/c.json") + $(j .energy.gpu_idle_J "$tmp/c.json")")" "$byhand" 1e-12'
# cost: 4 ms = 4e-3/3600 h: GPUs 4 x 2, NICs 2 x 0.1, switch 1 per hour, energy 4.08 J = 4.08/3.6e6 kWh x 0.2
want=$(calc "4e-3 / 3600 * (4 * 2 + 2 * 0.1 + 1) + 4.08 / 3.6e6 * 0.2")
check "cost per iteration by hand $want EUR ($(j .cost.per_iteration "$tmp/c.json"))" \
  'close "$(j .cost.per_iteration "$tmp/c.json")" "$want" 1e-12 && [ "$(j .cost.currency "$tmp/c.json")" = EUR ]'
check "cost terms: GPUs 4 x 2 x 4e-3/3600, energy 4.08/3.6e6 x 0.2" \
  'close "$(j .cost.gpu "$tmp/c.json")" "$(calc "4 * 2 * 4e-3 / 3600")" 1e-12 &&
   close "$(j .cost.energy "$tmp/c.json")" "$(calc "4.08 / 3.6e6 * 0.2")" 1e-12'
"$DTSIM" run $P "$tmp/compute.dtt" >"$tmp/c.txt" 2>&1
check "text report: one energy line (4.08 J, GPU compute 78 %)" \
  'grep -q "^energy             4.08 J per iteration, mean 1.02 kW: GPU compute 78 %, GPU idle 10 %, 2 NICs 2 %, 1 switch 10 %$" "$tmp/c.txt"'
check "text report: one cost line in EUR" 'grep -q "^cost               .* EUR per iteration (GPUs " "$tmp/c.txt"'

# --- marks: two iterations of 1 ms and 3 ms (rank 0's marks) in a 4 ms run: per iteration is the mean power x 2 ms
cat >"$tmp/marks.dtt" <<'T'
dtsim_trace 1
ranks 1
rank 0
s0 compute dur=1ms
s0 mark name=i1
s0 compute dur=3ms
s0 mark name=i2
T
"$DTSIM" run --json $P "$tmp/marks.dtt" >"$tmp/m.json" 2>/dev/null
# run: GPU 400 x 4e-3 + 50 x 3 x 4e-3 = 2.2 J, NICs 0.08 J, switch 0.4 J = 2.68 J; per iteration half of it
check "two marked iterations: per iteration = run x mean iteration / makespan = 1.34 J" \
  'close "$(j .energy.run_J "$tmp/m.json")" 2.68 1e-12 && close "$(j .energy.per_iteration_J "$tmp/m.json")" 1.34 1e-12'

# a trace may say its tokens: 1000 per iteration, 1.34 J per iteration -> 1.34e-3 J per token
sed 's/^ranks 1$/ranks 1\nmeta tokens_per_iteration=1000/' "$tmp/marks.dtt" >"$tmp/tok.dtt"
"$DTSIM" run --json $P "$tmp/tok.dtt" >"$tmp/t.json" 2>/dev/null
check "meta tokens_per_iteration=1000: 1.34e-3 J per token" \
  '[ "$(j .energy.tokens_per_iteration "$tmp/t.json")" = 1000 ] && close "$(j .energy.per_token_J "$tmp/t.json")" 1.34e-3 1e-12'
# a tokens_per_iteration that is not a whole number from 1 to 1e15 is an error at its line (was ignored silently)
for v in abc nan 0 -5 1e30 2.5; do
  sed "s/^ranks 1\$/ranks 1\nmeta tokens_per_iteration=$v/" "$tmp/marks.dtt" >"$tmp/badtok.dtt"
  "$DTSIM" run $P "$tmp/badtok.dtt" >/dev/null 2>"$tmp/badtok.err"
  rc=$?
  check "meta tokens_per_iteration=$v: exit 2 at its line:col (the value's)" \
    "[ $rc = 2 ] && grep -q 'badtok.dtt:3:27: .*tokens_per_iteration: expected a whole number from 1 to' $tmp/badtok.err"
done

# --- NIC and switch load: rank 0 (node 0) sends S = 1.25e9 bytes to rank 2 (node 1): 0.1 s at 12.5e9 B/s on
# nic0.0 up, nic1.0 down and the two cable directions into and out of the switch. NIC load (30 - 10) x (0.1 + 0.1)
# / 2 = 2 J; switch load (300 - 100) x (0.1 + 0.1) / (2 directions x 2 ports) = 10 J; statics over the makespan T.
cat >"$tmp/send.dtt" <<'T'
dtsim_trace 1
ranks 3
rank 0
s0 send peer=2 bytes=1250000000
rank 2
s0 recv peer=0 bytes=1250000000
T
"$DTSIM" run --json $P "$tmp/send.dtt" >"$tmp/s.json" 2>/dev/null
T=$(j .makespan_s "$tmp/s.json")
check "send makespan 0.1 s + 2 x 1 us + 2 x 0.5 us ($T)" 'close "$T" "$(calc "0.1 + 3e-6")" 1e-9'
check "NIC load term (30 - 10) x 0.2 / 2 = 2 J" 'close "$(j .energy.terms.nic_load_J "$tmp/s.json")" 2 1e-9'
check "NIC static term 2 x 10 W x T" 'close "$(j .energy.terms.nic_static_J "$tmp/s.json")" "$(calc "20 * $T")" 1e-12'
check "switch load term (300 - 100) x 0.2 / (2 x 2) = 10 J" 'close "$(j .energy.terms.switch_load_J "$tmp/s.json")" 10 1e-9'
check "switch static term 100 W x T" 'close "$(j .energy.terms.switch_static_J "$tmp/s.json")" "$(calc "100 * $T")" 1e-12'
check "GPUs all idle: 4 x 50 W x T" \
  'close "$(j .energy.gpu_idle_J "$tmp/s.json")" "$(calc "200 * $T")" 1e-12 && [ "$(j .energy.gpu_compute_J "$tmp/s.json")" = 0 ]'
check "total = 2 + 10 + (20 + 100 + 200) x T" \
  'close "$(j .energy.per_iteration_J "$tmp/s.json")" "$(calc "12 + 320 * $T")" 1e-9'
# gpu.power.comm 150 W: ranks 0 and 2 communicate the whole run with no compute (exposed_comm_s = T each), so
# GPU comm = 150 W x 2T, GPU idle = 50 W x (4T - 2T); the other terms are unchanged
sed 's/power: {idle: 50W, busy: 400W}/power: {idle: 50W, busy: 400W, comm: 150W}/' $P >"$tmp/comm.yaml"
"$DTSIM" run --json "$tmp/comm.yaml" "$tmp/send.dtt" >"$tmp/sc.json" 2>/dev/null
X=$(jq '[.per_rank[].exposed_comm_s] | add' "$tmp/sc.json")
check "gpu.power.comm: exposed communication 2T ($X)" 'close "$X" "$(calc "2 * $T")" 1e-9 && close "$(j .energy.gpu_comm_s "$tmp/sc.json")" "$X" 1e-12'
check "gpu.power.comm: GPU comm 150 W x 2T, GPU idle 50 W x 2T" \
  'close "$(j .energy.gpu_comm_J "$tmp/sc.json")" "$(calc "300 * $T")" 1e-9 && close "$(j .energy.gpu_idle_J "$tmp/sc.json")" "$(calc "100 * $T")" 1e-9'
check "gpu.power.comm: total = 2 + 10 + (20 + 100 + 300 + 100) x T" \
  'close "$(j .energy.per_iteration_J "$tmp/sc.json")" "$(calc "12 + 520 * $T")" 1e-9'
check "without gpu.power.comm there is no gpu_comm_J (that time is idle)" '[ "$(jq ".energy | has(\"gpu_comm_J\")" "$tmp/s.json")" = false ]'
"$DTSIM" run "$tmp/comm.yaml" "$tmp/send.dtt" 2>/dev/null | grep -q "^energy .*GPU compute 0 %, GPU comm [0-9]* %, GPU idle"
check "gpu.power.comm: the text line has a GPU comm share" '[ $? -eq 0 ]'
"$DTSIM" run --json --no-links $P "$tmp/send.dtt" >"$tmp/sn.json" 2>/dev/null
check "--no-links: no load terms, said so, statics unchanged" \
  '[ "$(j .energy.load_terms "$tmp/sn.json")" = false ] && [ "$(j .energy.terms.nic_load_J "$tmp/sn.json")" = 0 ] &&
   close "$(j .energy.per_iteration_J "$tmp/sn.json")" "$(calc "320 * $T")" 1e-9'
"$DTSIM" run --no-links $P "$tmp/send.dtt" 2>/dev/null | grep -q "no load terms: --no-links"
check "--no-links: the text line says the load terms are left out" '[ $? -eq 0 ]'

# --- no power or cost figures: no energy or cost block, no line
"$DTSIM" run --json tests/data/node2.yaml "$tmp/marks.dtt" >"$tmp/n.json" 2>/dev/null
check "platform without figures: no energy and no cost keys" \
  '[ "$(jq "has(\"energy\"), has(\"cost\")" "$tmp/n.json" | sort -u)" = false ]'
check "platform without figures: no energy line" '! "$DTSIM" run tests/data/node2.yaml "$tmp/marks.dtt" 2>/dev/null | grep -q "^energy\|^cost"'

# --- generated workload on a shipped platform: tokens = global batch x sequence length
"$DTSIM" run --json platforms/dgx-h100-4node.yaml --gen neox-125m --tp 1 --dp 32 --global-batch 64 --microbatch 2 \
  --seq 1024 >"$tmp/g.json" 2>/dev/null; rc=$?
check "generated run on dgx-h100-4node exits 0" '[ $rc -eq 0 ]'
check "tokens per iteration 64 x 1024 = 65536" '[ "$(j .energy.tokens_per_iteration "$tmp/g.json")" = 65536 ]'
check "energy per token = per iteration / 65536" \
  'close "$(j .energy.per_token_J "$tmp/g.json")" "$(calc "$(j .energy.per_iteration_J "$tmp/g.json") / 65536")" 1e-12'
check "cost per million tokens = per iteration / 65536 x 1e6" \
  'close "$(j .cost.per_million_tokens "$tmp/g.json")" "$(calc "$(j .cost.per_iteration "$tmp/g.json") / 65536 * 1e6")" 1e-12'
# dgx-h100-4node: 32 GPUs, 32 NICs, 8 leaves + 32 spines (radix 64, 1:1, rail wiring); 700 W busy, 70 W idle
check "dgx-h100-4node: 32 GPUs, 32 NICs, 40 switches" \
  '[ "$(jq -c "[.energy.gpus, .energy.nics, .energy.switches]" "$tmp/g.json")" = "[32,32,40]" ]'
B=$(jq '[.per_rank[].compute_s] | add' "$tmp/g.json")
T=$(j .makespan_s "$tmp/g.json")
check "dgx-h100-4node GPU terms: 700 W x busy, 70 W x (32 T - busy)" \
  'close "$(j .energy.gpu_compute_J "$tmp/g.json")" "$(calc "700 * $B")" 1e-9 &&
   close "$(j .energy.gpu_idle_J "$tmp/g.json")" "$(calc "70 * (32 * $T - $B)")" 1e-9'
check "dgx-h100-4node switches: 40 x 1.7 kW x T (constant: no load term)" \
  'close "$(j .energy.switch_J "$tmp/g.json")" "$(calc "40 * 1700 * $T")" 1e-9'
check "dgx-h100-4node cost: T/3600 x (32 x 1.07 + 40 x 0.86) + energy x 0.10 / 3.6e6" \
  'close "$(j .cost.per_iteration "$tmp/g.json")" "$(calc "$T / 3600 * (32 * 1.07 + 40 * 0.86) + $(j .energy.per_iteration_J "$tmp/g.json") * 0.10 / 3.6e6")" 1e-9'

"$DTSIM" platform show $P >"$tmp/show.txt" 2>&1
check "platform show lists the power and cost figures" \
  'grep -q "^  power     GPU idle 50 W, busy 400 W; NIC idle 10 W, busy 30 W; switch idle 100 W, busy 300 W$" "$tmp/show.txt" &&
   grep -q "^  cost      EUR per GPU-hour 2, per NIC-hour 0.1, per switch-hour 1, per kWh 0.2$" "$tmp/show.txt"'

# --- every shipped platform has power figures
for f in platforms/*.yaml; do
  "$DTSIM" run --json "$f" "$tmp/marks.dtt" >"$tmp/ship.json" 2>/dev/null
  check "$f has power figures (an energy block)" '[ "$(jq "has(\"energy\")" "$tmp/ship.json")" = true ]'
done

# --- the sweep's CSV carries energy and cost columns, equal to each point's JSON
mkdir -p "$tmp/sw"
cp $P "$tmp/sw/base.yaml"
cat >"$tmp/sw/spec.yaml" <<'S'
dtsim_sweep: 1
platform: base.yaml
workload: {traces: [send.dtt]}
axes:
  nics.bandwidth: [50Gb/s, 100Gb/s]
S
cp "$tmp/send.dtt" "$tmp/sw/send.dtt"
"$DTSIM" sweep "$tmp/sw/spec.yaml" --dir "$tmp/sw/out" -o "$tmp/sw.csv" >/dev/null 2>"$tmp/sw.err"; rc=$?
check "sweep over NIC bandwidth exits 0" '[ $rc -eq 0 ]'
for col in energy.per_iteration_J cost.per_iteration energy.mean_power_W; do
  check "sweep CSV has column $col" 'head -1 "$tmp/sw.csv" | tr , "\n" | grep -qx "$col"'
done
csvcol() { python3 -c 'import csv, sys; r = list(csv.DictReader(open(sys.argv[1]))); print(r[int(sys.argv[2])][sys.argv[3]])' "$@"; }
e1=$(csvcol "$tmp/sw.csv" 0 energy.per_iteration_J)
e2=$(csvcol "$tmp/sw.csv" 1 energy.per_iteration_J)
# at half the NIC bandwidth the send takes 0.2 s: the statics double, and so does the NIC load term (the NICs are
# at full rate twice as long: 20 x 0.4 / 2 = 4 J); the cables keep 100 Gb/s, the switch load stays 10 J:
# 14 + 320 x (0.2 + 3e-6) against 12 + 320 x (0.1 + 3e-6)
check "sweep: energy at 50 Gb/s ($e1) is 14 + 320 x T(0.2 s)" 'close "$e1" "$(calc "14 + 320 * (0.2 + 3e-6)")" 1e-6'
check "sweep: energy at 100 Gb/s ($e2) is 12 + 320 x T(0.1 s)" 'close "$e2" "$(calc "12 + 320 * (0.1 + 3e-6)")" 1e-6'

# --- bad values: exit 2 with file:line:col and what was expected
badp() { # NAME SED-EXPR EXPECTED-SUBSTRING
  sed "$2" $P >"$tmp/bad.yaml"
  "$DTSIM" run "$tmp/bad.yaml" "$tmp/compute.dtt" >/dev/null 2>"$tmp/bad.err"; local rc=$?
  if [ $rc -eq 2 ] && grep -qF -- "$3" "$tmp/bad.err"; then ok "$1"; else cat "$tmp/bad.err"; fail=$((fail + 1)); echo "FAIL $1"; fi
}
badp "idle above busy" 's/idle: 50W, busy: 400W/idle: 500W, busy: 400W/' \
  "bad.yaml:8:66: 'gpu.power.idle' (500 W) is above 'gpu.power.busy' (400 W)"
badp "a bare number for a power" 's/busy: 400W/busy: 400/' "bad.yaml:8:83: bad value for 'gpu.power.busy': expected a power with a unit"
badp "a scalar gpu.power" 's/power: {idle: 50W, busy: 400W}/power: 400W/' "bad.yaml:8:65: expected a mapping {idle: W, busy: W} for 'gpu.power'"
badp "a currency sign in a price" 's/gpu_hour: 2,/gpu_hour: $2,/' "bad.yaml:14:33: expected a plain number from 0 to 1e+09 for 'cost.gpu_hour'"
badp "an unknown power key" 's/busy: 0.3kW/bsy: 0.3kW/' "bad.yaml:13:109: unknown key 'bsy' in 'network.switch_power' (did you mean 'busy'?)"
badp "a power above 1 MW" 's/busy: 0.3kW/busy: 3MW/' "above the 1e+06 W dtsim accepts for one device"
finish
