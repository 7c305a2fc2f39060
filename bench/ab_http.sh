#!/usr/bin/env bash
# A/B: requests/s of two uvsched builds (OLD_BUILD, NEW_BUILD) on the same
# paths, alternating rounds; each daemon pinned to CPU 0, wrk -t1 -c64 on
# CPU 1. For a change in front of every route (what each request passes
# through before its handler). Loopback only.
#   OLD_BUILD=/tmp/old/build NEW_BUILD=build bench/ab_http.sh [SECONDS]
set -u
. "$(dirname "$0")/lib.sh"
secs=${1:-4}
pin_server="taskset -c 0"; pin_load="taskset -c 1"
[ "$(nproc)" -ge 2 ] || { pin_server=""; pin_load=""; }
declare -A port pid dir
for which in old new; do
  bin=${OLD_BUILD:?}; [ $which = new ] && bin=${NEW_BUILD:-build}
  dir[$which]=$(mktemp -d); port[$which]=$(free_port)
  $pin_server "$bin/uvsched" --listen "127.0.0.1:${port[$which]}" --store "embedded:${dir[$which]}/data" \
    --log-level error > /dev/null 2>&1 &
  pid[$which]=$!
  wait_url "http://127.0.0.1:${port[$which]}/health"
done
for path in /health /api/v1/namespaces/default "/api/v1/namespaces/default?resourceVersion=1"; do
  for round in 1 2 3; do
    line="$path round $round:"
    for which in old new; do
      rps=$($pin_load wrk -t1 -c64 -d"${secs}s" "http://127.0.0.1:${port[$which]}$path" | awk '/Requests\/sec/ {print $2}')
      line="$line $which $rps req/s"
    done
    echo "$line"
  done
done
for which in old new; do kill "${pid[$which]}"; wait "${pid[$which]}" 2>/dev/null; rm -rf "${dir[$which]}"; done
