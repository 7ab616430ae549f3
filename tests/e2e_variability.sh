#!/usr/bin/env bash
# End-to-end tests of stragglers, jitter, late ranks and --samples (docs/whatif.md). Expected values by hand:
# a rank at speed f computes d/f; a ring all-reduce of S bytes over 2 GPUs of one NVSwitch node takes
# 2(n-1)a + 2(n-1)/n S/B with a = 1us, B = 450GB/s (platforms/dgx-h100-4node.yaml) whatever the compute before
# it; a late start of D adds D; the jitter is lognormal with mean 1 and the stated sigma.
# usage: tests/e2e_variability.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: e2e_variability.sh DTSIM}
source "$(dirname "$0")/e2e-lib.sh"

P=platforms/dgx-h100-4node.yaml
# the all-reduce of 1e8 bytes on 2 GPUs: 2 us + 1e8 / 450e9 s
AR=$(awk 'BEGIN { printf "%.17g", 2 * 1e-6 + 1e8 / 450e9 }')
cat >"$tmp/dp2.dtt" <<'EOF'
dtsim_trace 1
ranks 2
group dp0 0,1
rank 0
s0 compute dur=10ms
s0 allreduce group=dp0 bytes=100000000
s0 mark name=iter1
rank 1
s0 compute dur=10ms
s0 allreduce group=dp0 bytes=100000000
s0 mark name=iter1
EOF
it() { jq -r '.iterations_s[0]' "$1"; }
run() { local out=$1; shift; "$DTSIM" run --json "$@" >"$out" 2>"$tmp/err"; }

# 1. one DP rank at half speed in a compute-bound trace: its compute doubles, the collective is unchanged
run "$tmp/base.json" $P "$tmp/dp2.dtt"
check "nominal: iteration = 10 ms + all-reduce" 'close "$(it "$tmp/base.json")" "$(awk -v a=$AR "BEGIN{printf \"%.17g\", 0.010 + a}")"'
for ex in "" "--exact"; do
  run "$tmp/slow.json" $P "$tmp/dp2.dtt" --slow 1=0.5 $ex
  check "slow rank 1 at 0.5 $ex: iteration = 20 ms + all-reduce" \
    'close "$(it "$tmp/slow.json")" "$(awk -v a=$AR "BEGIN{printf \"%.17g\", 0.020 + a}")"'
  check "slow rank 1 at 0.5 $ex: the all-reduce itself is unchanged" \
    'close "$(jq -r .by_kind.allreduce.time_s "$tmp/slow.json")" "$AR"'
  check "slow rank 1 at 0.5 $ex: rank 1 computes 20 ms, rank 0 10 ms" \
    'close "$(jq -r ".per_rank[1].compute_s" "$tmp/slow.json")" 0.020 && close "$(jq -r ".per_rank[0].compute_s" "$tmp/slow.json")" 0.010'
done
run "$tmp/slow.json" $P "$tmp/dp2.dtt" --slow 1=0.5
check "slow: the closed-form wait still applies" 'jq -e "[.notes[] | select(contains(\"closed form\"))] | length == 1" "$tmp/slow.json" >/dev/null'
check "slow: said in notes and in variability" \
  'jq -e ".variability.slow_ranks == 1 and ([.notes[] | select(contains(\"rank 1 at 0.5\"))] | length == 1)" "$tmp/slow.json" >/dev/null'
run "$tmp/fast.json" $P "$tmp/dp2.dtt" --slow 0-1=2
check "both ranks at speed 2: iteration = 5 ms + all-reduce" \
  'close "$(it "$tmp/fast.json")" "$(awk -v a=$AR "BEGIN{printf \"%.17g\", 0.005 + a}")"'

