#!/usr/bin/env bash
# End-to-end tests of the readers' policies (docs/platform.md "Units", docs/replay.md "Setup", docs/sweep.md):
# numbers past a double's range, SimGrid settings spelled only as SimGrid reads them, NCCL versions in dtsim's
# model, and sweep values equal after unit conversion. Each case was accepted, or refused with the wrong reason,
# before; the expected messages name the file, the position and the limit.
# usage: tests/e2e_readers.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: e2e_readers.sh DTSIM}
source "$(dirname "$0")/e2e-lib.sh"

# --- run --cfg: integers in decimal digits alone (SimGrid reads 0100 as octal 64, 0x40 as hex, and refuses 1e3 and
# 128.0 as "invalid integer" after dtsim had passed them), doubles as plain decimals
for v in 1e3 128.0 0x40 0100 +128 ' 128' 64k; do
  "$DTSIM" run --cfg "contexts/stack-size:$v" tests/data/node8.yaml tests/data/allreduce8.dtt >/dev/null 2>"$tmp/cfg.err"
  rc=$?
  check "--cfg contexts/stack-size:'$v': exit 2 naming the setting, the value and the range" \
    '[ $rc -eq 2 ] && grep -qF -- "--cfg contexts/stack-size: expected a whole number of KiB from 64 to 1048576" "$tmp/cfg.err" &&
     grep -qF -- "found '"'$v'"'" "$tmp/cfg.err" && ! grep -q "SimGrid rejected" "$tmp/cfg.err"'
done
for v in 00 01 0x0; do
  "$DTSIM" run --cfg "contexts/guard-size:$v" tests/data/node8.yaml tests/data/allreduce8.dtt >/dev/null 2>"$tmp/cfg.err"
  rc=$?
  check "--cfg contexts/guard-size:$v: exit 2 with the range" \
    '[ $rc -eq 2 ] && grep -qF -- "--cfg contexts/guard-size: expected a whole number of pages from 0 to 64" "$tmp/cfg.err"'
done
for v in 0x1p-20 inf nan 1e-400 +1e-6 ' 1e-6' 1e-6x 1e; do
  "$DTSIM" run --cfg "maxmin/precision:$v" tests/data/node8.yaml tests/data/allreduce8.dtt >/dev/null 2>"$tmp/cfg.err"
  rc=$?
  check "--cfg maxmin/precision:'$v': exit 2 with the range" \
    '[ $rc -eq 2 ] && grep -qF -- "--cfg maxmin/precision: expected a plain decimal number from 1e-15 to 0.01" "$tmp/cfg.err"'
done
for c in contexts/stack-size:128 contexts/stack-size:64 contexts/guard-size:0 maxmin/precision:.5e-5 \
  surf/precision:1e-9 maxmin/precision:0.01; do
  "$DTSIM" run --cfg "$c" tests/data/node8.yaml tests/data/allreduce8.dtt >/dev/null 2>"$tmp/cfg.err"; rc=$?
  # (stderr may hold the sanitizers' notes under ASan: only dtsim's own messages count)
  check "--cfg $c is accepted and SimGrid takes it (exit 0)" '[ $rc -eq 0 ] && ! grep -q "^dtsim" "$tmp/cfg.err"'
done

# --- numbers past a double's range: out of range with the maximum, at the value (was "expected a unit")
# plat BW LAT: a 2-node platform whose NIC bandwidth (line 9) and latency (line 10) are BW and LAT
plat() {
  printf 'dtsim_platform: 1\nname: r\ngpu: {model: G, peak: 100TFLOPS}\nnodes: 2\ngpus_per_node: 2\n' >"$tmp/p.yaml"
  printf 'intra_node: {kind: nvswitch, bandwidth: 100GB/s, latency: 2us}\nnics:\n  per_node: 2\n' >>"$tmp/p.yaml"
  printf '  bandwidth: %s\n  latency: %s\nnetwork: {topology: single-switch, link_bandwidth: 100Gb/s, link_latency: 1us}\n' \
    "$1" "$2" >>"$tmp/p.yaml"
}
plat 100Gb/s 1us
"$DTSIM" platform check "$tmp/p.yaml" >/dev/null 2>"$tmp/e"; rc=$?
check "the test platform is valid (exit 0)" '[ $rc -eq 0 ]'
plat 1e400GB/s 1us
"$DTSIM" platform check "$tmp/p.yaml" >/dev/null 2>"$tmp/e"; rc=$?
check "bandwidth 1e400GB/s: exit 2 at 9:14, out of range with the maximum (was 'expected a bandwidth with a unit')" \
  '[ $rc -eq 2 ] && grep -q "p.yaml:9:14: bad value for .nics.bandwidth.: bandwidth .1e400GB/s. is out of range: above the 1e+18 B/s dtsim accepts" "$tmp/e"'
