#!/usr/bin/env bash
# Installs the Debian packages a target needs, only those that are missing, so
# a second run costs one dpkg query. Runs apt-get only when something is missing.
#   install-deps.sh run    building and running the daemon (make run)
#   install-deps.sh test   + the suites' libraries and peers: GoogleTest, etcd,
#                          kubectl (Debian's kubernetes-client, unless one is on
#                          the PATH), the Python client, curl, and Debian's
#                          chromium for the status page's browser test (make test)
#   install-deps.sh bench  + Google Benchmark, wrk, nginx (make bench), gnuplot (make sim)
#   install-deps.sh fuzz   + clang and its sanitizer runtime (make fuzz)
set -euo pipefail
mode=${1:-run}

run=(build-essential pkg-config meson ninja-build
     libuv1-dev node-llhttp libsimdjson-dev zlib1g-dev libzstd-dev libssl-dev libabsl-dev libjemalloc-dev
     libjs-chart.js)
test=(libgtest-dev libgmock-dev googletest libbenchmark-dev etcd-server etcd-client curl python3-kubernetes
      chromium python3-websocket)
bench=(wrk nginx-light gnuplot-nox)
fuzz=(clang libclang-rt-14-dev)

case "$mode" in
  run) packages=("${run[@]}") ;;
  test) packages=("${run[@]}" "${test[@]}") ;;
  bench) packages=("${run[@]}" "${test[@]}" "${bench[@]}") ;;
  fuzz) packages=("${run[@]}" "${fuzz[@]}") ;;
  *) echo "usage: install-deps.sh run|test|bench|fuzz" >&2; exit 2 ;;
esac
# The kubectl tests run whatever kubectl is on the PATH; a machine without one
# gets Debian's (1.20, a supported client).
if [ "$mode" = test ] || [ "$mode" = bench ]; then
  command -v kubectl >/dev/null 2>&1 || packages+=(kubernetes-client)
fi

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
