#!/usr/bin/env bash
# End-to-end tests of the per-link accounting (docs/report.md, "Per-link accounting"): the timeline's link counters
# follow the routes the transfers took when a link fails during the run, and counting links changes nothing else
# in the report. Times by hand on tests/data/degrade/ft8.yaml (8 single-GPU nodes, 2 leaves, 4 spines, every NIC
# and cable B = 12.5 GB/s, alpha across the spines 4 us).
# usage: tests/e2e_linkload.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: e2e_linkload.sh DTSIM}
source "$(dirname "$0")/e2e-lib.sh"
P=tests/data/degrade/ft8.yaml
S=125000000 # bytes: S / B = 10 ms

# 1. rank 3 sends 4 S to rank 7, computes 10 ms, sends S again; cable leaf0-spine3 fails at 45 ms, during the
# compute. Destination-mod-k puts 3 -> 7 (key 7) on spine 3: the first send crosses leaf0-spine3 up over
# [0, alpha + 4 S/B) = [0, 40.004 ms); the second, from 50.004 ms to 60.008 ms, detours over spine 1.
{
  echo "dtsim_trace 1"
  echo "ranks 8"
  for r in 0 1 2 4 5 6; do printf 'rank %d\ns0 compute dur=1ms\n' $r; done
  printf 'rank 3\ns0 send peer=7 bytes=%d\ns0 compute dur=10ms\ns0 send peer=7 bytes=%d\n' $((4 * S)) $S
  printf 'rank 7\ns0 recv peer=3 bytes=%d\ns0 compute dur=10ms\ns0 recv peer=3 bytes=%d\n' $((4 * S)) $S
} >"$tmp/fail.dtt"
"$DTSIM" run --json --timeline "$tmp/tl.json" $P "$tmp/fail.dtt" --fail leaf0-spine3@45ms >"$tmp/fail.json" \
  2>"$tmp/err"
rc=$?
check "fail at 45 ms between two sends: exit 0, makespan 60.008 ms" \
  "[ $rc -eq 0 ] && close $(jq .makespan_s "$tmp/fail.json") 0.060008"
# the counter samples of one link direction: "ts flows" lines, in microseconds
samples() { jq -r --arg n "$1" '.traceEvents[] | select(.ph == "C" and .name == $n) | "\(.ts) \(.args.flows)"' "$tmp/tl.json"; }
samples "cable:leaf0-spine3 up" >"$tmp/s3"
samples "cable:leaf0-spine1 up" >"$tmp/s1"
check "the failed cable's counter shows the first send, on the route it took: 1 flow at 0, none from 40.004 ms" \
  "[ \"\$(awk '{ printf \"%s:%s \", \$1, \$2 }' $tmp/s3)\" = '0:1 40004:0 ' ]"
check "the detour's counter shows the second send only: 1 flow at 50.004 ms, none from 60.008 ms" \
  "[ \"\$(awk '{ printf \"%s:%s \", \$1, \$2 }' $tmp/s1)\" = '50004:1 60008:0 ' ]"
check "the counters agree with the accounting: the failed cable carried 4 S, the detour S" \
  "[ \"\$(jq -r '[.links.top[] | select(.name == \"cable:leaf0-spine3 up\" or .name == \"cable:leaf0-spine1 up\") | .bytes] | join(\" \")' $tmp/fail.json)\" = '$((4 * S)) $S' ]"

# 2. counting links changes nothing else: the same reports without the links key, on a generated GPT run with its
# shortcuts (folded ranks, closed-form rings) and with --exact (every flow simulated)
GEN="platforms/dgx-h100-4node.yaml --gen gpt3-175b --tp 8 --pp 2 --dp 2 --layers 4 --global-batch 8"
for x in "" --exact; do
  "$DTSIM" run --json $x $GEN >"$tmp/with.json" 2>/dev/null
  "$DTSIM" run --json --no-links $x $GEN >"$tmp/without.json" 2>/dev/null
  check "gen gpt3 ${x:-(shortcuts)}: with links = --no-links but for the links key" \
    "[ -n \"\$(jq -c .links.top[0] $tmp/with.json)\" ] && [ \"\$(jq -S -c 'del(.links)' $tmp/with.json)\" = \"\$(jq -S -c . $tmp/without.json)\" ]"
done

# 3. the fabric's counter tracks show every transfer the accounting counts: on each shown link direction, the bytes
# the counter carries (its rate, GB/s, times the time to the next sample, summed) are the bytes the report gives
# it: NeoX TP 8 DP 4 on 4 nodes, whose busiest links are GPU ports under TP rings waited in closed form, the same
# with every flow simulated, and the GPT run above with the tree algorithm (its busiest links carry sends)
counter_bytes() { # "name bytes" per counter track of timeline $1
  jq -r '[.traceEvents[] | select(.ph == "C")] | group_by(.name)[] | sort_by(.ts) as $s
    | "\($s[0].name)\t\([range(0; ($s | length) - 1) as $i | $s[$i].args.GBps * ($s[$i + 1].ts - $s[$i].ts) * 1000]
    | add)"' "$1"
}
NEOX="platforms/dgx-h100-4node.yaml --gen neox-1.3b --tp 8 --dp 4 --layers 4"
for label in "neox closed-form rings" "neox --exact" "gpt --algo tree"; do
  case $label in
  *closed*) x=$NEOX ;; *exact) x="--exact $NEOX" ;; *) x="--algo tree $GEN" ;;
  esac
  "$DTSIM" run --json --timeline "$tmp/c.json" $x >"$tmp/c.rep" 2>/dev/null
  counter_bytes "$tmp/c.json" >"$tmp/cb"
  jq -r '.links.top[] | "\(.name)\t\(.bytes)"' "$tmp/c.rep" >"$tmp/lb"
  bad_rows=$(awk -F'\t' 'NR == FNR { b[$1] = $2; next } { n++; d = $2 - b[$1]; if (d < 0) d = -d;
    if (!($1 in b) || !(d <= 1e-9 * b[$1])) bad++ } END { print (n >= 1 ? bad + 0 : -1) }' "$tmp/lb" "$tmp/cb")
  check "timeline, $label: each counter track carries its link's bytes ($(wc -l <"$tmp/cb") tracks)" \
    "[ '$bad_rows' = 0 ]"
done

finish
