#!/usr/bin/env bash
# What inter-pod constraints cost placement at scale: AGENTS simulated agents
# (tools/agent_sim, 8 cpus each) with PLACED pods placed and running, then
# COUNT pods of each kind created one by one (bench/inter_pod.py: plain, a
# required anti-affinity on the hostname, a hostname spread constraint), on
# the embedded store. Loopback only.
# Usage: bench/inter_pod.sh [BUILD_DIR] [AGENTS] [PLACED] [COUNT]
set -euo pipefail
build=${1:-build}
agents=${2:-5000}
placed=${3:-100000}
count=${4:-1000}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
source "$(dirname "$0")/lib.sh"
start_uvsched "$build" "embedded:$work/data" "$work/uvsched.log"
"$build/agent_sim" --server "http://127.0.0.1:$UVSCHED_PORT" --agents "$agents" --cpus 8 --mem 16384 \
  --pods "$placed" --concurrency 64 >"$work/sim.out" 2>"$work/sim.log" &
for _ in $(seq 3000); do grep -q placed "$work/sim.out" && break; sleep 0.1; done
echo "placed first: $(tail -1 "$work/sim.out")"
for kind in plain anti spread; do python3 "$(dirname "$0")/inter_pod.py" "$UVSCHED_PORT" "$kind" "$count"; done
