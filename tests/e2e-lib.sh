# Shared helpers of the end-to-end tests (sourced): a temporary directory removed on exit, pass/fail counting,
# a relative-closeness check, and the closing 'N passed, M failed' line with the exit status.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
# check NAME 'SHELL CONDITION': counts the condition's outcome under NAME
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
# close A B [TOL]: |A - B| <= TOL * |B| (TOL defaults to 1e-6)
close() { awk -v a="$1" -v b="$2" -v tol="${3:-1e-6}" 'BEGIN { d = a - b; if (d < 0) d = -d; s = (b < 0 ? -b : b); exit !(d <= tol * s) }'; }
# Every 'dtsim run --json' report an e2e test prints is kept and, in finish, validated against
# docs/report.schema.json (tests/validate_report.py, python3-jsonschema): DTSIM becomes a wrapper that saves each
# one (stdout, stderr and exit status pass through unchanged).
if [ -n "${DTSIM:-}" ] && [ -z "${DTSIM_REAL:-}" ]; then
  export DTSIM_REAL=$DTSIM DTSIM_REPORTS="$tmp/reports"
  mkdir -p "$DTSIM_REPORTS"
  cat >"$tmp/dtsim-wrap" <<'WRAP'
#!/usr/bin/env bash
json=0
[ "${1:-}" = run ] && for a in "$@"; do [ "$a" = --json ] && json=1; done
[ $json -eq 1 ] || exec "$DTSIM_REAL" "$@"
out=$(mktemp "$DTSIM_REPORTS/report.XXXXXX")
"$DTSIM_REAL" "$@" >"$out"; rc=$?
cat "$out"
# usage errors (exit 2) print no report
if [ $rc -eq 2 ] || [ ! -s "$out" ]; then rm -f "$out"; else mv "$out" "$out.json"; fi
exit $rc
WRAP
  chmod +x "$tmp/dtsim-wrap"
  DTSIM="$tmp/dtsim-wrap"
fi
# finish: validates the reports kept, prints the summary line and exits non-zero when a check failed
finish() {
  if [ -n "${DTSIM_REPORTS:-}" ] && ls "$DTSIM_REPORTS"/*.json >/dev/null 2>&1; then
    n=$(ls "$DTSIM_REPORTS"/*.json | wc -l)
    if python3 "$(dirname "${BASH_SOURCE[0]}")/validate_report.py" "$(dirname "${BASH_SOURCE[0]}")/../docs/report.schema.json" \
      "$DTSIM_REPORTS"/*.json >"$tmp/schema.out" 2>&1; then
      ok "all $n --json reports validate against docs/report.schema.json"
    else
      cat "$tmp/schema.out"
      bad "all $n --json reports validate against docs/report.schema.json"
    fi
  fi
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
  exit
}
