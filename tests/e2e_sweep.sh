#!/usr/bin/env bash
# End-to-end tests of `dtsim sweep`: a 3 x 2 grid equals separate `dtsim run` invocations byte for byte (on
# platform files written here with sed, not by the sweep); the cache reruns exactly what was deleted and what a
# changed platform byte touches; shards + collect and GNU parallel / xargs equal the local run; impossible
# points are reported with their reason while the others run; the sensitivity ranking puts an axis that changes
# nothing last with spread 0; seeded random and Latin-hypercube samples; Ctrl-C keeps finished points; plots.
# The Slurm path runs in CI's own stage (tests/ci_slurm.sh), it needs a Slurm cluster.
# usage: tests/e2e_sweep.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: e2e_sweep.sh DTSIM}
DTSIM=$(cd "$(dirname "$DTSIM")" && pwd)/$(basename "$DTSIM")
source "$(dirname "$0")/e2e-lib.sh"
D=tests/data/sweep
GEN=(--gen neox-19m --set dp=16 --set global_batch=64 --set dp_overlap=false --set experts=16 --set ep=16) # grid.yaml's

check "help lists sweep" '"$DTSIM" help | grep -q "^  sweep "'
check "help sweep lists --shard" '"$DTSIM" help sweep | grep -q -- "--shard I/N"'

# --- 3 x 2 grid: 6 rows, each JSON equal to a separate dtsim run on a platform written by sed
"$DTSIM" sweep $D/grid.yaml --dir "$tmp/g" -j 2 -o "$tmp/g.csv" -o "$tmp/g.jsonl" >"$tmp/g.out" 2>"$tmp/g.err"; rc=$?
check "grid sweep exits 0" '[ $rc -eq 0 ]'
check "grid CSV has a header and 6 rows" '[ "$(wc -l <"$tmp/g.csv")" -eq 7 ]'
check "grid JSON lines has 6 ok points" '[ "$(grep -c "\"status\":\"ok\"" "$tmp/g.jsonl")" -eq 6 ]'
check "manifest has 6 points" '[ "$(wc -l <"$tmp/g/manifest.jsonl")" -eq 6 ]'
same=0
i=0
for o in 1 3 7; do
  for b in 50Gb/s 200Gb/s; do
    sed "s/oversubscription: 1/oversubscription: $o/; s|bandwidth: 100Gb/s, latency: 1us|bandwidth: $b, latency: 1us|" \
      $D/grid-base.yaml >"$tmp/p$i.yaml"
    "$DTSIM" run --json "$tmp/p$i.yaml" "${GEN[@]}" >"$tmp/r$i.json" 2>/dev/null
    h=$(sed -n "$((i + 1))p" "$tmp/g/manifest.jsonl" | jq -r .hash)
    p=$(sed -n "$((i + 1))p" "$tmp/g/manifest.jsonl" | jq -r '.params["network.oversubscription"] + " " + .params["nics.bandwidth"]')
    if [ "$p" = "$o $b" ] && cmp -s "$tmp/r$i.json" "$tmp/g/results/$h.json"; then same=$((same + 1)); fi
    m=$(grep -o "\"makespan_s\":[^,]*" "$tmp/r$i.json" | cut -d: -f2)
    csvm=$(awk -F, -v n=$((i + 2)) 'NR == n { print $5 }' "$tmp/g.csv")
    check "point $i ($o, $b): CSV makespan $csvm equals dtsim run's $m" '[ -n "$m" ] && [ "$csvm" = "$m" ]'
    i=$((i + 1))
  done
done
check "all 6 results equal separate dtsim run invocations byte for byte" '[ $same -eq 6 ]'
check "the 6 results differ from each other (every axis reached the platform)" \
  '[ "$(cat "$tmp"/r?.json | sort -u | wc -l)" -eq 6 ]'
check "ranking printed on stdout" 'grep -q "^   1  nics.bandwidth" "$tmp/g.out"'
# both axes of the shipped example move the iteration: a non-zero spread each, equal to max - min of the means
# computed here from the CSV (column 3: oversubscription, 4: NIC bandwidth, 6: iteration_s)
for col in 3 4; do
  ax=$(head -1 "$tmp/g.csv" | cut -d, -f$col)
  want=$(awk -F, -v c=$col 'NR > 1 { s[$c] += $6; n[$c]++ } END { hi = -1; lo = 1e300; for (k in s) { m = s[k] / n[k]; if (m > hi) hi = m; if (m < lo) lo = m }; printf "%.6g", hi - lo }' "$tmp/g.csv")
  got=$(awk -v a="$ax" '$2 == a { print $3 }' "$tmp/g.out")
  check "grid example: $ax moves the iteration (spread $got = $want from the CSV, > 0)" \
    '[ -n "$got" ] && close "$got" "$want" 1e-5 && awk -v g="$got" "BEGIN { exit !(g > 0) }"'
