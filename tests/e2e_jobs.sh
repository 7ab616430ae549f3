#!/usr/bin/env bash
# End-to-end tests of several jobs on one fabric (dtsim run --job, docs/whatif.md). Expected times by hand, on
# one-GPU-per-node fat-trees with NICs and cables of B = 10 GB/s and 1 us each (tests/data/jobs-*.yaml): a route
# between leaves crosses 2 NICs and 4 cables, alpha = 6 us. A 2-rank ring all-reduce of S = 1 GB then takes
# 2 alpha + S/B = 0.100012 s alone (DESIGN.md §6: 2(n-1) alpha + 2(n-1)/n S/B).
# usage: tests/e2e_jobs.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: e2e_jobs.sh DTSIM}
source "$(dirname "$0")/e2e-lib.sh"

D=tests/data
AR=$D/jobs-allreduce2.dtt
A2A=$D/jobs-alltoall2.dtt
jv() { jq -r "$2" "$1"; }

# 1. non-blocking tree, disjoint nodes, both jobs crossing the spines: destination-mod-k sends a's flows (to
#    node 2, from node 2 to 0) over spine 0 and b's (node 3, node 1) over spine 1, so nothing is shared and the
#    times together are the times alone
"$DTSIM" run --json $D/jobs-nonblocking.yaml --job a $AR --nodes 0,2 --job b $AR --nodes 1,3 >"$tmp/nb.json" \
  2>"$tmp/nb.err"
rc=$?
check "non-blocking: exit 0" '[ $rc -eq 0 ]'
for j in 0 1; do
  check "non-blocking: job $j alone = 2 alpha + S/B" 'close "$(jv "$tmp/nb.json" ".jobs[$j].alone_s")" 0.100012'
  check "non-blocking: job $j together = alone, exactly" \
    '[ "$(jv "$tmp/nb.json" ".jobs[$j].together_s")" = "$(jv "$tmp/nb.json" ".jobs[$j].alone_s")" ]'
  check "non-blocking: job $j slowdown 1" '[ "$(jv "$tmp/nb.json" ".jobs[$j].slowdown")" = 1 ]'
  check "non-blocking: job $j has two iterations" '[ "$(jv "$tmp/nb.json" ".jobs[$j].together_iterations_s | length")" = 2 ]'
done
check "non-blocking: no leaf-spine direction shared" '[ "$(jv "$tmp/nb.json" ".jobs_link_classes[\"leaf-spine\"].shared")" = 0 ]'
check "non-blocking: each job put 8 GB on the spine cables (2 flows x 1 GB x 2 iterations, each up and down)" \
  'close "$(jv "$tmp/nb.json" ".jobs[0].link_classes[\"leaf-spine\"].bytes")" 8e9'

# 2. 4:1 oversubscribed tree, both jobs between leaf 0 and leaf 1: the leaf's one up-link carries a's flow
#    0 -> 4 and b's flow 1 -> 5, the same bytes from the same start; max-min gives each B/2 for the whole
#    transfer, so the bandwidth term doubles: 2 alpha + 2 S/B = 0.200012 s per iteration
"$DTSIM" run --json $D/jobs-oversub4.yaml --job a $AR --nodes 0,4 --job b $AR --nodes 1,5 >"$tmp/ov.json" 2>/dev/null
for j in 0 1; do
  check "4:1: job $j alone 0.100012 s" 'close "$(jv "$tmp/ov.json" ".jobs[$j].alone_s")" 0.100012'
  check "4:1: job $j together 2 alpha + 2 S/B = 0.200012 s" 'close "$(jv "$tmp/ov.json" ".jobs[$j].together_s")" 0.200012'
  check "4:1: job $j every iteration 0.200012 s" \
    'close "$(jv "$tmp/ov.json" ".jobs[$j].together_iterations_s[1]")" 0.200012'
  check "4:1: job $j slowdown 0.200012 / 0.100012" \
    'close "$(jv "$tmp/ov.json" ".jobs[$j].slowdown")" "$(awk "BEGIN { print 0.200012 / 0.100012 }")"'
  check "4:1: job $j bytes on shared spine cables = all its spine bytes" \
    'close "$(jv "$tmp/ov.json" ".jobs[$j].link_classes[\"leaf-spine\"].shared_bytes")" "$(jv "$tmp/ov.json" ".jobs[$j].link_classes[\"leaf-spine\"].bytes")"'
