#!/usr/bin/env bash
# End-to-end tests of the capture importers (dtsim import / run on hand-made captures under tests/data/,
# each file saying where its format comes from). Expected values are hand counts and closed forms of those
# small inputs, never the output of an earlier run.
# usage: tests/e2e_import.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: e2e_import.sh DTSIM}
source "$(dirname "$0")/e2e-lib.sh"

# --- the importer table and --explain
"$DTSIM" import --explain >"$tmp/all.txt" 2>&1; rc=$?
check "import --explain without files lists every importer" '[ $rc -eq 0 ] && grep -q "^native:" "$tmp/all.txt" && grep -q "^kineto:" "$tmp/all.txt"'
"$DTSIM" import --explain tests/data/allreduce8.dtt >"$tmp/ex.txt" 2>&1; rc=$?
check "import --explain FILE names the sniffed format" '[ $rc -eq 0 ] && grep -q "^format: native, .*sniffed from the content" "$tmp/ex.txt"'
check "import --explain FILE gives the trace size" 'grep -q "^trace: 8 ranks" "$tmp/ex.txt"'
"$DTSIM" import --format nosuch tests/data/allreduce8.dtt -o "$tmp/x.dtt" >/dev/null 2>"$tmp/bf.err"; rc=$?
check "an unknown --format lists the formats" '[ $rc -eq 2 ] && grep -q "kineto" "$tmp/bf.err"'
"$DTSIM" import --world 8 tests/data/allreduce8.dtt -o "$tmp/w.dtt" >/dev/null 2>"$tmp/w.err"; rc=$?
check "an option the format does not read is exit 2 naming the formats that read it (was a note)" \
  '[ $rc -eq 2 ] && grep -qF "allreduce8.dtt: --world does not apply to format '"'native'"': only deepspeed reads it (leave it out)" "$tmp/w.err" && [ ! -e "$tmp/w.dtt" ]'
"$DTSIM" run --expand 32 tests/data/node8.yaml tests/data/allreduce8.dtt >"$tmp/ex32.out" 2>"$tmp/ex32.err"; rc=$?
check "run --expand 32 on a native trace: exit 2, nothing run (was a note in the report of an 8-rank run)" \
  '[ $rc -eq 2 ] && grep -qF "allreduce8.dtt: --expand does not apply to format '"'native'"': only kineto reads it" "$tmp/ex32.err" && [ ! -s "$tmp/ex32.out" ]'
"$DTSIM" import tests/data/allreduce8.dtt tests/data/node8.yaml -o "$tmp/x.dtt" >/dev/null 2>"$tmp/mx.err"; rc=$?
check "files of different formats are refused" '[ $rc -eq 2 ] && grep -q "node8.yaml" "$tmp/mx.err"'

# --- NCCL INFO log (tests/data/nccl/*.log, hand-made in NCCL's line layouts; platform node8: a = 2us, B = 100 GB/s)
D=tests/data/nccl
"$DTSIM" import --explain $D/sub8.log >"$tmp/n8.txt" 2>&1; rc=$?
check "nccl-log: interleaved stdout with launcher prefixes is sniffed" '[ $rc -eq 0 ] && grep -q "^format: nccl-log" "$tmp/n8.txt"'
check "nccl-log: split communicator = ranks 4-7 (parent + color)" 'grep -q "group .comm1. = communicator commId 0x5c6b7e9a1f2d3c4b/color 1, ranks 4,5,6,7" "$tmp/n8.txt"'
check "nccl-log: the report says there is no compute" 'grep -q "no durations: no compute between calls" "$tmp/n8.txt"'
"$DTSIM" run --json tests/data/node8.yaml $D/sub8.log >"$tmp/n8.json" 2>/dev/null; rc=$?
# ranks 4-7: ring all-reduce n=4 of 4 MiB, then all eight: ring all-gather n=8 of a 1 MiB shard, in that order
want=$(awk 'BEGIN { a = 2e-6; B = 100e9; ar = 2*3*a + 2*3/4*4194304/B; ag = 7*a + 7*1048576/B; printf "%.12g", ar + ag }')
check "nccl-log: sub-communicator all-reduce then world all-gather run to completion" '[ $rc -eq 0 ] && close "$(jq -r .makespan_s "$tmp/n8.json")" "$want" 1e-6'
check "nccl-log: all-gather bytes = count x 4 (per-rank shard)" '[ "$(jq -r .by_kind.allgather.bytes "$tmp/n8.json")" = 1048576 ]'
check "nccl-log: ranks 0-3 wait for the all-reduce of 4-7" 'close "$(jq -r ".per_rank[0].wait_s" "$tmp/n8.json")" "$(jq -r .by_kind.allreduce.time_s "$tmp/n8.json")" 1e-6'
"$DTSIM" run --json --compute-gap 10us tests/data/node8.yaml $D/sub8.log >"$tmp/n8g.json" 2>/dev/null
want2=$(awk -v w="$want" 'BEGIN { printf "%.12g", w + 2*10e-6 }')
check "nccl-log: --compute-gap puts compute before each call" 'close "$(jq -r .makespan_s "$tmp/n8g.json")" "$want2" 1e-6'
for lay in new old; do
  "$DTSIM" import $D/p2p-$lay.0.log $D/p2p-$lay.1.log -o "$tmp/p2p-$lay.dtt" 2>/dev/null; rc=$?
  check "nccl-log: Send in the $lay buffer layout is a send to the peer in root" '[ $rc -eq 0 ] && grep -q "^s0 send peer=1 bytes=1048576" "$tmp/p2p-$lay.dtt" && grep -q "^s0 recv peer=0 bytes=1048576" "$tmp/p2p-$lay.dtt"'