done

# --- cache: a rerun runs nothing; deleting two results runs exactly those two
"$DTSIM" sweep $D/grid.yaml --dir "$tmp/g" >/dev/null 2>"$tmp/re.err"
check "rerun finds 6 cached, 0 to run" 'grep -q "6 points: 6 cached, 0 to run" "$tmp/re.err"'
# mark every result with an old modification time: a rewritten one (temporary name, then rename) gets a new one
# (inode numbers would not do: the file system reuses the two freed ones at once)
touch -d @0 "$tmp/g/results/"*.json
h1=$(sed -n 2p "$tmp/g/manifest.jsonl" | jq -r .hash); h2=$(sed -n 5p "$tmp/g/manifest.jsonl" | jq -r .hash)
rm "$tmp/g/results/$h1.json" "$tmp/g/results/$h2.json"
"$DTSIM" sweep $D/grid.yaml --dir "$tmp/g" -o "$tmp/g2.csv" >/dev/null 2>"$tmp/re2.err"; rc=$?
check "rerun after deleting two results exits 0" '[ $rc -eq 0 ]'
check "rerun after deleting two results runs exactly two" 'grep -q "6 points: 4 cached, 2 to run" "$tmp/re2.err"'
check "the two deleted results are back" '[ -s "$tmp/g/results/$h1.json" ] && [ -s "$tmp/g/results/$h2.json" ]'
check "the other four result files were not rewritten" \
  '[ "$(stat -c %Y "$tmp/g/results/"*.json | grep -cx 0)" -eq 4 ]'
check "the CSV after the rerun equals the first" 'cmp -s "$tmp/g.csv" "$tmp/g2.csv"'

# --- a changed platform byte invalidates its points (one not swept), an overridden value does not
mkdir -p "$tmp/edit"
cp $D/grid.yaml "$tmp/edit/grid.yaml"
sed 's/link_latency: 500ns/link_latency: 501ns/' $D/grid-base.yaml >"$tmp/edit/grid-base.yaml"
"$DTSIM" sweep plan "$tmp/edit/grid.yaml" --dir "$tmp/g" >"$tmp/plan1.txt" 2>/dev/null
check "a changed link_latency byte: all 6 points to run again" '[ "$(grep -c "to run" "$tmp/plan1.txt")" -eq 6 ]'
sed 's|bandwidth: 100Gb/s, latency: 1us|bandwidth: 800Gb/s, latency: 1us|' $D/grid-base.yaml >"$tmp/edit/grid-base.yaml"
"$DTSIM" sweep plan "$tmp/edit/grid.yaml" --dir "$tmp/g" >"$tmp/plan2.txt" 2>/dev/null
check "a changed nics.bandwidth (every point overrides it): all 6 cached" \
  '[ "$(grep -c "cached" "$tmp/plan2.txt")" -eq 6 ]'

# --- shards 0/3, 1/3, 2/3 then collect equal the local run
for s in 0 1 2; do "$DTSIM" sweep run --shard $s/3 -q $D/grid.yaml --dir "$tmp/sh" 2>>"$tmp/sh.err"; done
check "a shard writes 2 of the 6 results" '[ "$(ls "$tmp/sh/results/"*.json | wc -l)" -eq 6 ]'
"$DTSIM" sweep collect $D/grid.yaml --dir "$tmp/sh" -o "$tmp/sh.csv" >/dev/null 2>&1; rc=$?
check "collect after the shards exits 0" '[ $rc -eq 0 ]'
check "shards + collect CSV equals the local run's" 'cmp -s "$tmp/g.csv" "$tmp/sh.csv"'
"$DTSIM" sweep run --shard 1/3 -q $D/grid.yaml --dir "$tmp/sh1" 2>/dev/null
"$DTSIM" sweep collect $D/grid.yaml --dir "$tmp/sh1" -o "$tmp/sh1.csv" >/dev/null 2>"$tmp/sh1.err"; rc=$?
check "collect with shards missing exits 1 and lists them" '[ $rc -eq 1 ] && grep -q "4 points are not run yet: 0 2 3 5" "$tmp/sh1.err"'
check "missing points are rows with status missing" '[ "$(grep -c ",missing," "$tmp/sh1.csv")" -eq 4 ]'
"$DTSIM" sweep collect $D/grid.yaml --dir "$tmp/sh1" --from "$tmp/sh" -o "$tmp/sh2.csv" >/dev/null 2>&1; rc=$?
check "collect --from another folder fills the missing points" '[ $rc -eq 0 ] && cmp -s "$tmp/g.csv" "$tmp/sh2.csv"'

