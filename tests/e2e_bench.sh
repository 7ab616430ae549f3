#!/usr/bin/env bash
# End-to-end tests of 'dtsim bench' and 'dtsim validate'. Expected bench values are closed forms of the textbook
# alpha-beta machine (DESIGN.md §6) on a hand-written platform (4 GPUs, one NVSwitch, B = 100 GB/s, alpha = 1 us,
# no nccl section) combined with nccl-tests' size conventions and busbw factors (its doc/PERFORMANCE.md), never
# an earlier run. validate is checked for shape only: its errors are findings, not assertions.
# usage: tests/e2e_bench.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: e2e_bench.sh DTSIM}
source "$(dirname "$0")/e2e-lib.sh"

cat >"$tmp/p4.yaml" <<'EOF'
dtsim_platform: 1
name: p4
gpu: {model: X, peak: 1TFLOPS}
nodes: 1
gpus_per_node: 4
intra_node: {kind: nvswitch, bandwidth: 100GB/s, latency: 1us}
EOF
P="--platform $tmp/p4.yaml"
S=100000000 # bytes: S/B = 1 ms

# bench OP SIZE [args] -> first JSON row in $tmp/row.json
bench1() {
  local op=$1 size=$2
  shift 2
  "$DTSIM" bench "$op" $P -b "$size" -e "$size" --json "$@" >"$tmp/out.json" 2>"$tmp/err"
  jq -c '.[0]' "$tmp/out.json" >"$tmp/row.json" 2>/dev/null
}
field() { jq -r ".$1" "$tmp/row.json"; }

# all_reduce: 2(n-1) alpha + 2(n-1)/n S/B = 6 us + 1500 us; busbw = algbw * 2(n-1)/n
bench1 all_reduce $S
check "all_reduce 1e8 B on 4 GPUs: time 1506 us" 'close "$(field time_us)" 1506'
check "all_reduce algbw = size / time" 'close "$(field algbw_GBps)" "$(awk "BEGIN{print 1e8/1506e-6/1e9}")"'
check "all_reduce busbw = algbw * 2(n-1)/n" 'close "$(field busbw_GBps)" "$(awk "BEGIN{print 1e8/1506e-6/1e9*1.5}")"'
check "all_reduce algo ring" '[ "$(field algo)" = ring ]'
check "all_reduce size_bytes is the buffer" '[ "$(field size_bytes)" = 100000000 ]'

# all_gather: size = gathered buffer; each rank contributes S/4; (n-1) alpha + (n-1) (S/n)/B = 3 + 750 us
bench1 all_gather $S
check "all_gather size_bytes is the gathered buffer" '[ "$(field size_bytes)" = 100000000 ]'
check "all_gather time 753 us (shard S/n per rank)" 'close "$(field time_us)" 753'
check "all_gather busbw = algbw * (n-1)/n" 'close "$(field busbw_GBps)" "$(awk "BEGIN{print 1e8/753e-6/1e9*0.75}")"'
# alignment as nccl-tests: 1000 B / 4 ranks = 250 floats / 4 = 62 -> 60 floats per rank, size 960, count 60
"$DTSIM" bench all_gather $P -b 1000 -e 1000 >"$tmp/out" 2>&1
check "all_gather 1000 B prints size 960 and count 60 (16-byte aligned chunks)" \
  'grep -Eq "^ +960 +60 +float +none +-1 " "$tmp/out"'

# reduce_scatter: size = whole input; (n-1) alpha + (n-1)/n S/B = 3 + 750 us
bench1 reduce_scatter $S
check "reduce_scatter time 753 us, size the whole input" 'close "$(field time_us)" 753 && [ "$(field size_bytes)" = 100000000 ]'
check "reduce_scatter busbw = algbw * (n-1)/n" 'close "$(field busbw_GBps)" "$(awk "BEGIN{print 1e8/753e-6/1e9*0.75}")"'

# broadcast, reduce: pipelined chain (n-1) alpha + S/B; busbw = algbw
for op in broadcast reduce; do
  bench1 $op $S
  check "$op time 1003 us, busbw = algbw" 'close "$(field time_us)" 1003 && close "$(field busbw_GBps)" "$(field algbw_GBps)"'
