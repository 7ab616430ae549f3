#!/usr/bin/env bash
# End-to-end tests of 'dtsim scale' (docs/scale.md). Expected values come from independent constructions: the
# generator's own trace at the target data-parallel degree, and the single-rank expansion of a capture.
# usage: tests/e2e_scale.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: e2e_scale.sh DTSIM}
source "$(dirname "$0")/e2e-lib.sh"
P=platforms/dgx-h100-4node.yaml
AR2=traces/samples/allreduce_bcast_2ranks_rank0.json.gz

# --- a generated tp 2 x dp 2 x pp 2 ZeRO-1 trace scaled to dp 4 is the trace the generator writes for dp 4 with
# the same per-replica work (global batch doubled): same groups' traffic, all-gather shards halved
gen() { "$DTSIM" gen neox-125m --tp 2 --pp 2 --dp "$1" --zero 1 --microbatch 1 --global-batch "$2" --bucket 0 -o "$3" 2>/dev/null; }
gen 2 8 "$tmp/g2.dtt"
gen 4 16 "$tmp/g4.dtt"
grads=dp.pp0.tp0,dp.pp0.tp1,dp.pp1.tp0,dp.pp1.tp1
"$DTSIM" scale "$tmp/g2.dtt" --tp 2 --pp 2 --dp 4 --grad $grads -o "$tmp/s4.dtt" >"$tmp/map" 2>"$tmp/err"; rc=$?
check "scale dp 2 -> 4 runs and prints the mapping" \
  '[ $rc -eq 0 ] && grep -q "layout tp 2 x dp 2 x pp 2 = 8 ranks -> tp 2 x dp 4 x pp 2 = 16 ranks" "$tmp/map" && grep -q "7 all-gather(s) of parameter shards scale by 2/4" "$tmp/map"'
"$DTSIM" run --json $P "$tmp/s4.dtt" >"$tmp/s4.json" 2>/dev/null
"$DTSIM" run --json $P "$tmp/g4.dtt" >"$tmp/g4.json" 2>/dev/null
check "  the scaled trace replays as the generated dp 4 trace (makespan, bytes and times per kind)" \
  '[ -s "$tmp/g4.json" ] && [ "$(jq -c "[.makespan_s, .by_kind]" "$tmp/s4.json")" = "$(jq -c "[.makespan_s, .by_kind]" "$tmp/g4.json")" ]'
# by_kind bytes sum each instance's per-rank input: the same 28 instances (4 DP groups x 7), half the shard each
"$DTSIM" run --json $P "$tmp/g2.dtt" >"$tmp/g2.json" 2>/dev/null
check "  all-gather shards halve: 28 instances in both, half the bytes" \
  '[ "$(jq -c "[.by_kind.allgather.count, .by_kind.allgather.bytes * 2]" "$tmp/s4.json")" = "$(jq -c "[.by_kind.allgather.count, .by_kind.allgather.bytes]" "$tmp/g2.json")" ]'

# --- one rank of a DDP run (the shipped 2-rank capture) scaled to 32 replicas: as its expansion to 32 ranks
"$DTSIM" scale $AR2 --dp 32 --grad pg0 -o "$tmp/s32.dtt" >/dev/null 2>&1; rc=$?
"$DTSIM" run --json $P "$tmp/s32.dtt" >"$tmp/s32.json" 2>/dev/null
"$DTSIM" run --json $P $AR2 --expand 32 >"$tmp/e32.json" 2>/dev/null
check "capture scaled to dp 32 replays as its --expand 32" \
  '[ $rc -eq 0 ] && [ "$(jq .ranks "$tmp/s32.json")" = 32 ] && [ "$(jq -c "[.iterations_s, .by_kind]" "$tmp/s32.json")" = "$(jq -c "[.iterations_s, .by_kind]" "$tmp/e32.json")" ]'

# --- the mapping is checked
"$DTSIM" scale "$tmp/g2.dtt" --tp 2 --pp 2 --dp 4 --grad tp.pp0.dp0 -o "$tmp/x.dtt" >/dev/null 2>"$tmp/err"; rc=$?
check "a tensor-parallel group named as a gradient group is refused" \
  '[ $rc -eq 2 ] && grep -q "is not a data-parallel group of the layout tp 2 x dp 2 x pp 2" "$tmp/err"'
"$DTSIM" scale "$tmp/g2.dtt" --tp 2 --pp 2 --dp 4 --grad dp.pp0.tp0 -o "$tmp/x.dtt" >/dev/null 2>"$tmp/err"; rc=$?
check "a DP group left out of --grad is named" \
  '[ $rc -eq 2 ] && grep -q "group .dp.pp0.tp1. spans data-parallel replicas" "$tmp/err"'
"$DTSIM" scale "$tmp/g2.dtt" --tp 3 --dp 4 --grad $grads -o "$tmp/x.dtt" >/dev/null 2>"$tmp/err"; rc=$?
check "a layout that does not divide the ranks is refused" '[ $rc -eq 2 ] && grep -q "not a multiple of tp 3" "$tmp/err"'
"$DTSIM" scale "$tmp/g2.dtt" --tp 2 --pp 2 --dp 4 --grad nope -o "$tmp/x.dtt" >/dev/null 2>"$tmp/err"; rc=$?
check "an unknown group is named, with the trace file" '[ $rc -eq 2 ] && grep -q "g2.dtt: --grad names group .nope., which the trace does not have" "$tmp/err"'
"$DTSIM" scale "$tmp/g2.dtt" --tp 2 --pp 2 --dp 4 --grad dp.pp0.tp0,dp.pp0.tp0 -o "$tmp/x.dtt" >/dev/null 2>"$tmp/err"; rc=$?
check "a group named twice: exit 2 with the trace file" '[ $rc -eq 2 ] && grep -q "g2.dtt: --grad names group .dp.pp0.tp0. twice" "$tmp/err"'
"$DTSIM" scale "$tmp/g2.dtt" --tp 2 --pp 2 --dp 1 --grad $grads -o "$tmp/x.dtt" >/dev/null 2>"$tmp/err"; rc=$?
check "--dp 1 below the input's 2 replicas is refused (was accepted silently)" \
  '[ $rc -eq 2 ] && grep -q "g2.dtt: --dp 1 is fewer replicas than the input.s 2" "$tmp/err" && [ ! -e "$tmp/x.dtt" ]'
# pipeline peers are in the replica: tp 2 x pp 2 read as tp 1 x pp 1 (dp 8) puts them across replicas
"$DTSIM" scale "$tmp/g2.dtt" --dp 16 --grad $grads -o "$tmp/x.dtt" >/dev/null 2>"$tmp/err"; rc=$?
check "a wrong layout is caught (groups or peers across replicas)" '[ $rc -eq 2 ]'

finish
