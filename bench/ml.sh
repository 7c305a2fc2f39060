#!/usr/bin/env bash
# POST /job decisions/s end to end: wrk posts epoch reports for many jobs to
# uvsched, which stores each decision (embedded store, group commit) and
# delivers it to a parameter-server stub (tools/ps_stub, same reactor).
# Reports wrk's acknowledged decisions/s and the /update calls/s the PS got
# (fewer when a newer decision for a job replaces one still queued).
# Then the same against KubeML as it runs (tools/kubeml_emulator): JOBS train
# jobs at once, each posting /job and waiting for its /update before its next
# epoch (epochs take no time, so only the answers do), beside nginx's /health
# rate in the same run (SPEC §7's ratio). Loopback only.
# With ML_POLICY=speedup the emulator's runs use --parallelism-policy speedup
# (default kubeml, the daemon's default and SPEC §7's figure). With
# ML_AGENTS=N the daemon knows the capacity there: --function-size 1,1024 and
# N simulated agents (tools/agent_sim, 4 cpus and 8 GiB each, so 4N
# functions), and the speedup policy divides that among all the jobs.
# ML_CONNECTIONS=go gives each emulated job its own connection, as KubeML's
# jobs keep (default pooled: one pool for all, as the recorded rows were run).
# Usage: bench/ml.sh [BUILD_DIR] [SECONDS] [CONNECTIONS] [JOBS] [EPOCHS]
set -euo pipefail
build=${1:-build}
secs=${2:-10}
conns=${3:-128}
jobs=${4:-1000}
epochs=${5:-150}
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

# ---- against the KubeML emulator, with nginx's /health rate beside it ----
kill "$upid" 2>/dev/null || true; wait "$upid" 2>/dev/null || true
pin_server="taskset -c 0"; pin_load="taskset -c 1"
[ "$(nproc)" -ge 2 ] || { pin_server=""; pin_load=""; }
start_nginx "$work/nginx" "$pin_server"
nport=$NGINX_PORT; npid=$NGINX_PID
nginx_rps=$($pin_load wrk -t1 -c64 -d5s "http://127.0.0.1:$nport/health" | awk '/Requests/ {print $2}')
kill "$npid" 2>/dev/null || true; wait "$npid" 2>/dev/null || true

# Two shapes: saturated (epochs take no time, so every job always waits: by
# Little's law the wait is jobs / rate, whatever the scheduler does) and paced
# (epochs of --epoch-ms at every parallelism: the load a real cluster offers,
# where the answer time is the scheduler's own).
run_emulator() {  # EPOCH_MS SERIAL_FRACTION -> the emulator's stats JSON
  local uport eport mport out apid="" capacity=()
  uport=$(free_port); eport=$(free_port); mport=$(free_port)
  [ -z "${ML_AGENTS:-}" ] || capacity=(--function-size 1,1024)
  $pin_server "$build/uvsched" --listen "127.0.0.1:$uport" --ps-url "http://127.0.0.1:$eport" \
    --ps-metrics-url "http://127.0.0.1:$mport/metrics" --store "embedded:$work/data-emu-$1" \
    --metrics-poll-interval 0 --log-level warn --max-connections 20000 --parallelism-policy "${ML_POLICY:-kubeml}" \
    "${capacity[@]}" &
  upid=$!
  wait_up "$uport" health
  if [ -n "${ML_AGENTS:-}" ]; then
    $pin_load "$build/agent_sim" --server "http://127.0.0.1:$uport" --agents "$ML_AGENTS" >/dev/null 2>&1 &
    apid=$!
    local n=0
    for _ in $(seq 400); do
      n=$(curl -s "http://127.0.0.1:$uport/api/v1/nodes" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))' 2>/dev/null || echo 0)
      [ "$n" = "$ML_AGENTS" ] && break
      sleep 0.05
    done
    [ "$n" = "$ML_AGENTS" ] || { echo "only $n of $ML_AGENTS agents registered" >&2; return 1; }
  fi
  # One pool of connections for every job unless ML_CONNECTIONS says otherwise.
  out=$($pin_load "$build/kubeml_emulator" --listen "127.0.0.1:$eport" --metrics-listen "127.0.0.1:$mport" \
    --scheduler "http://127.0.0.1:$uport" --jobs "$jobs" --epochs "$epochs" --epoch-ms "$1" --serial-fraction "$2" \
    --start-delay 0 --wait-limit 5 --quiet 1 --exit-when-done 1 --connections "${ML_CONNECTIONS:-pooled}" 2>/dev/null) || { echo "violations: $out" >&2; return 1; }
  rss=$(awk '/VmHWM/ {print $2}' "/proc/$upid/status")
  kill "$upid"; wait "$upid" 2>/dev/null || true
  [ -z "$apid" ] || { kill "$apid"; wait "$apid" 2>/dev/null || true; }  # after: no disconnects logged
  echo "$out $rss"
}
run_emulator 0 0.3 > "$work/saturated"
run_emulator "${PACED_EPOCH_MS:-30}" 1 > "$work/paced"
python3 - "$work/saturated" "$work/paced" <<PY
import json, sys
n = float("$nginx_rps")
for name, path in (("saturated", sys.argv[1]), ("paced, ${PACED_EPOCH_MS:-30} ms epochs", sys.argv[2])):
    js, rss = open(path).read().strip().rsplit(" ", 1)
    s = json.loads(js)
    rate = s["answers_per_second"]
    print(f"KubeML emulator, {name}, policy ${ML_POLICY:-kubeml}, connections ${ML_CONNECTIONS:-pooled}${ML_AGENTS:+, capacity $((4 * ${ML_AGENTS:-0})) functions}: $jobs jobs x $epochs epochs, each waiting for its answer: "
          f"{rate:.0f} epochs answered/s = {rate/n:.3f} x nginx /health ({n:.0f}/s) (goal >= 0.15); "
          f"/job -> /update p50 {s['answer_p50_ms']:.1f} ms, p99 {s['answer_p99_ms']:.1f} ms (goal <= 20 ms); "
          f"violations {s['violations']}, starts {s['starts']}; uvsched peak RSS {int(rss)/1024:.1f} MiB")
PY
