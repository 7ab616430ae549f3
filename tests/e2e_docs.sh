#!/usr/bin/env bash
# The user documentation stands on its own in a clone: README.md and the importer / scale docs point to no
# file outside the repository (a user's clone has no ../shared), and every docs/ or platforms/ file README names
# exists. Run from the repository root; the dtsim argument is unused (CTest passes it to every e2e test).
set -u
source "$(dirname "$0")/e2e-lib.sh"

for f in README.md docs/import*.md docs/scale.md docs/trace-format.md traces/samples/README.md; do
  check "$f points to nothing outside the clone (../shared)" '! grep -n "\.\./shared\|[( \`]shared/data" "$f"'
done
for f in $(grep -o '\(docs\|platforms\|bench\|traces/samples\)/[A-Za-z0-9_.-]*\.\(md\|yaml\|json\.gz\)' README.md | sort -u); do
  check "README names $f, which exists" '[ -f "$f" ]'
done
finish
