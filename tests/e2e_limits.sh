#!/usr/bin/env bash
# End-to-end tests of hostile input (issue 9): every case ends in a right answer or exit 2 with the file, the
# position and the limit, never a signal, a hang or a false diagnosis. Costs that once grew quadratically are
# measured at n and 4n (CPU seconds of the dtsim process): a linear cost grows about 4x, a quadratic one 16x,
# so a ratio above 8 fails. Closed forms use tests/data/node8.yaml (alpha = 2us, B = 100 GB/s).
# usage: tests/e2e_limits.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: e2e_limits.sh DTSIM}
source "$(dirname "$0")/e2e-lib.sh"

# cpu FILE CMD...: runs CMD (output discarded) three times and writes the least user+system CPU seconds of
# the three to FILE (CPU time, and its minimum, so that other work on the machine does not count)
cpu() {
  local out=$1
  shift
  local TIMEFORMAT='%U %S'
  : >"$out.t"
  for _ in 1 2 3; do
    { time "$@" >/dev/null 2>&1; } 2>>"$out.t"
  done
  awk 'NR == 1 || $1 + $2 < m { m = $1 + $2 } END { print m }' "$out.t" >"$out"
}
# ratio_ok SMALL LARGE: the cost at 4n over the cost at n stays below 12 (a floor of 0.05 s keeps noise out)
# 4x the pairs: linear is 4x (5.6x measured with a tag per pair, SimGrid's solver), quadratic 16x; 12 leaves room
# for a loaded machine (one run each: 8.05x was seen at load 4 with a tag per pair)
ratio_ok() { awk -v a="$(cat "$1")" -v b="$(cat "$2")" 'BEGIN { if (a < 0.05) a = 0.05; exit !(b / a < 12) }'; }

# batch N: one batch of N send/recv pairs from rank 0 to rank 1
batch() {
  echo "dtsim_trace 1"
  echo "ranks 2"
  echo "rank 0"
  awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) print "s0 send peer=1 bytes=1024 batch=1" }'
  echo "rank 1"
  awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) print "s0 recv peer=0 bytes=1024 batch=1" }'
}

# --- batches: heap scratch (a batch of 150,000 pairs was SIGSEGV), linear wait, own completion per pair
batch 150000 >"$tmp/b150k.dtt"
"$DTSIM" run --json tests/data/node8.yaml "$tmp/b150k.dtt" >"$tmp/b150k.json" 2>"$tmp/b150k.err"; rc=$?
check "a batch of 150,000 pairs runs (exit 0, every op counted)" \
  '[ $rc -eq 0 ] && [ "$(jq -r .by_kind.send.count "$tmp/b150k.json")" = 150000 ]'
# sizes of the cost-ratio checks, divided by DTSIM_TEST_SCALE (4 in the sanitizer build, set by CMake)
small=$((20000 / ${DTSIM_TEST_SCALE:-1}))
batch "$small" >"$tmp/b20k.dtt"
batch $((4 * small)) >"$tmp/b80k.dtt"
cpu "$tmp/c20k" "$DTSIM" run tests/data/node8.yaml "$tmp/b20k.dtt"
cpu "$tmp/c80k" "$DTSIM" run tests/data/node8.yaml "$tmp/b80k.dtt"
check "a batch's cost is linear in its pairs ($small vs $((4 * small)) pairs: $(cat "$tmp/c20k") s, $(cat "$tmp/c80k") s)" \
  'ratio_ok "$tmp/c20k" "$tmp/c80k"'
# what made batches quadratic: one actor waiting all of a batch's comms (SimGrid scans an actor's activity list
# at each completion). Counted, not timed: the replay's log says how many queues (direction, peer, tag) a batch
# has and how many actors serve them, each with at most 64 comms in flight (8 per queue): one queue of 8 in flight
# for one peer and one tag (the stream's own actor), ceil(n / 64) actors for n queues of one pair each.
"$DTSIM" run --log dtsim_replay.thres:verbose tests/data/node8.yaml "$tmp/b20k.dtt" >/dev/null 2>"$tmp/b20k.log"
served=$(sed -n 's/.*batch of [0-9]* ops on rank [01] stream 0: \([0-9]*\) comms in \([0-9]*\) queues served by \([0-9]*\) actors.*/\1 \2 \3/p' "$tmp/b20k.log" | sort -u)
check "a batch of $small pairs to one peer: one queue, served by the stream's own actor (log: ${served:-no log line})" \
  '[ "$served" = "$small 1 1" ]'
{
  printf 'dtsim_trace 1\nranks 2\nrank 0\n'
  awk -v n="$small" 'BEGIN { for (i = 0; i < n; i++) print "s0 send peer=1 bytes=1024 tag=" i " batch=1" }'
  echo "rank 1"
  awk -v n="$small" 'BEGIN { for (i = 0; i < n; i++) print "s0 recv peer=0 bytes=1024 tag=" i " batch=1" }'
} >"$tmp/t20k.dtt"
"$DTSIM" run --log dtsim_replay.thres:verbose tests/data/node8.yaml "$tmp/t20k.dtt" >/dev/null 2>"$tmp/t20k.log"
served=$(sed -n 's/.*batch of [0-9]* ops on rank [01] stream 0: \([0-9]*\) comms in \([0-9]*\) queues served by \([0-9]*\) actors.*/\1 \2 \3/p' "$tmp/t20k.log" | sort -u)
check "a batch of $small pairs with a tag each: $small queues over $(( (small + 63) / 64 )) actors of 64 (log: ${served:-no log line})" \
  '[ "$served" = "$small $small $(( (small + 63) / 64 ))" ]'
cpu "$tmp/ct20k" "$DTSIM" run tests/data/node8.yaml "$tmp/t20k.dtt"
awk -v n="$small" 'BEGIN { print "dtsim_trace 1"; print "ranks 2"; print "rank 0"; for (i = 0; i < 4 * n; i++) print "s0 send peer=1 bytes=1024 tag=" i " batch=1";
  print "rank 1"; for (i = 0; i < 4 * n; i++) print "s0 recv peer=0 bytes=1024 tag=" i " batch=1" }' >"$tmp/t80k.dtt"
cpu "$tmp/ct80k" "$DTSIM" run tests/data/node8.yaml "$tmp/t80k.dtt"
check "the same with a tag per pair stays linear ($small vs $((4 * small)) pairs: $(cat "$tmp/ct20k") s, $(cat "$tmp/ct80k") s)" \
  'ratio_ok "$tmp/ct20k" "$tmp/ct80k"'
# Batch timing (docs/replay.md, Batches), closed forms on node8 (alpha = 2 us, B = 100 GB/s per direction):
# a queue of N equal pairs moves 8 at a time, each round alpha + 8 S/B, so it ends at ceil(N/8) alpha + N S/B.
# 300 pairs 0 -> 1 of 1 MiB in the batch of a receive from rank 2, which sends 1 ms late (alpha + S/B from its
# issue): the batch's sends end at 38 alpha + 300 S/B (the makespan); the send row adds that once for rank 0's
# batch and alpha + S/B for rank 2's unbatched send.
{
  echo "dtsim_trace 1"
  echo "ranks 3"
  echo "rank 0"
  awk 'BEGIN { for (i = 0; i < 300; i++) print "s0 send peer=1 bytes=1048576 batch=1" }'
  echo "s0 recv peer=2 bytes=1048576 batch=1"
  echo "rank 1"
  awk 'BEGIN { for (i = 0; i < 300; i++) print "s0 recv peer=0 bytes=1048576 batch=1" }'
  echo "rank 2"
  echo "s0 delay dur=1ms"
  echo "s0 send peer=0 bytes=1048576"
} >"$tmp/bigskew.dtt"
"$DTSIM" run --json tests/data/node8.yaml "$tmp/bigskew.dtt" >"$tmp/bigskew.json" 2>/dev/null; rc=$?
want_m=$(awk 'BEGIN { S = 1048576; B = 100e9; a = 2e-6; printf "%.12g", 38 * a + 300 * S / B }')
want_t=$(awk 'BEGIN { S = 1048576; B = 100e9; a = 2e-6; printf "%.12g", 38 * a + 300 * S / B + a + S / B }')
check "300 pairs to one peer in a batch: makespan ceil(300/8) alpha + 300 S/B = $want_m s" \
  '[ $rc -eq 0 ] && close "$(jq -r .makespan_s "$tmp/bigskew.json")" "$want_m" 1e-9'
check "the send row: rank 0's batch once (38 alpha + 300 S/B) plus rank 2's pair (alpha + S/B) = $want_t s" \
  'close "$(jq -r .by_kind.send.time_s "$tmp/bigskew.json")" "$want_t" 1e-9 && [ "$(jq -r .by_kind.send.count "$tmp/bigskew.json")" = 301 ]'
# 2 ranks, each one batch of 1000 sends of 4 KiB to the other and the 1000 receives from it: both directions
# at once (one port each way), 125 rounds of alpha + 8 S/B = 290.96 us; the send row counts 2000 pairs of
# 8,192,000 bytes and each rank's batch once: 2 x 290.96 us, algbw 8.192e6 / 581.92e-6 = 14.0775 GB/s (it
# summed 2000 pairs' whole-batch times: with all pairs at once, 2000 x 42.96 us = 85.9 ms, 0.095 GB/s)
{
  printf 'dtsim_trace 1\nranks 2\n'
  for r in 0 1; do
    echo "rank $r"
    awk -v p=$((1 - r)) 'BEGIN { for (i = 0; i < 1000; i++) { print "s0 send peer=" p " bytes=4096 batch=1"; print "s0 recv peer=" p " bytes=4096 batch=1" } }'
  done
} >"$tmp/x1000.dtt"
"$DTSIM" run --json tests/data/node8.yaml "$tmp/x1000.dtt" >"$tmp/x1000.json" 2>/dev/null; rc=$?
check "2 x 1000 sends of 4 KiB batched both ways: makespan 125 (alpha + 8 S/B) = 290.96 us" \
  '[ $rc -eq 0 ] && close "$(jq -r .makespan_s "$tmp/x1000.json")" 290.96e-6 1e-9'
check "its send row: count 2000, 8192000 bytes, time 2 x 290.96 us (once per batch per rank), algbw 14.0775 GB/s" \
  '[ "$(jq -r .by_kind.send.count "$tmp/x1000.json")" = 2000 ] && [ "$(jq -r .by_kind.send.bytes "$tmp/x1000.json")" = 8192000 ] &&
   close "$(jq -r .by_kind.send.time_s "$tmp/x1000.json")" 581.92e-6 1e-9 && close "$(jq -r .by_kind.send.algbw_GBps "$tmp/x1000.json")" 14.077536 1e-6'

