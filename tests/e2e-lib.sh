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
# finish: prints the summary line and exits non-zero when a check failed
finish() {
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
  exit
}
