#!/usr/bin/env bash
# The whole end-to-end validation table (docs/validation.md): every row of validation/references/
# e2e_iterations.csv with the compute model and again with the plain model, text and JSON kept in OUTDIR.
# Not a test: the 10,752- and 12,288-GPU rows take CPU hours. usage: bench/e2e.sh [path/to/dtsim] [OUTDIR]
# [validate --e2e options: --max-gpus N, --source NAME, --jobs N, --uncalibrated]   (run from the repository root)
set -euo pipefail
DTSIM=${1:-build/dtsim}
OUT=${2:-e2e-out}
shift $(($# > 2 ? 2 : $#))
mkdir -p "$OUT"
for model in "" --plain; do
  name=${model:+plain}
  name=${name:-compute}
  /usr/bin/time -f "%e s wall, %U s user, %M KB peak" -o "$OUT/$name.time" \
    "$DTSIM" validate --e2e $model "$@" --json >"$OUT/$name.json" 2>"$OUT/$name.log"
  echo "== $name model ($(cat "$OUT/$name.time"))"
  jq -r '.rows[] | [.source, .model, .gpus, .measured_s, .uncalibrated_s, .uncalibrated_error, .simulated_s,
                    .rel_error, .role, .simulations, .cpu_s, .peak_rss_mib] | @tsv' "$OUT/$name.json"
  jq -r '.sources[] | "median \(.source): \(.median_error) over \(.predicted) rows, pass \(.pass)"' "$OUT/$name.json"
done