# Batched collectives follow the send row's rule: a batch adds its span once (the mean of its members' spans), its
# instances their bytes. 2 ranks, a batch of 60 all-reduces of S = 1 MiB, a batch of 40, then one unbatched: a ring
# all-reduce on 2 ranks is 2 alpha + S/B, K of them at once share the port: 2 alpha + K S/B. The row's time is
# (2a + 60 S/B) + (2a + 40 S/B) + (2a + S/B) = the makespan, algbw 101 S over it (it summed every instance's whole
# batch time: 60 x 633.1 us + 40 x 423.4 us + 14.5 us = 54.94 ms, algbw 1.93 GB/s)
{
  printf 'dtsim_trace 1\nranks 2\ngroup w 0-1\n'
  for r in 0 1; do
    echo "rank $r"
    awk 'BEGIN { for (i = 0; i < 60; i++) print "s0 allreduce group=w bytes=1048576 batch=1";
                 for (i = 0; i < 40; i++) print "s0 allreduce group=w bytes=1048576 batch=2";
                 print "s0 allreduce group=w bytes=1048576" }'
  done
} >"$tmp/ar101.dtt"
"$DTSIM" run --json tests/data/node8.yaml "$tmp/ar101.dtt" >"$tmp/ar101.json" 2>/dev/null; rc=$?
want_ar=$(awk 'BEGIN { S = 1048576; B = 100e9; a = 2e-6; printf "%.12g", 6 * a + 101 * S / B }')
want_bw=$(awk -v t="$want_ar" 'BEGIN { printf "%.12g", 101 * 1048576 / t / 1e9 }')
check "2 batches of 60 and 40 all-reduces and one more: makespan 6 alpha + 101 S/B = $want_ar s" \
  '[ $rc -eq 0 ] && close "$(jq -r .makespan_s "$tmp/ar101.json")" "$want_ar" 1e-9'
check "its allreduce row: count 101, 101 S bytes, time each batch once = $want_ar s, algbw = busbw = $want_bw GB/s" \
  '[ "$(jq -r .by_kind.allreduce.count "$tmp/ar101.json")" = 101 ] && [ "$(jq -r .by_kind.allreduce.bytes "$tmp/ar101.json")" = 105906176 ] &&
   close "$(jq -r .by_kind.allreduce.time_s "$tmp/ar101.json")" "$want_ar" 1e-9 &&
   close "$(jq -r .by_kind.allreduce.algbw_GBps "$tmp/ar101.json")" "$want_bw" 1e-6 &&
   close "$(jq -r .by_kind.allreduce.busbw_GBps "$tmp/ar101.json")" "$want_bw" 1e-6'

# --- Kineto importer
# kev NAME TS DUR STREAM [ARGS]: one GPU kernel event (times in us); nccl COLL NELEMS [MORE-ARGS]: NCCL kernel args
kev() { printf '{"ph":"X","cat":"kernel","name":"%s","pid":0,"tid":1,"ts":%s,"dur":%s,"args":{"stream":%s%s}}' "$1" "$2" "$3" "$4" "${5:-}"; }
nccl() { printf ',"Collective name":"%s","In msg nelems":%s,"Out msg nelems":%s,"dtype":"Float","Group size":2,"Process Group Name":"0","Process Group Ranks":"%s"' "$1" "$2" "$2" "${3:-[0, 1]}"; }
kineto() { printf '{"schemaVersion":1,"distributedInfo":{%s},"traceEvents":[%s]}' "$1" "$2"; }

# a group naming rank 2^31-2 without world_size: the guessed world is checked against the rank limit
kineto '"rank":0' "$(kev ncclKernel_AllReduce 0 5 7 "$(nccl allreduce 10 '[0, 2147483646]')")" >"$tmp/kw.json"
timeout 20 "$DTSIM" import "$tmp/kw.json" -o "$tmp/kw.dtt" >/dev/null 2>"$tmp/kw.err"; rc=$?
check "guessed world above the rank limit: exit 2 naming the limit" \
  '[ $rc -eq 2 ] && grep -q "kw.json" "$tmp/kw.err" && grep -q "world of 2147483647 ranks" "$tmp/kw.err" && grep -q "at most 1048576 ranks" "$tmp/kw.err"'
# In msg nelems 2^62 floats: 2^64 bytes wrapped to 0; now refused with the event's position
kineto '"rank":0,"world_size":2' "$(kev x 0 5 7),$(kev ncclKernel_AllReduce 10 5 7 "$(nccl allreduce 4611686018427387904)")" >"$tmp/kn.json"
"$DTSIM" import "$tmp/kn.json" -o "$tmp/kn.dtt" >/dev/null 2>"$tmp/kn.err"; rc=$?
check "nelems x dtype above the byte limit: exit 2 at traceEvents[1]" \
  '[ $rc -eq 2 ] && grep -q "kn.json: traceEvents\[1\]" "$tmp/kn.err" && grep -q "9007199254740992 bytes" "$tmp/kn.err"'
# a time far outside int64 nanoseconds was undefined behaviour on conversion
kineto '"rank":0,"world_size":1' "$(kev x 1e300 5 7)" >"$tmp/kt.json"
"$DTSIM" import "$tmp/kt.json" -o "$tmp/kt.dtt" >/dev/null 2>"$tmp/kt.err"; rc=$?
check "ts of 1e300 us: exit 2 with the accepted range" '[ $rc -eq 2 ] && grep -q "4.6e15" "$tmp/kt.err"'
# stream numbers -7, 2^32+7 and 7 are three streams, written as valid sN names that run reads back
kineto '"rank":0,"world_size":1' "$(kev a 0 5 -7),$(kev b 10 5 4294967303),$(kev c 20 5 7)" >"$tmp/ks.json"
"$DTSIM" import "$tmp/ks.json" -o "$tmp/ks.dtt" >/dev/null 2>"$tmp/ks.err"; rc=$?
check "odd stream numbers import (exit 0) as three distinct valid streams" \
  '[ $rc -eq 0 ] && [ "$(grep -E "^s[0-9]+ " "$tmp/ks.dtt" | cut -d" " -f1 | sort -u | wc -l)" -eq 3 ] && grep -q "^s7 compute" "$tmp/ks.dtt"'
check "the renumbering is in the notes" 'grep -q "CUDA stream -7 is not a valid stream number" "$tmp/ks.dtt" && grep -q "CUDA stream 4294967303" "$tmp/ks.dtt"'
"$DTSIM" run --json tests/data/node8.yaml "$tmp/ks.dtt" >"$tmp/ks.json.out" 2>/dev/null; rc=$?
# 5 us each, 10 us apart, on three streams that wait for each other's last op (dep window 5 us): 25 us
check "run reads what import wrote (makespan 25 us, 15 us of compute)" \
  '[ $rc -eq 0 ] && close "$(jq -r .makespan_s "$tmp/ks.json.out")" 25e-6 && close "$(jq -r .per_rank[0].compute_s "$tmp/ks.json.out")" 15e-6'
# positions are event indices, not issue order: rank 0 of 2 sends to 1, and by symmetry rank 1 sends to 0
kineto '"rank":0,"world_size":2' "$(kev x 0 5 7),$(kev y 6 5 7),$(kev ncclKernel_SendRecv 20 5 9 ',"Collective name":"send","In msg nelems":4,"Out msg nelems":4,"dtype":"Float","Src Rank":0,"Dst Rank":1')" >"$tmp/kp.json"
"$DTSIM" run tests/data/node8.yaml "$tmp/kp.json" >/dev/null 2>"$tmp/kp.err"; rc=$?
check "an error on an imported op cites its event (traceEvents[2]), not a line" \
  '[ $rc -eq 2 ] && grep -q "kp.json: traceEvents\[2\]" "$tmp/kp.err" && ! grep -q "kp.json:[0-9]" "$tmp/kp.err"'
# a GPU stream numbered 2^31-1 and one numbered 0: the host launch thread's stream must collide with neither
printf '{"schemaVersion":1,"distributedInfo":{"rank":0,"world_size":1},"traceEvents":[%s,%s,%s]}' \
  '{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":5,"ts":0,"dur":2,"args":{"correlation":1}}' \
  "$(kev a 3 5 2147483647 ',"correlation":1')" "$(kev b 10 5 0)" >"$tmp/kh.json"
"$DTSIM" import "$tmp/kh.json" -o "$tmp/kh.dtt" >/dev/null 2>&1; rc=$?
check "host launch streams get numbers no GPU stream uses (3 streams)" \
  '[ $rc -eq 0 ] && [ "$(grep -E "^s[0-9]+ " "$tmp/kh.dtt" | cut -d" " -f1 | sort -u | wc -l)" -eq 3 ]'
# more CUDA streams than the importer's vector clocks allow: refused before allocating
{
  printf '{"schemaVersion":1,"distributedInfo":{"rank":0,"world_size":1},"traceEvents":['
  awk 'BEGIN { for (i = 0; i < 300; i++) printf "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":%d,\"dur\":1,\"args\":{\"stream\":%d}}", (i ? "," : ""), i, i }'
  printf ']}'
} >"$tmp/k300.json"
timeout 20 "$DTSIM" import "$tmp/k300.json" -o "$tmp/k300.dtt" >/dev/null 2>"$tmp/k300.err"; rc=$?
check "300 CUDA streams: exit 2 naming the limit of 256" '[ $rc -eq 2 ] && grep -q "at most 256 streams" "$tmp/k300.err"'
# one JSON string of 17 MiB (its 16 MiB + 1st byte is byte 25 + 2^24): yajl re-reads a token spanning its chunks (quadratic); refused at 16 MiB
{
  printf '{"traceEvents":[{"name":"'
  head -c $((17 << 20)) /dev/zero | tr '\0' a
  printf '"}]}'
} | gzip -1 >"$tmp/kbig.json.gz"
timeout 20 "$DTSIM" import "$tmp/kbig.json.gz" -o "$tmp/kbig.dtt" >/dev/null 2>"$tmp/kbig.err"; rc=$?
check "a 17 MiB JSON string: exit 2 at its byte offset with the 16 MiB limit" \
  '[ $rc -eq 2 ] && grep -q "JSON string longer than 16 MiB at byte 16777241" "$tmp/kbig.err"'

