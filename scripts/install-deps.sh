#!/usr/bin/env bash
# Installs the Debian packages uvsched needs, only those that are missing, so a
# second run costs one dpkg query. Runs apt-get only when something is missing.
set -euo pipefail

packages=(
  build-essential pkg-config meson ninja-build
  libuv1-dev node-llhttp libsimdjson-dev zlib1g-dev libzstd-dev libssl-dev libabsl-dev libjemalloc-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  etcd-server etcd-client wrk nginx-light curl python3-kubernetes
  clang libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