# --- GNU parallel and xargs -P run the emitted commands; collect equals the local run
"$DTSIM" sweep run --emit-commands $D/grid.yaml --dir "$tmp/par" >"$tmp/cmds.txt" 2>/dev/null
check "--emit-commands prints 6 commands" '[ "$(wc -l <"$tmp/cmds.txt")" -eq 6 ]'
parallel --will-cite -j 2 <"$tmp/cmds.txt"; rc=$?
check "GNU parallel runs the commands" '[ $rc -eq 0 ]'
"$DTSIM" sweep collect $D/grid.yaml --dir "$tmp/par" -o "$tmp/par.csv" >/dev/null 2>&1
check "GNU parallel CSV equals the local run's" 'cmp -s "$tmp/g.csv" "$tmp/par.csv"'
"$DTSIM" sweep run --emit-commands $D/grid.yaml --dir "$tmp/xa" 2>/dev/null | xargs -d '\n' -P 2 -I CMD sh -c CMD
"$DTSIM" sweep collect $D/grid.yaml --dir "$tmp/xa" -o "$tmp/xa.csv" >/dev/null 2>&1
check "xargs -P CSV equals the local run's" 'cmp -s "$tmp/g.csv" "$tmp/xa.csv"'
check "--emit-commands prints nothing once all are cached" \
  '[ -z "$("$DTSIM" sweep run --emit-commands $D/grid.yaml --dir "$tmp/xa" 2>/dev/null)" ]'

# --- Slurm script: what it submits (run for real by tests/ci_slurm.sh in CI)
"$DTSIM" sweep run --emit slurm --shards 3 $D/grid.yaml --dir "$tmp/sl" >"$tmp/submit.sh" 2>/dev/null
check "--emit slurm writes a valid sh script" 'sh -n "$tmp/submit.sh"'
check "it submits an array of 3 shards and a dependent collect" \
  'grep -q -- "--array=0-2" "$tmp/submit.sh" && grep -q -- "--dependency=afterany:\$array" "$tmp/submit.sh" && grep -q "SLURM_ARRAY_TASK_ID/3" "$tmp/submit.sh"'

"$DTSIM" sweep run --emit slurm --shards 50 $D/grid.yaml --dir "$tmp/sl50" >"$tmp/submit50.sh" 2>"$tmp/sl50.err"
check "--shards 50 on 6 points is capped to 6 shards, with a note" \
  'grep -q -- "--array=0-5" "$tmp/submit50.sh" && grep -q "SLURM_ARRAY_TASK_ID/6" "$tmp/submit50.sh" && grep -q "shards 50 capped to 6" "$tmp/sl50.err"'

# --- spec errors found before any point: an empty dir, a misspelt axis key
( cd "$tmp" && "$DTSIM" sweep plan "$OLDPWD/$D/grid.yaml" --dir '' >/dev/null 2>"$tmp/emptydir.err" ); rc=$?
check "--dir '' is refused (it wrote into /)" '[ $rc -eq 2 ] && grep -q "'"'"'dir'"'"' is empty" "$tmp/emptydir.err"'
sed 's/nics.bandwidth:/nics.bandwith:/' $D/grid.yaml >"$tmp/typo.yaml"
cp $D/grid-base.yaml "$tmp/grid-base.yaml"
"$DTSIM" sweep plan "$tmp/typo.yaml" --dir "$tmp/typo" >"$tmp/typo.out" 2>"$tmp/typo.err"; rc=$?
check "a misspelt axis key is a spec error at file:line with the nearest key (not every point impossible)" \
  '[ $rc -eq 2 ] && grep -q "typo.yaml:11:[0-9]*: unknown axis .nics.bandwith. (did you mean .nics.bandwidth.?)" "$tmp/typo.err" && [ ! -s "$tmp/typo.out" ]'

# --- impossible points: a fat-tree that does not fit, tp*pp*dp != GPUs; the other point runs
"$DTSIM" sweep --set platform=$D/base.yaml --set workload.gen=neox-19m --set workload.global_batch=32 \
  --set workload.dp=4 --axis network.radix=2,8 --axis tp=1,2 --dir "$tmp/imp" -o "$tmp/imp.csv" -q \
  >/dev/null 2>"$tmp/imp.err"; rc=$?
check "a sweep with impossible points exits 0" '[ $rc -eq 0 ]'
check "the fat-tree that does not fit is reported with its reason" \
  'grep -q "point 0 (network.radix=2 tp=1) cannot run: platform: a 2-level fat-tree of radix 2 .* holds at most 2 NICs, the platform has 8" "$tmp/imp.err"'
