#!/usr/bin/env bash
# Runs the suites that drive kubectl again with Debian 12's own kubectl 1.20
# (package kubernetes-client, fetched from Debian's archive with apt-get
# download and unpacked into the build directory, not installed), so both it
# and the kubectl on the PATH (1.32 on the CI machine) are tried.
# Usage: scripts/kubectl-compat.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
dir="$build/kubectl-debian"
if [ ! -x "$dir/usr/bin/kubectl" ]; then
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$dir" && apt-get download -qq kubernetes-client)
  dpkg-deb -x "$dir"/kubernetes-client_*.deb "$dir"
fi
echo "kubectl-compat: $("$dir/usr/bin/kubectl" version --client --short 2>/dev/null || "$dir/usr/bin/kubectl" version --client)"
PATH="$(readlink -f "$dir/usr/bin"):$PATH" meson test -C "$build" --print-errorlogs --num-processes 2 \
  it_auth it_pod_registry it_pod_scheduling it_gang_priority it_ha
