#!/usr/bin/env bash
# Installs the Debian 12 packages anteroom builds with, if any is missing. Needs root (or
# sudo). Sourced by scripts/serve and scripts/test.
set -euo pipefail

ANTEROOM_PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  libboost1.81-dev libboost-json1.81-dev libboost-program-options1.81-dev
  libconcurrentqueue-dev libbenchmark-dev googletest libgtest-dev libssl-dev
  libhiredis-dev redis-server redis-tools
  clang-format clang-tidy clang-14 libclang-rt-14-dev
  nginx-light caddy curl python3 python3-cryptography python3-yaml chromium
  systemd prometheus strace logrotate
  podman buildah runc mmdebstrap podman-compose uidmap
)

anteroom_install_deps() {
  local missing=()
  for p in "${ANTEROOM_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  # Node.js: machines of this kind come with Node 20 and its own npm (not Debian's); Debian's
  # npm package conflicts with that, so take Debian's only where the commands are missing.
  command -v node >/dev/null 2>&1 || missing+=(nodejs)
  command -v npm >/dev/null 2>&1 || missing+=(npm)
  # kubectl (kustomize, tests/deploy/kubernetes.sh): Debian's unless one is installed.
  command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
  if ((${#missing[@]} == 0)); then return 0; fi
  echo "anteroom: installing ${missing[*]}" >&2
  local sudo=""
  if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Run directly (`scripts/deps.sh`) it installs what is missing; sourced, it only defines.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then anteroom_install_deps; fi