# a Process Group Ranks list that does not close, a Group size of 0: errors at the event (were accepted silently)
kineto '"rank":0,"world_size":2' "$(kev ncclKernel_AllReduce 0 5 7 ',"Collective name":"allreduce","In msg nelems":4,"Out msg nelems":4,"dtype":"Float","Group size":2,"Process Group Name":"0","Process Group Ranks":"[0, 1"')" >"$tmp/kpg.json"
"$DTSIM" import "$tmp/kpg.json" -o "$tmp/kpg.dtt" >/dev/null 2>"$tmp/kpg.err"; rc=$?
check "an unclosed 'Process Group Ranks' list: exit 2 at its byte" \
  '[ $rc -eq 2 ] && grep -q "kpg.json: bad event value near byte [0-9]*: .Process Group Ranks. is not a list of ranks" "$tmp/kpg.err"'
kineto '"rank":0,"world_size":2' "$(kev ncclKernel_AllReduce 0 5 7 ',"Collective name":"allreduce","In msg nelems":4,"Out msg nelems":4,"dtype":"Float","Group size":0,"Process Group Name":"0","Process Group Ranks":"[0, 1]"')" >"$tmp/kgs.json"
"$DTSIM" import "$tmp/kgs.json" -o "$tmp/kgs.dtt" >/dev/null 2>"$tmp/kgs.err"; rc=$?
check "'Group size': 0: exit 2 at its byte with the range" \
  '[ $rc -eq 2 ] && grep -q "kgs.json: bad event value near byte [0-9]*: .Group size. expects a rank count from 1 to 1048576, found .0." "$tmp/kgs.err"'

# --- converted quantities: finite and inside the documented ranges (docs/platform.md "Ranges")
# plat NAME SED: node8.yaml with one substitution, checked with 'platform check'
plat() { sed "$2" tests/data/node8.yaml >"$tmp/$1.yaml"; "$DTSIM" platform check "$tmp/$1.yaml" >/dev/null 2>"$tmp/$1.err"; }
plat bw 's/bandwidth: 100GB\/s/bandwidth: 1e308GB\/s/'; rc=$?
check "1e308GB/s (was inf, 'ok'): exit 2 with the maximum" '[ $rc -eq 2 ] && grep -q "bw.yaml:7:.*above the 1e+18 B/s" "$tmp/bw.err"'
plat bwlo 's/bandwidth: 100GB\/s/bandwidth: 1e-300B\/s/'; rc=$?
check "1e-300B/s (was a false deadlock): exit 2 with the range" '[ $rc -eq 2 ] && grep -q "from 1 B/s to 1e+18 B/s" "$tmp/bwlo.err"'
plat peak 's/peak: 100TFLOPS/peak: 1e-300FLOPS/'; rc=$?
check "gpu.peak 1e-300FLOPS (was an abort): exit 2 with the range" '[ $rc -eq 2 ] && grep -q "from 1 FLOP/s to 1e+24 FLOP/s" "$tmp/peak.err"'
plat lat 's/latency: 2us/latency: 1e308s/'; rc=$?
check "latency 1e308s: exit 2 with the maximum" '[ $rc -eq 2 ] && grep -q "above the 1e+06 s" "$tmp/lat.err"'
plat eff 's/efficiency: 0.5/efficiency: 1e-300/'; rc=$?
check "efficiency 1e-300: exit 2 with the range" '[ $rc -eq 2 ] && grep -q "above 0.001 and at most 1" "$tmp/eff.err"'
plat fac 's/^nodes: 1/model: {latency_factor: 1e308}\nnodes: 1/'; rc=$?
check "latency_factor 1e308: exit 2 with the range" '[ $rc -eq 2 ] && grep -q "at most 1e+06" "$tmp/fac.err"'
# trace-side: dur= above 1e6 s and flop= above 1e30 are refused with their line
printf 'dtsim_trace 1\nranks 1\nrank 0\ns0 compute dur=1e16s\n' >"$tmp/dur.dtt"
"$DTSIM" run tests/data/node8.yaml "$tmp/dur.dtt" >/dev/null 2>"$tmp/dur.err"; rc=$?
check "dur=1e16s (was a false deadlock): exit 2 at its line" '[ $rc -eq 2 ] && grep -q "dur.dtt:4.*above the 1e+06 s" "$tmp/dur.err"'
printf 'dtsim_trace 1\nranks 1\nrank 0\ns0 compute flop=1e308\n' >"$tmp/flop.dtt"
"$DTSIM" run tests/data/node8.yaml "$tmp/flop.dtt" >/dev/null 2>"$tmp/flop.err"; rc=$?
check "flop=1e308: exit 2 at its line" '[ $rc -eq 2 ] && grep -q "flop.dtt:4.*above the 1e+30 FLOP" "$tmp/flop.err"'
# the longest ops the ranges allow complete and are not called a deadlock: 1e30 FLOP at 1 FLOP/s x 0.5 = 2e30 s,
# then 1e6 s; two ranks all-reduce 1 KiB in between (2 (alpha + S/2/B), negligible at this scale)
sed 's/peak: 100TFLOPS/peak: 1FLOPS/' tests/data/node8.yaml >"$tmp/slow.yaml"
printf 'dtsim_trace 1\nranks 2\ngroup g 0-1\nrank 0\ns0 compute flop=1e30\ns0 allreduce group=g bytes=1024\ns0 compute dur=1000000s\nrank 1\ns0 allreduce group=g bytes=1024\n' >"$tmp/long.dtt"
"$DTSIM" run --json "$tmp/slow.yaml" "$tmp/long.dtt" >"$tmp/long.json" 2>"$tmp/long.err"; rc=$?
check "ops of 2e30 s and 1e6 s complete: exit 0, makespan 2e30 s, no deadlock" \
  '[ $rc -eq 0 ] && close "$(jq -r .makespan_s "$tmp/long.json")" 2e30 1e-9 && ! grep -qi deadlock "$tmp/long.err"'

# byte counts: one op moves at most 2^53 bytes, so two all-reduces of 2^63 (reported as 0) and 2^64-1
# (simulated as 2^63, reported in full) are refused at their line; totals saturate instead of wrapping
printf 'dtsim_trace 1\nranks 2\ngroup g 0-1\nrank 0\ns0 allreduce group=g bytes=9223372036854775808\nrank 1\ns0 allreduce group=g bytes=9223372036854775808\n' >"$tmp/b63.dtt"
"$DTSIM" run tests/data/node8.yaml "$tmp/b63.dtt" >/dev/null 2>"$tmp/b63.err"; rc=$?
check "bytes=2^63: exit 2 at its line with the 2^53 limit" '[ $rc -eq 2 ] && grep -q "b63.dtt:5:28: bad bytes= value.*2^53" "$tmp/b63.err"'
printf 'dtsim_trace 1\nranks 2\nrank 0\ns0 send peer=1 bytes=18446744073709551615\nrank 1\ns0 recv peer=0 bytes=18446744073709551615\n' >"$tmp/b64.dtt"
"$DTSIM" run tests/data/node8.yaml "$tmp/b64.dtt" >/dev/null 2>"$tmp/b64.err"; rc=$?
check "bytes=2^64-1: exit 2 at its line" '[ $rc -eq 2 ] && grep -q "b64.dtt:4:22: bad bytes= value" "$tmp/b64.err"'
# two all-reduces of 2^52 bytes on 2 ranks: the total is their sum, 2^53, exactly
printf 'dtsim_trace 1\nranks 2\ngroup g 0-1\nrank 0\ns0 allreduce group=g bytes=4503599627370496\ns0 allreduce group=g bytes=4503599627370496\nrank 1\ns0 allreduce group=g bytes=4503599627370496\ns0 allreduce group=g bytes=4503599627370496\n' >"$tmp/b52.dtt"
"$DTSIM" run --json tests/data/node8.yaml "$tmp/b52.dtt" >"$tmp/b52.json" 2>/dev/null; rc=$?
check "two all-reduces of 2^52 bytes report 2^53 bytes" '[ $rc -eq 0 ] && [ "$(jq -r .by_kind.allreduce.bytes "$tmp/b52.json")" = 9007199254740992 ]'

# --- outputs are always valid JSON: invalid UTF-8 in a process-group name reaches the notes as U+FFFD
kineto '"rank":0,"world_size":2' "$(kev ncclKernel_AllReduce 0 5 7 ',"Collective name":"allreduce","In msg nelems":16,"Out msg nelems":16,"dtype":"Float","Group size":2,"Process Group Name":"'"$(printf 'bad\377name')"'","Process Group Ranks":"[0, 1]"')" >"$tmp/ku.json"
"$DTSIM" run --json tests/data/node8.yaml "$tmp/ku.json" >"$tmp/ku.out" 2>/dev/null; rc=$?
check "invalid UTF-8 from a capture: the --json report is valid JSON" \
  '[ $rc -eq 0 ] && iconv -f UTF-8 -t UTF-8 "$tmp/ku.out" >/dev/null 2>&1 && jq -e ".notes | map(select(test(\"bad\uFFFDname\"))) | length > 0" "$tmp/ku.out" >/dev/null'
mkdir -p "$tmp/q\"dir"
cp -r validation/references/. "$tmp/q\"dir/" 2>/dev/null
"$DTSIM" validate --references "$tmp/q\"dir" --json >"$tmp/vq.json" 2>/dev/null; rc=$?
check "validate --json with a quote in a path is valid JSON" '[ $rc -eq 0 ] && jq -e ".tables | length > 0" "$tmp/vq.json" >/dev/null'

# --- outputs: a large output is refused before writing (--max-output), files appear whole or not at all
mkdir -p "$tmp/out"
timeout 60 "$DTSIM" import --expand 1048576 traces/samples/allreduce_bcast_2ranks_rank0.json.gz -o "$tmp/out/x.dtt" >/dev/null 2>"$tmp/mo.err"; rc=$?
check "import --expand 1048576 (was ~330 GB written): exit 2 with the estimate and --max-output, nothing written" \
  '[ $rc -eq 2 ] && grep -q "more than --max-output 17179869184 bytes" "$tmp/mo.err" && [ -z "$(ls -A "$tmp/out")" ]'
"$DTSIM" import --max-output 1K traces/samples/allreduce_bcast_2ranks_rank0.json.gz -o "$tmp/out/y.dtt" >/dev/null 2>&1; rc=$?
check "import --max-output 1K of the sample: exit 2" '[ $rc -eq 2 ] && [ -z "$(ls -A "$tmp/out")" ]'
"$DTSIM" import --max-output 1M traces/samples/allreduce_bcast_2ranks_rank0.json.gz -o "$tmp/out/z.dtt" >/dev/null 2>&1; rc=$?
check "import --max-output 1M of the sample writes it, and no temporary file is left" \
  '[ $rc -eq 0 ] && [ "$(ls -A "$tmp/out")" = z.dtt ]'
"$DTSIM" gen neox-19m --max-output 1K -o "$tmp/out/g.dtt" >/dev/null 2>"$tmp/mg.err"; rc=$?
check "gen --max-output 1K: exit 2 naming the limit" '[ $rc -eq 2 ] && grep -q "more than --max-output 1024 bytes" "$tmp/mg.err" && [ ! -e "$tmp/out/g.dtt" ]'
# the pre-check bounds neox-19m's 7168 ops at 8 bytes each (57344 bytes) and passes 100K; the trace is ~1.67 MB
# (about 233 bytes an op), so the writer must stop itself (was: wrote the whole file past the limit)
"$DTSIM" gen neox-19m --max-output 100K -o "$tmp/out/w.dtt" >/dev/null 2>"$tmp/mw.err"; rc=$?
check "gen --max-output 100K past the pre-check: exit 2 after ~100K written, naming the limit, no file nor temporary" \
  '[ $rc -eq 2 ] && grep -q "w.dtt: stopped after writing 1[0-9][0-9][0-9][0-9][0-9] bytes .* past --max-output 102400 bytes .*; nothing was kept; to write it, raise the limit (.gen --max-output 2M.)$" "$tmp/mw.err" && [ -z "$(ls -A "$tmp/out" | grep "^w\.dtt")" ]'
mkdir -p "$tmp/out/wd"
"$DTSIM" gen neox-19m --dp 4 --max-output 1M -o "$tmp/out/wd/" >/dev/null 2>"$tmp/mwd.err"; rc=$?
check "gen --dp 4 -o DIR/ --max-output 1M (4 files of ~420 KB): exit 2 and none of the rank files kept" \
  '[ $rc -eq 2 ] && grep -q "stopped after writing" "$tmp/mwd.err" && [ -z "$(ls -A "$tmp/out/wd")" ]'
rmdir "$tmp/out/wd"
"$DTSIM" gen neox-19m --max-output 2M -o "$tmp/out/w.dtt" >/dev/null 2>&1; rc=$?
check "gen --max-output 2M writes the whole ~1.67 MB trace, and it reads back" \
  '[ $rc -eq 0 ] && [ "$(ls -A "$tmp/out" | grep "^w\.dtt")" = w.dtt ] && [ "$(stat -c %s "$tmp/out/w.dtt")" -gt 1048576 ] && "$DTSIM" import --explain "$tmp/out/w.dtt" >/dev/null 2>&1'
rm -f "$tmp/out/w.dtt"

# --- out of memory: exit 2 naming the request and what was being built, never a signal (was abort(), 134)
# a trace declaring 2^20 ranks: about 170 MB to check, refused by an address-space limit of 150 MB
printf 'dtsim_trace 1\nranks 1048576\ngroup world 0-1048575\nrank 0\ns0 allreduce group=world bytes=1024\n' >"$tmp/wide.dtt"
if [ "${DTSIM_TEST_SCALE:-1}" = 1 ]; then
  (ulimit -v 150000; exec "$DTSIM" import "$tmp/wide.dtt" -o "$tmp/wide2.dtt") >/dev/null 2>"$tmp/oom.err"; rc=$?
  check "ulimit -v 150000 on 2^20 ranks: exit 2, 'out of memory (asked for ...) while checking the trace of wide.dtt'" \
    '[ $rc -eq 2 ] && grep -q "^dtsim: out of memory (asked for [0-9.]* [KMG]iB) while checking the trace of .*wide.dtt$" "$tmp/oom.err" && [ ! -e "$tmp/wide2.dtt" ]'
else
  echo "note: the ulimit -v case runs in the Release build only (the sanitizers reserve terabytes of address space); the DTSIM_TEST_ALLOC_LIMIT cases below take the same exit"
fi
# SimGrid's actor stacks under ulimit -v (SimGrid aborted, 134, "Failed to allocate stack": the shipped example
# from about 60,000 to 135,000 KiB): checked before the actors start, exit 2 naming the limit and the stack size.
# 1 GiB stacks under 4 GiB make the case independent of the binary's own size.
if [ "${DTSIM_TEST_SCALE:-1}" = 1 ]; then
  (ulimit -v 4194304; exec "$DTSIM" run --cfg contexts/stack-size:1048576 platforms/dgx-a100.yaml \
    traces/samples/allreduce_bcast_2ranks_rank0.json.gz) >"$tmp/stk.out" 2>"$tmp/stk.err"; rc=$?
  check "ulimit -v 4 GiB, 1 GiB actor stacks: exit 2 before the run, naming the limit and contexts/stack-size (was 134)" \
    '[ $rc -eq 2 ] && [ ! -s "$tmp/stk.out" ] && grep -q "^dtsim: error: starting the stream actors: the address-space limit (ulimit -v 4194304 KiB) leaves .* MiB, but 9 SimGrid actors need 1024.0 MiB each (a stack of contexts/stack-size 1048576 KiB" "$tmp/stk.err"'
  (ulimit -v 4194304; exec "$DTSIM" run --cfg contexts/stack-size:1048576 tests/data/node8.yaml "$tmp/t20k.dtt") \
    >"$tmp/stk.out" 2>"$tmp/stk.err"; rc=$?
  check "the same for a batch's helper actors, from inside the replay: exit 2 with the message (was 134)" \
    '[ $rc -eq 2 ] && grep -q "^dtsim: error: starting [0-9]* helper actors for the batch of .*: the address-space limit .* but [0-9]* SimGrid actors need 1024.[0-9] MiB each" "$tmp/stk.err"'
  (ulimit -v 4194304; exec "$DTSIM" run --cfg contexts/stack-size:65536 platforms/dgx-a100.yaml \
    traces/samples/allreduce_bcast_2ranks_rank0.json.gz) >/dev/null 2>&1; rc=$?
  check "the same limit with 64 MiB stacks runs (exit 0)" '[ $rc -eq 0 ]'
  # A batch's helper actors under a run-wide budget (was 134, "Failed to allocate stack", where both ranks of a batch
  # checked the same free room at t=0: one batch of 20,000 pairs at ulimit -v 2,700,000-5,000,000 KiB, 2,000 pairs
  # at 400,000-600,000, 20,000 pairs with 64 KiB stacks at 150,000). Each limit spans those ranges and ends in
  # exit 0 or in exit 2 naming the batch and the limit, never a signal. The tagged batches (a tag per pair: one
  # queue per pair, the most helper actors a batch of that size can start) keep the case whatever the batch model.
  batch_tagged() {
    printf 'dtsim_trace 1\nranks 2\nrank 0\n'
    awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) print "s0 send peer=1 bytes=1024 tag=" i " batch=1" }'
    echo "rank 1"
    awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) print "s0 recv peer=0 bytes=1024 tag=" i " batch=1" }'
  }
  batch 2000 >"$tmp/b2k.dtt"
  batch_tagged 2000 >"$tmp/t2k.dtt"
  batch_tagged 20000 >"$tmp/t20k.dtt"
  batch 20000 >"$tmp/b20k.dtt"
  stk_cases=""
  for c in "b20k 2650000 8192" "b20k 2700000 8192" "b20k 3500000 8192" "b20k 4300000 8192" "b20k 5000000 8192" \
    "b20k 6000000 8192" "t20k 2700000 8192" "t20k 3500000 8192" "t20k 5000000 8192" "t20k 6000000 8192" \
    "b2k 400000 8192" "b2k 500000 8192" "b2k 600000 8192" "t2k 400000 8192" "t2k 500000 8192" "t2k 600000 8192" \
    "b20k 150000 64" "t20k 120000 64" "t20k 150000 64" "t20k 200000 64" "t20k 250000 64"; do
    set -- $c
    (ulimit -v "$2"; exec "$DTSIM" run --cfg contexts/stack-size:"$3" tests/data/node8.yaml "$tmp/$1.dtt") \
      >/dev/null 2>"$tmp/stkb.err"; rc=$?
    if [ $rc -eq 0 ] || { [ $rc -eq 2 ] && grep -q "^dtsim: error: starting [0-9]* helper actors* for the batch of [0-9]* ops at rank [01] s0 op 0 (.*$1.dtt:[0-9]*): the address-space limit (ulimit -v $2 KiB) leaves .* MiB, but [0-9]* SimGrid actors* needs* .* MiB each (a stack of contexts/stack-size $3 KiB" "$tmp/stkb.err"; }; then
      if [ $rc -eq 2 ] && [ "$3" = 64 ] && grep -q "smaller stacks" "$tmp/stkb.err"; then
        stk_cases="$stk_cases $1@$2:FAILED(advises smaller stacks than the least, 64 KiB)"
      else
        stk_cases="$stk_cases $1@$2:$rc"
      fi
    else
      stk_cases="$stk_cases $1@$2:FAILED(exit $rc: $(head -c 200 "$tmp/stkb.err"))"
    fi
  done
  check "batches under ulimit -v across the ranges that were 134: exit 0 or 2 with the message ($stk_cases)" \
    '! echo "$stk_cases" | grep -q FAILED'