done
"$DTSIM" bench reduce $P -b $S -e $S >"$tmp/out" 2>&1
check "reduce prints redop sum and root 0" 'grep -Eq "^ +100000000 +25000000 +float +sum +0 " "$tmp/out"'

# alltoall: size = each rank's send buffer; alpha + (n-1)/n S/B = 1 + 750 us; busbw = algbw (n-1)/n
bench1 alltoall $S
check "alltoall time 751 us, busbw = algbw * 3/4" 'close "$(field time_us)" 751 && close "$(field busbw_GBps)" "$(awk "BEGIN{print 1e8/751e-6/1e9*0.75}")"'

# sendrecv: rank r sends S to r+1 and receives from r-1: alpha + S/B; busbw = algbw
bench1 sendrecv $S
check "sendrecv time 1001 us, busbw = algbw" 'close "$(field time_us)" 1001 && close "$(field busbw_GBps)" "$(field algbw_GBps)" && close "$(field algbw_GBps)" "$(awk "BEGIN{print 1e8/1001e-6/1e9}")"'

# step fidelity equals flow on this contention-free uniform ring
bench1 all_reduce $S --fidelity step
check "all_reduce at step fidelity: 1506 us too" 'close "$(field time_us)" 1506'

# -g: one process driving G GPUs adds (G-1) launches; -n / -w leave a deterministic time unchanged
bench1 all_reduce $S -g 2 --launch 5us
check "-g 2 --launch 5us adds 5 us" 'close "$(field time_us)" 1511'
bench1 all_reduce $S -n 3 -w 2
check "-n 3 -w 2 averages to the same time" 'close "$(field time_us)" 1506'

# sizes: -b 8 -e 8G -f 2 is 31 rows; -i adds; the text table has nccl-tests' header and one row per size
"$DTSIM" bench all_reduce $P -b 8 -e 8G -f 2 --json >"$tmp/out.json" 2>"$tmp/err"
check "-b 8 -e 8G -f 2 gives 31 rows, sizes doubling from 8" \
  '[ "$(jq length "$tmp/out.json")" = 31 ] && [ "$(jq ".[30].size_bytes" "$tmp/out.json")" = 8589934592 ]'
check "JSON rows have exactly size_bytes, time_us, algbw_GBps, busbw_GBps, algo" \
  '[ "$(jq -c "[.[] | keys] | unique" "$tmp/out.json")" = "[[\"algbw_GBps\",\"algo\",\"busbw_GBps\",\"size_bytes\",\"time_us\"]]" ]'
check "JSON types: integer size, numbers, string algo" \
  'jq -e "all(.[]; (.size_bytes|type)==\"number\" and (.size_bytes|floor)==.size_bytes and (.time_us|type)==\"number\" and (.algo|type)==\"string\")" "$tmp/out.json" >/dev/null'
"$DTSIM" bench all_reduce $P -b 1K -e 4K -i 1K >"$tmp/out" 2>&1
check "-i 1K: 1, 2, 3, 4 KiB" '[ "$(grep -Ec "^ +[0-9]+ " "$tmp/out")" = 4 ] && grep -Eq "^ +3072 +768 " "$tmp/out"'
check "text header names nccl-tests columns" 'grep -q "size.*count.*type.*redop.*root.*time.*algbw.*busbw.*algo" "$tmp/out" && grep -q "(B).*(elements).*(us).*(GB/s).*(GB/s)" "$tmp/out"'

# --gpus and placement
bench1 all_reduce $S --gpus 2
check "--gpus 2: 2 alpha + S/B = 1002 us" 'close "$(field time_us)" 1002'