check "tp*pp*dp != GPUs is reported with its reason" \
  'grep -q "point 2 (network.radix=8 tp=1) cannot run: workload: tp\*pp\*dp = 1\*1\*4 = 4 ranks, the platform has 8 GPUs" "$tmp/imp.err"'
check "the possible point ran" 'grep -q "^3,ok,8,2," "$tmp/imp.csv"'
check "impossible points are CSV rows with their reason" '[ "$(grep -c ",impossible," "$tmp/imp.csv")" -eq 3 ]'
"$DTSIM" sweep --set platform=$D/base.yaml --set workload.gen=neox-19m --axis tp=3,5 --dir "$tmp/none" -q \
  >/dev/null 2>"$tmp/none.err"; rc=$?
check "a sweep where no point can run exits 2" '[ $rc -eq 2 ] && grep -q "none of the 2 points can run" "$tmp/none.err"'

# --- sensitivity ranking: an axis that changes nothing (the GPU's name) is last with spread 0; the spread of
# nics.bandwidth equals the difference of the mean iteration times, computed here from the CSV
"$DTSIM" sweep --set platform=$D/base.yaml --set workload.gen=neox-19m --set workload.dp=8 \
  --set workload.global_batch=32 --set workload.dp_overlap=false \
  --axis gpu.model=A,B --axis nics.bandwidth=25Gb/s,100Gb/s,400Gb/s --dir "$tmp/rk" -o "$tmp/rk.csv" -q \
  >"$tmp/rk.out" 2>"$tmp/rk.err"; rc=$?
check "ranking sweep exits 0" '[ $rc -eq 0 ]'
check "the axis that changes nothing ranks last with spread 0" 'tail -1 "$tmp/rk.out" | grep -Eq "^   2  gpu.model +0 "'
want=$(awk -F, 'NR > 1 { s[$4] += $6; n[$4]++ } END { hi = -1; lo = 1e300; for (k in s) { m = s[k] / n[k]; if (m > hi) hi = m; if (m < lo) lo = m }; printf "%.6g", hi - lo }' "$tmp/rk.csv")
got=$(awk '$2 == "nics.bandwidth" { print $3 }' "$tmp/rk.out")
check "nics.bandwidth ranks first, spread $got = max - min of the means from the CSV ($want)" \
  'grep -Eq "^   1  nics.bandwidth" "$tmp/rk.out" && close "$got" "$want" 1e-5'

# --- plots (gnuplot)
"$DTSIM" sweep collect $D/grid.yaml --dir "$tmp/g" --plot "$tmp/g.svg" >/dev/null 2>&1; rc=$?
check "--plot out.svg draws an SVG" '[ $rc -eq 0 ] && grep -q "<svg" "$tmp/g.svg" && grep -q "nics.bandwidth=50Gb/s" "$tmp/g.svg"'
"$DTSIM" sweep collect $D/grid.yaml --dir "$tmp/g" --plot "$tmp/g.png" --heatmap >/dev/null 2>&1; rc=$?
check "--plot out.png --heatmap draws a PNG" '[ $rc -eq 0 ] && [ "$(head -c 4 "$tmp/g.png" | tail -c 3)" = PNG ]'
"$DTSIM" sweep collect $D/grid.yaml --dir "$tmp/g" --plot "$tmp/w.svg" --plot-where nics.bandwidth=200Gb/s >/dev/null 2>&1
check "--plot-where keeps one value: a single line, named in the title" \
  'grep -q "^set title \"iteration time, nics.bandwidth=200Gb/s\"" "$tmp/w.svg.gp" && [ "$(grep -c "^#" "$tmp/w.svg.dat")" -eq 1 ]'
check "--plot-where with a value the axis does not have exits 2" \
  '"$DTSIM" sweep collect $D/grid.yaml --dir "$tmp/g" --plot "$tmp/w.svg" --plot-where nics.bandwidth=1Gb/s >/dev/null 2>&1; [ $? -eq 2 ]'
check "--plot with a bad extension exits 2" \
  '"$DTSIM" sweep collect $D/grid.yaml --dir "$tmp/g" --plot "$tmp/g.gif" >/dev/null 2>&1; [ $? -eq 2 ]'
# a bad plot option is refused before the first point runs (was: every point ran, then exit 2)
for bad in "--plot-x bogus" "--plot-by bogus" "--plot-where bogus=1" "--plot-x nics.bandwidth --plot-by nics.bandwidth"; do
  # shellcheck disable=SC2086 # the option and its value are two words
  "$DTSIM" sweep $D/grid.yaml --dir "$tmp/pb" --plot "$tmp/pb.svg" $bad >/dev/null 2>"$tmp/pb.err"; rc=$?
  check "a fresh --dir with $bad exits 2 before any point ran" \
    '[ $rc -eq 2 ] && grep -q -- "${bad%% *}" "$tmp/pb.err" && ! ls "$tmp/pb/results/"*.json >/dev/null 2>&1 && [ ! -e "$tmp/pb/manifest.jsonl" ]'