plat 100Gb/s 1e400ns
"$DTSIM" platform check "$tmp/p.yaml" >/dev/null 2>"$tmp/e"; rc=$?
check "latency 1e400ns: exit 2 at 10:12, out of range with the maximum" \
  '[ $rc -eq 2 ] && grep -q "p.yaml:10:12: .*time .1e400ns. is out of range: above the 1e+06 s" "$tmp/e"'
printf 'dtsim_trace 1\nranks 1\nrank 0\ns0 compute dur=1e400s\n' >"$tmp/dur.dtt"
"$DTSIM" run tests/data/node8.yaml "$tmp/dur.dtt" >/dev/null 2>"$tmp/e"; rc=$?
check "trace dur=1e400s: exit 2 at its line, out of range" '[ $rc -eq 2 ] && grep -q "dur.dtt:4.*out of range: above the 1e+06 s" "$tmp/e"'
printf 'dtsim_trace 1\nranks 1\nrank 0\ns0 compute flop=1e400\n' >"$tmp/flop.dtt"
"$DTSIM" run tests/data/node8.yaml "$tmp/flop.dtt" >/dev/null 2>"$tmp/e"; rc=$?
check "trace flop=1e400: exit 2 at its line, out of range" '[ $rc -eq 2 ] && grep -q "flop.dtt:4.*out of range, above the 1e+30 FLOP" "$tmp/e"'

# --- native trace ids and numbers: the range, at line:column (was "expected a non-negative integer id", "expected an
# integer", "bad stream ... such as 's0'" without the maximum, "not a non-negative number" for a FLOP of 1e400, and
# splits= summing past 2^53 accepted)
# tline LINE: a 2-rank trace whose op line 5 is LINE; runs it and keeps stderr in $tmp/e, the status in $rc
tline() {
  printf 'dtsim_trace 1\nranks 2\ngroup w 0-1\nrank 0\n%s\n' "$1" >"$tmp/t.dtt"
  "$DTSIM" run tests/data/node8.yaml "$tmp/t.dtt" >/dev/null 2>"$tmp/e"; rc=$?
}
tline 's2147483648 compute dur=1s'
check "stream s2^31: exit 2 at 5:1 with the range" \
  '[ $rc -eq 2 ] && grep -qF "t.dtt:5:1: bad stream '"'s2147483648'"': expected '"'s<N>'"' with N a whole number from 0 to 2147483647" "$tmp/e"'
tline 's0 send peer=1 bytes=8 tag=99999999999999999999'
check "tag=10^20-1: exit 2 at 5:28 with the int64 range" \
  '[ $rc -eq 2 ] && grep -qF "t.dtt:5:28: bad tag= value '"'99999999999999999999'"': expected an integer from -9223372036854775808 to 9223372036854775807" "$tmp/e"'
tline 's0 compute dur=1s batch=99999999999999999999'
check "batch=10^20-1: exit 2 at 5:25 with the range" \
  '[ $rc -eq 2 ] && grep -qF "t.dtt:5:25: bad batch= value '"'99999999999999999999'"': expected an integer id from 0 to 9223372036854775807" "$tmp/e"'
tline 's0 compute dur=1s kernels=gemm:bf16:1:1:1:1:1e400:1'
check "kernels= FLOP 1e400: exit 2 at the number, out of range with the maximum (was 'not a non-negative number')" \
  '[ $rc -eq 2 ] && grep -qF "t.dtt:5:45: bad kernels= item 1: FLOP '"'1e400'"' is out of range: expected a number of FLOP from 0 to 1e+30" "$tmp/e"'
tline 's0 alltoall group=w splits=9007199254740992,9007199254740992'
check "splits=2^53,2^53: exit 2 at the second item, the sum past the 2^53 bytes of one op (was accepted)" \
  '[ $rc -eq 2 ] && grep -qF "t.dtt:5:45: splits= total is out of range: items 1 to 2 sum to more than the 9007199254740992 (2^53) bytes one op may move" "$tmp/e"'
tline 's0 compute dur=1e-400s'
check "dur=1e-400s: exit 2, a nonzero time below the smallest one (was accepted as 0)" \
  '[ $rc -eq 2 ] && grep -qF "t.dtt:5:16: bad dur= value: time '"'1e-400s'"' is out of range: a nonzero time is at least 1e-300 s" "$tmp/e"'
# leading zeros are decimal in every id, as in every whole number of dtsim's files: s01 is s1, batch=01 batch 1
printf 'dtsim_trace 1\nranks 2\nrank 00\ns01 send peer=01 bytes=08 tag=07 batch=01\ns1 recv peer=1 bytes=8 tag=7 batch=1\nrank 1\ns0 recv peer=0 bytes=8 tag=7 batch=2\ns0 send peer=0 bytes=8 tag=07 batch=2\n' >"$tmp/z.dtt"
"$DTSIM" run tests/data/node8.yaml "$tmp/z.dtt" >/dev/null 2>"$tmp/e"; rc=$?
check "leading zeros in rank, stream, peer, bytes, tag and batch read as decimal: the pairs match and the run completes (exit 0)" '[ $rc -eq 0 ]'