else
  echo "note: SKIPPED under the sanitizers: the ulimit -v stack cases (stream actors, a batch's helper actors, the run-wide budget) run in the Release build only (ASan reserves terabytes of address space, so no ulimit -v can be met)"
fi
# SimGrid's actor stacks against vm.max_map_count (was 134, "Failed to protect stack ... vm.max_map_count": a batch
# of 20,000 collectives starts a helper actor per op, and each actor's guard pages cost 2 memory mappings, so two
# ranks' 40,000 actors need 80,000 of the default 65,530). bmc N: 2 ranks, each one batch of N all-reduces of 64 KiB.
bmc() {
  printf 'dtsim_trace 1\nranks 2\ngroup dp0 0-1\n'
  for r in 0 1; do
    echo "rank $r"
    awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) print "s0 allreduce group=dp0 bytes=65536 batch=0" }'
  done
}
bmc 20000 >"$tmp/bmc20k.dtt"
bmc 2000 >"$tmp/bmc2k.dtt"
mapmsg="^dtsim: error: starting [0-9]* helper actors for the batch of [0-9]* ops at rank [01] s0 op 0 (allreduce group=dp0 bytes=65536 batch=0, .*bmc2*0*k.dtt:[0-9]*): [0-9]* SimGrid actors with guard pages (contexts/guard-size [0-9]*) need 2 memory mappings each, [0-9]* in all, but the limit on mappings (vm.max_map_count"
"$DTSIM" run platforms/dgx-a100.yaml "$tmp/bmc20k.dtt" >/dev/null 2>"$tmp/bmc.err"; rc=$?
check "2 x 20,000 batched all-reduces under this machine's vm.max_map_count ($(cat /proc/sys/vm/max_map_count 2>/dev/null)): exit 0, or exit 2 naming the batch and the limit (was 134; exit $rc)" \
  '[ $rc -eq 0 ] || { [ $rc -eq 2 ] && grep -q "$mapmsg $(cat /proc/sys/vm/max_map_count)) leaves [0-9]*: run with --cfg contexts/guard-size:0" "$tmp/bmc.err"; }'