done
"$DTSIM" sweep collect $D/grid.yaml --dir "$tmp/g" --plot "$tmp/pb.svg" --plot-x bogus >/dev/null 2>"$tmp/pb.err"
check "--plot-x bogus lists the axes there are, with their value counts" \
  'grep -q "plot-x .bogus. is not an axis of the sweep; its axes with two or more values: network.oversubscription (3 values), nics.bandwidth (2 values)" "$tmp/pb.err"'
# an axis of one value: a heatmap of it was drawn by gnuplot with "Image grid must be at least 4 points" on stderr
for bad in "--plot-x nics.bandwidth --heatmap" "--plot-by nics.bandwidth --heatmap" "--plot-x nics.bandwidth"; do
  # shellcheck disable=SC2086 # the options are several words
  "$DTSIM" sweep $D/grid.yaml --set 'axes.nics.bandwidth=50Gb/s' --dir "$tmp/p1" --plot "$tmp/p1.svg" $bad >/dev/null 2>"$tmp/p1.err"; rc=$?
  check "$bad on an axis of one value: exit 2 before any point ran, naming it and the other axes" \
    '[ $rc -eq 2 ] && grep -q -- "${bad%% *} .nics.bandwidth. has one value (.50Gb/s.): a [a-z]* needs two or more along it; the sweep.s axes with two or more values: network.oversubscription (3 values)" "$tmp/p1.err" && ! grep -q gnuplot "$tmp/p1.err" && [ ! -e "$tmp/p1/manifest.jsonl" ]'
done
"$DTSIM" sweep collect $D/grid.yaml --dir "$tmp/g" --plot "$tmp/hm.svg" --heatmap >/dev/null 2>"$tmp/hm.err"; rc=$?
check "a 3 x 2 heatmap: exit 0, gnuplot says nothing on stderr" '[ $rc -eq 0 ] && ! grep -qi "warning\|gnuplot" "$tmp/hm.err" && grep -q "<svg" "$tmp/hm.svg"'

# --- options given twice (docs/cli.md): one output once, one value per key and per option
"$DTSIM" sweep collect $D/grid.yaml --dir "$tmp/g" -o - -o - >"$tmp/twice.out" 2>"$tmp/twice.err"; rc=$?
check "-o - -o -: exit 2, nothing printed (was: the CSV twice)" \
  '[ $rc -eq 2 ] && [ ! -s "$tmp/twice.out" ] && grep -q "^dtsim sweep: -o - given twice: each output is written once" "$tmp/twice.err"'
"$DTSIM" sweep collect $D/grid.yaml --dir "$tmp/g" -q -o "$tmp/t1.csv" -o "$tmp/./t1.csv" >/dev/null 2>"$tmp/twice.err"; rc=$?
check "-o F.csv -o ./F.csv: exit 2, one file under two names" \
  '[ $rc -eq 2 ] && grep -q "given twice (under another name)" "$tmp/twice.err" && [ ! -e "$tmp/t1.csv" ]'
"$DTSIM" sweep collect $D/grid.yaml --dir "$tmp/g" -q -o "$tmp/t1.csv" -o "$tmp/t1.jsonl" >/dev/null 2>&1; rc=$?
check "-o F.csv -o F.jsonl: two outputs, both written" '[ $rc -eq 0 ] && [ -s "$tmp/t1.csv" ] && [ -s "$tmp/t1.jsonl" ]'
"$DTSIM" sweep plan $D/grid.yaml --dir "$tmp/g" --set platform=a.yaml --set platform=b.yaml >/dev/null 2>"$tmp/twice.err"; rc=$?
check "--set platform=a --set platform=b: exit 2 naming the key and both values" \
  '[ $rc -eq 2 ] && grep -q "the spec key .platform. is given twice (.a.yaml. and .b.yaml.)" "$tmp/twice.err"'
"$DTSIM" sweep plan $D/grid.yaml --dir "$tmp/g" -j 2 --jobs 3 >/dev/null 2>"$tmp/twice.err"; rc=$?
check "-j 2 --jobs 3: exit 2 naming -j/--jobs and both values" '[ $rc -eq 2 ] && grep -q -- "-j/--jobs given twice (.2. and .3.)" "$tmp/twice.err"'
"$DTSIM" sweep run $D/grid.yaml --dir "$tmp/g" --shard 0/1048577 >/dev/null 2>"$tmp/twice.err"; rc=$?
check "--shard 0/1048577: exit 2 saying the range of N" '[ $rc -eq 2 ] && grep -q "N from 1 to 1000000 and 0 <= I < N" "$tmp/twice.err"'

