#!/usr/bin/env bash
# The daemon's memory at scale (issue 6: RSS <= 64 MiB with 5k agents and
# 100k pods): AGENTS simulated agents (tools/agent_sim) offering 8 cpus /
# 16 GiB each, PODS pods created through the API and run; then the daemon's
# RSS (settled, 2 s after the last LAUNCH) and peak RSS, for the embedded
# store and for etcd, in one run. Loopback only.
# Usage: bench/memory.sh [BUILD_DIR] [AGENTS] [PODS]
set -euo pipefail
build=${1:-build}
agents=${2:-5000}
pods=${3:-100000}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

source "$(dirname "$0")/lib.sh"
kib() { awk -v k="$1" '$1 == k":" {print $2}' "/proc/$2/status"; }

run_one() {
  local name=$1 store=$2
  start_uvsched "$build" "$store" "$work/$name.log"
  local port=$UVSCHED_PORT upid=$UVSCHED_PID
  local idle; idle=$(kib VmRSS "$upid")
  "$build/agent_sim" --server "http://127.0.0.1:$port" --agents "$agents" --cpus 8 --mem 16384 --pods "$pods" \
    --concurrency 64 >"$work/$name.out" 2>"$work/$name.sim.log" &
  local spid=$!
  for _ in $(seq 3000); do grep -q placed "$work/$name.out" && break; sleep 0.1; done
  sleep 2
  local rss peak
  rss=$(kib VmRSS "$upid"); peak=$(kib VmHWM "$upid")
  echo "$name: $(tail -1 "$work/$name.out") idle_rss_mib=$(awk -v k="$idle" 'BEGIN {printf "%.1f", k/1024}')" \
       "rss_mib=$(awk -v k="$rss" 'BEGIN {printf "%.1f", k/1024}') peak_rss_mib=$(awk -v k="$peak" 'BEGIN {printf "%.1f", k/1024}')"
  kill "$spid" "$upid"; wait "$spid" "$upid" 2>/dev/null || true
}

run_one embedded "embedded:$work/data"

start_etcd "$work/etcd"
run_one etcd "etcd:$ETCD_URL"
echo "goal: rss <= 64 MiB at 5k agents / 100k pods; idle <= 8 MiB"
