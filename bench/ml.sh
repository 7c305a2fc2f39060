#!/usr/bin/env bash
# POST /job decisions/s end to end: wrk posts epoch reports for many jobs to
# uvsched, which stores each decision (embedded store, group commit) and
# delivers it to a parameter-server stub (tools/ps_stub, same reactor).
# Reports wrk's acknowledged decisions/s and the /update calls/s the PS got
# (fewer when a newer decision for a job replaces one still queued). Loopback only.
# Usage: bench/ml.sh [BUILD_DIR] [SECONDS] [CONNECTIONS] [JOBS]
set -euo pipefail
build=${1:-build}
secs=${2:-10}
conns=${3:-128}
jobs=${4:-1000}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

source "$(dirname "$0")/lib.sh"
wait_up() { wait_url "http://127.0.0.1:$1/$2"; }

pport=$(free_port); uport=$(free_port)
"$build/ps_stub" --listen "127.0.0.1:$pport" 2>/dev/null &
wait_up "$pport" stats
"$build/uvsched" --listen "127.0.0.1:$uport" --ps-url "http://127.0.0.1:$pport" --store "embedded:$work/data" \
  --metrics-poll-interval 0 --log-level warn &
upid=$!
wait_up "$uport" health

before=$(curl -s "http://127.0.0.1:$pport/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["update"])')
out=$(JOBS=$jobs wrk -t1 -c"$conns" -d"${secs}s" -s bench/job_update.lua "http://127.0.0.1:$uport/job")
# Let queued deliveries land, then count.
sleep 1
after=$(curl -s "http://127.0.0.1:$pport/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["update"])')
rss=$(awk '/VmHWM/ {print $2}' "/proc/$upid/status")
acked=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
non2xx=$(echo "$out" | awk '/Non-2xx/ {print $NF}')
python3 - <<PY
acked = float("$acked"); calls = $after - $before; delivered = calls / $secs
print(f"decisions acknowledged: {acked:.0f}/s (goal >= 30000/s); non-2xx: {'${non2xx:-0}'}")
print(f"decisions delivered to the PS: {delivered:.0f}/s ({calls} /update calls for the {$secs}s of load, counted after a 1s drain; $jobs jobs)")
print(f"uvsched peak RSS: {$rss/1024:.1f} MiB")
PY
