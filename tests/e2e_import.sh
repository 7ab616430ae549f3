#!/usr/bin/env bash
# End-to-end tests of the capture importers (dtsim import / run on hand-made captures under tests/data/,
# each file saying where its format comes from). Expected values are hand counts and closed forms of those
# small inputs, never the output of an earlier run.
# usage: tests/e2e_import.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: e2e_import.sh DTSIM}
source "$(dirname "$0")/e2e-lib.sh"

# --- the importer table and --explain
"$DTSIM" import --explain >"$tmp/all.txt" 2>&1; rc=$?
check "import --explain without files lists every importer" '[ $rc -eq 0 ] && grep -q "^native:" "$tmp/all.txt" && grep -q "^kineto:" "$tmp/all.txt"'
"$DTSIM" import --explain tests/data/allreduce8.dtt >"$tmp/ex.txt" 2>&1; rc=$?
check "import --explain FILE names the sniffed format" '[ $rc -eq 0 ] && grep -q "^format: native, .*sniffed from the content" "$tmp/ex.txt"'
check "import --explain FILE gives the trace size" 'grep -q "^trace: 8 ranks" "$tmp/ex.txt"'
"$DTSIM" import --format nosuch tests/data/allreduce8.dtt -o "$tmp/x.dtt" >/dev/null 2>"$tmp/bf.err"; rc=$?
check "an unknown --format lists the formats" '[ $rc -eq 2 ] && grep -q "kineto" "$tmp/bf.err"'
"$DTSIM" import tests/data/allreduce8.dtt tests/data/node8.yaml -o "$tmp/x.dtt" >/dev/null 2>"$tmp/mx.err"; rc=$?
check "files of different formats are refused" '[ $rc -eq 2 ] && grep -q "node8.yaml" "$tmp/mx.err"'

finish