# the same whatever this machine's limit, through a stand-in for it (DTSIM_TEST_MAX_MAP_COUNT, replay/dt_replay.c):
# 2 x 2,000 actors need 8,000 mappings, refused under 6,000; without guard pages they need none, and run
DTSIM_TEST_MAX_MAP_COUNT=6000 "$DTSIM" run platforms/dgx-a100.yaml "$tmp/bmc2k.dtt" >"$tmp/bmc.out" 2>"$tmp/bmc.err"; rc=$?
check "2 x 2,000 batched all-reduces, a stand-in vm.max_map_count 6000: exit 2 naming the batch, the limit and --cfg contexts/guard-size:0" \
  '[ $rc -eq 2 ] && grep -q "$mapmsg 6000) leaves [0-9]*: run with --cfg contexts/guard-size:0" "$tmp/bmc.err" && grep -q "split the batch" "$tmp/bmc.err"'
DTSIM_TEST_MAX_MAP_COUNT=6000 "$DTSIM" run --json --cfg contexts/guard-size:0 platforms/dgx-a100.yaml "$tmp/bmc2k.dtt" >"$tmp/bmc.json" 2>"$tmp/bmc.err"; rc=$?
check "the same with --cfg contexts/guard-size:0 runs: exit 0, its 2000 all-reduce instances counted" \
  '[ $rc -eq 0 ] && [ "$(jq -r .by_kind.allreduce.count "$tmp/bmc.json")" = 2000 ]'
# the same exit through the test cap on one request (DTSIM_TEST_ALLOC_LIMIT, common/dt_util.h): reading the platform, and inside a
# SimGrid actor (the first allocation of the replay): exit 2, the report not half printed, no timeline left
DTSIM_TEST_ALLOC_LIMIT=100000 "$DTSIM" run tests/data/node8.yaml "$tmp/wide.dtt" >/dev/null 2>"$tmp/oomp.err"; rc=$?
check "an allocation failing while reading the platform: exit 2 naming it" \
  '[ $rc -eq 2 ] && grep -q "out of memory (asked for .*) while reading the platform tests/data/node8.yaml" "$tmp/oomp.err"'
mkdir -p "$tmp/oomdir"
DTSIM_TEST_ALLOC_LIMIT=1 DTSIM_TEST_ALLOC_PHASE=replaying timeout 60 "$DTSIM" run --timeline "$tmp/oomdir/tl.json" \
  tests/data/node8.yaml tests/data/allreduce8.dtt >"$tmp/oomr.out" 2>"$tmp/oomr.err"; rc=$?
check "an allocation failing inside a SimGrid actor: exit 2 (no hang, no signal), no timeline and no temporary left" \
  '[ $rc -eq 2 ] && grep -q "out of memory (asked for .*) while replaying the trace" "$tmp/oomr.err" && [ -z "$(ls -A "$tmp/oomdir")" ]'

# --- output files appear whole or not at all (temporary name + rename, common/dt_outfile.c)
mkdir -p "$tmp/wr"
awk 'BEGIN { print "dtsim_trace 1"; print "ranks 2"; print "group world 0-1";
  for (r = 0; r < 2; r++) { print "rank " r; for (i = 0; i < 50000; i++) { print "s0 compute dur=1us"; print "s0 allreduce group=world bytes=1024" } } }' >"$tmp/long.dtt"
# a write that fails (file size limit, SIGXFSZ ignored: EFBIG): exit 2 with the cause, nothing under either name
(ulimit -f 1000; trap '' XFSZ; exec "$DTSIM" import "$tmp/long.dtt" -o "$tmp/wr/a.dtt") >/dev/null 2>"$tmp/wr.err"; rc=$?
check "a failing write (ulimit -f): exit 2 'File too large', no file and no temporary" \
  '[ $rc -eq 2 ] && grep -q "a.dtt: cannot write: File too large" "$tmp/wr.err" && [ -z "$(ls -A "$tmp/wr")" ]'
# the same limit with SIGXFSZ at its default action (which ends the process, exit 153): dtsim ignores it, so the
# write fails with EFBIG and ends the same way, exit 2 (was: killed by the signal, the temporary removed)
(ulimit -f 1000; exec "$DTSIM" import "$tmp/long.dtt" -o "$tmp/wr/b.dtt") >/dev/null 2>"$tmp/wr.err"; rc=$?
check "a failing write, SIGXFSZ not ignored by the shell (exit $rc): exit 2 'File too large', no file, no temporary" \
  '[ $rc -eq 2 ] && grep -q "b.dtt: cannot write: File too large" "$tmp/wr.err" && [ -z "$(ls -A "$tmp/wr")" ]'
# SIGTERM while the output is being written: wait for its temporary to appear, then kill
seen=0
for attempt in 1 2 3 4 5; do
  "$DTSIM" import "$tmp/long.dtt" -o "$tmp/wr/c.dtt" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 1 3000); do
    if compgen -G "$tmp/wr/c.dtt.tmp.*" >/dev/null; then seen=1; kill -TERM $pid; break; fi
    kill -0 $pid 2>/dev/null || break
    sleep 0.01
  done
  wait $pid
  [ $seen -eq 1 ] && break
  rm -f "$tmp/wr/c.dtt"
done
check "SIGTERM in the middle of a write: no file and no temporary" '[ $seen -eq 1 ] && [ -z "$(ls -A "$tmp/wr")" ]'
# a device or a pipe is written in place: renaming over it would replace it with a file (as root: -o /dev/null)
mkfifo "$tmp/wr/fifo"
cat "$tmp/wr/fifo" >"$tmp/fifo.out" &
"$DTSIM" import tests/data/allreduce8.dtt -o "$tmp/wr/fifo" >/dev/null 2>&1; rc=$?
wait
check "-o a FIFO writes through it and leaves it a FIFO" \
  '[ $rc -eq 0 ] && [ -p "$tmp/wr/fifo" ] && head -1 "$tmp/fifo.out" | grep -q "^dtsim_trace 1" && [ "$(ls -A "$tmp/wr")" = fifo ]'
rm -f "$tmp/wr/fifo"
# a symbolic link: the file it names is replaced, the link stays
echo old >"$tmp/wr/target.dtt"
ln -s target.dtt "$tmp/wr/link.dtt"
"$DTSIM" import tests/data/allreduce8.dtt -o "$tmp/wr/link.dtt" >/dev/null 2>&1; rc=$?
check "-o a symbolic link replaces the file it names" \
  '[ $rc -eq 0 ] && [ -L "$tmp/wr/link.dtt" ] && head -1 "$tmp/wr/target.dtt" | grep -q "^dtsim_trace 1"'

# outputs checked before the run: a report followed by "No such file or directory" lost the run
"$DTSIM" run tests/data/node8.yaml tests/data/allreduce8.dtt --plot /proc >"$tmp/o.out" 2>"$tmp/o.err"; rc=$?
check "--plot /proc: exit 2 before the run (no report), saying files cannot be created there" \
  '[ $rc -eq 2 ] && [ ! -s "$tmp/o.out" ] && grep -q "/proc: --plot cannot create files in this directory" "$tmp/o.err"'
mkdir -p "$tmp/odir"
"$DTSIM" run tests/data/node8.yaml tests/data/allreduce8.dtt --timeline "$tmp/odir" >"$tmp/o.out" 2>"$tmp/o.err"; rc=$?
check "--timeline DIR: exit 2 before the run, saying it is a directory" \
  '[ $rc -eq 2 ] && [ ! -s "$tmp/o.out" ] && grep -q "timeline .*odir is a directory: expected the name of the file" "$tmp/o.err"'
"$DTSIM" run tests/data/node8.yaml tests/data/allreduce8.dtt --timeline "$tmp/nodir/t.json" >"$tmp/o.out" 2>"$tmp/o.err"; rc=$?
check "--timeline in a missing folder: exit 2 before the run" '[ $rc -eq 2 ] && [ ! -s "$tmp/o.out" ] && grep -q "nodir. does not exist" "$tmp/o.err"'
"$DTSIM" import tests/data/allreduce8.dtt -o "$tmp/odir" >/dev/null 2>"$tmp/o.err"; rc=$?
check "import -o DIR: exit 2 saying it is a directory and what was expected (was only 'Is a directory')" \
  '[ $rc -eq 2 ] && grep -q "odir is a directory: give a file name (.*odir/trace.dtt.), or .*odir/. with the slash to write one file per rank" "$tmp/o.err"'
"$DTSIM" gen neox-19m -o "$tmp/odir" >/dev/null 2>"$tmp/o.err"; rc=$?
check "gen -o DIR: exit 2 saying it is a directory and what is expected (as import)" \
  '[ $rc -eq 2 ] && grep -q "odir is a directory: give a file name (.*odir/trace.dtt.), or .*odir/. with the slash to write one file per rank" "$tmp/o.err"'
# a failed replay still writes its timeline, valid, as far as it ran, with an instant event saying why it stopped
"$DTSIM" run tests/data/node8.yaml tests/data/deadlock.dtt --timeline "$tmp/dl.json" >/dev/null 2>&1; rc=$?
check "deadlock --timeline: exit 1, valid JSON, one 'outcome' event naming the deadlock and the first blocked op" \
  '[ $rc -eq 1 ] && jq -e "[.traceEvents[] | select(.cat == \"outcome\" and .ph == \"i\")] | length == 1" "$tmp/dl.json" >/dev/null &&
   jq -r ".traceEvents[] | select(.cat == \"outcome\") | .name + \" / \" + .args.first_blocked" "$tmp/dl.json" |
   grep -q "^deadlock: 2 ops blocked forever / rank 0 s0 op 0 (send"'