# the same straggler from the platform's variability section, by GPU and by node
{ cat $P; printf 'variability:\n  speed:\n    - {gpus: 1, factor: 0.5}\n'; } >"$tmp/pv.yaml"
run "$tmp/pv.json" "$tmp/pv.yaml" "$tmp/dp2.dtt"
check "variability.speed gpus 1 = --slow 1=0.5" '[ "$(it "$tmp/pv.json")" = "$(it "$tmp/slow.json")" ]'
{ cat $P; printf 'variability:\n  speed:\n    - {nodes: 0, factor: 0.25}\n    - {gpus: 0, factor: 0.5}\n'; } >"$tmp/pn.yaml"
run "$tmp/pn.json" "$tmp/pn.yaml" "$tmp/dp2.dtt"
check "variability.speed: node 0 at 0.25, GPU 0 at 0.5 (later wins): iteration = 40 ms + all-reduce" \
  'close "$(it "$tmp/pn.json")" "$(awk -v a=$AR "BEGIN{printf \"%.17g\", 0.040 + a}")"'
run "$tmp/pnc.json" "$tmp/pn.yaml" "$tmp/dp2.dtt" --slow 0-1=1
check "--slow wins over the platform" '[ "$(it "$tmp/pnc.json")" = "$(it "$tmp/base.json")" ] && ! jq -e .variability "$tmp/pnc.json" >/dev/null'

# 2. a late start adds exactly its delay
for r in 0 1; do
  run "$tmp/late.json" $P "$tmp/dp2.dtt" --late $r=3ms
  check "rank $r 3 ms late: iteration = 13 ms + all-reduce" \
    'close "$(it "$tmp/late.json")" "$(awk -v a=$AR "BEGIN{printf \"%.17g\", 0.013 + a}")"'
done
{ cat $P; printf 'variability:\n  late:\n    - {gpus: 1, delay: 3ms}\n'; } >"$tmp/pl.yaml"
run "$tmp/pl.json" "$tmp/pl.yaml" "$tmp/dp2.dtt"
check "variability.late = --late" '[ "$(it "$tmp/pl.json")" = "$(it "$tmp/late.json")" ]'
check "late start: on the critical path as waiting" \
  'close "$(jq -r .bound.wait_s "$tmp/late.json")" 0.003'

# 3. jitter: the same seed gives byte-identical output, text and JSON; other seeds differ
"$DTSIM" run $P "$tmp/dp2.dtt" --jitter 0.2 --seed 7 >"$tmp/j1.txt" 2>/dev/null
"$DTSIM" run $P "$tmp/dp2.dtt" --jitter 0.2 --seed 7 >"$tmp/j2.txt" 2>/dev/null
check "same seed: byte-identical text" 'cmp -s "$tmp/j1.txt" "$tmp/j2.txt"'
run "$tmp/j1.json" $P "$tmp/dp2.dtt" --jitter 0.2 --seed 7
run "$tmp/j2.json" $P "$tmp/dp2.dtt" --jitter 0.2 --seed 7
check "same seed: byte-identical JSON" 'cmp -s "$tmp/j1.json" "$tmp/j2.json"'
run "$tmp/j3.json" $P "$tmp/dp2.dtt" --jitter 0.2 --seed 8
check "another seed: another iteration time" '[ "$(it "$tmp/j1.json")" != "$(it "$tmp/j3.json")" ]'
run "$tmp/j4.json" $P "$tmp/dp2.dtt" --jitter 0.2 --seed 7 --exact
check "jitter with --exact: the same numbers (draws keyed by rank, stream and op)" \
  'close "$(it "$tmp/j4.json")" "$(it "$tmp/j1.json")" 1e-9'
run "$tmp/j0.json" $P "$tmp/dp2.dtt" --jitter 0
check "--jitter 0: as without it" '[ "$(it "$tmp/j0.json")" = "$(it "$tmp/base.json")" ]'