# bad arguments exit 2 with a clear message and nothing on stdout
badarg() {
  local label=$1 pattern=$2
  shift 2
  "$DTSIM" bench "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  check "$label exits 2: $pattern" '[ $rc -eq 2 ] && [ ! -s "$tmp/out" ] && grep -q -- "$pattern" "$tmp/err"'
}
badarg "unknown op" "unknown op 'allreduce' (did you mean 'all_reduce'?)" allreduce $P
badarg "no op" "expected an op" $P
badarg "no platform" "expected --platform FILE" all_reduce
badarg "too many GPUs" "5 GPUs requested but platform 'p4' has only 4" all_reduce $P --gpus 5
badarg "min above max" "-b 1M (1048576 bytes) is larger than -e 1K (1024 bytes)" all_reduce $P -b 1M -e 1K
badarg "default min above max" "-b 32M (the default, 33554432 bytes) is larger than -e 1K" all_reduce $P -e 1K
pf=$(printf '%s' "$P" | sed 's/^--platform //')
badarg "platform as a word" "expected one op, found 2 words: give the platform with --platform, as 'dtsim bench all_reduce --platform $pf'" "$pf" all_reduce
badarg "two words" "found 2 words: 'all_reduce', 'foo'" all_reduce foo $P
badarg "factor 1" "-f expects a whole factor from 2 to 1073741824" all_reduce $P -f 1
badarg "bad size" "expected a size such as" all_reduce $P -b 12Q
badarg "bad fidelity" "--fidelity expects flow or step, found 'fast'" all_reduce $P --fidelity fast
badarg "unknown option" "unknown option '--frob'" all_reduce $P --frob
badarg "missing argument" "option '--gpus' requires an argument" all_reduce $P --gpus
badarg "sendrecv on one GPU" "sendrecv needs at least 2 GPUs" sendrecv $P --gpus 1
badarg "missing platform file" "cannot open" all_reduce --platform "$tmp/none.yaml"
badarg "-f with -i" "-f and -i exclude each other" all_reduce $P -f 2 -i 8
badarg "unknown algorithm" "--algo expects auto, ring, tree" all_reduce $P --algo rings
badarg "unknown protocol" "--proto expects auto, LL, LL128 or Simple, found 'LL64'" all_reduce $P --proto LL64

# --algo / --proto reach the replay: on a platform with the NCCL model, forcing ring and Simple is what runs
cat "$tmp/p4.yaml" >"$tmp/p4n.yaml"
printf 'nccl: {}\n' >>"$tmp/p4n.yaml"
"$DTSIM" bench all_reduce --platform "$tmp/p4n.yaml" -b 8 -e 8 --algo ring --proto Simple --json >"$tmp/out.json" 2>"$tmp/err"
check "--algo ring --proto Simple runs ring/simple" '[ "$(jq -r ".[0].algo" "$tmp/out.json")" = ring/simple ]'
"$DTSIM" bench all_reduce --platform "$tmp/p4n.yaml" -b 8 -e 8 --algo tree --proto LL --json >"$tmp/out.json" 2>"$tmp/err"
check "--algo tree --proto LL runs tree/ll" '[ "$(jq -r ".[0].algo" "$tmp/out.json")" = tree/ll ]'

# sendrecv on the NCCL model (NCCL's defaults): LL up to 16 KiB, L + alpha + h + size/(eB) = 6.6 + 1 + 0.6 us +
# 1024 B / (0.25 x 100 GB/s); Simple above: 8.4 + 1 + 3.4 us + 1000 us (docs/replay.md, point-to-point)
"$DTSIM" bench sendrecv --platform "$tmp/p4n.yaml" -b 1K -e 1K --json >"$tmp/out.json" 2>"$tmp/err"
jq -c '.[0]' "$tmp/out.json" >"$tmp/row.json" 2>/dev/null
check "nccl sendrecv 1 KiB: p2p/ll, 8.24096 us" '[ "$(field algo)" = p2p/ll ] && close "$(field time_us)" 8.24096'
"$DTSIM" bench sendrecv --platform "$tmp/p4n.yaml" -b $S -e $S --json >"$tmp/out.json" 2>"$tmp/err"
jq -c '.[0]' "$tmp/out.json" >"$tmp/row.json" 2>/dev/null
check "nccl sendrecv 1e8 B: p2p/simple, 1012.8 us" '[ "$(field algo)" = p2p/simple ] && close "$(field time_us)" 1012.8'
# alltoall on the NCCL model: n-1 = 3 grouped send/recv rounds each paying alpha + h, one base latency:
# Simple 8.4 + 3 (1 + 3.4) + 3/4 S/B = 8.4 + 13.2 + 750 us (docs/replay.md, all-to-all)
"$DTSIM" bench alltoall --platform "$tmp/p4n.yaml" -b $S -e $S --proto Simple --json >"$tmp/out.json" 2>"$tmp/err"
jq -c '.[0]' "$tmp/out.json" >"$tmp/row.json" 2>/dev/null
check "nccl alltoall 1e8 B Simple: 771.6 us" '[ "$(field algo)" = direct/simple ] && close "$(field time_us)" 771.6'

