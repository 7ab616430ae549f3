#!/usr/bin/env bash
# End-to-end tests of the report's analysis sections (docs/report.md): per-link accounting, bound, critical path,
# exposed communication per dimension, histogram, timeline. Expected values come from closed forms and hand counts
# with the constants of the shipped test platforms, never from an earlier run.
# usage: tests/e2e_report.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: e2e_report.sh DTSIM}
source "$(dirname "$0")/e2e-lib.sh"

# --- shared NIC: ranks 0 and 1 send 1 GB each through node 0's one NIC (25 GB/s): 2 GB / 25 GB/s = 80 ms,
# the NIC busy the whole makespan (less the route latency before the first byte), two flows at once
"$DTSIM" run --json tests/data/shared-nic.yaml tests/data/shared-nic.dtt >"$tmp/nic.json" 2>"$tmp/nic.err"; rc=$?
check "shared NIC exits 0" '[ $rc -eq 0 ]'
check "shared NIC: busiest link is nic0.0 up or nic1.0 down" \
  '[ "$(jq -r ".links.top[0].name" "$tmp/nic.json")" = "nic0.0 up" ] || [ "$(jq -r ".links.top[0].name" "$tmp/nic.json")" = "nic1.0 down" ]'
got=$(jq -r '.links.top[] | select(.name == "nic0.0 up") | .bytes' "$tmp/nic.json")
check "shared NIC: nic0.0 up carries 2e9 bytes ($got)" 'close "$got" 2e9 1e-12'
got=$(jq -r '.links.top[] | select(.name == "nic0.0 up") | .busy' "$tmp/nic.json")
check "shared NIC: nic0.0 up busy $got > 0.999" 'awk -v b="$got" "BEGIN { exit !(b > 0.999 && b <= 1) }"'
check "shared NIC: two flows at once" '[ "$(jq -r ".links.top[] | select(.name == \"nic0.0 up\") | .peak_flows" "$tmp/nic.json")" = 2 ]'
check "shared NIC: gpu-nic class, 2 of 4 directions used" \
  '[ "$(jq -c ".links.classes[] | select(.class == \"gpu-nic\") | [.links, .used]" "$tmp/nic.json")" = "[4,2]" ]'
"$DTSIM" run --json --no-links tests/data/shared-nic.yaml tests/data/shared-nic.dtt >"$tmp/nolinks.json" 2>/dev/null
check "--no-links: no links key, same makespan" \
  '[ "$(jq -r "has(\"links\")" "$tmp/nolinks.json")" = false ] && [ "$(jq .makespan_s "$tmp/nolinks.json")" = "$(jq .makespan_s "$tmp/nic.json")" ]'
"$DTSIM" run tests/data/shared-nic.yaml tests/data/shared-nic.dtt >"$tmp/nic.txt" 2>&1
check "text report lists the busiest links" 'grep -q "^busiest links" "$tmp/nic.txt" && grep -q "nic0.0 up" "$tmp/nic.txt"'

finish