"$DTSIM" run tests/data/node8.yaml tests/data/allreduce8.dtt --timeline "$tmp/ok.json" >/dev/null 2>&1
check "a run that completes has no outcome event" \
  '[ "$(jq "[.traceEvents[] | select(.cat == \"outcome\")] | length" "$tmp/ok.json")" -eq 0 ]'
# pictures: gnuplot writes a temporary name that dtsim renames (a gnuplot that fails half-way leaves the old
# picture and no temporary); a stand-in gnuplot writes half a picture and fails
mkdir -p "$tmp/fakegp" "$tmp/pics"
cat >"$tmp/fakegp/gnuplot" <<'GP'
#!/bin/sh
for a; do case $a in dtsim_output=*) out=${a#dtsim_output=}; out=${out#?}; out=${out%?} ;; esac; done
[ -n "${out:-}" ] || exit 3
printf 'half a picture' >"$out"
exit 1
GP
chmod +x "$tmp/fakegp/gnuplot"
echo old >"$tmp/pics/critical_path.png"
PATH="$tmp/fakegp:$PATH" "$DTSIM" run tests/data/node8.yaml tests/data/allreduce8.dtt --plot "$tmp/pics" >/dev/null 2>"$tmp/o.err"; rc=$?
check "run --plot, gnuplot failing half-way: exit 2, the old picture kept, no temporary left" \
  '[ $rc -eq 2 ] && grep -q "gnuplot failed" "$tmp/o.err" && [ "$(cat "$tmp/pics/critical_path.png")" = old ] &&
   [ -z "$(ls "$tmp/pics" | grep "\.tmp\.")" ]'
"$DTSIM" run tests/data/node8.yaml tests/data/allreduce8.dtt --plot "$tmp/pics" >/dev/null 2>&1; rc=$?
check "run --plot with gnuplot: the pictures, no temporary left" \
  '[ $rc -eq 0 ] && [ "$(head -c 4 "$tmp/pics/critical_path.png" | tail -c 3)" = PNG ] && [ -z "$(ls "$tmp/pics" | grep "\.tmp\.")" ]'
sed -i 's/exit 1$/exit 0/' "$tmp/fakegp/gnuplot"
PATH="$tmp/fakegp:$PATH" "$DTSIM" run tests/data/node8.yaml tests/data/allreduce8.dtt --plot "$tmp/pics" >/dev/null 2>&1; rc=$?
check "run --plot: what gnuplot wrote to the temporary is what the picture holds" \
  '[ $rc -eq 0 ] && [ "$(cat "$tmp/pics/per_rank.png")" = "half a picture" ] && [ -z "$(ls "$tmp/pics" | grep "\.tmp\.")" ]'
sed -i 's/exit 0$/exit 1/' "$tmp/fakegp/gnuplot"
"$DTSIM" sweep tests/data/sweep/grid.yaml --dir "$tmp/swg" >/dev/null 2>&1
echo old >"$tmp/swg.svg"
PATH="$tmp/fakegp:$PATH" "$DTSIM" sweep collect tests/data/sweep/grid.yaml --dir "$tmp/swg" --plot "$tmp/swg.svg" >/dev/null 2>"$tmp/o.err"; rc=$?
check "sweep --plot, gnuplot failing half-way: exit 2, the old picture kept, no temporary left" \
  '[ $rc -eq 2 ] && [ "$(cat "$tmp/swg.svg")" = old ] && [ -z "$(ls "$tmp" | grep "^swg\.svg\.tmp")" ]'

# --- sweep specs: the platform and workload files' rule for numbers (was: nodes: ["4"] passed on as text)
cp tests/data/sweep/base.yaml "$tmp/base.yaml"
sweepspec() { printf 'dtsim_sweep: 1\nplatform: base.yaml\nworkload: {gen: neox-19m, dp: %s, global_batch: 32}\naxes:\n  %s\n' "$1" "$2" >"$tmp/sw.yaml"; }
sweepspec 8 'nodes: [4, "2"]'
"$DTSIM" sweep plan "$tmp/sw.yaml" >/dev/null 2>"$tmp/sw.err"; rc=$?
check "sweep axis value \"2\" for nodes: exit 2 at its line:col, expected and found" \
  '[ $rc -eq 2 ] && grep -q "sw.yaml:5:14: expected an unquoted number or boolean for .axes.nodes., found a quoted string .2." "$tmp/sw.err"'
sweepspec '"8"' 'nodes: [4]'
"$DTSIM" sweep plan "$tmp/sw.yaml" >/dev/null 2>"$tmp/sw.err"; rc=$?
check "sweep workload dp: \"8\": exit 2 at its line:col" '[ $rc -eq 2 ] && grep -q "sw.yaml:3:31: .* for .workload.dp., found a quoted string" "$tmp/sw.err"'
sweepspec 8 'tp: [!n 1]'
"$DTSIM" sweep plan "$tmp/sw.yaml" >/dev/null 2>"$tmp/sw.err"; rc=$?
check "sweep axis value with a tag: exit 2 at its line:col" '[ $rc -eq 2 ] && grep -q "sw.yaml:5:8: expected a plain value for .axes.tp., found a value with the tag .!n." "$tmp/sw.err"'
sweepspec 8 'network.topology: ["fat-tree"]'
"$DTSIM" sweep plan "$tmp/sw.yaml" >"$tmp/sw.out" 2>"$tmp/sw.err"; rc=$?
check "a quoted word for a text key is fine (exit 0, one point)" '[ $rc -eq 0 ] && grep -q "network.topology=fat-tree" "$tmp/sw.out"'
# values are checked when the spec is read, at their own line:col (was: an impossible point, found at plan time)
sweepspec 8 'gpu.power.busy: [700W, 7X]'
"$DTSIM" sweep plan "$tmp/sw.yaml" >/dev/null 2>"$tmp/sw.err"; rc=$?
check "sweep axis power '7X': exit 2 at its line:col, naming the unit" \
  '[ $rc -eq 2 ] && grep -q "sw.yaml:5:26: bad value for .gpu.power.busy.: .*found unit .X." "$tmp/sw.err"'
sweepspec 8 'tp: [1, 0]'
"$DTSIM" sweep plan "$tmp/sw.yaml" >/dev/null 2>"$tmp/sw.err"; rc=$?
check "sweep axis tp 0: exit 2 at its line:col with the range" \
  '[ $rc -eq 2 ] && grep -q "sw.yaml:5:11: .tp. expects a whole number from 1 to" "$tmp/sw.err"'
sweepspec 8 'nodes: [4]'
"$DTSIM" sweep plan "$tmp/sw.yaml" --set axes.nodes=4,+2 >/dev/null 2>"$tmp/sw.err"; rc=$?
check "sweep --set axes.nodes=4,+2: exit 2 naming --set and the sign" \
  '[ $rc -eq 2 ] && grep -q -- "--set: expected a whole number for .nodes., found .+2. (digits alone, without a sign)" "$tmp/sw.err"'

# --- one policy for every YAML reader (README "Conventions"): numbers plain and unsigned, no YAML tag at all
# (YAML's own !!int included: a loaded document cannot tell '!!str 4' from '4', so tags are refused as read)
yamlcase() { # yamlcase NAME FILE WANT CMD...: CMD on FILE exits 2 and its message matches WANT
  local name=$1 want=$3
  shift 3
  "$@" >/dev/null 2>"$tmp/y.err"; local rc=$?
  check "$name (exit 2: $want)" '[ $rc -eq 2 ] && grep -q -- "$want" "$tmp/y.err"'
}
plat() { sed "s/^nodes: 4$/nodes: $1/" tests/data/sweep/base.yaml >"$tmp/p.yaml"; }
plat '!!int 4'
yamlcase "platform nodes: !!int 4" "$tmp/p.yaml" "p.yaml:6:8: expected a plain value for .nodes., found a value with the tag .!!int." \
  "$DTSIM" platform check "$tmp/p.yaml"
plat '!foo 4'
yamlcase "platform nodes: !foo 4" "$tmp/p.yaml" "p.yaml:6:8: .*found a value with the tag .!foo." "$DTSIM" platform check "$tmp/p.yaml"
plat '"4"'
yamlcase "platform nodes: \"4\"" "$tmp/p.yaml" "p.yaml:6:8: .*found a quoted string" "$DTSIM" platform check "$tmp/p.yaml"
plat '+4'
yamlcase "platform nodes: +4" "$tmp/p.yaml" "p.yaml:6:8: .*without a sign" "$DTSIM" platform check "$tmp/p.yaml"
sed 's/^network:$/network: !!map/' tests/data/sweep/base.yaml >"$tmp/p.yaml"
yamlcase "platform network: !!map (a tag on a mapping)" "$tmp/p.yaml" "p.yaml:10:10: expected a mapping for .network. without a tag, found a mapping with the tag .!!map." \
  "$DTSIM" platform check "$tmp/p.yaml"
work() { printf 'dtsim_workload: 1\npreset: neox-19m\nparallel: {tp: %s, dp: 2}\n' "$1" >"$tmp/w.yaml"; }
work '!!int 2'
yamlcase "workload tp: !!int 2" "$tmp/w.yaml" "w.yaml:3:16: expected a plain value for .parallel.tp., found a value with the tag .!!int." \
  "$DTSIM" gen --workload "$tmp/w.yaml" --summary
work '"2"'
yamlcase "workload tp: \"2\"" "$tmp/w.yaml" "w.yaml:3:16: .*quoted" "$DTSIM" gen --workload "$tmp/w.yaml" --summary
work '+2'
yamlcase "workload tp: +2" "$tmp/w.yaml" "w.yaml:3:16: .*found .+2." "$DTSIM" gen --workload "$tmp/w.yaml" --summary
sweepspec 8 'nodes: [!!int 4]'
yamlcase "sweep nodes: [!!int 4] (was read as 4)" "$tmp/sw.yaml" "sw.yaml:5:11: expected a plain value for .axes.nodes., found a value with the tag .!!int." \
  "$DTSIM" sweep plan "$tmp/sw.yaml"
sweepspec 8 'network.topology: [!!str fat-tree]'
yamlcase "sweep topology: [!!str fat-tree]" "$tmp/sw.yaml" "sw.yaml:5:22: .*tag .!!str." "$DTSIM" sweep plan "$tmp/sw.yaml"
sweepspec 8 'nodes: [+2]'
yamlcase "sweep nodes: [+2]" "$tmp/sw.yaml" "sw.yaml:5:11: expected a whole number for .nodes., found .+2." "$DTSIM" sweep plan "$tmp/sw.yaml"
mkdir -p "$tmp/swdir"
"$DTSIM" sweep "$tmp/swdir" >/dev/null 2>"$tmp/swd.err"; rc=$?
check "sweep of a directory: exit 2 saying it is a directory and what was expected (was 'Input/output error')" \
  '[ $rc -eq 2 ] && grep -q "swdir: is a directory: expected a sweep spec file" "$tmp/swd.err"'

# --- notes: at most 20 of one kind, then one "… and K more like" (one warning per step was 3000 notes)
awk 'BEGIN { printf "{\"schemaVersion\":1,\"distributedInfo\":{\"rank\":0,\"world_size\":1},\"traceEvents\":[";
  printf "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":1,\"ts\":0,\"dur\":5,\"args\":{\"stream\":7}}";
  for (i = 0; i < 3000; i++) printf ",{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%d\",\"pid\":0,\"tid\":2,\"ts\":%d,\"dur\":5}", i, 100 + 10 * i;
  print "]}" }' >"$tmp/steps.json"