# --- validate: runs on the shipped references, one table per measured series, rows as in the CSVs
"$DTSIM" validate --json >"$tmp/v.json" 2>"$tmp/err"; rc=$?
check "validate exits 0 with JSON" '[ $rc -eq 0 ] && jq -e .tables "$tmp/v.json" >/dev/null'
csvsizes() { grep -v '^#' "validation/references/$1" | tail -n +2 | cut -d, -f"$2"; }
for t in a100_8gpu_allreduce/ndv4_time_us a100_8gpu_allreduce/ndmv4_time_us h100_8gpu_allreduce/oop_time_us \
  h100_8gpu_allreduce/ip_time_us; do
  csv=${t%%/*}.csv
  jq -r --arg t "$t" '.tables[] | select(.name == $t) | .rows[].size_bytes' "$tmp/v.json" >"$tmp/got"
  csvsizes "$csv" 1 >"$tmp/want"
  check "validate table $t has the CSV's rows in order" '[ -s "$tmp/want" ] && cmp -s "$tmp/got" "$tmp/want"'
  col=${t#*/}
  n=$(head -1 <(grep -v '^#' "validation/references/$csv") | tr , '\n' | grep -nx "$col" | cut -d: -f1)
  csvsizes "$csv" "$n" >"$tmp/want"
  jq -r --arg t "$t" '.tables[] | select(.name == $t) | .rows[].measured' "$tmp/v.json" >"$tmp/got"
  check "validate table $t measured column is the CSV's $col" \
    'paste "$tmp/got" "$tmp/want" | awk "{ if (\$1 + 0 != \$2 + 0) exit 1 }"'
done
rows=$(grep -v '^#' validation/references/a100_multinode.csv | tail -n +2 | wc -l)
check "validate a100_multinode has 3 ops per CSV row" \
  '[ "$(jq "[.tables[] | select(.name == \"a100_multinode\") | .rows[]] | length" "$tmp/v.json")" = $((3 * rows)) ]'
check "every table has both medians as numbers" \
  'jq -e "all(.tables[]; (.median_error_ge_1MiB|type)==\"number\" and (.median_error_lt_1MiB|type)==\"number\")" "$tmp/v.json" >/dev/null'
"$DTSIM" validate >"$tmp/out" 2>"$tmp/err"; rc=$?
check "validate text prints a median line per table" \
  '[ $rc -eq 0 ] && [ "$(grep -c "median |error| >= 1 MiB" "$tmp/out")" = 5 ] && [ "$(grep -c "median |error| < 1 MiB" "$tmp/out")" = 5 ]'
# every row is simulated, not read back: one benchmark per (platform, -g, configuration, op), and a platform whose
# NVLink bandwidth factor is halved halves the H100 table's busbw at 16 GiB (bandwidth-bound)
check "validate counts one simulation per benchmark" \
  '[ "$(jq "[.tables[] | . as \$t | .rows[] | \"\(\$t.platform) \(\$t.gpus_per_process) \(.config) \(.op)\"] | unique | length" "$tmp/v.json")" = "$(jq .simulations "$tmp/v.json")" ] && jq -e ".cpu_s > 0 and .sizes > 0" "$tmp/v.json" >/dev/null'
