#!/usr/bin/env bash
# Acknowledged puts/s, embedded store vs a real etcd, with 1, 16 and 128 puts
# in flight (the embedded store's group commit and etcd's batched txns both
# gather what is in flight), all in one run. Loopback only.
# Usage: bench/store.sh [BUILD_DIR] [COUNT]
set -euo pipefail
build=${1:-build}
count=${2:-20000}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

source "$(dirname "$0")/lib.sh"
start_etcd "$work/etcd"

rate() { "$build/store_writer" --store "$1" --count "$count" --inflight "$2" --value-bytes 256 --prefix "/bench/$2/" |
  awk '/^done/ { for (i = 1; i <= NF; i++) if ($i ~ /^puts_per_second=/) { sub("puts_per_second=", "", $i); print $i } }'; }

printf "%-10s %12s %12s %8s\n" inflight embedded/s etcd/s ratio
for n in 1 16 128; do
  e=$(rate "embedded:$work/embedded-$n" "$n")
  c=$(rate "etcd:$ETCD_URL" "$n")
  printf "%-10s %12s %12s %8s\n" "$n" "$e" "$c" "$(python3 -c "print(f'{$e/$c:.1f}x')")"
done