# --- sampling: seeded random (distinct points, reproducible) and Latin hypercube (each value equally often)
S=(--set platform=$D/base.yaml --set workload.gen=neox-19m --set workload.dp=8 --set workload.global_batch=32
   --axis nics.bandwidth=25Gb/s,50Gb/s,100Gb/s --axis network.link_latency=100ns,200ns,300ns --dir "$tmp/smp")
"$DTSIM" sweep plan "${S[@]}" --set sample.method=random --set sample.points=4 --set sample.seed=7 | cut -f3 >"$tmp/r7a"
"$DTSIM" sweep plan "${S[@]}" --set sample.method=random --set sample.points=4 --set sample.seed=7 | cut -f3 >"$tmp/r7b"
check "random sample: 4 distinct points" '[ "$(sort -u "$tmp/r7a" | wc -l)" -eq 4 ]'
check "random sample: the same seed draws the same points" 'cmp -s "$tmp/r7a" "$tmp/r7b"'
"$DTSIM" sweep plan "${S[@]}" --set sample.method=lhs --set sample.points=6 --set sample.seed=3 >"$tmp/lhs"
check "Latin hypercube of 6 points: each of 3 bandwidths twice" \
  '[ "$(grep -o "nics.bandwidth=[^ ]*" "$tmp/lhs" | sort | uniq -c | awk "{print \$1}" | sort -u)" = 2 ]'
check "Latin hypercube of 6 points: each of 3 latencies twice" \
  '[ "$(grep -o "link_latency=[^ 	]*" "$tmp/lhs" | sort | uniq -c | awk "{print \$1}" | sort -u)" = 2 ]'

# --- spec errors carry their position
printf 'dtsim_sweep: 1\nplatform: base.yaml\nworkload: {gen: neox-19m}\naxs:\n  nodes: [1, 2]\n' >"$tmp/bad.yaml"
"$DTSIM" sweep plan "$tmp/bad.yaml" >/dev/null 2>"$tmp/bad.err"; rc=$?
check "unknown spec key: exit 2 at file:line:col with the nearest key" \
  '[ $rc -eq 2 ] && grep -q "bad.yaml:4:1: unknown key .axs. (did you mean .axes.?)" "$tmp/bad.err"'
printf 'dtsim_sweep: 1\nplatform: base.yaml\nworkload: {gen: neox-19m}\naxes:\n  algo: [ring, trie]\n' >"$tmp/bad2.yaml"
"$DTSIM" sweep plan "$tmp/bad2.yaml" >/dev/null 2>"$tmp/bad2.err"; rc=$?
check "bad algorithm in an axis: exit 2 at the value's line:col" '[ $rc -eq 2 ] && grep -q "bad2.yaml:5:16: unknown algorithm .trie." "$tmp/bad2.err"'

# --- issue 9: the files a spec names and its run keys, at the spec's line:col; every exit 2 says why on stderr
base=$(cd $D && pwd)/base.yaml
printf 'dtsim_sweep: 1\nplatform: self.yaml\nworkload: {gen: neox-19m}\naxes:\n  nodes: [1, 2]\n' >"$tmp/self.yaml"
"$DTSIM" sweep plan "$tmp/self.yaml" --dir "$tmp/self" >"$tmp/sf.out" 2>"$tmp/sf.err"; rc=$?
check "a platform that names the spec itself: exit 2 at its line:col (was: exit 2, nothing on stderr)" \
  '[ $rc -eq 2 ] && grep -q "self.yaml:2:11: .platform. names this sweep spec" "$tmp/sf.err"'
printf 'dtsim_sweep: 1\nplatform: nonexist.yaml\nworkload: {gen: neox-19m}\naxes:\n  nodes: [1, 2]\n' >"$tmp/ne.yaml"
"$DTSIM" sweep plan "$tmp/ne.yaml" --dir "$tmp/ne" >/dev/null 2>"$tmp/sf.err"; rc=$?
check "a missing platform: exit 2 at the spec's line:col (was: 'cannot open' alone)" \
  '[ $rc -eq 2 ] && grep -q "ne.yaml:2:11: cannot open the platform file .*nonexist.yaml.: No such file or directory" "$tmp/sf.err"'