# the per-op factors follow the stated distribution: 2000 ops of 1 ms, a mark after each, one iteration each
{
  printf 'dtsim_trace 1\nranks 1\nrank 0\n'
  for i in $(seq 2000); do printf 's0 compute dur=1ms\ns0 mark name=i%d\n' $i; done
} >"$tmp/ops.dtt"
run "$tmp/ops.json" $P "$tmp/ops.dtt" --jitter 0.2 --seed 3
jq -r '.iterations_s[]' "$tmp/ops.json" >"$tmp/f"
# sigma 0.2, n 2000: the mean's standard error is sqrt(exp(0.04) - 1) / sqrt(2000) = 0.0045 (of 1 ms); the log's
# standard deviation 0.2 has standard error 0.2 / sqrt(2 * 2000) = 0.0032; both checked within 4 standard errors
check "jitter: 2000 factors have mean 1 (within 4 standard errors)" \
  'awk "{ s += \$1 * 1000; n++ } END { m = s / n; d = m - 1; if (d < 0) d = -d; exit !(n == 2000 && d < 4 * 0.0045) }" "$tmp/f"'
check "jitter: log of the factors has sd 0.2 and mean -sigma^2/2 (within 4 standard errors)" \
  'awk "{ x = log(\$1 * 1000); s += x; q += x * x; n++ } END { m = s / n; sd = sqrt(q / n - m * m);
     dm = m + 0.02; if (dm < 0) dm = -dm; ds = sd - 0.2; if (ds < 0) ds = -ds; exit !(dm < 4 * 0.2 / sqrt(n) && ds < 4 * 0.0032) }" "$tmp/f"'

# 4. --samples: N seeds, mean and 5-95 % interval of the iteration, recomputed here from the samples listed
cat >"$tmp/one.dtt" <<'EOF'
dtsim_trace 1
ranks 1
rank 0
s0 compute dur=1s
s0 mark name=iter
EOF
run "$tmp/s.json" $P "$tmp/one.dtt" --jitter 0.2 --seed 11 --samples 60
check "samples: 60 seeds 11-70" 'jq -e ".samples.n == 60 and .samples.seeds == [11, 70] and (.samples.iteration_samples_s | length) == 60" "$tmp/s.json" >/dev/null'
check "samples: the first sample is the report's own run (seed 11)" \
  '[ "$(jq -r ".samples.iteration_samples_s[0]" "$tmp/s.json")" = "$(it "$tmp/s.json")" ]'
run "$tmp/s12.json" $P "$tmp/one.dtt" --jitter 0.2 --seed 12
check "samples: sample 1 is seed 12's run" \
  'close "$(jq -r ".samples.iteration_samples_s[1]" "$tmp/s.json")" "$(it "$tmp/s12.json")" 1e-12'
jq -r '.samples.iteration_samples_s[]' "$tmp/s.json" | sort -g >"$tmp/sorted"
# type-7 quantiles: h = q (n - 1), v[floor h] + frac(h) (v[floor h + 1] - v[floor h])
q() { awk -v q=$1 '{ v[NR - 1] = $1; n = NR } END { h = q * (n - 1); l = int(h); printf "%.17g", v[l] + (h - l) * (v[l + 1] - v[l]) }' "$tmp/sorted"; }
mean=$(awk '{ s += $1 } END { printf "%.17g", s / NR }' "$tmp/sorted")
check "samples: mean as computed from the samples" 'close "$(jq -r .samples.iteration_s.mean "$tmp/s.json")" "$mean" 1e-12'
check "samples: p5 as computed from the samples" 'close "$(jq -r .samples.iteration_s.p5 "$tmp/s.json")" "$(q 0.05)" 1e-12'
check "samples: p95 as computed from the samples" 'close "$(jq -r .samples.iteration_s.p95 "$tmp/s.json")" "$(q 0.95)" 1e-12'
# lognormal mean 1, sigma 0.2: 5 % and 95 % quantiles exp(-sigma^2/2 -+ 1.645 sigma) = 0.7054, 1.3620; with 60
# samples the empirical quantiles' standard error is about sqrt(0.05 * 0.95 / 60) / pdf ~ 0.05
check "samples: p5 near the lognormal's 0.705 s, p95 near 1.362 s" \
  'close "$(jq -r .samples.iteration_s.p5 "$tmp/s.json")" 0.7054 0.12 && close "$(jq -r .samples.iteration_s.p95 "$tmp/s.json")" 1.3620 0.12'