"$DTSIM" run --json tests/data/node8.yaml "$tmp/steps.json" >"$tmp/steps.out" 2>/dev/null; rc=$?
check "3000 steps without GPU work: 20 notes of that kind and one '… and 2980 more like' (JSON)" \
  '[ $rc -eq 0 ] && [ "$(jq "[.notes[] | select(test(\"launched no GPU work\"))] | length" "$tmp/steps.out")" -eq 21 ] &&
   jq -r ".notes[]" "$tmp/steps.out" | grep -q "^… and 2980 more like \"kineto warning: .ProfilerStep#19. launched no GPU work"'
"$DTSIM" run tests/data/node8.yaml "$tmp/steps.json" 2>/dev/null | grep -c "launched no GPU work" >"$tmp/steps.n"
check "the same in the text report (21 lines)" '[ "$(cat "$tmp/steps.n")" -eq 21 ]'
# a native trace with 5000 meta note= lines of one kind
awk 'BEGIN { print "dtsim_trace 1"; print "ranks 1"; for (i = 0; i < 5000; i++) printf "meta note=\"step %d was odd\"\n", i;
  print "rank 0"; print "s0 compute dur=1us" }' >"$tmp/metanotes.dtt"
"$DTSIM" run --json tests/data/node8.yaml "$tmp/metanotes.dtt" >"$tmp/mn.out" 2>/dev/null; rc=$?
check "5000 meta notes of one kind: 20 and '… and 4980 more like \"step 19 was odd\"'" \
  '[ $rc -eq 0 ] && [ "$(jq "[.notes[] | select(test(\"was odd\"))] | length" "$tmp/mn.out")" -eq 21 ] &&
   jq -r ".notes[]" "$tmp/mn.out" | grep -qx "… and 4980 more like \"step 19 was odd\""'

# notes of many kinds: at most 100 kinds kept, the rest counted in one closing note (5000 distinct meta notes
# were 5000 notes), and a trace written and read back keeps the same notes
awk 'BEGIN { print "dtsim_trace 1"; print "ranks 1"; n = 0
  for (a = 97; a < 123 && n < 5000; a++) for (b = 97; b < 123 && n < 5000; b++) for (c = 97; c < 123 && n < 5000; c++) {
    printf "meta note=note-%c%c%c\n", a, b, c; n++ }
  print "rank 0"; print "s0 compute dur=1us" }' >"$tmp/kinds.dtt"
"$DTSIM" run --json tests/data/node8.yaml "$tmp/kinds.dtt" >"$tmp/kinds.out" 2>/dev/null; rc=$?
check "5000 notes of 5000 kinds: 100 kept and '… and 4900 more notes of kinds past the first 100'" \
  '[ $rc -eq 0 ] && [ "$(jq ".notes | length" "$tmp/kinds.out")" -eq 101 ] &&
   jq -r ".notes[-1]" "$tmp/kinds.out" | grep -qx "… and 4900 more notes of kinds past the first 100 (the first of them: \"note-adw\")"'
"$DTSIM" import "$tmp/kinds.dtt" -o "$tmp/kinds2.dtt" 2>/dev/null && "$DTSIM" import "$tmp/kinds2.dtt" -o "$tmp/kinds3.dtt" 2>/dev/null
check "those notes survive a write and read back unchanged (101 meta note lines)" \
  '[ "$(grep -c "^meta note=" "$tmp/kinds2.dtt")" -eq 101 ] && cmp -s <(grep "^meta note=" "$tmp/kinds2.dtt") <(grep "^meta note=" "$tmp/kinds3.dtt")'

# --- YAML nesting: 40,000 levels in 80 KB took 17.6 s in libyaml's loader; refused past 64 levels, linearly
nest() { printf 'dtsim_platform: 1\nname: '; awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "["; for (i = 0; i < n; i++) printf "]"; print "" }'; }
nest 40000 >"$tmp/nest.yaml"
timeout 20 "$DTSIM" platform check "$tmp/nest.yaml" >/dev/null 2>"$tmp/nest.err"; rc=$?
check "40,000 nested sequences: exit 2 at the 65th level (column 6 + 64)" '[ $rc -eq 2 ] && grep -q "nest.yaml:2:70: nesting deeper than 64 levels" "$tmp/nest.err"'
{ printf 'dtsim_workload: 1\npreset: '; awk 'BEGIN { for (i = 0; i < 40000; i++) printf "{a: "; for (i = 0; i < 40000; i++) printf "}"; print "" }'; } >"$tmp/nestw.yaml"
timeout 20 "$DTSIM" gen --workload "$tmp/nestw.yaml" --summary >/dev/null 2>"$tmp/nestw.err"; rc=$?
check "a workload nested 40,000 deep: exit 2 naming the limit" '[ $rc -eq 2 ] && grep -q "nesting deeper than 64 levels" "$tmp/nestw.err"'

# --- run --cfg: an allow-list with value ranges (these crashed, hung or aborted inside SimGrid)
for c in maxmin/precision:-1 contexts/stack-size:0 network/model:foo contexts/factory:nope surf/precision:-1; do
  timeout 20 "$DTSIM" run --cfg "$c" tests/data/node8.yaml tests/data/allreduce8.dtt >/dev/null 2>"$tmp/cfg.err"; rc=$?
  check "--cfg $c: exit 2 with the accepted keys or range" '[ $rc -eq 2 ] && grep -q "^dtsim run: --cfg" "$tmp/cfg.err"'
done
for c in contexts/stack-size:128 maxmin/precision:1e-6 surf/precision:1e-9 contexts/guard-size:0; do
  timeout 60 "$DTSIM" run --cfg "$c" tests/data/node8.yaml tests/data/allreduce8.dtt >/dev/null 2>&1; rc=$?
  check "--cfg $c is accepted (exit 0)" '[ $rc -eq 0 ]'
done

# --- platforms: sizes derived from the file are checked before anything is built
sed -e 's/^nodes: 1/nodes: 1000000/' -e 's/^gpus_per_node: 8/gpus_per_node: 1024/' tests/data/node8.yaml |
  sed 's/^intra_node.*/&\nnics: {per_node: 1, bandwidth: 50GB\/s, latency: 1us}\nnetwork: {topology: single-switch, link_bandwidth: 50GB\/s, link_latency: 1us}/' >"$tmp/huge.yaml"
timeout 20 "$DTSIM" platform check "$tmp/huge.yaml" >/dev/null 2>"$tmp/huge.err"; rc=$?
check "1,000,000 nodes x 1024 GPUs: exit 2 naming the GPU limit" '[ $rc -eq 2 ] && grep -q "more than the 1048576 dtsim builds" "$tmp/huge.err"'
sed -e 's/^nodes: 64/nodes: 2/' -e 's/routers_per_group: 4/routers_per_group: 100000/' platforms/frontier-like.yaml >"$tmp/df1.yaml"
timeout 20 "$DTSIM" platform check "$tmp/df1.yaml" >/dev/null 2>"$tmp/df1.err"; rc=$?
check "a dragonfly of 100,000 routers per group: exit 2 naming the link limit" '[ $rc -eq 2 ] && grep -q "links: more than the 16777216" "$tmp/df1.err"'
sed -e 's/groups: 4/groups: 1000/' -e 's/routers_per_group: 4/routers_per_group: 1000/' platforms/frontier-like.yaml >"$tmp/df2.yaml"
timeout 20 "$DTSIM" platform check "$tmp/df2.yaml" >/dev/null 2>"$tmp/df2.err"; rc=$?
check "1000 groups x 1000 routers: exit 2 naming the link limit" '[ $rc -eq 2 ] && grep -q "links: more than the 16777216" "$tmp/df2.err"'
# mesh G: a full NVLink mesh of G GPUs plus one repeated link (G(G-1)/2 + 1 entries)
mesh() {
  printf 'dtsim_platform: 1\nname: m\ngpu: {model: X, peak: 100TFLOPS}\nnodes: 1\ngpus_per_node: %d\n' "$1"
  printf 'intra_node:\n  kind: nvlink-mesh\n  link_bandwidth: 25GB/s\n  latency: 1us\n  links: ['
  awk -v g="$1" 'BEGIN { for (a = 0; a < g; a++) for (b = a + 1; b < g; b++) printf "[%d,%d,1], ", a, b; printf "[%d,%d,1]]\n", g - 2, g - 1 }'
}
mesh 256 >"$tmp/m256.yaml"
mesh 512 >"$tmp/m512.yaml"
"$DTSIM" platform check "$tmp/m512.yaml" >/dev/null 2>"$tmp/m512.err"; rc=$?
check "a repeated NVLink entry among 130,817: exit 2 naming both lines" '[ $rc -eq 2 ] && grep -q "duplicate link between GPUs 510 and 511" "$tmp/m512.err"'
cpu "$tmp/cm256" "$DTSIM" platform check "$tmp/m256.yaml"
cpu "$tmp/cm512" "$DTSIM" platform check "$tmp/m512.yaml"
check "the NVLink duplicate check is not quadratic (32k vs 130k links: $(cat "$tmp/cm256") s, $(cat "$tmp/cm512") s)" \
  'ratio_ok "$tmp/cm256" "$tmp/cm512"'

# --- one endless line in a trace: bounded memory, the line number and the limit (a 3.1 GB line took 3.1 GB)
# 2048 concatenated gzip members of 1 MiB of 'a' each (zlib reads them as one stream): a 2 GiB line in 2 MB
python3 -c '
import gzip, sys
m = gzip.compress(b"a" * (1 << 20), 9)
sys.stdout.buffer.write(gzip.compress(b"dtsim_trace 1\nranks 2\n", 9) + m * 2048)' >"$tmp/longline.dtt.gz"
/usr/bin/time -f '%M' -o "$tmp/longline.rss" "$DTSIM" run tests/data/node8.yaml "$tmp/longline.dtt.gz" >/dev/null 2>"$tmp/longline.err"; rc=$?
check "a 2 GiB line: exit 2 at line 3 naming the 64 MiB limit" \
  '[ $rc -eq 2 ] && grep -q "longline.dtt.gz:3: line longer than 64 MiB" "$tmp/longline.err"'
