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
start_with_placed_pods "$build" "$work" "$agents" "$placed"
for kind in plain anti spread; do python3 "$(dirname "$0")/inter_pod.py" "$UVSCHED_PORT" "$kind" "$count"; done
