#!/usr/bin/env bash
# Installs the Debian packages dtsim needs to build, test and import captures. Idempotent; uses sudo when
# not root. Usage: scripts/deps.sh [--slurm]
# --slurm also installs Slurm and munge, for CI's Slurm stage (tests/ci_slurm.sh); users of `dtsim sweep
# --emit slurm` submit to the cluster they already have.
set -euo pipefail
packages=(cmake make gcc g++ pkg-config libsimgrid-dev libyaml-dev check zlib1g-dev libyajl-dev
          libprotobuf-c-dev protobuf-c-compiler jq time libssl-dev gnuplot-nox parallel clang libclang-rt-dev
          python3 python3-jsonschema)
[ "${1:-}" = "--slurm" ] && packages+=(slurm-wlm munge)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps.sh: all packages present"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "deps.sh: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
