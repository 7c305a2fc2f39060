#!/usr/bin/env bash
# How long the loop stalls while pods with anti-affinity to each other fill
# AGENTS agents (tools/agent_sim, PLACED plain pods running first) and ANTI -
# AGENTS of them are left kept out: a GET /health every 10 ms, and each
# answer slower than 100 ms printed with when it came. Embedded store;
# loopback only.
# Usage: bench/loop_stalls.sh [BUILD_DIR] [AGENTS] [PLACED] [ANTI]
set -euo pipefail
build=${1:-build}
agents=${2:-5000}
placed=${3:-5000}
anti=${4:-5500}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
source "$(dirname "$0")/lib.sh"
start_with_placed_pods "$build" "$work" "$agents" "$placed"
python3 - "$UVSCHED_PORT" >"$work/stalls" <<'PY' &
import http.client, sys, time
conn = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]))
start = time.monotonic()
while True:
    t = time.monotonic()
    conn.request("GET", "/health")
    conn.getresponse().read()
    took = time.monotonic() - t
    if took > 0.1:
        print(f"{t - start:.2f}s {took * 1000:.0f}", flush=True)
    time.sleep(0.01)
PY
python3 "$(dirname "$0")/inter_pod.py" "$UVSCHED_PORT" anti "$anti"
sort -k2 -n "$work/stalls" | awk '{n++; ms[n] = $2} END {
  if (n == 0) { print "health stalls over 100 ms: 0"; exit }
  printf "health stalls over 100 ms: %d, median %d ms, max %d ms; the last 5: ", n, ms[int((n + 1) / 2)], ms[n] }'
tail -5 "$work/stalls" | awk '{printf "%s ", $2} END {print "ms"}'