# --- platform: a nonzero quantity that would read as 0 (or a subnormal) is out of range in every unit, with the
# smallest accepted (was: latency 1e-400s accepted as 0 while bandwidth 1e-400GB/s was refused)
plat 100Gb/s 1e-400s
"$DTSIM" platform check "$tmp/p.yaml" >/dev/null 2>"$tmp/e"; rc=$?
check "latency 1e-400s: exit 2 at 10:12, nonzero below 1e-300 s" \
  '[ $rc -eq 2 ] && grep -qF "p.yaml:10:12: bad value for '"'nics.latency'"': time '"'1e-400s'"' is out of range: a nonzero time is at least 1e-300 s" "$tmp/e"'
plat 1e-400GB/s 1us
"$DTSIM" platform check "$tmp/p.yaml" >/dev/null 2>"$tmp/e"; rc=$?
check "bandwidth 1e-400GB/s: exit 2 at 9:14 with the platform's range" \
  '[ $rc -eq 2 ] && grep -qF "p.yaml:9:14: expected a bandwidth from 1 B/s to 1e+18 B/s for '"'nics.bandwidth'"', found '"'1e-400GB/s'"'" "$tmp/e"'
check "bandwidth 1e-400GB/s: one range in the message (was '(nonzero, but below 1e-300 B/s)' beside 'from 1 B/s')" \
  'grep -qF "found '"'1e-400GB/s'"' (below 1 B/s)" "$tmp/e" && ! grep -q "1e-300" "$tmp/e"'
plat 100Gb/s 0e-400s
"$DTSIM" platform check "$tmp/p.yaml" >/dev/null 2>"$tmp/e"; rc=$?
check "latency 0e-400s is zero (exit 0)" '[ $rc -eq 0 ]'

# --- JSON nesting: every JSON reader refuses objects and arrays nested past 64 levels at the bracket opening level
# 65 (Kineto said "no GPU events" at 10,000 levels; calibrate's -J reader segfaulted at 5 million, in yajl's tree
# parser; NCCL Inspector counted objects only). The offsets are counted by hand: level 2 opens at byte b, 65 at b+63.
deep() { printf '%s' "$1"; head -c "$2" /dev/zero | tr '\0' '['; head -c "$2" /dev/zero | tr '\0' ']'; printf '%s\n' "$3"; }
deep '{"traceEvents": ' 10000 '}' >"$tmp/deep.json"
"$DTSIM" import "$tmp/deep.json" -o /dev/null 2>"$tmp/e"; rc=$?
check "kineto: 10,000 levels: exit 2 at byte 16+63 with the limit" \
  '[ $rc -eq 2 ] && grep -qF "deep.json: JSON nested deeper than 64 levels at byte 79: dtsim reads objects and arrays nested at most 64 deep" "$tmp/e"'
deep '{"header": ' 10000 '}' >"$tmp/deep.log"
"$DTSIM" import --format nccl-inspector "$tmp/deep.log" -o /dev/null 2>"$tmp/e"; rc=$?
check "nccl-inspector: 10,000 nested arrays: exit 2 at byte 11+63 with the limit" \
  '[ $rc -eq 2 ] && grep -qF "deep.log: JSON nested deeper than 64 levels at byte 74:" "$tmp/e"'
deep '{"config": ' 3000000 '}' >"$tmp/deepj.json"
"$DTSIM" calibrate platforms/dgx-a100.yaml "$tmp/deepj.json" >/dev/null 2>"$tmp/e"; rc=$?
check "calibrate -J output nested 3 million deep: exit 2 at byte 11+63 (was SIGSEGV)" \
  '[ $rc -eq 2 ] && grep -qF "deepj.json: JSON nested deeper than 64 levels at byte 74:" "$tmp/e"'
# --- Kineto: a key dtsim reads, twice in one object, is refused at both (the second traceEvents won, unsaid)
printf '{"traceEvents": [], "traceEvents": []}' >"$tmp/dup.json"
"$DTSIM" import "$tmp/dup.json" -o /dev/null 2>"$tmp/e"; rc=$?
check "kineto: traceEvents twice: exit 2 naming both byte offsets" \
  '[ $rc -eq 2 ] && grep -qF "dup.json: key '"'traceEvents'"' given twice in the top-level object: first ending at byte 14, again ending at byte 33" "$tmp/e"'