done
"$DTSIM" import $D/p2p-mismatch.0.log $D/p2p-mismatch.1.log -o "$tmp/mm.dtt" >/dev/null 2>"$tmp/mm.err"; rc=$?
check "nccl-log: send 1 MiB vs recv 512 KiB is an import error naming both calls" '[ $rc -eq 2 ] && grep -q "p2p-mismatch.0.log:4" "$tmp/mm.err" && grep -q "p2p-mismatch.1.log:4" "$tmp/mm.err" && grep -q "1048576" "$tmp/mm.err" && grep -q "524288" "$tmp/mm.err"'
"$DTSIM" run --json tests/data/node8.yaml $D/alltoall4.log >"$tmp/a2a.json" 2>/dev/null; rc=$?
# one group launch per rank: 3 sends of 256 KiB share the GPU's 100 GB/s: a + 3 S/B (the self copy is no traffic)
want=$(awk 'BEGIN { printf "%.12g", 2e-6 + 3*262144/100e9 }')
check "nccl-log: grouped Send/Recv (all-to-all) are one batch and complete" '[ $rc -eq 0 ] && close "$(jq -r .makespan_s "$tmp/a2a.json")" "$want" 1e-6'
check "nccl-log: self copies are left out, with a note" 'jq -r ".notes[]" "$tmp/a2a.json" | grep -q "8 sends/recvs to the process itself"'
check "nccl-log: a log without commId groups by creation order, with a note" 'jq -r ".notes[]" "$tmp/a2a.json" | grep -q "without commId"'
"$DTSIM" run --json tests/data/node8.yaml $D/onepid4.log >"$tmp/op4.json" 2>/dev/null; rc=$?
want=$(awk 'BEGIN { printf "%.12g", 2*3*2e-6 + 2*3/4*134217728/100e9 }')
check "nccl-log: one process driving 4 GPUs is 4 ranks (host, pid, device; comm pointer when the device differs)" '[ $rc -eq 0 ] && close "$(jq -r .makespan_s "$tmp/op4.json")" "$want" 1e-6'
"$DTSIM" import $D/p2p-new.0.log -o "$tmp/one.dtt" >/dev/null 2>"$tmp/one.err"; rc=$?
check "nccl-log: a missing rank is an error naming it" '[ $rc -eq 2 ] && grep -q "ranks 1 have no lines" "$tmp/one.err"'

# --- DeepSpeed comms logger (tests/data/deepspeed/*.log, hand-made in comms_logging.py's layouts)
D=tests/data/deepspeed
"$DTSIM" run --json --world 8 --group-size reducescatter=4 tests/data/node8.yaml $D/verbose.log >"$tmp/ds.json" 2>/dev/null; rc=$?
# all-reduce of 64.0 MB on 8, all-gather of a 2.0 MB shard on 8, reduce-scatter of a 16.0 MB input on groups of 4
want=$(awk 'BEGIN { a = 2e-6; B = 100e9; M = 1048576;
  printf "%.12g", 2*7*a + 2*7/8*64*M/B + 7*a + 7*2*M/B + 3*a + 3/4*16*M/B }')
