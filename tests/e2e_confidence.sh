#!/usr/bin/env bash
# End-to-end test of the validated error every report carries (docs/report.md, "Validated error"): the shipped
# validation runs (validation/results/*.json) are what dtsim computes today (the collective tables in full, the
# iteration rows CI can afford: --max-gpus 8), validation/errors.csv and docs/validation.md's rows section are what
# scripts/validation_errors.sh computes from those runs, and a report's interval is [T/(1+e), T/(1-e)] with e the
# median |error| of the class its model size or collective size falls in, read here from the CSV.
# usage: tests/e2e_confidence.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: e2e_confidence.sh DTSIM}
REAL=$DTSIM
source "$(dirname "$0")/e2e-lib.sh"

# --- the shipped runs are current
"$REAL" validate --json >"$tmp/c.json" 2>/dev/null
check "validate --json: the same rows as validation/results/collectives.json, each error within 1e-9" \
  'jq -e --slurpfile s validation/results/collectives.json "[.tables[].rows[]] as \$a | [\$s[0].tables[].rows[]] as \$b |
     (\$a | length) == (\$b | length) and ([range(\$a | length) | (\$a[.].rel_error - \$b[.].rel_error) | fabs] | max) < 1e-9" \
     "$tmp/c.json" >/dev/null'
"$REAL" validate --e2e --max-gpus 8 --json >"$tmp/e.json" 2>/dev/null
check "validate --e2e --max-gpus 8: its rows match validation/results/e2e.json (error within 1e-5, same role)" \
  'jq -e --slurpfile s validation/results/e2e.json "[.rows[] | select(.role != \"skipped\")] as \$a |
     (\$a | length) > 1 and all(\$a[]; . as \$r | any(\$s[0].rows[]; .source == \$r.source and .model == \$r.model and
       .gpus == \$r.gpus and .role == \$r.role and ((.rel_error - \$r.rel_error) | fabs) < 1e-5))" "$tmp/e.json" >/dev/null'

# --- the generated files are what the script computes from the runs
cp docs/validation.md "$tmp/validation.md"
scripts/validation_errors.sh "$REAL" "$tmp/errors.csv" "$tmp/validation.md"
check "validation/errors.csv is scripts/validation_errors.sh's output" 'diff -q "$tmp/errors.csv" validation/errors.csv >/dev/null'
check "docs/validation.md's rows section is scripts/validation_errors.sh's output" 'diff -q "$tmp/validation.md" docs/validation.md >/dev/null'
rows_section() { sed -n '/^<!-- rows:begin/,/^<!-- rows:end/p' docs/validation.md; }
check "every collective and iteration row is tabled in docs/validation.md" \
  '[ "$(rows_section | grep -c "^| .* | \(time_us\|busbw_GBps\) | ")" -eq "$(jq "[.tables[].rows[]] | length" "$tmp/c.json")" ] &&
   [ "$(rows_section | grep -c "^| .* | \(calibration\|predicted\|predicted from another source\|skipped\) |\$")" -eq "$(jq ".rows | length" validation/results/e2e.json)" ]'

# class of a value: the band whose [lo, hi) holds it (the CSV's classes with rows)
band_of() { awk -F, -v k="$1" -v v="$2" '$1 == k && $2 != "all" && $5 > 0 && v >= $3 && ($4 == "inf" || v < $4) { print $2 "," $6 }' validation/errors.csv; }

# --- a generated trace: its model size picks the iteration class
"$DTSIM" gen neox-125m --tp 2 --dp 4 --global-batch 16 -o "$tmp/g.dtt" 2>/dev/null
params=$(sed -n 's/^meta params=//p' "$tmp/g.dtt")
"$DTSIM" run --json platforms/dgx-h100.yaml "$tmp/g.dtt" >"$tmp/g.json" 2>/dev/null
want=$(band_of iteration "$params")
got=$(jq -r '.validated_error.iteration | "\(.band),\(.median_abs_error)"' "$tmp/g.json")
check "iteration class of a ${params}-parameter model: the CSV's band and error ($want)" '[ -n "$want" ] && [ "$got" = "$want" ]'
e=${want#*,}
T=$(jq '.iterations_s | add / length' "$tmp/g.json")
lo=$(awk -v t="$T" -v e="$e" 'BEGIN { printf "%.17g", t / (1 + e) }')
hi=$(awk -v t="$T" -v e="$e" 'BEGIN { printf "%.17g", t / (1 - e) }')
check "iteration interval = [T/(1+e), T/(1-e)] around the mean iteration" \
  'close "$(jq .validated_error.iteration.time_s "$tmp/g.json")" "$T" 1e-9 &&
   close "$(jq .validated_error.iteration.low_s "$tmp/g.json")" "$lo" 1e-9 &&
   close "$(jq .validated_error.iteration.high_s "$tmp/g.json")" "$hi" 1e-9'
size=$(jq '.by_kind.allreduce | .algbw_GBps * 1e9 * .time_s / .count' "$tmp/g.json")
want=$(band_of collective "$size")
got=$(jq -r '.validated_error.by_kind.allreduce | "\(.band),\(.median_abs_error)"' "$tmp/g.json")
check "allreduce class of its mean size ($size B): the CSV's band and error ($want)" '[ -n "$want" ] && [ "$got" = "$want" ]'
e=${want#*,}
T=$(jq '.by_kind.allreduce | .time_s / .count' "$tmp/g.json")
lo=$(awk -v t="$T" -v e="$e" 'BEGIN { printf "%.17g", t / (1 + e) }')
hi=$(awk -v t="$T" -v e="$e" 'BEGIN { printf "%.17g", t / (1 - e) }')
check "allreduce interval = [T/(1+e), T/(1-e)] around the mean instance time" \
  'close "$(jq .validated_error.by_kind.allreduce.low_s "$tmp/g.json")" "$lo" 1e-9 &&
   close "$(jq .validated_error.by_kind.allreduce.high_s "$tmp/g.json")" "$hi" 1e-9'
"$DTSIM" run platforms/dgx-h100.yaml "$tmp/g.dtt" >"$tmp/g.txt" 2>/dev/null
check "the text report prints the iteration's validated error" \
  'grep -q "^  iteration *+-[0-9.]* % (iterations, model size <10B" "$tmp/g.txt"'

# --- a trace without a model size: the class over every iteration row
"$DTSIM" run --json tests/data/node8.yaml tests/data/allreduce8.dtt >"$tmp/a.json" 2>/dev/null
want=$(awk -F, '$1 == "iteration" && $2 == "all" { print $6 }' validation/errors.csv)
check "no model size in the trace: the iteration class is 'all' ($want)" \
  '[ "$(jq -r ".validated_error.iteration | \"\(.band),\(.median_abs_error)\"" "$tmp/a.json")" = "all,$want" ] &&
   [ "$(jq ".validated_error.iteration | has(\"params\")" "$tmp/a.json")" = false ]'

finish
