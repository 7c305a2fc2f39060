#!/usr/bin/env bash
# The status page's first view at scale (issue 23: under 1 s with 5,000
# agents and 100,000 pods): a daemon on the embedded store, AGENTS simulated
# agents (tools/agent_sim, 5 cpus each, so 100,000 pods of 250m all run),
# PODS pods placed through the API, PENDING more that fit nowhere (so the
# queue view has a queue), two training jobs fed by the KubeML emulator; then
# bench/status_page.py loads each view cold in Debian's headless chromium and
# reports the time to its first view. Loopback only.
# Usage: bench/status_page.sh [BUILD_DIR] [AGENTS] [PODS] [PENDING] [ROUNDS]
set -euo pipefail
build=${1:-build}
agents=${2:-5000}
pods=${3:-100000}
pending=${4:-2000}
rounds=${5:-5}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
ulimit -n 65536 2>/dev/null || true
source "$(dirname "$0")/lib.sh"

port=$(free_port)
"$build/kubeml_emulator" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --scheduler "http://127.0.0.1:$port" \
  --start-delay 0.2 --jobs 2 --epochs 1000000 --epoch-ms 200 --wait-limit 600 --quiet 1 2>"$work/emu.log" &
for _ in $(seq 200); do grep -q "listening ps=" "$work/emu.log" && break; sleep 0.05; done
ps_port=$(sed -n 's/.*listening ps=\([0-9]*\) metrics=.*/\1/p' "$work/emu.log")
metrics_port=$(sed -n 's/.*listening ps=[0-9]* metrics=\([0-9]*\).*/\1/p' "$work/emu.log")
"$build/uvsched" --listen "127.0.0.1:$port" --store "embedded:$work/data" --log-level error --max-connections 20000 \
  --ps-url "http://127.0.0.1:$ps_port" --ps-metrics-url "http://127.0.0.1:$metrics_port/metrics" 2>"$work/uvsched.log" &
upid=$!
wait_url "http://127.0.0.1:$port/health"
"$build/agent_sim" --server "http://127.0.0.1:$port" --agents "$agents" --cpus 5 --pods "$pods" --concurrency 64 \
  --pod-status 0 >"$work/sim.out" 2>"$work/sim.log" &
for _ in $(seq 6000); do grep -q "pods_per_s\|placed" "$work/sim.out" 2>/dev/null && break; sleep 0.1; done
echo "agent_sim: $(tail -1 "$work/sim.out")"
/usr/bin/python3 - "$port" "$pending" <<'PY'
import http.client, json, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
c = http.client.HTTPConnection("127.0.0.1", port)
for i in range(n):
    body = json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "waits-%d" % i},
                       "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "8"}}}]}})
    c.request("POST", "/api/v1/namespaces/default/pods", body, {"Content-Type": "application/json"})
    r = c.getresponse(); r.read()
    if r.status != 201: sys.exit("create: %d" % r.status)
PY
status=$(curl -s "http://127.0.0.1:$port/v1/status")
echo "daemon: $(echo "$status" | sed 's/.*"pods":\({[^}]*}\).*"training_jobs":\([0-9]*\).*/pods \1, training jobs \2/')"
for path in "/v1/cluster" "/v1/queue?limit=200" "/v1/scheduling-events?limit=50" "/v1/status" "/v1/jobs"; do
  t=$(curl -s -o /dev/null -w '%{time_total}' "http://127.0.0.1:$port$path")
  echo "GET $path: $(awk -v t="$t" 'BEGIN {printf "%.1f ms", t * 1000}')"
done
echo "daemon RSS: $(awk '/VmRSS/ {printf "%.0f MiB", $2/1024}' "/proc/$upid/status")"
/usr/bin/python3 "$(dirname "$0")/status_page.py" "$port" "$rounds"
