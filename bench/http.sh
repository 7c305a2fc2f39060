#!/usr/bin/env bash
# GET /health on uvsched vs. nginx (one worker, `return 200`) under
# `wrk -t1 -c64`, alternating rounds in one run; prints the req/s of each and
# the ratio uvsched/nginx, plus uvsched's idle RSS. Loopback only.
# Usage: bench/http.sh [BUILD_DIR] [ROUNDS] [SECONDS]
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
secs=${3:-5}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

source "$(dirname "$0")/lib.sh"
wait_up() { wait_url "http://127.0.0.1:$1/${2:-}"; }
rps() { wrk -t1 -c64 -d"${secs}s" "$1" | awk '/Requests\/sec/ {print $2}'; }

# Server on CPU 0, load generator on CPU 1, so the two do not fight for a core.
pin_server="taskset -c 0"
pin_load="taskset -c 1"
[ "$(nproc)" -ge 2 ] || { pin_server=""; pin_load=""; }

uport=$(free_port)
$pin_server "$build/uvsched" --listen "127.0.0.1:$uport" --log-level warn --store "embedded:$work/data" &
upid=$!
wait_up "$uport" health
sleep 1
rss_idle_kb=$(awk '/VmRSS/ {print $2}' "/proc/$upid/status")

start_nginx "$work/nginx" "$pin_server"
nport=$NGINX_PORT

total_u=0; total_n=0
for r in $(seq "$rounds"); do
  u=$($pin_load bash -c "$(declare -f rps); secs=$secs; rps http://127.0.0.1:$uport/health")
  n=$($pin_load bash -c "$(declare -f rps); secs=$secs; rps http://127.0.0.1:$nport/health")
  echo "round $r: uvsched ${u} req/s, nginx ${n} req/s"
  total_u=$(python3 -c "print($total_u+$u)"); total_n=$(python3 -c "print($total_n+$n)")
done
rss_after_kb=$(awk '/VmRSS/ {print $2}' "/proc/$upid/status")
python3 - <<PY
u=$total_u/$rounds; n=$total_n/$rounds
print(f"mean: uvsched {u:.0f} req/s, nginx {n:.0f} req/s, ratio uvsched/nginx = {u/n:.2f} (goal >= 1.0)")
print(f"uvsched RSS: idle {$rss_idle_kb/1024:.1f} MiB (goal <= 8 MiB), after load {$rss_after_kb/1024:.1f} MiB")
PY
