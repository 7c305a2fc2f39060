#!/usr/bin/env bash
# Pod registry: creates/s over keep-alive connections (wrk), then the time to
# list every pod once the store holds TARGET pods (goal: 100k in < 1 s), with
# the embedded store. Loopback only.
# Usage: bench/pods.sh [BUILD_DIR] [SECONDS] [TARGET]
set -euo pipefail
build=${1:-build}
secs=${2:-5}
target=${3:-100000}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

source "$(dirname "$0")/lib.sh"
port=$(free_port)
"$build/uvsched" --listen "127.0.0.1:$port" --store "embedded:$work/data" --metrics-poll-interval 0 --log-level warn &
upid=$!
wait_url "http://127.0.0.1:$port/health"
url="http://127.0.0.1:$port"

out=$(wrk -t1 -c64 -d"${secs}s" -s bench/pod_create.lua "$url/api/v1/namespaces/default/pods")
echo "$out" | awk '/Requests\/sec/ {printf "pod creates: %s/s (goal >= 20000/s)\n", $2} /Non-2xx/ {print "non-2xx: " $NF}'
count() { curl -s "$url/api/v1/pods" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))'; }
have=$(count)
# Top up to TARGET pods so the list is timed at that size.
while [ "$have" -lt "$target" ]; do
  wrk -t1 -c64 -d2s -s bench/pod_create.lua "$url/api/v1/namespaces/default/pods" >/dev/null
  have=$(count)
done
for i in 1 2 3; do
  t=$(curl -s -o "$work/list.json" -w '%{time_total}' "$url/api/v1/pods")
  echo "list of $have pods: ${t}s, $(stat -c %s "$work/list.json") bytes (goal < 1 s)"
done
t=$(curl -s -o /dev/null -w '%{time_total}' -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' "$url/api/v1/pods")
echo "the same as a kubectl Table: ${t}s"
echo "uvsched RSS: $(awk '/VmRSS/ {printf "%.1f MiB", $2/1024}' /proc/$upid/status), peak $(awk '/VmHWM/ {printf "%.1f MiB", $2/1024}' /proc/$upid/status)"