check "samples: critical-path compute equals the iteration (a compute-only trace)" \
  'close "$(jq -r .samples.critical_path.compute_s.mean "$tmp/s.json")" "$mean" 1e-9'
"$DTSIM" run $P "$tmp/one.dtt" --jitter 0.2 --seed 11 --samples 60 >"$tmp/s.txt" 2>&1
check "samples: text report lists the interval" 'grep -q "^samples  *60 seeds 11-70, jitter lognormal sigma 0.2" "$tmp/s.txt" && grep -q "^  iteration " "$tmp/s.txt"'

# 5. shortcuts: folding kept when a whole class has one speed, refused when one rank differs; both equal --exact
# (max_rank left out: with jitter, ranks whose exposure agrees to 1e-12 may swap the argmax)
numbers() { jq -r '[paths(numbers) as $p | select(($p | last) != "max_rank") | "\($p | map(tostring) | join("/"))=\(getpath($p))"] | .[]' "$1"; }
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
G="bench/h100-16node.yaml --gen gpt3-175b --tp 8 --pp 2 --dp 2 --global-batch 4 --layers 4"
run "$tmp/g.json" $G
run "$tmp/gc.json" $G --slow 0-7=0.8
run "$tmp/gce.json" $G --slow 0-7=0.8 --exact
check "gpt: a whole TP class at 0.8 stays folded" 'jq -e "[.notes[] | select(contains(\"ranks folded\"))] | length == 1" "$tmp/gc.json" >/dev/null'
same "gpt: class at 0.8, folded = --exact" "$tmp/gc.json" "$tmp/gce.json"
check "gpt: the slower class makes the iteration longer" \
  'awk -v a="$(it "$tmp/gc.json")" -v b="$(it "$tmp/g.json")" "BEGIN { exit !(a > b) }"'
run "$tmp/g1.json" $G --slow 3=0.8
run "$tmp/g1e.json" $G --slow 3=0.8 --exact
check "gpt: one TP rank at 0.8 refuses folding, said in notes" \
  'jq -e "([.notes[] | select(contains(\"ranks folded\"))] | length == 0) and ([.notes[] | select(contains(\"ranks not folded\"))] | length == 1)" "$tmp/g1.json" >/dev/null'
check "gpt: one TP rank at 0.8: closed-form waits still used" 'jq -e "[.notes[] | select(contains(\"closed form\"))] | length == 1" "$tmp/g1.json" >/dev/null'
same "gpt: one TP rank at 0.8, shortcuts = --exact" "$tmp/g1.json" "$tmp/g1e.json"
check "gpt: one slow TP rank slows the iteration as much as its whole class" \
  'close "$(it "$tmp/g1.json")" "$(it "$tmp/gc.json")" 1e-6'
run "$tmp/gj.json" $G --jitter 0.05 --seed 2
run "$tmp/gje.json" $G --jitter 0.05 --seed 2 --exact
same "gpt: jitter, shortcuts = --exact" "$tmp/gj.json" "$tmp/gje.json"

