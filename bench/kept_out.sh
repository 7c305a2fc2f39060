#!/usr/bin/env bash
# What pods that no agent will take cost the rest: AGENTS simulated agents
# (tools/agent_sim, 8 cpus each) with PLACED plain pods running, then ANTI
# pods with a required anti-affinity to each other on kubernetes.io/hostname
# (bench/inter_pod.py), ANTI - AGENTS of which can go nowhere and wait, then
# 1,000 plain pods created one by one while they wait; then the daemon's CPU
# over 5 s with nothing asked of it. Embedded store; loopback only.
# Usage: bench/kept_out.sh [BUILD_DIR] [AGENTS] [PLACED] [ANTI]
set -euo pipefail
build=${1:-build}
agents=${2:-1000}
placed=${3:-20000}
anti=${4:-1100}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
source "$(dirname "$0")/lib.sh"
start_with_placed_pods "$build" "$work" "$agents" "$placed"
python3 "$(dirname "$0")/inter_pod.py" "$UVSCHED_PORT" anti "$anti"
t0=$(cpu_ticks "$UVSCHED_PID")
python3 "$(dirname "$0")/inter_pod.py" "$UVSCHED_PORT" plain 1000
t1=$(cpu_ticks "$UVSCHED_PID")
sleep 5
t2=$(cpu_ticks "$UVSCHED_PID")
hz=$(getconf CLK_TCK)
echo "daemon cpu: $(( (t1 - t0) * 1000 / hz )) ms over the plain creates, $(( (t2 - t1) * 1000 / hz )) ms over 5 s idle after"