done
check "4:1: all 4 leaf-spine directions shared by a and b" \
  '[ "$(jv "$tmp/ov.json" ".jobs_link_classes[\"leaf-spine\"] | \"\(.shared) \(.shared_by | join(\",\"))\"")" = "4 a,b" ]'
check "4:1: NICs are not shared" '[ "$(jv "$tmp/ov.json" ".jobs_link_classes[\"gpu-nic\"].shared")" = 0 ]'
check "4:1: bytes together = bytes alone" \
  '[ "$(jv "$tmp/ov.json" ".jobs[0].link_classes[\"leaf-spine\"].bytes")" = "$(jv "$tmp/ov.json" ".jobs[0].link_classes[\"leaf-spine\"].alone_bytes")" ]'
"$DTSIM" run $D/jobs-oversub4.yaml --job a $AR --nodes 0,4 --job b $AR --nodes 1,5 >"$tmp/ov.txt" 2>/dev/null
check "4:1: text report has the jobs table" 'grep -q "^  a  *2  *0,4  *100 ms  *200 ms  *x1.9999" "$tmp/ov.txt"'
check "4:1: text report lists the shared leaf-spine class" 'grep -q "^  leaf-spine  *4/4  *4  *a" "$tmp/ov.txt"'

# 2b. the same with the leaf-spine cables at half bandwidth (--degrade, for every run): B/2 on the up-link,
#     alone 2 alpha + S/(B/2) = 0.200012 s, together 2 alpha + 2 S/(B/2) = 0.400012 s
"$DTSIM" run --json $D/jobs-oversub4.yaml --degrade leaf-spine=0.5 --job a $AR --nodes 0,4 --job b $AR --nodes 1,5 \
  >"$tmp/dg.json" 2>/dev/null
check "degraded 4:1: alone 0.200012 s" 'close "$(jv "$tmp/dg.json" ".jobs[1].alone_s")" 0.200012'
check "degraded 4:1: together 0.400012 s" 'close "$(jv "$tmp/dg.json" ".jobs[1].together_s")" 0.400012'

# 3. shortcuts stay honest: alone, a's all-to-all over nodes 0 and 4 owns its links and is waited in closed form
#    (alpha + (S/2)/B = 0.020006 s); together with b's all-reduce on nodes 1 and 5 the up-links are shared, so it
#    must be simulated: a's 200 MB at B/2 take 0.04 s (0.040006 s), b moves 0.2 GB meanwhile and its last 0.8 GB
#    at B: 2 alpha + 0.04 + 0.08 = 0.120012 s for its first iteration, 0.100012 s for its second
J="$D/jobs-oversub4.yaml --job a $A2A --nodes 0,4 --job b $AR --nodes 1,5"
"$DTSIM" run --json $J >"$tmp/sc.json" 2>/dev/null
"$DTSIM" run --json --exact $J >"$tmp/scx.json" 2>/dev/null
printf '0 0 0\n1 4 0\n' >"$tmp/a04.txt"
"$DTSIM" run --json $D/jobs-oversub4.yaml $A2A --placement "$tmp/a04.txt" >"$tmp/a-alone.json" 2>/dev/null
check "shortcuts: a alone is waited in closed form" \
  'jq -e "[.notes[] | select(contains(\"closed form\"))] | length == 1" "$tmp/a-alone.json" >/dev/null'
check "shortcuts: together, no closed form" \
  'jq -e "[.notes[] | select(contains(\"closed form\"))] | length == 0" "$tmp/sc.json" >/dev/null'
check "shortcuts: a alone 0.020006 s" 'close "$(jv "$tmp/sc.json" ".jobs[0].alone_s")" 0.020006'
check "shortcuts: a together 0.040006 s" 'close "$(jv "$tmp/sc.json" ".jobs[0].together_s")" 0.040006'
check "shortcuts: b's first iteration together 0.120012 s" \
  'close "$(jv "$tmp/sc.json" ".jobs[1].together_iterations_s[0]")" 0.120012'