check "deepspeed: every prefix and layout read, groups from --world/--group-size, makespan = closed form" '[ $rc -eq 0 ] && close "$(jq -r .makespan_s "$tmp/ds.json")" "$want" 1e-6'
check "deepspeed: reduce-scatter runs on 2 tiles of 4 ranks" '[ "$(jq -r .by_kind.reducescatter.count "$tmp/ds.json")" = 2 ]'
check "deepspeed: measured time beside the simulated one" '[ "$(jq -r .by_kind.allreduce.measured_mean_s "$tmp/ds.json")" = 0.0019 ] && jq -e ".by_kind.allreduce.simulated_mean_s > 0" "$tmp/ds.json" >/dev/null'
check "deepspeed: the world size is stated in the notes" 'jq -r ".notes[]" "$tmp/ds.json" | grep -q "world of 8 ranks from --world"'
"$DTSIM" import --world 4 $D/mixed.log -o "$tmp/mixed.dtt" 2>"$tmp/mixed.err"; rc=$?
check "deepspeed: 1.12 KB is 1147 bytes (binary units, rounded)" '[ $rc -eq 0 ] && grep -q "broadcast group=world bytes=1147" "$tmp/mixed.dtt"'
check "deepspeed: 0B barrier" 'grep -q "barrier group=world name=barrier" "$tmp/mixed.dtt"'
check "deepspeed: an unknown op is kept as other with a warning naming it" 'grep -q "other group=world bytes=524288 name=all_reduce_sparse" "$tmp/mixed.dtt" && grep -q "warning.*all_reduce_sparse" "$tmp/mixed.err"'
"$DTSIM" import --world 8 $D/summary.log -o "$tmp/sum.dtt" 2>/dev/null; rc=$?
check "deepspeed: the summary table gives count calls per row" '[ $rc -eq 0 ] && [ "$(grep -c "^s0 allreduce" "$tmp/sum.dtt")" = 40 ] && [ "$(grep -c "^s0 allgather" "$tmp/sum.dtt")" = 32 ]'
"$DTSIM" import $D/verbose.log -o "$tmp/x.dtt" >/dev/null 2>"$tmp/nw.err"; rc=$?
check "deepspeed: without --world it is an error saying so" '[ $rc -eq 2 ] && grep -q -- "--world N" "$tmp/nw.err"'
# a negative time: exit 2 with the line and the value found
sed '0,/time (ms): [0-9.]*/s//time (ms): -3/' $D/verbose.log >"$tmp/neg.log"
"$DTSIM" import --world 8 "$tmp/neg.log" -o "$tmp/x.dtt" >/dev/null 2>"$tmp/neg.err"; rc=$?
check "deepspeed: a negative time is exit 2 naming the line and the value" '[ $rc -eq 2 ] && grep -q "neg.log:[0-9]*: .time (ms):. of all_reduce: expected a non-negative number of milliseconds, found .-3." "$tmp/neg.err"'
# a size past what one op may move: exit 2 naming the size and the 2^53-byte limit (verbose: was "expected a size
# such as '6.0 MB'" with no maximum; summary: the row ended the table and its calls were dropped, exit 0)
sed '0,/msg size: [0-9.]* [KMG]*B/s//msg size: 99999999999 GB/' $D/verbose.log >"$tmp/big.log"
"$DTSIM" import --world 8 "$tmp/big.log" -o "$tmp/x.dtt" >/dev/null 2>"$tmp/big.err"; rc=$?
check "deepspeed: msg size 99999999999 GB is exit 2 naming the 2^53-byte limit" \
  '[ $rc -eq 2 ] && grep -q "big.log:[0-9]*: .msg size:. of all_reduce .99999999999 GB. is more than the 9007199254740992 bytes (2^53) one op may move" "$tmp/big.err"'
sed 's/^\( *\)64.0 MB  /\199999999 TB/' $D/summary.log >"$tmp/bigsum.log"
"$DTSIM" import --world 8 "$tmp/bigsum.log" -o "$tmp/x.dtt" >/dev/null 2>"$tmp/bigsum.err"; rc=$?
check "deepspeed: a summary row of 99999999 TB is exit 2 at its line (was dropped with the rest of the table)" \
  '[ $rc -eq 2 ] && grep -q "bigsum.log:7: the message size of a summary row of all_reduce .99999999 TB.* is more than the 9007199254740992 bytes (2^53)" "$tmp/bigsum.err"'
