#!/usr/bin/env bash
# Makes the pictures of README.md and docs/tutorial.md again (docs/pictures/), from shipped platforms and generated
# runs, with `dtsim run --plot` (gnuplot). Not used by the tests or CI.
# usage: scripts/pictures.sh [path/to/dtsim]   (run from the repository root; default build/dtsim)
set -eu
DTSIM=${1:-build/dtsim}
OUT=docs/pictures
command -v gnuplot >/dev/null || { echo "pictures.sh: gnuplot is needed (scripts/deps.sh installs it)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the critical path's split, each rank's iteration, the link classes, message sizes: GPT-NeoX 1.3B, TP 8 x PP 2 x
# DP 2 on four DGX H100 nodes
"$DTSIM" run --plot "$tmp/a" platforms/dgx-h100-4node.yaml --gen neox-1.3b --tp 8 --pp 2 --dp 2 >/dev/null
for n in critical_path per_rank link_classes histogram; do cp "$tmp/a/$n.png" "$OUT/$n.png"; done

# the leaf x spine heatmap and the per-tier utilisation: GPT-NeoX 1.3B, TP 8 x DP 16 on the 16 A100 nodes of the
# 3:1 oversubscribed fat-tree
"$DTSIM" run --plot "$tmp/b" platforms/fat-tree-oversub.yaml --gen neox-1.3b --tp 8 --dp 16 --global-batch 64 >/dev/null
for n in fabric_heatmap tiers; do cp "$tmp/b/$n.png" "$OUT/$n.png"; done

echo "pictures.sh: wrote $OUT/{critical_path,per_rank,link_classes,histogram,fabric_heatmap,tiers}.png"