check "shortcuts: b's second iteration together 0.100012 s" \
  'close "$(jv "$tmp/sc.json" ".jobs[1].together_iterations_s[1]")" 0.100012'
# every number of the jobs section against --exact
same_jobs() {
  jq -r '[.jobs[] | paths(numbers) as $p | getpath($p)] | .[]' "$2" >"$tmp/n1"
  jq -r '[.jobs[] | paths(numbers) as $p | getpath($p)] | .[]' "$3" >"$tmp/n2"
  if [ -s "$tmp/n1" ] && [ "$(wc -l <"$tmp/n1")" = "$(wc -l <"$tmp/n2")" ] &&
    paste "$tmp/n1" "$tmp/n2" | awk '{ d = $1 - $2; if (d < 0) d = -d; s = ($2 < 0 ? -$2 : $2); if (d > 1e-6 * s + 1e-12) exit 1 }'; then
    ok "$1"
  else
    bad "$1"
  fi
}
same_jobs "shortcuts: every job number equals --exact (all-to-all beside an all-reduce)" "$tmp/sc.json" "$tmp/scx.json"
check "shortcuts: makespan equals --exact" 'close "$(jv "$tmp/sc.json" .makespan_s)" "$(jv "$tmp/scx.json" .makespan_s)"'

# 4. generated jobs, TP 8 inside the nodes and DP across them, side by side on a rail-optimized DGX H100 tree:
#    ranks are folded and TP rings waited in closed form, together as alone, and every number equals --exact
G="platforms/dgx-h100-4node.yaml --job a --gen neox-1.3b --tp 8 --dp 2 --layers 4 --job b --gen neox-1.3b --tp 8 --dp 2 --layers 4"
"$DTSIM" run --json $G >"$tmp/g.json" 2>/dev/null
"$DTSIM" run --json --exact $G >"$tmp/gx.json" 2>/dev/null
check "gen: ranks folded together" 'jq -e "[.notes[] | select(contains(\"ranks folded\"))] | length == 1" "$tmp/g.json" >/dev/null'
same_jobs "gen: every job number equals --exact" "$tmp/g.json" "$tmp/gx.json"
check "gen: b on nodes 2-3 by default" '[ "$(jv "$tmp/g.json" ".jobs[1].nodes")" = 2-3 ]'
check "gen: rail fabric, disjoint nodes: slowdown 1" '[ "$(jv "$tmp/g.json" "[.jobs[].slowdown] | unique | .[0]")" = 1 ]'

# 5. a Kineto capture expanded to 16 ranks (its ranks run rank 0's template) as a job beside a generated one:
#    alone it is the plain run's replay (same placement: nodes 0-1), iteration by iteration, and on the rail tree
#    with disjoint nodes the together run changes nothing
K=traces/samples/fsdp_like_16ranks_rank0.json.gz
"$DTSIM" run --json platforms/dgx-h100-4node.yaml $K >"$tmp/k-plain.json" 2>/dev/null
"$DTSIM" run --json platforms/dgx-h100-4node.yaml --job k $K --job g --gen neox-1.3b --tp 8 --dp 2 --layers 4 \
  >"$tmp/k.json" 2>/dev/null
check "capture: the job's iterations alone = the plain run's" \
  '[ "$(jq -c .iterations_s "$tmp/k-plain.json")" = "$(jq -c ".jobs[0].alone_iterations_s" "$tmp/k.json")" ]'
check "capture: alone_s = the plain run's mean iteration" \
  'close "$(jv "$tmp/k.json" ".jobs[0].alone_s")" "$(jq "[.iterations_s[]] | add / length" "$tmp/k-plain.json")" 1e-12'
check "capture: together = alone for both jobs" \
  '[ "$(jq -c "[.jobs[] | .together_iterations_s == .alone_iterations_s] | all" "$tmp/k.json")" = true ]'