# a misspelt --group-size kind would leave its ops on the whole world: an error naming it, not a silent default
"$DTSIM" import --world 8 --group-size allgahter=4 $D/verbose.log -o "$tmp/x.dtt" >/dev/null 2>"$tmp/gs.err"; rc=$?
check "deepspeed: an unknown --group-size kind is exit 2 naming it" '[ $rc -eq 2 ] && grep -q -- "--group-size allgahter=4: .allgahter. is no op this importer knows" "$tmp/gs.err"'
"$DTSIM" import --world 8 --group-size all_reduce_sparse=2 $D/mixed.log -o "$tmp/x.dtt" >/dev/null 2>"$tmp/gs.err"; rc=$?
check "deepspeed: --group-size by the name of an op dtsim does not know but the log has" '[ $rc -eq 0 ] && grep -q "other group=g2_0 bytes=524288 name=all_reduce_sparse" "$tmp/x.dtt"'
"$DTSIM" import --world 8 --group-size p2p=2 $D/verbose.log -o "$tmp/x.dtt" >/dev/null 2>"$tmp/gs.err"; rc=$?
check "deepspeed: a --group-size that matches no call is a warning" '[ $rc -eq 0 ] && grep -q "warning: --group-size p2p=2 matched no call" "$tmp/gs.err"'

# --- Chakra execution traces (tests/data/chakra/, written by tests/data/chakra/make_et.py in the public schema)
D=tests/data/chakra
"$DTSIM" run --json tests/data/node8.yaml $D/sub8.* >"$tmp/c8.json" 2>/dev/null; rc=$?
want=$(awk 'BEGIN { a = 2e-6; B = 100e9; ar = 2*3*a + 2*3/4*4194304/B; ag = 7*a + 7*1048576/B; printf "%.12g", ar + ag }')
check "chakra: ranks 4-7 all-reduce on their pg, then all eight all-gather, in order (plain and gzipped files)" '[ $rc -eq 0 ] && close "$(jq -r .makespan_s "$tmp/c8.json")" "$want" 1e-6'
# the same run described by NCCL's per-rank all-gather count and by Chakra's total comm_size
check "all-gather by total size (chakra) and per-rank size (nccl-log): the same bytes and time" '[ "$(jq -r .by_kind.allgather.bytes "$tmp/c8.json")" = "$(jq -r .by_kind.allgather.bytes "$tmp/n8.json")" ] && close "$(jq -r .by_kind.allgather.time_s "$tmp/c8.json")" "$(jq -r .by_kind.allgather.time_s "$tmp/n8.json")" 1e-9'
"$DTSIM" run --json tests/data/node8.yaml $D/u64.0.et $D/u64.1.et >"$tmp/u64.json" 2>/dev/null; rc=$?
want=$(awk 'BEGIN { printf "%.12g", 20e-6 + 100e-6 + 2*1*2e-6 + 2*1/2*67108864/100e9 }')
check "chakra: comm_size as an unsigned 64-bit field is communication (64 MiB all-reduce)" '[ $rc -eq 0 ] && [ "$(jq -r .by_kind.allreduce.bytes "$tmp/u64.json")" = 67108864 ]'
cp $D/sub8.0.et "$tmp/q.0.et"; cp $D/sub8.1.et "$tmp/q.5.et"
"$DTSIM" import "$tmp/q.0.et" "$tmp/q.5.et" -o "$tmp/q.dtt" >/dev/null 2>"$tmp/err"; rc=$?
check "chakra: files for ranks 0 and 5 only: exit 2 naming the ranks expected" '[ $rc -eq 2 ] && grep -q "every rank from 0 to 5" "$tmp/err"'
"$DTSIM" import $D/sub8.0.et $D/sub8.0.et -o "$tmp/q.dtt" >/dev/null 2>"$tmp/err"; rc=$?
check "chakra: the same file twice: exit 2, not a signal" '[ $rc -eq 2 ] && grep -q "is the same file as" "$tmp/err"'
ln -s "$PWD/tests/data/nccl/sub8.log" "$tmp/again.log" 2>/dev/null
"$DTSIM" run tests/data/node8.yaml tests/data/nccl/sub8.log "$tmp/again.log" >/dev/null 2>"$tmp/err"; rc=$?
check "a log given twice by two names is exit 2, not its calls counted twice" '[ $rc -eq 2 ] && grep -q "is the same file as" "$tmp/err"'
check "chakra: host op, kernel, then the all-reduce that depends on it" 'close "$(jq -r .makespan_s "$tmp/u64.json")" "$want" 1e-6'
"$DTSIM" import $D/cycle.0.et -o "$tmp/cy.dtt" >/dev/null 2>"$tmp/cy.err"; rc=$?
check "chakra: a dependency cycle is an error naming its nodes" '[ $rc -eq 2 ] && grep -q "cycle through nodes 5 <- 7 <- 6 <- 5" "$tmp/cy.err"'
"$DTSIM" import $D/missing.0.et -o "$tmp/mi.dtt" >/dev/null 2>"$tmp/mi.err"; rc=$?
check "chakra: a missing parent is a warning naming it" '[ $rc -eq 0 ] && grep -q "warning: 1 dependencies on nodes that are not in the file were dropped (rank 0 node 2 -> 99)" "$tmp/mi.err"'
check "chakra: an unknown schema version is parsed with a warning naming it" 'grep -q "schema version .0.0.5. is not the 0.0.4" "$tmp/mi.err"'