for k in "workload: {workload: nw.yaml}|3:22|workload file" "workload: {gen: nw.yaml}|3:17|workload file" \
  "workload: {traces: [nt.dtt]}|3:20|trace file" "workload: {gen: neox-19m}\nrun: {placement: np.txt}|4:18|placement file" \
  "workload: {gen: neox-19m}\naxes:\n  placement: [np.txt]|5:14|placement file"; do
  IFS='|' read -r w at what <<<"$k"
  printf "dtsim_sweep: 1\nplatform: $base\n$w\n" >"$tmp/nf.yaml"
  grep -q "^axes:" "$tmp/nf.yaml" || printf 'axes:\n  nodes: [1]\n' >>"$tmp/nf.yaml"
  "$DTSIM" sweep plan "$tmp/nf.yaml" --dir "$tmp/nf" >/dev/null 2>"$tmp/sf.err"; rc=$?
  check "a missing $what ($w): exit 2 at nf.yaml:$at (was: every point impossible, or no position)" \
    '[ $rc -eq 2 ] && grep -q "nf.yaml:$at: cannot open the $what" "$tmp/sf.err"'
done
printf 'dtsim_sweep: 1\nplatform: /dev/zero\nworkload: {gen: neox-19m}\naxes:\n  nodes: [1, 2]\n' >"$tmp/zero.yaml"
"$DTSIM" sweep plan "$tmp/zero.yaml" --dir "$tmp/zero" >/dev/null 2>"$tmp/sf.err"; rc=$?
check "platform /dev/zero: exit 2 at the 64 MiB limit (was: out of memory after reading gigabytes)" \
  '[ $rc -eq 2 ] && grep -q "zero.yaml:2:11: the platform file ./dev/zero. holds more than 64 MiB" "$tmp/sf.err"'
"$DTSIM" sweep plan --set platform=$D/base.yaml --set workload.gen=neox-19m --axis tp=3,5 --dir "$tmp/none" \
  >"$tmp/sf.out" 2>"$tmp/sf.err"; rc=$?
check "plan where no point can run: exit 2 saying so on stderr (was: the list on stdout alone)" \
  '[ $rc -eq 2 ] && [ "$(grep -c impossible "$tmp/sf.out")" -eq 2 ] && grep -q "^dtsim: error: none of the 2 points can run" "$tmp/sf.err"'
# a run option fixed under 'run' and swept by an axis: refused at the later of the two, for every run option
for o in "algo|ring|tree" "proto|Simple|LL" "fidelity|flow|step"; do
  IFS='|' read -r name v1 v2 <<<"$o"
  printf "dtsim_sweep: 1\nplatform: $base\nworkload: {gen: neox-19m}\nrun: {$name: $v1}\naxes:\n  $name: [$v1, $v2]\n" >"$tmp/ra.yaml"
  "$DTSIM" sweep plan "$tmp/ra.yaml" --dir "$tmp/ra" >/dev/null 2>"$tmp/sf.err"; rc=$?
  check "run.$name and a $name axis: exit 2 at the axis, line 6 (was: accepted)" \
    '[ $rc -eq 2 ] && grep -q "ra.yaml:6:[0-9]*: .run.$name. and the axis .$name. both set the run option --$name" "$tmp/sf.err"'
  printf "dtsim_sweep: 1\nplatform: $base\nworkload: {gen: neox-19m}\naxes:\n  $name: [$v1, $v2]\nrun: {$name: $v1}\n" >"$tmp/ra.yaml"
  "$DTSIM" sweep plan "$tmp/ra.yaml" --dir "$tmp/ra" >/dev/null 2>"$tmp/sf.err"; rc=$?
  check "a $name axis, then run.$name: exit 2 at run.$name, line 6" '[ $rc -eq 2 ] && grep -q "ra.yaml:6:" "$tmp/sf.err"'
done
# a failed write in the sweep folder names --dir (was: "cannot write 'DIR/manifest.jsonl': Is a directory")
mkdir -p "$tmp/md/manifest.jsonl/x"
"$DTSIM" sweep plan $D/grid.yaml --dir "$tmp/md" >/dev/null 2>"$tmp/sf.err"; rc=$?
check "an unwritable manifest: exit 2 naming --dir" \
  '[ $rc -eq 2 ] && grep -q "cannot write .*manifest.jsonl.: Is a directory (the sweep folder .*md. given by --dir" "$tmp/sf.err"'
cp $D/grid-base.yaml "$tmp/grid-base.yaml"
printf 'dtsim_sweep: 1\nplatform: grid-base.yaml\nworkload: {gen: neox-19m}\naxes:\n  nodes: [1]\ndir: md\n' >"$tmp/mdspec.yaml"
"$DTSIM" sweep plan "$tmp/mdspec.yaml" >/dev/null 2>"$tmp/sf.err"; rc=$?
check "an unwritable manifest in the spec's 'dir': exit 2 naming 'dir' at its line:col and --dir" \
  '[ $rc -eq 2 ] && grep -q "given by .dir. at .*mdspec.yaml:6:6: give one you can write there or with --dir DIR" "$tmp/sf.err"'
