#!/usr/bin/env bash
# End-to-end tests of coalescing (docs/replay.md, Shortcuts): a stream whose rank is quiet runs its GPU-local ops
# (computes, delays, marks, folded classes' collectives) ahead of SimGrid's clock and waits once. The times must
# be the ones every op waited alone gives (--exact), a run must stop at an op another stream waits for, and a rank
# with another stream at work must not run ahead.
# usage: tests/e2e_coalesce.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: e2e_coalesce.sh DTSIM}
source "$(dirname "$0")/e2e-lib.sh"

numbers() { jq -r '[paths(numbers) as $p | "\($p | map(tostring) | join("/"))=\(getpath($p))"] | .[]' "$1"; }
# same NAME A.json B.json: every reported number agrees within 1e-6 relative (and the same numbers exist)
same() {
  numbers "$2" >"$tmp/a" && numbers "$3" >"$tmp/b" || { bad "$1 (no report)"; return; }
  if paste -d'\n' "$tmp/a" "$tmp/b" | awk -F= 'NR % 2 { k = $1; v = $2; next }
      { if ($1 != k) { print "path " k " vs " $1; bad = 1; exit }
        d = v - $2; if (d < 0) d = -d; s = ($2 < 0 ? -$2 : $2);
        if (d > 1e-6 * s + 1e-12) { print k ": " v " vs " $2; bad = 1; exit } }
      END { exit bad }' >"$tmp/why" && [ "$(wc -l <"$tmp/a")" = "$(wc -l <"$tmp/b")" ]; then
    ok "$1"
  else
    bad "$1: $(head -1 "$tmp/why")"
  fi
}
run() {
  local out=$1
  shift
  "$DTSIM" run --json "$@" >"$out" 2>"$tmp/err" || { cat "$tmp/err"; return 1; }
}
has_note() { jq -e --arg s "$2" '[.notes[] | select(contains($s))] | length > 0' "$1" >/dev/null; }
jv() { jq -r "$2" "$1"; }

# 1. s1 waits for s0's third compute (after=s0:2). s0's first op runs before s1 has blocked (not quiet); then s1
#    waits for s0, so s0 runs ops 1 and 2 ahead and must stop there: s1 starts at 3 ms and ends at 3 + 2.5 ms.
#    Then s1 is at work: s0's ops 3-5 (a mark among them) run one by one. By hand: makespan 5.5 ms, iteration (the
#    mark) 4 ms, rank 0 computes over [0, 5.5] ms.
cat >"$tmp/dep.dtt" <<'T'
dtsim_trace 1
ranks 1
rank 0
s0 compute dur=1ms
s0 compute dur=1ms
s0 compute dur=1ms
s0 compute dur=1ms
s0 mark
s0 compute dur=1ms
s1 compute dur=2.5ms after=s0:2
T
run "$tmp/dep.json" platforms/dgx-a100.yaml "$tmp/dep.dtt" && run "$tmp/depx.json" platforms/dgx-a100.yaml "$tmp/dep.dtt" --exact
check "after= target: ops 1-2 coalesced, nothing else" 'has_note "$tmp/dep.json" "shortcuts: 2 GPU-local ops"'
check "after= target: the run stops at s0:2, s1 ends at 5.5 ms" 'close "$(jv "$tmp/dep.json" .makespan_s)" 0.0055'
check "after= target: iteration 4 ms" 'close "$(jv "$tmp/dep.json" ".iterations_s[0]")" 0.004'
check "after= target: compute 5.5 ms" 'close "$(jv "$tmp/dep.json" ".per_rank[0].compute_s")" 0.0055'
check "after= target: --exact does not coalesce" '! has_note "$tmp/depx.json" "GPU-local ops"'
same "after= target: same report with --exact" "$tmp/dep.json" "$tmp/depx.json"

# 2. the overlap tax (NCCL model, tax 0.5): rank 0's all-reduce on s1 (after=s0:0) runs beside s0's computes,
#    which take twice as long while it is in flight; s0 must not run ahead while s1 is in its collective
{ cat platforms/dgx-a100.yaml; } >"$tmp/tax.yaml"
if grep -q '^nccl:' "$tmp/tax.yaml"; then
  sed -i 's/^nccl:.*/&\n  overlap_tax: 0.5/' "$tmp/tax.yaml"
else
  printf 'nccl:\n  overlap_tax: 0.5\n' >>"$tmp/tax.yaml"
fi
cat >"$tmp/tax.dtt" <<'T'
dtsim_trace 1
ranks 2
group g 0-1
rank 0
s0 compute dur=1ms
s0 compute dur=1ms
s0 compute dur=1ms
s0 compute dur=1ms
s1 allreduce group=g bytes=1073741824 after=s0:0
rank 1
s0 compute dur=1ms
s0 allreduce group=g bytes=1073741824
T
run "$tmp/tax.json" "$tmp/tax.yaml" "$tmp/tax.dtt" && run "$tmp/taxx.json" "$tmp/tax.yaml" "$tmp/tax.dtt" --exact
same "overlap tax: same report with --exact" "$tmp/tax.json" "$tmp/taxx.json"
check "overlap tax: it applied (rank 0 computes longer than 4 ms)" \
  '[ "$(jq ".per_rank[0].compute_s > 0.0041" "$tmp/tax.json")" = true ]'

# 3. GPT-3 layers, TP 8 folded, DP gradients on a second stream (after= edges into the backward), textbook and NCCL
#    model with an overlap tax: coalesced, and every number as with --exact
G="--gen gpt3-175b --tp 8 --pp 4 --dp 2 --global-batch 8 --layers 8"
run "$tmp/g.json" bench/h100-16node.yaml $G && run "$tmp/gx.json" bench/h100-16node.yaml $G --exact
check "gpt tp8: coalesced" 'has_note "$tmp/g.json" "GPU-local ops"'
same "gpt tp8: same report with --exact" "$tmp/g.json" "$tmp/gx.json"
{ cat bench/h100-16node.yaml; printf 'nccl:\n  overlap_tax: 0.1\n'; } >"$tmp/ntax.yaml"
run "$tmp/n.json" "$tmp/ntax.yaml" $G && run "$tmp/nx.json" "$tmp/ntax.yaml" $G --exact
check "gpt tp8, NCCL model, tax 0.1: coalesced" 'has_note "$tmp/n.json" "GPU-local ops"'
same "gpt tp8, NCCL model, tax 0.1: same report with --exact" "$tmp/n.json" "$tmp/nx.json"

# 4. what shows the order of events turns it off: the timeline and verbose logs
run "$tmp/tl.json" bench/h100-16node.yaml $G --timeline "$tmp/tl.trace.json"
check "timeline: not coalesced" '! has_note "$tmp/tl.json" "GPU-local ops"'
run "$tmp/log.json" bench/h100-16node.yaml $G --log dtsim_replay.thres:verbose
check "verbose log: not coalesced" '! has_note "$tmp/log.json" "GPU-local ops"'

finish