mkdir "$tmp/plat" && cp platforms/*.yaml "$tmp/plat/"
sed -i 's/^model: {bandwidth_factor: 0.80,/model: {bandwidth_factor: 0.40,/' "$tmp/plat/dgx-h100.yaml"
"$DTSIM" validate --platforms "$tmp/plat" --json >"$tmp/v2.json" 2>"$tmp/err"; rc=$?
big() { jq '.tables[] | select(.name == "h100_8gpu_allreduce/oop_time_us") | .rows[-1].simulated' "$1"; }
check "validate simulates the platform it is given (bandwidth factor 0.4: the 16 GiB row takes about twice as long)" \
  '[ $rc -eq 0 ] && awk -v a="$(big "$tmp/v.json")" -v b="$(big "$tmp/v2.json")" "BEGIN { r = b / a; exit !(r > 1.9 && r < 2.05) }"'
"$DTSIM" validate --references "$tmp/none" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "validate with a missing directory exits 2" '[ $rc -eq 2 ] && grep -q "validate: --references .*none: cannot read it as the folder of the reference measurements: No such file or directory" "$tmp/err"'
mkdir "$tmp/refs" && cp validation/references/*.csv "$tmp/refs/"
sed -i 's/^1024,34.78/1024,fast/' "$tmp/refs/a100_8gpu_allreduce.csv"
"$DTSIM" validate --references "$tmp/refs" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "validate with a malformed number exits 2 at file:line" \
  '[ $rc -eq 2 ] && grep -q "a100_8gpu_allreduce.csv:5: column .ndv4_time_us.: expected a non-negative number, found .fast." "$tmp/err"'
"$DTSIM" validate --platforms "$tmp" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "validate with a missing platform exits 2" '[ $rc -eq 2 ] && grep -q "cannot open" "$tmp/err"'

# --- bench --explain: per size the alpha-beta closed form, the estimate and the simulated time. tests/data/node2.yaml
# (2 GPUs, NVSwitch 10 GB/s, 2 us, textbook): a ring all-reduce of S bytes is 2(n-1)a + 2(n-1)/n S/B = 2a + S/B.
S=40000000
"$DTSIM" bench all_reduce --platform tests/data/node2.yaml -b $S -e $S --json --explain >"$tmp/bx.json" 2>/dev/null; rc=$?
check "bench --explain --json exits 0 with one explained shape" '[ $rc -eq 0 ] && [ "$(jq ".[0].explain | length" "$tmp/bx.json")" = 1 ]'
check "bench --explain: textbook ring, formula 2(n-1)a + 2(n-1)/n S/B" \
  '[ "$(jq -r ".[0].explain[0] | [.model, .choice, .formula] | join(\";\")" "$tmp/bx.json")" = "textbook;ring;2(n-1)a + 2(n-1)/n S/B" ]'
got=$(jq '.[0].explain[0].alphabeta_latency_s' "$tmp/bx.json")
check "bench --explain: latency term $got = 2(n-1)a = 4 us" 'close "$got" 4e-6 1e-9'
got=$(jq '.[0].explain[0].alphabeta_bandwidth_s' "$tmp/bx.json")
check "bench --explain: bandwidth term $got = S/B" "close $got $(awk -v S=$S 'BEGIN { printf "%.17g", S / 10e9 }') 1e-9"
got=$(jq '.[0].explain[0].simulated_s' "$tmp/bx.json"); want=$(jq '.[0].time_us / 1e6' "$tmp/bx.json")
check "bench --explain: simulated $got = the time column (no launch term at -g 1)" 'close "$got" "$want" 1e-9'
check "bench --explain: simulated = 2a + S/B" "close $got $(awk -v S=$S 'BEGIN { printf "%.17g", 4e-6 + S / 10e9 }') 1e-9"
"$DTSIM" bench all_reduce --platform tests/data/node2.yaml -b $S -e $S --explain >"$tmp/bx.txt" 2>/dev/null
check "bench --explain text: the table, then '#' lines with the formula's numbers" \
  'grep -q "^ *$S " "$tmp/bx.txt" && grep -q "^#   alpha-beta     2(n-1)a + 2(n-1)/n S/B, a = 2 us, B = 10 GB/s: 2 x 2 us + 1 x 38.15 MiB / 10 GB/s = 4 us + 4 ms = 4.004 ms" "$tmp/bx.txt" && ! grep -v "^#" "$tmp/bx.txt" | grep -q "alpha-beta"'
"$DTSIM" bench all_reduce --platform tests/data/node2.yaml -b $S -e $S >"$tmp/bnx.txt" 2>/dev/null
check "bench without --explain: no explanation" '! grep -q "explain" "$tmp/bnx.txt"'
# sendrecv on tests/data/shared-nic.yaml (2 nodes of 2 GPUs): rank r sends to r+1. Between nodes the route is NIC,
# cable, cable, NIC: a = 2 x 1 us + 2 x 100 ns, B = 25 GB/s (the NIC); inside a node GPU port up and down: a = 2 us
# (the NVSwitch's latency split over the two ports), B = 100 GB/s
S2=1048576
"$DTSIM" bench sendrecv --platform tests/data/shared-nic.yaml -b $S2 -e $S2 --json --explain >"$tmp/bs.json" 2>/dev/null
check "bench sendrecv --explain: two route shapes" '[ "$(jq ".[0].explain | length" "$tmp/bs.json")" = 2 ]'
for spec in "2.2e-6 25e9" "2e-6 100e9"; do
  set -- $spec
  got=$(jq ".[0].explain[] | select((.alpha_s - $1 | fabs) < 1e-12) | .alphabeta_s" "$tmp/bs.json")
  check "bench sendrecv --explain: a = $1, B = $2: alpha-beta $got = a + S/B" \
    "close '$got' $(awk -v a=$1 -v B=$2 -v S=$S2 'BEGIN { printf "%.17g", a + S / B }') 1e-9"
done
check "bench sendrecv --explain: each route alone: simulated = alpha-beta" \
  '[ "$(jq "[.[0].explain[] | ((.simulated_s - .alphabeta_s) | fabs) < 1e-9 * .simulated_s] | all" "$tmp/bs.json")" = true ]'
# the NCCL model (platforms/dgx-h100.yaml): the choice is the algo column, simulated = the tuner's estimate
"$DTSIM" bench all_reduce --platform platforms/dgx-h100.yaml -b 64K -e 256M -f 4096 --json --explain >"$tmp/bh.json" 2>/dev/null
check "bench --explain NCCL model: the explained choice is the algo column" \
  '[ "$(jq "[.[] | (.explain[0].choice | ascii_downcase) == .algo] | all" "$tmp/bh.json")" = true ]'
check "bench --explain NCCL model: contention-free, simulated = estimate" \
  '[ "$(jq "[.[] | .explain[0] | .model == \"nccl\" and (.deviation | fabs) < 1e-9] | all" "$tmp/bh.json")" = true ]'
check "bench --explain NCCL model: 64 KiB latency-bound, 256 MiB bandwidth-bound" \
  '[ "$(jq -c "[.[] | .explain[0].estimate_latency_s / .explain[0].estimate_s > 0.5]" "$tmp/bh.json")" = "[true,false]" ]'

# --- a forced algorithm that cannot run: bench takes run's selection and notes. Without an 'nccl:' section
# (p4.yaml) and on nccl.version 2.22 it falls back with the note that says why and what the platform lacks; from
# NCCL 2.24 on (dgx-a100's default model) it is an error, as 'run --algo' and NCCL_ALGO are.
for a in pat tree; do
  "$DTSIM" bench all_gather $P --algo $a -b 1M -e 1M >"$tmp/fb.out" 2>"$tmp/fb.err"; rc=$?
  check "bench --algo $a without nccl: exit 0, the ring ran, the note names the missing 'nccl:' section" \
    '[ $rc -eq 0 ] && grep -q " ring$" "$tmp/fb.out" && grep -q "^dtsim: note: allgather: the forced algorithm .'$a'. cannot run 1 instance: .*platform .p4. has no .nccl:. section" "$tmp/fb.err"'
done
sed 's/^nccl:$/nccl:\n  version: "2.22"/' platforms/dgx-a100.yaml >"$tmp/a100-2.22.yaml"
"$DTSIM" bench all_gather --platform "$tmp/a100-2.22.yaml" --algo pat -b 1M -e 4M >"$tmp/fb.out" 2>"$tmp/fb.err"; rc=$?
check "bench --algo pat on nccl.version 2.22: exit 0 with the note naming the version, 3 sizes" \
  '[ $rc -eq 0 ] && grep -q "note: allgather: the forced algorithm .pat. cannot run 3 instances: it needs .*follows NCCL 2.22 (.nccl.version.)" "$tmp/fb.err"'
"$DTSIM" bench all_gather --platform platforms/dgx-a100.yaml --algo tree -b 1M -e 1M >"$tmp/fb.out" 2>"$tmp/fb.err"; rc=$?
check "bench --algo tree for all_gather on NCCL >= 2.24: exit 2, the error says why, no table" \
  '[ $rc -eq 2 ] && [ ! -s "$tmp/fb.out" ] && grep -q "algorithm .tree. cannot run allgather on group .world." "$tmp/fb.err"'
"$DTSIM" bench all_gather $P --algo ring -b 1M -e 1M >/dev/null 2>"$tmp/fb.err"
check "bench --algo ring that runs: no note" '! grep -q "forced algorithm" "$tmp/fb.err"'

finish