# --- NCCL Inspector (tests/data/inspector/*/, written by tests/data/inspector/make_logs.py in the plugin's layout)
D=tests/data/inspector
"$DTSIM" run --json tests/data/node8.yaml $D/world4/*.log >"$tmp/in4.json" 2>/dev/null; rc=$?
want=$(awk 'BEGIN { a = 2e-6; B = 100e9; printf "%.12g", 2*3*a + 2*3/4*67108864/B + 3*a + 3*1048576/B }')
check "nccl-inspector: all-reduce then all-gather (per-rank shard) on 4 ranks = closed form" '[ $rc -eq 0 ] && close "$(jq -r .makespan_s "$tmp/in4.json")" "$want" 1e-6'
check "nccl-inspector: a collective missing from one member's log is left out, with a warning" '[ "$(jq -r .by_kind.allreduce.count "$tmp/in4.json")" = 1 ] && jq -r ".notes[]" "$tmp/in4.json" | grep -q "warning: 3 collective records left out"'
# measured mean of the all-reduce: (1100 + 1107 + 1114 + 1121) us / 4
check "nccl-inspector: measured mean beside the simulated one" 'close "$(jq -r .by_kind.allreduce.measured_mean_s "$tmp/in4.json")" 0.0011105 1e-9 && close "$(jq -r .by_kind.allreduce.simulated_mean_s "$tmp/in4.json")" "$(jq -r .by_kind.allreduce.time_s "$tmp/in4.json")" 1e-12'
"$DTSIM" import --explain $D/world4/*.log >"$tmp/in4.txt" 2>&1
check "nccl-inspector: import --explain shows the measured times" 'grep -q "^format: nccl-inspector" "$tmp/in4.txt" && grep -q "measured allreduce: 4 records, mean 1110.5 us" "$tmp/in4.txt"'
"$DTSIM" import $D/tp/*.log -o "$tmp/tp.dtt" 2>/dev/null; rc=$?
check "nccl-inspector: reduce-scatter bytes = per-rank size x ranks, on two 2-rank communicators" '[ $rc -eq 0 ] && [ "$(grep -c "reducescatter group=comm[13] bytes=4194304" "$tmp/tp.dtt")" = 4 ]'
check "nccl-inspector: p2p peer mapped from the communicator rank" 'grep -q "send peer=1 bytes=1048576" "$tmp/tp.dtt" && grep -q "recv peer=0 bytes=1048576" "$tmp/tp.dtt"'
"$DTSIM" import $D/world4/node1-pid7100.log $D/world4/node1-pid7101.log -o "$tmp/x.dtt" >/dev/null 2>"$tmp/inm.err"; rc=$?
check "nccl-inspector: a missing process is an error naming the rank" '[ $rc -eq 2 ] && grep -q "rank 2 has no records" "$tmp/inm.err"'
# a key dtsim reads, twice in one object: exit 2 with both offsets (the second overwrote the first); numbers past
# their range named with it (coll_sn past 2^63 was clamped to 2^63-1, coll_msg_size_bytes 2^64-1 written as
# bytes=18446744073709551615, which the native reader refuses). Offsets by hand: '{"coll_perf":{' is 14 bytes, each
# '"coll_sn"' 9, ':1,' 3.
printf '{"coll_perf":{"coll_sn":1,"coll_sn":2}}\n' >"$tmp/dupk.log"
"$DTSIM" import --format nccl-inspector "$tmp/dupk.log" -o "$tmp/x.dtt" >/dev/null 2>"$tmp/e"; rc=$?
check "nccl-inspector: coll_sn twice in a record: exit 2, ending at bytes 23 and 35" \
  '[ $rc -eq 2 ] && grep -qF "key '"'coll_sn'"' given twice in '"'coll_perf'"': first ending at byte 23, again ending at byte 35" "$tmp/e"'
for c in "coll_sn:99999999999999999999:from 0 to 9223372036854775807" \
         "coll_msg_size_bytes:18446744073709551615:from 0 to 9007199254740992 (2^53"; do
  IFS=: read -r key val range <<<"$c"
  printf '{"header":{"id":"a","rank":0,"n_ranks":1},"metadata":{"hostname":"h","pid":1},"coll_perf":{"coll":"AllReduce","coll_sn":1,"coll_msg_size_bytes":8,"coll_exec_time_us":1}}\n' |
    sed "s/\"$key\":[0-9]*/\"$key\":$val/" >"$tmp/big.log"
  "$DTSIM" import --format nccl-inspector "$tmp/big.log" -o "$tmp/x.dtt" >/dev/null 2>"$tmp/e"; rc=$?
  check "nccl-inspector: $key $val: exit 2 naming the range" \
    '[ $rc -eq 2 ] && grep -qF "$key is '"'$val'"': expected" "$tmp/e" && grep -qF "$range" "$tmp/e"'
