#!/usr/bin/env bash
# End-to-end tests of 'dtsim platform check|show' on the shipped platforms. Expected routes and alphas are
# drawn by hand from the files' numbers (docs/platform.md route rules), never from an earlier run.
# usage: tests/e2e_platform.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: e2e_platform.sh DTSIM}
source "$(dirname "$0")/e2e-lib.sh"

# --- check: every shipped platform is valid (and the cluster platforms of the end-to-end validation)
nplat=0
for f in platforms/*.yaml validation/platforms/*.yaml; do
  nplat=$((nplat + 1))
  "$DTSIM" platform check "$f" >"$tmp/out" 2>"$tmp/err"; rc=$?
  check "check $f exits 0 and says ok" '[ $rc -eq 0 ] && grep -q "^ok: " "$tmp/out" && [ ! -s "$tmp/err" ]'
done
check "the loop found the shipped platforms (at least 9, found $nplat)" '[ "$nplat" -ge 9 ] && [ -f platforms/dgx-a100.yaml ]'
"$DTSIM" platform check platforms/dgx1-v100.yaml >"$tmp/out"
check "dgx1-v100 summary: 1 node x 8 GPUs, nvlink-mesh, 8 ports + 16 pairs = 24 links" \
  'grep -qx "ok: dgx1-v100: 1 node x 8 GPUs, nvlink-mesh, 24 links" "$tmp/out"'
"$DTSIM" platform check platforms/frontier-like.yaml >"$tmp/out"
check "frontier-like summary names the dragonfly" 'grep -q "^ok: frontier-like: 64 nodes x 8 GPUs, nvlink-mesh, 4 NICs per node, dragonfly network, 1828 links$" "$tmp/out"'

# --- check: errors exit 2 with file:line:col
printf 'dtsim_platform: 1\nname: x\ngpu: {model: V, peak: 1TFLOPS}\nnodes: 1\ngpus_per_node: 4\nintra_node:\n  kind: nvlink-mesh\n  link_bandwidth: 25GB/s\n  latency: 2us\n  links: [[0,1,1],[2,3,1]]\n' >"$tmp/split.yaml"
"$DTSIM" platform check "$tmp/split.yaml" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "disconnected mesh exits 2" '[ $rc -eq 2 ] && [ ! -s "$tmp/out" ]'
check "disconnected mesh error has line:col" 'grep -q "split.yaml:10:10: the NVLink mesh is not connected" "$tmp/err"'
sed 's/\[2,3,1\]/[2,3,1],[1,9,1]/' "$tmp/split.yaml" >"$tmp/range.yaml"
"$DTSIM" platform check "$tmp/range.yaml" >/dev/null 2>"$tmp/err"; rc=$?
check "GPU out of range exits 2 at the GPU" '[ $rc -eq 2 ] && grep -q "range.yaml:10:30: GPU 9 in .intra_node.links. is out of range" "$tmp/err"'
"$DTSIM" platform check tests/data/bad-key.yaml >/dev/null 2>"$tmp/err"; rc=$?
check "unknown key exits 2 with a hint" '[ $rc -eq 2 ] && grep -q "bad-key.yaml:8:3: unknown key" "$tmp/err" && grep -q "did you mean" "$tmp/err"'
"$DTSIM" platform check /nonexistent.yaml >/dev/null 2>"$tmp/err"; rc=$?
check "missing file exits 2" '[ $rc -eq 2 ] && grep -q "cannot open" "$tmp/err"'
"$DTSIM" platform frob platforms/dgx-a100.yaml >/dev/null 2>&1; rc=$?
check "unknown action exits 2" '[ $rc -eq 2 ]'
"$DTSIM" platform >/dev/null 2>&1; rc=$?
check "no arguments exits 2" '[ $rc -eq 2 ]'
check "help platform prints the usage" '"$DTSIM" help platform | grep -q "dtsim platform show FILE \[--route A B\]"'
check "help lists platform" '"$DTSIM" help | grep -q "^  platform "'

# --- show: link classes
"$DTSIM" platform show platforms/dgx1-v100.yaml >"$tmp/show" 2>&1; rc=$?
check "show exits 0" '[ $rc -eq 0 ]'
check "dgx1 classes: 8 NV1 pairs at 25 GB/s, 8 NV2 pairs at 50 GB/s" \
  'grep -Eq "^  nvlink +8 x +25 GB/s +2 us" "$tmp/show" && grep -Eq "^  nvlink +8 x +50 GB/s +2 us" "$tmp/show"'
check "dgx1 mesh: 24 NVLinks, at most 2 hops" 'grep -q "16 GPU pairs joined by 24 NVLinks of 25 GB/s each, 2 us per hop, at most 2 hops" "$tmp/show"'

# --- show --route: hand-drawn hops
# DGX-1: 0 -> 3 is one NV2 pair; 0 -> 5 has no NVLink: 0-1 (NV1) then 1-5 (NV2), alpha 2 x 2us, bottleneck 25 GB/s
"$DTSIM" platform show platforms/dgx1-v100.yaml --route 0 3 >"$tmp/r" 2>&1
check "dgx1 0->3 direct" 'grep -q "1 hop$" "$tmp/r" && grep -Eq "^ +1 +nvlink0.0-3 +up +50 GB/s +2 us" "$tmp/r" && grep -q "alpha 2 us, bottleneck 50 GB/s" "$tmp/r"'
"$DTSIM" platform show platforms/dgx1-v100.yaml --route 0 5 >"$tmp/r" 2>&1
check "dgx1 0->5 over GPU 1" 'grep -Eq "^ +1 +nvlink0.0-1 +up +25 GB/s" "$tmp/r" && grep -Eq "^ +2 +nvlink0.1-5 +up +50 GB/s" "$tmp/r" && grep -q "alpha 4 us, bottleneck 25 GB/s" "$tmp/r"'
# PCIe: 1 -> 3 same switch (alpha 2us); 1 -> 6 across the CPU: 2us + 1us, bottleneck 31.5 GB/s
"$DTSIM" platform show platforms/pcie-8gpu.yaml --route 1 3 >"$tmp/r" 2>&1
check "pcie same switch" 'grep -q "2 hops$" "$tmp/r" && grep -q "alpha 2 us, bottleneck 31.5 GB/s" "$tmp/r"'
"$DTSIM" platform show platforms/pcie-8gpu.yaml --route 1 6 >"$tmp/r" 2>&1
check "pcie across the CPU" 'grep -Eq "^ +2 +cpulink0.0 +up" "$tmp/r" && grep -Eq "^ +3 +cpulink0.1 +down" "$tmp/r" && grep -q "alpha 3 us, bottleneck 31.5 GB/s" "$tmp/r"'
# Frontier-like dragonfly: node n on router n/4 of group n/16. GCD 0 of node 0 -> GCD 0 of node 16 (group 1,
# router 4): 2 parallel links per pair, link (dst NIC 64 mod 2) = 0 at port 0 of group 0 (router 0) and port
# (0-1-1) mod 4 = 2 of group 1 (router 4 + 2/2 = 5): nic, cable, global, local 5->4, cable, nic.
# alpha = 2 x 1us + 2 x 300ns + 500ns + 300ns = 3.4us
"$DTSIM" platform show platforms/frontier-like.yaml --route 0 128 >"$tmp/r" 2>&1
check "dragonfly other group: hops" 'grep -q "6 hops$" "$tmp/r" && grep -Eq "^ +3 +cable:group0-group1.0 +up +25 GB/s +500 ns" "$tmp/r" && grep -Eq "^ +4 +cable:router4-router5 +down" "$tmp/r"'
check "dragonfly other group: alpha 3.4 us" 'grep -q "alpha 3.4 us, bottleneck 25 GB/s" "$tmp/r"'
# same router: nodes 0 and 1; alpha = 2 x 1us + 2 x 300ns = 2.6us
"$DTSIM" platform show platforms/frontier-like.yaml --route 0 8 >"$tmp/r" 2>&1
check "dragonfly same router: 4 hops, alpha 2.6 us" 'grep -q "4 hops$" "$tmp/r" && grep -q "alpha 2.6 us" "$tmp/r"'
"$DTSIM" platform show platforms/frontier-like.yaml --route 0 512 >/dev/null 2>"$tmp/err"; rc=$?
check "route to a GPU out of range exits 2" '[ $rc -eq 2 ] && grep -q "from 0 to 511" "$tmp/err"'
"$DTSIM" platform show platforms/frontier-like.yaml --route 0 >/dev/null 2>&1; rc=$?
check "--route with one GPU exits 2" '[ $rc -eq 2 ]'

mkdir -p "$tmp/adir"
"$DTSIM" platform check "$tmp/adir" >/dev/null 2>"$tmp/err"; rc=$?
check "a directory given as the platform exits 2 and says it is one" '[ $rc -eq 2 ] && grep -q "adir: is a directory, not a platform file" "$tmp/err"'

finish