# 6. bad values are clear errors (exit 2, the value and what was expected)
err() { # err NAME 'EXPECTED TEXT' args...: exit 2 and the message
  local name=$1 want=$2
  shift 2
  "$DTSIM" run "$@" >/dev/null 2>"$tmp/e"
  local rc=$?
  if [ $rc -eq 2 ] && grep -qF -- "$want" "$tmp/e"; then ok "$name"; else bad "$name (exit $rc: $(head -1 "$tmp/e"))"; fi
}
err "--slow 1=0" "expected a speed factor from 0.001 to 1000" $P "$tmp/dp2.dtt" --slow 1=0
err "--slow 1=-2" "found '-2'" $P "$tmp/dp2.dtt" --slow 1=-2
err "--slow 1=fast" "found 'fast'" $P "$tmp/dp2.dtt" --slow 1=fast
err "--slow x=0.5" "expected a list such as 3, 0-7 or 0,5,9-11, found 'x'" $P "$tmp/dp2.dtt" --slow x=0.5
err "--slow 3-1=0.5" "ends before it starts" $P "$tmp/dp2.dtt" --slow 3-1=0.5
err "--slow 0.5" "--slow expects RANKS=FACTOR" $P "$tmp/dp2.dtt" --slow 0.5
err "--slow 5=0.5 on 2 ranks" "--slow names rank 5, but the trace has ranks 0-1" $P "$tmp/dp2.dtt" --slow 5=0.5
err "--late 1=3 (no unit)" "expected a delay from 0 to 1e+06 s with a unit" $P "$tmp/dp2.dtt" --late 1=3
err "--late 1=-1ms" "found '-1ms'" $P "$tmp/dp2.dtt" --late 1=-1ms
err "--jitter 2" "--jitter expects the lognormal sigma, a number from 0 to 1, found '2'" $P "$tmp/dp2.dtt" --jitter 2
err "--seed -1" "--seed expects a whole number" $P "$tmp/dp2.dtt" --seed -1
err "--samples 0" "--samples expects a count of seeds from 1 to" $P "$tmp/dp2.dtt" --samples 0 --jitter 0.1
err "--samples without jitter" "--samples needs jitter" $P "$tmp/dp2.dtt" --samples 5
yerr() { # yerr NAME 'EXPECTED TEXT' 'YAML of the section'
  { cat $P; printf '%s\n' "$3"; } >"$tmp/bad.yaml"
  err "$1" "$2" "$tmp/bad.yaml" "$tmp/dp2.dtt"
}
L=$(($(wc -l <$P) + 1))
yerr "yaml: unknown key" "bad.yaml:$((L + 1)):3: unknown key 'jiter' in 'variability' (did you mean 'jitter'?)" \
  $'variability:\n  jiter: {sigma: 0.1}'
yerr "yaml: factor 0" "bad.yaml:$((L + 2)):25: expected a speed factor from 0.001 to 1000" \
  $'variability:\n  speed:\n    - {gpus: 1, factor: 0}'
yerr "yaml: GPU out of range" "bad.yaml:$((L + 2)):7: 'variability.speed' names GPU 40, but the platform has GPUs 0-31" \
  $'variability:\n  speed:\n    - {gpus: "0-3,40", factor: 0.5}'
yerr "yaml: node out of range" "names node 4, but the platform has nodes 0-3" \
  $'variability:\n  late:\n    - {nodes: 4, delay: 1ms}'
yerr "yaml: both gpus and nodes" "needs exactly one of 'gpus' and 'nodes'" \
  $'variability:\n  speed:\n    - {gpus: 1, nodes: 0, factor: 0.5}'
yerr "yaml: delay without unit" "bad value for 'variability.late.delay'" \
  $'variability:\n  late:\n    - {gpus: 1, delay: 5}'
yerr "yaml: sigma 1.5" "expected a number from 0 to 1 for 'variability.jitter.sigma', found '1.5'" \
  $'variability:\n  jitter: {distribution: lognormal, sigma: 1.5}'
yerr "yaml: distribution normal" "unknown value 'normal' for 'variability.jitter.distribution' (expected 'lognormal')" \
  $'variability:\n  jitter: {distribution: normal, sigma: 0.1}'
yerr "yaml: seed text" "expected a whole number from 0 to 9007199254740992 for 'variability.seed', found 'abc'" \
  $'variability:\n  seed: abc'
{ cat $P; printf 'variability:\n  seed: 7\n  jitter: {sigma: 0.2}\n'; } >"$tmp/pj.yaml"
run "$tmp/pj.json" "$tmp/pj.yaml" "$tmp/dp2.dtt"
check "variability.jitter and seed = --jitter 0.2 --seed 7" '[ "$(it "$tmp/pj.json")" = "$(it "$tmp/j1.json")" ]'
finish
