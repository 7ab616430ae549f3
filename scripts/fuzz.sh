#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz with clang (ASan + UBSan) and runs each target for a bounded time
# on a seed corpus assembled from the shipped files, after replaying its committed regression inputs. Exit 1
# on any finding (crash, leak, undefined behaviour, timeout or out-of-memory); the input is kept in
# build-fuzz/findings/TARGET/. tests/fuzz/README.md says how to run a long campaign.
# The mutation sequence is seeded (FUZZ_SEED, default 1) so that a finding in CI is found again by the same
# command on another machine; FUZZ_SEED=0 lets libFuzzer pick a seed (long campaigns).
# usage: [FUZZ_SEED=N] scripts/fuzz.sh [SECONDS_PER_TARGET (default 60)] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
seed=${FUZZ_SEED:-1}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(native platform kineto workload placement sweep)
if ! command -v clang >/dev/null || ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang and clang++ are needed (scripts/deps.sh installs them)" >&2
  exit 1
fi
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDTSIM_FUZZ=ON >/dev/null
cmake --build build-fuzz -j2 --target $(printf 'fuzz_%s ' "${targets[@]}") >/dev/null
# seeds: the shipped files of each input kind, plus tests/fuzz/seeds/TARGET
seeds() {
  case $1 in
    native) ls tests/data/*.dtt ;;
    platform) ls platforms/*.yaml tests/data/*.yaml bench/*.yaml ;;
    kineto) ls tests/data/*.json 2>/dev/null || true ;;
    sweep) ls tests/data/sweep/*.yaml docs/sweep/*.yaml ;;
    *) ;;
  esac
  ls tests/fuzz/seeds/"$1"/* 2>/dev/null || true
}
status=0
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
for t in "${targets[@]}"; do
  bin=build-fuzz/fuzz_$t
  corpus=build-fuzz/corpus/$t
  findings=build-fuzz/findings/$t
  mkdir -p "$corpus" "$findings"
  seeds "$t" | while read -r f; do cp "$f" "$corpus/"; done
  regress=(tests/fuzz/regressions/"$t"/*)
  regress=("${regress[@]/*\/.keep/}")
  for r in "${regress[@]}"; do
    [ -f "$r" ] || continue
    if ! "$bin" -rss_limit_mb=2048 -timeout=30 "$r" >"$findings/regression.log" 2>&1; then
      echo "fuzz.sh: $t: regression input $r fails again (log: $findings/regression.log)"
      status=1
    fi
  done
  log=build-fuzz/fuzz_$t.log
  if "$bin" "$corpus" -dict=tests/fuzz/$t.dict -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 \
       -timeout=30 -seed="$seed" -print_final_stats=1 -artifact_prefix="$findings/" >"$log" 2>&1; then
    echo "fuzz.sh: $t: no finding in ${secs} s: $(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}') inputs," \
      "$(grep -oE 'cov: [0-9]+' "$log" | tail -1)"
  else
    echo "fuzz.sh: $t: FINDING with FUZZ_SEED=$seed (log: $log, input in $findings/):"
    grep -E "ERROR|runtime error|fuzz invariant|SUMMARY" "$log" | head -5
    status=1
  fi
done
exit $status