done
# a directory of Inspector logs (not of .dtt files): exit 2 saying to give the files
"$DTSIM" import --explain $D/world4 >/dev/null 2>"$tmp/dir.err"; rc=$?
check "a directory without .dtt files is exit 2 suggesting DIR/*.log" '[ $rc -eq 2 ] && grep -q "world4: is a directory without .\.dtt. files: .*world4/\*\.log" "$tmp/dir.err"'
# a log cut after 300 bytes: the error names the end of the input (byte 300, not 301) on one line
for f in $D/world4/*.log; do head -c 300 "$f" >"$tmp/cut-$(basename "$f")"; done
"$DTSIM" import "$tmp"/cut-*.log -o "$tmp/x.dtt" >/dev/null 2>"$tmp/cut.err"; rc=$?
check "nccl-inspector: a truncated log is exit 2 with the byte offset of its end" '[ $rc -eq 2 ] && grep -q "cut-node1-pid7100.log: truncated JSON at byte 300: " "$tmp/cut.err" && [ "$(wc -l <"$tmp/cut.err")" = 1 ]'

# --- an imported trace written in the native format replays the same as the capture itself
for c in "chakra:tests/data/chakra/u64.0.et tests/data/chakra/u64.1.et" "deepspeed:--world 8 --group-size reducescatter=4 tests/data/deepspeed/verbose.log" \
         "nccl-log:tests/data/nccl/sub8.log" "nccl-inspector:$(ls tests/data/inspector/tp/*.log | tr '\n' ' ')"; do
  name=${c%%:*}; args=${c#*:}
  "$DTSIM" import $args -o "$tmp/rt-$name.dtt" 2>/dev/null
  a=$("$DTSIM" run --json tests/data/node8.yaml $args 2>/dev/null | jq -r .makespan_s)
  b=$("$DTSIM" run --json tests/data/node8.yaml "$tmp/rt-$name.dtt" 2>/dev/null | jq -r .makespan_s)
  check "$name: import -o then run = run on the capture ($a s)" '[ -n "$a" ] && [ "$a" != null ] && close "$b" "$a" 1e-9'
done

# --- a capture forced through the native reader: "not a native trace", its text is JSON, at the byte offset of
# its '{' in the decompressed text (was "x.json.gz:2: expected the header ...", a line of a gzip file); the sample's
# text starts with a newline, so the '{' is byte 1 (counted with zcat | head -c 2)
S=traces/samples/allreduce_bcast_2ranks_rank0.json.gz
at=$(zcat "$S" | head -c 2 | od -An -c | tr -s ' ' | sed 's/^ //')
"$DTSIM" import --format native "$S" -o "$tmp/nat.dtt" 2>"$tmp/nat.err"; rc=$?
check "import --format native x.json.gz: exit 2, not a native trace, JSON at byte 1 (the sample starts '$at')" \
  '[ $rc -eq 2 ] && [ "$at" = "\n {" ] && grep -qF "allreduce_bcast_2ranks_rank0.json.gz: not a native trace: its gzip-decompressed text is JSON ('"'{'"' at byte 1)" "$tmp/nat.err" && ! grep -q "json.gz:[0-9]" "$tmp/nat.err"'

finish