# --- a native trace whose header says 16 ranks but holds 4 sections: the 12 others are idle (docs/trace-format.md);
# the report says so and leaves them out of the per-dimension means (their zeros made the mean a quarter of what
# each of the 4 ranks saw). Each of the 4 runs one all-reduce and nothing else, so each one's exposed time is the
# same and the mean equals the max.
{ printf 'dtsim_trace 1\nranks 16\ngroup world 0-3\n'
  for r in 0 1 2 3; do printf 'rank %d\ns0 allreduce group=world bytes=1048576\n' "$r"; done; } >"$tmp/r16.dtt"
"$DTSIM" run --json platforms/dgx-h100-4node.yaml "$tmp/r16.dtt" >"$tmp/r16.json" 2>/dev/null; rc=$?
"$DTSIM" run platforms/dgx-h100-4node.yaml "$tmp/r16.dtt" >"$tmp/r16.txt" 2>/dev/null
check "ranks 16 with 4 sections: idle_ranks 12, per-dimension mean over the 4 (= their max)" \
  '[ $rc -eq 0 ] && [ "$(jq .idle_ranks "$tmp/r16.json")" = 12 ] && [ "$(jq .per_rank\|length "$tmp/r16.json")" = 16 ] &&
   close "$(jq .exposed_by_dim.none.mean_s "$tmp/r16.json")" "$(jq .exposed_by_dim.none.max_s "$tmp/r16.json")" 1e-12'
check "ranks 16 with 4 sections: the text report says 12 idle and the means' 4 ranks" \
  'grep -q "^ranks 16 (12 idle: no ops in the trace), fidelity flow" "$tmp/r16.txt" && grep -q "over the 4 ranks with ops (12 idle left out)" "$tmp/r16.txt"'

# --- a missing required key is reported at the mapping that lacks it, and says so (was 1:1 for a top-level key of
# the sweep spec whatever its first line, 0:0 for 'platform'; platform files: at the mapping without saying it)
printf '# spec\ndtsim_sweep: 1\naxes: {tp: [1]}\nworkload: {gen: gpt3-1.3b}\n' >"$tmp/swp.yaml"
"$DTSIM" sweep run "$tmp/swp.yaml" --dir "$tmp/swd" >/dev/null 2>"$tmp/e"; rc=$?
check "sweep spec without platform: exit 2 at 2:1, the top-level mapping's start" \
  '[ $rc -eq 2 ] && grep -qF "swp.yaml:2:1: missing required key '"'platform'"' at the top level (the mapping starting at 2:1; the base platform file)" "$tmp/e"'
printf '# spec\naxes: {tp: [1]}\n' >"$tmp/swv.yaml"
"$DTSIM" sweep run "$tmp/swv.yaml" --dir "$tmp/swd" >/dev/null 2>"$tmp/e"; rc=$?
check "sweep spec without dtsim_sweep: exit 2 at 2:1 (was 1:1, a comment line)" \
  '[ $rc -eq 2 ] && grep -qF "swv.yaml:2:1: missing required key '"'dtsim_sweep'"' at the top level (the mapping starting at 2:1" "$tmp/e"'
printf '# two nodes, no NICs\ndtsim_platform: 1\nname: x\ngpu: {model: T, peak: 1TFLOPS}\nnodes: 2\ngpus_per_node: 2\nintra_node: {kind: nvswitch, latency: 1us, bandwidth: 1GB/s}\n' >"$tmp/nonic.yaml"
"$DTSIM" platform check "$tmp/nonic.yaml" >/dev/null 2>"$tmp/e"; rc=$?
check "platform without nics: exit 2 at the top-level mapping, named as such" \
  '[ $rc -eq 2 ] && grep -qF "nonic.yaml:2:1: missing required key '"'nics'"' at the top level (the mapping starting at 2:1; required when '"'nodes'"' is more than 1)" "$tmp/e"'
# --- the configuration readers word their read errors alike (dt_read_config)
for c in "platform check:platform file" "sweep run:sweep spec" "calibrate platforms/dgx-a100.yaml:nccl-tests output"; do
  "$DTSIM" ${c%:*} "$tmp/none.yaml" >/dev/null 2>"$tmp/e"; rc=$?
  check "${c%:*} of a missing file: exit 2, 'none.yaml: cannot open ${c#*:}: No such file'" \
    '[ $rc -eq 2 ] && grep -qF "none.yaml: cannot open ${c#*:}: No such file or directory" "$tmp/e"'
done
"$DTSIM" gen --workload "$tmp/none.yaml" -o "$tmp/g.dtt" >/dev/null 2>"$tmp/e"; rc=$?
check "gen --workload of a missing file: exit 2, 'cannot open workload file'" \
  '[ $rc -eq 2 ] && grep -qF "none.yaml: cannot open workload file: No such file or directory" "$tmp/e"'

finish