# 6. bad input: clear errors, exit 2
err() { # err NAME PATTERN ARGS...: exit 2 and stderr matching PATTERN
  local name=$1 pat=$2
  shift 2
  "$DTSIM" run "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ $rc -eq 2 ] && grep -q -- "$pat" "$tmp/err"; then ok "$name"; else bad "$name (exit $rc: $(head -1 "$tmp/err"))"; fi
}
err "overlap: names the GPU and both jobs" "jobs 'a' and 'b' both use GPU 0 of node 4 (global GPU 4): rank 1 of 'a' and rank 0 of 'b'" \
  $D/jobs-oversub4.yaml --job a $AR --nodes 0,4 --job b $AR --nodes 4,5
printf '0 1 0\n1 5 0\n' >"$tmp/b15.txt"
err "overlap with a placement file" "jobs 'a' and 'b' both use GPU 0 of node 1" \
  $D/jobs-oversub4.yaml --job a $AR --job b $AR --placement "$tmp/b15.txt"
err "a job with no trace" "job 'b' has no ranks: give its trace files or --gen" $D/jobs-oversub4.yaml --job a $AR --job b
printf 'dtsim_trace 1\nranks 2\n' >"$tmp/empty.dtt"
err "a job with no ops" "job 'a' has no ranks with ops to run" $D/jobs-oversub4.yaml --job a "$tmp/empty.dtt"
printf '0 0 0\n1 9 0\n' >"$tmp/bad.txt"
err "bad placement file: file, line and the job" "bad.txt:2: job 'a': node 9 out of range" \
  $D/jobs-oversub4.yaml --job a $AR --placement "$tmp/bad.txt"
err "bad node list" "job 'a': --nodes expects node numbers and ranges like 0-3,8 within the platform's nodes 0-7, found '3-1'" \
  $D/jobs-oversub4.yaml --job a $AR --nodes 3-1
err "too few nodes" "job 'a' has 2 ranks but --nodes 7 gives 1 GPU (1 per node)" $D/jobs-oversub4.yaml --job a $AR --nodes 7
err "no room left" "job 'e' has 2 ranks but only 0 GPUs are left" $D/jobs-oversub4.yaml --job a $AR --nodes 0-1 \
  --job b $AR --job c $AR --job d $AR --job e $AR
err "two jobs with one name" "two jobs are named 'a'" $D/jobs-oversub4.yaml --job a $AR --job a $AR
err "a bad job name" "found 'a/b'" $D/jobs-oversub4.yaml --job a/b $AR
err "placement and nodes both" "give one --placement or one --nodes" $D/jobs-oversub4.yaml --job a $AR --nodes 0,4 \
  --placement "$tmp/b15.txt"
err "a trace before the jobs" "expected one platform file before the first --job" $D/jobs-oversub4.yaml $AR --job a $AR
err "an unknown job option" "job 'a': unknown job option '--bogus'" $D/jobs-oversub4.yaml --job a $AR --bogus
err "a partition names the ranks of each job" "the jobs together (ranks 'a' 0-1, 'b' 2-3): the failed links partition the fabric: ranks 2 and 3" \
  $D/jobs-oversub4.yaml --fail cable:leaf0-spine0@0 --job a $AR --nodes 0,1 --job b $AR --nodes 2,6
err "a generator error names the job" "job 'b': " $D/jobs-oversub4.yaml --job a $AR --job b --gen neox-125m --tp 8

# a link failing mid-run stops the runs that cross it: stderr says aborted (not deadlock), no slowdown is given
"$DTSIM" run --json --fail leaf0-spine0@50ms $D/jobs-oversub4.yaml --job a $AR --nodes 0,4 --job b $AR --nodes 1,2 \
  >"$tmp/ab.json" 2>"$tmp/ab.err"
rc=$?
check "a link failing mid-run: exit 1, aborted on stderr, no deadlock" \
  "[ $rc = 1 ] && grep -q 'aborted at 50 ms when the jobs ran together' $tmp/ab.err && grep -q \"job 'a' stopped by a link failure when it ran alone\" $tmp/ab.err && ! grep -q deadlock $tmp/ab.err"
check "a link failing mid-run: no slowdown for the jobs of a stopped run" \
  '[ "$(jv "$tmp/ab.json" "[.jobs[].slowdown] | map(select(. == null)) | length")" = 2 ]'

finish