check "a 2 GiB line is refused in under 600 MB of memory ($(tail -1 "$tmp/longline.rss") KB)" \
  '[ "$(tail -1 "$tmp/longline.rss")" -lt 600000 ]'
printf 'dtsim_trace 1\nranks 2\ngroup w 0-1\nrank 0\ns0 allreduce\0 group=w bytes=8\nrank 1\ns0 allreduce group=w bytes=8\n' >"$tmp/nul.dtt"
"$DTSIM" run tests/data/node8.yaml "$tmp/nul.dtt" >/dev/null 2>"$tmp/nul.err"; rc=$?
check "a NUL byte in a trace line: exit 2 at file:line:col (its byte)" \
  '[ $rc -eq 2 ] && grep -q "nul.dtt:5:13: NUL byte (a trace is text)" "$tmp/nul.err"'
printf '0 0 0\n1 0 1\0 0 0 2\n' >"$tmp/nul.place"
printf 'dtsim_trace 1\nranks 2\ngroup w 0-1\nrank 0\ns0 allreduce group=w bytes=8\nrank 1\ns0 allreduce group=w bytes=8\n' >"$tmp/two.dtt"
"$DTSIM" run --placement "$tmp/nul.place" tests/data/node8.yaml "$tmp/two.dtt" >/dev/null 2>"$tmp/nulp.err"; rc=$?
check "a NUL byte in a placement line: exit 2 at file:line:col (was: the line read up to the NUL)" \
  '[ $rc -eq 2 ] && grep -q "nul.place:2:6: NUL byte in a placement line" "$tmp/nulp.err"'

# --- one spelling of a whole number (README "Conventions"): digits alone on the command line and in files
for v in +4 -0 " 4" 0x4 4.0; do
  "$DTSIM" run --top "$v" tests/data/node8.yaml "$tmp/two.dtt" >/dev/null 2>"$tmp/top.err"; rc=$?
  check "--top '$v': exit 2 with the range" '[ $rc -eq 2 ] && grep -q "top expects a count of links from 0 to 1000000" "$tmp/top.err"'
done
"$DTSIM" import --world 0 x -o y >/dev/null 2>"$tmp/world.err"; rc=$?
check "--world 0: exit 2 giving the range, not just 'positive'" '[ $rc -eq 2 ] && grep -q "world expects a rank count from 1 to 1048576" "$tmp/world.err"'
"$DTSIM" scale --dp 0 x --grad g -o y >/dev/null 2>"$tmp/dp.err"; rc=$?
check "scale --dp 0: exit 2 giving the range" '[ $rc -eq 2 ] && grep -q "dp expects a degree from 1 to 1048576" "$tmp/dp.err"'
"$DTSIM" sweep plan --jobs 0 --set platform=x >/dev/null 2>"$tmp/jobs.err"; rc=$?
check "--jobs 0: exit 2 giving the range" '[ $rc -eq 2 ] && grep -q "jobs expects a number of workers from 1 to 4096" "$tmp/jobs.err"'
for v in '"1"' "'1'" '+1' '!n 1'; do
  sed "s/^nodes: 1/nodes: $v/" tests/data/node8.yaml >"$tmp/q.yaml"
  "$DTSIM" platform check "$tmp/q.yaml" >/dev/null 2>"$tmp/q.err"; rc=$?
  check "platform nodes: $v is exit 2 at its line and column" '[ $rc -eq 2 ] && grep -Eq "q.yaml:[0-9]*:8: expected (a whole number|a plain value) for .nodes." "$tmp/q.err"'
done
sed "s/^nodes: 1/nodes: 01/" tests/data/node8.yaml >"$tmp/q.yaml"
check "platform nodes: 01 is one (decimal)" '"$DTSIM" platform check "$tmp/q.yaml" | grep -q "1 node x 8 GPUs"'
for v in '"2"' '!n 2' '+2' '-0'; do
  printf 'dtsim_workload: 1\npreset: neox-19m\nparallel: {tp: %s}\n' "$v" >"$tmp/qw.yaml"
  "$DTSIM" gen --workload "$tmp/qw.yaml" --summary >/dev/null 2>"$tmp/qw.err"; rc=$?
  check "workload tp: $v is exit 2 at its position" '[ $rc -eq 2 ] && grep -Eq "qw.yaml:3:16: (.tp. expects a whole number|expected a plain value for .parallel.tp., found a value with the tag .!n.)" "$tmp/qw.err"'
done

# --- a mark that ends an iteration while another stream of rank 0 still runs: said in the notes
printf 'dtsim_trace 1\nranks 1\nrank 0\ns0 compute dur=1ms\ns0 mark\ns1 compute dur=3ms\ns0 compute dur=1ms\ns0 mark\n' >"$tmp/straddle.dtt"
"$DTSIM" run --json tests/data/node8.yaml "$tmp/straddle.dtt" >"$tmp/straddle.json" 2>"$tmp/straddle.err"; rc=$?
check "a 3 ms op across marks at 1 and 2 ms: iterations 1 ms, 1 ms and a note naming s1 op 0 and the 1 ms mark" \
  '[ $rc -eq 0 ] && [ "$(jq -c .iterations_s "$tmp/straddle.json")" = "[0.001,0.001]" ] && grep -q "note: iterations: 1 op of rank 0 still ran on other streams when one of its marks ended an iteration (first: s1 op 0, across the mark at 1 ms)" "$tmp/straddle.err"'
printf 'dtsim_trace 1\nranks 1\nrank 0\ns0 compute dur=1ms\ns1 compute dur=3ms\ns0 mark after=s1:0\n' >"$tmp/nostraddle.dtt"
"$DTSIM" run --json tests/data/node8.yaml "$tmp/nostraddle.dtt" >/dev/null 2>"$tmp/nostraddle.err"
check "a mark after every stream's work: no such note" '! grep -q "still ran on other streams" "$tmp/nostraddle.err"'

# --- options that name nothing or depend on another
"$DTSIM" run --timeline '' tests/data/node8.yaml "$tmp/two.dtt" >/dev/null 2>"$tmp/tl.err"; rc=$?
check "--timeline '': exit 2 saying a file name is expected" '[ $rc -eq 2 ] && grep -q "timeline expects a file name, found" "$tmp/tl.err"'
"$DTSIM" run --timeline "$tmp/nodir/t.json" tests/data/node8.yaml "$tmp/two.dtt" >/dev/null 2>"$tmp/tl2.err"; rc=$?
check "--timeline in a missing folder: exit 2 with the file and the cause" '[ $rc -eq 2 ] && grep -q "nodir/t.json: the folder .*nodir. does not exist" "$tmp/tl2.err"'
"$DTSIM" run --timeline-ranks 0 tests/data/node8.yaml "$tmp/two.dtt" >/dev/null 2>"$tmp/tl3.err"; rc=$?
check "--timeline-ranks without --timeline: exit 2 (was ignored)" '[ $rc -eq 2 ] && grep -q "give --timeline FILE too" "$tmp/tl3.err"'
"$DTSIM" run --timeline "$tmp/tl4.json" --timeline-ranks 0,+1 tests/data/node8.yaml "$tmp/two.dtt" >/dev/null 2>"$tmp/tl4.err"; rc=$?
check "--timeline-ranks 0,+1: exit 2 (a rank is digits alone)" '[ $rc -eq 2 ] && grep -q "timeline-ranks expects ranks and ranges separated by commas, like 0-7,16, found .0,+1." "$tmp/tl4.err"'
"$DTSIM" gen nosuchmodel >/dev/null 2>"$tmp/gen.err"; rc=$?
check "gen nosuchmodel names the unknown preset first (not -o)" '[ $rc -eq 2 ] && grep -q "unknown preset .nosuchmodel." "$tmp/gen.err" && ! grep -q "expected -o" "$tmp/gen.err"'

# --- a single-valued flag given twice: exit 2 naming it and both values (docs/cli.md, "Options given twice")
"$DTSIM" run --json --top 1 --top 2 tests/data/node8.yaml "$tmp/two.dtt" >"$tmp/top2.json" 2>"$tmp/top2.err"; rc=$?
check "--top 1 --top 2: exit 2 naming --top and both values, nothing run" '[ $rc -eq 2 ] && [ ! -s "$tmp/top2.json" ] && grep -q "run: --top given twice (.1. and .2.)" "$tmp/top2.err"'

# --- a device that is full: the system's reason, not a generic one
"$DTSIM" gen neox-125m --tp 2 --pp 2 --dp 2 -o /dev/full >/dev/null 2>"$tmp/full.err"; rc=$?
check "gen -o /dev/full: exit 2 'No space left on device' (was 'Input/output error')" \
  '[ $rc -eq 2 ] && grep -q "/dev/full: cannot write: No space left on device" "$tmp/full.err"'

# --- configuration inputs read from a device or a pipe are read up to DT_CONFIG_FILE_MAX (64 MiB), then refused
# naming the file (was: /dev/zero as a platform grew to 2 GiB and more, the out-of-memory message naming the
# platform even when the workload or the nccl-tests output was being read)
for c in "run /dev/zero $tmp/two.dtt:platform file" "platform check /dev/zero:platform file" "sweep plan /dev/zero:sweep spec" \
  "calibrate platforms/dgx-h100.yaml /dev/zero -o $tmp/cal.yaml:nccl-tests output" \
  "run tests/data/node8.yaml --workload /dev/zero:workload file"; do
  what=${c##*:}
  "$DTSIM" ${c%:*} >/dev/null 2>"$tmp/zero.err"; rc=$? # no ulimit -v: ASan reserves terabytes of address space
  check "${c%:*}: exit 2, '/dev/zero: holds more than 64 MiB, the most a $what may'" \
    '[ $rc -eq 2 ] && grep -q "/dev/zero: holds more than 64 MiB, the most an\? $what may" "$tmp/zero.err"'
done
"$DTSIM" platform check /dev/stdin <tests/data/node8.yaml >/dev/null 2>"$tmp/stdin.err"; rc=$?
check "a platform read from a pipe below the limit still loads" '[ $rc -eq 0 ]'

finish