mkdir -p "$tmp/tdir"
cp tests/data/allreduce8.dtt "$tmp/tdir/"
printf 'dtsim_sweep: 1\nplatform: grid-base.yaml\nworkload: {traces: [tdir]}\naxes:\n  nodes: [1]\n' >"$tmp/tdspec.yaml"
"$DTSIM" sweep plan "$tmp/tdspec.yaml" >/dev/null 2>"$tmp/sf.err"; rc=$?
check "a trace folder in workload.traces: exit 2 at its line:col, list its files (was: 'cannot read', no position)" \
  '[ $rc -eq 2 ] && grep -q "tdspec.yaml:3:20: the trace file .*tdir. is a directory: expected a file (list the directory" "$tmp/sf.err"'
# a device or a pipe as -o: written in place, CSV (was: refused, "-o expects FILE.csv")
"$DTSIM" sweep collect $D/grid.yaml --dir "$tmp/g" -q -o /dev/null >/dev/null 2>"$tmp/sf.err"; rc=$?
check "-o /dev/null: exit 0" '[ $rc -eq 0 ]'
"$DTSIM" sweep collect $D/grid.yaml --dir "$tmp/g" -q -o /dev/full >/dev/null 2>"$tmp/sf.err"; rc=$?
check "-o /dev/full: exit 2 with errno's text" '[ $rc -eq 2 ] && grep -q -- "-o /dev/full: cannot write: No space left on device" "$tmp/sf.err"'
mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/fifo.out" &
"$DTSIM" sweep collect $D/grid.yaml --dir "$tmp/g" -q -o "$tmp/fifo" >/dev/null 2>"$tmp/sf.err"; rc=$?
exec 9<>"$tmp/fifo" 9>&- # a reader still waiting for a writer (dtsim refused the FIFO) sees the end, not a hang
wait
check "-o FIFO: exit 0, the CSV through the pipe, as -o FILE.csv writes it" \
  '[ $rc -eq 0 ] && "$DTSIM" sweep collect $D/grid.yaml --dir "$tmp/g" -q -o "$tmp/fifo.csv" >/dev/null 2>&1 && cmp -s "$tmp/fifo.out" "$tmp/fifo.csv"'
"$DTSIM" sweep collect $D/grid.yaml --dir "$tmp/g" -q --plot /dev/full >/dev/null 2>"$tmp/sf.err"; rc=$?
check "--plot /dev/full: exit 2, a device cannot hold the picture, its data and its script" \
  '[ $rc -eq 2 ] && grep -q -- "--plot ./dev/full. is a device or a pipe: the plot is three files" "$tmp/sf.err"'

# --- Ctrl-C: finished points stay cached, nothing half-written, the rerun runs the rest
"$DTSIM" sweep --set platform=$D/base.yaml --set workload.gen=neox-1.3b --set workload.tp=2 --set workload.dp=4 \
  --set workload.global_batch=2048 --axis nics.bandwidth=25Gb/s,50Gb/s,100Gb/s,200Gb/s -j 1 --dir "$tmp/int" -q \
  >/dev/null 2>"$tmp/int.err" &
pid=$!
for _ in $(seq 1 4800); do  # up to 4 minutes (sanitizer builds on a loaded machine)
  [ "$(ls "$tmp/int/results/" 2>/dev/null | grep -c '\.json$')" -ge 1 ] && break
  sleep 0.05
done
kill -INT $pid
wait $pid; rc=$?
n=$(ls "$tmp/int/results/" | grep -c '\.json$')
check "Ctrl-C exits 130" '[ $rc -eq 130 ]'
check "Ctrl-C leaves the finished points ($n) cached and not all" '[ "$n" -ge 1 ] && [ "$n" -lt 4 ]'
check "Ctrl-C leaves no temporary files" '[ -z "$(ls "$tmp/int/results/" | grep tmp)" ]'
"$DTSIM" sweep --set platform=$D/base.yaml --set workload.gen=neox-1.3b --set workload.tp=2 --set workload.dp=4 \
  --set workload.global_batch=2048 --axis nics.bandwidth=25Gb/s,50Gb/s,100Gb/s,200Gb/s -j 2 --dir "$tmp/int" \
  >/dev/null 2>"$tmp/int2.err"
check "the rerun runs only the $((4 - n)) missing points" 'grep -q "4 points: $n cached, $((4 - n)) to run" "$tmp/int2.err"'

finish
