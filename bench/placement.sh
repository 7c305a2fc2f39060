#!/usr/bin/env bash
# Pod placement in the shape of kube-scheduler's scheduler_perf: AGENTS
# simulated agents (tools/agent_sim, one process) offering resources, then
# PODS pods created through the API; pods placed per second, p50/p99 from
# create to LAUNCH, and the daemon's peak RSS, for the embedded store and for
# etcd, in one run. Loopback only.
# Each store is measured twice, on a fresh store each time: with creates sent
# one at a time on each of 64 connections, and with them pipelined 8 deep on
# 8 connections, the way client-go (scheduler_perf's client) multiplexes its
# requests over one HTTP/2 connection. Two more embedded runs:
#  - agents' posts multiplexed: the statuses and re-offers that agents post in
#    one loop turn share connections, 16 agents' posts back to back on each
#    (agent_sim --agent-mux 16), as a Mesos master relays many agents' updates
#    to a framework over one connection;
#  - statuses held: the agents' TASK_STARTING/RUNNING posts wait until the
#    report, as scheduler_perf's nodes (no kubelets) never report; they are
#    then sent, and the pods run.
#  - gangs of 8: the same pods in PodGroups of 8 (minMember 8), placed all or nothing;
#  - full, then preempting: agents of 0.5 cpu, so the pods fill them; then a
#    tenth as many pods again, of priority 1000, each placed by preempting one
#    (KILL, TASK_KILLED, the room offered again): preemptions/s and the p99 of
#    the daemon's decision (uvsched_preemption_decision_seconds).
# The agents' TASK_RUNNING carries no pod status (agent_sim --pod-status 0),
# as in every earlier run of this benchmark: with it, each running pod's
# status is merged into the stored pod (see bench/RESULTS.md, session 10).
# The pod phase of a run is half a second, and this shared VM's speed moves
# by a third from one run to the next (the same binary's loop thread took 25
# us of user time per pod in one run and 40 in another): the rows
# run ROUNDS times (default 5), taking turns (round 1 of every row, then round
# 2, ...), each round printed, and the median of each row last.
# Usage: bench/placement.sh [BUILD_DIR] [AGENTS] [PODS] [ROUNDS]
set -euo pipefail
build=${1:-build}
agents=${2:-5000}
pods=${3:-10000}
rounds=${4:-5}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
ulimit -n 65536 2>/dev/null || true

source "$(dirname "$0")/lib.sh"

# CPU per placed pod over the pod phase (from "all agents offering" to the
# simulator's exit: with statuses held, their posts count too), in
# microseconds: on a 2-core machine the three must share it.
per_pod() { awk -v t="$1" -v hz="$(getconf CLK_TCK)" -v n="$pods" 'BEGIN {printf "%.0f", t * 1e6 / hz / n}'; }

run_one() {
  local name=$1 sim_args=$2 store=$3 etcd_pid=${4:-}
  start_uvsched "$build" "$store" "$work/$name.log"
  local port=$UVSCHED_PORT upid=$UVSCHED_PID
  AGENT_SIM_EXIT_AFTER_REPORT=1 timeout 300 "$build/agent_sim" --server "http://127.0.0.1:$port" \
    --agents "$agents" --pods "$pods" --concurrency 64 --pod-status 0 $sim_args >"$work/$name.out" 2>"$work/$name.sim.log" &
  local spid=$!
  for _ in $(seq 3000); do grep -q "agents subscribed" "$work/$name.sim.log" && break; sleep 0.05; done
  local d0 e0=0; d0=$(cpu_ticks "$upid"); [ -n "$etcd_pid" ] && e0=$(cpu_ticks "$etcd_pid")
  wait "$spid" || true
  local d1 e1=0; d1=$(cpu_ticks "$upid"); [ -n "$etcd_pid" ] && e1=$(cpu_ticks "$etcd_pid")
  local rss; rss=$(awk '/VmHWM/ {printf "%.1f", $2/1024}' "/proc/$upid/status")
  local cpu="daemon_cpu_us_per_pod=$(per_pod $((d1 - d0)))"
  [ -n "$etcd_pid" ] && cpu="$cpu etcd_cpu_us_per_pod=$(per_pod $((e1 - e0)))"
  echo "$name: $(grep '^placed=' "$work/$name.out") $cpu daemon_peak_rss_mib=$rss"
  grep '^held' "$work/$name.out" | sed "s/^/  $name: /" || true
  if grep -q '^high_priority' "$work/$name.out"; then
    # The decision's p99 from the daemon's histogram: the first bucket bound
    # holding 99% of the decisions.
    local p99; p99=$(curl -s "http://127.0.0.1:$port/metrics" | awk '
      /^uvsched_preemption_decision_seconds_bucket/ { split($0, a, "le=\""); split(a[2], b, "\""); le[n] = b[1]; c[n++] = $NF }
      /^uvsched_preemption_decision_seconds_count/ { total = $NF }
      END { for (i = 0; i < n; i++) if (c[i] >= 0.99 * total) { print le[i] " s (of " total " decisions)"; exit } }')
    echo "  $name: $(grep '^high_priority' "$work/$name.out") decision_p99<=$p99"
  fi
  echo "$name $(grep -o 'pods_per_second=[0-9]*' "$work/$name.out" | cut -d= -f2)" >>"$work/rates"
  kill "$upid"; wait "$upid" 2>/dev/null || true
}

# A fresh store (its own directory or etcd) for every row of every round.
round() {
  local r=$1
  run_one embedded "--pipeline 1" "embedded:$work/data-$r"
  run_one embedded-pipelined "--pipeline 8" "embedded:$work/data-pipelined-$r"
  run_one embedded-pipelined-agents-muxed "--pipeline 8 --agent-mux 16" "embedded:$work/data-muxed-$r"
  run_one embedded-pipelined-statuses-held "--pipeline 8 --hold-statuses 1" "embedded:$work/data-held-$r"
  run_one embedded-pipelined-gangs-of-8 "--pipeline 8 --gang-size 8" "embedded:$work/data-gangs-$r"
  # Full: two 250m pods fill each agent; then 10% more pods of a higher priority, each placed by preempting one.
  run_one embedded-pipelined-full-then-preempting "--pipeline 8 --cpus 0.5 --high-pods $((pods / 10))" "embedded:$work/data-preempt-$r"
  rm -rf "$work"/data-*
  local flavour args
  for flavour in etcd:--pipeline\ 1 etcd-pipelined:--pipeline\ 8; do
    args=${flavour#*:}
    start_etcd "$work/etcd-$r"
    run_one "${flavour%%:*}" "$args" "etcd:$ETCD_URL" "$ETCD_PID"
    kill "$ETCD_PID"; wait "$ETCD_PID" 2>/dev/null || true
    rm -rf "$work/etcd-$r"
  done
}

for r in $(seq "$rounds"); do
  echo "-- round $r of $rounds"
  round "$r"
done
echo "-- median of $rounds rounds, pods placed/s (goals: 20,000 embedded, 5,000 etcd)"
awk '{ if (!($1 in n)) order[k++] = $1; v[$1, n[$1]++] = $2 + 0 }
     END { for (i = 0; i < k; i++) { r = order[i]; m = n[r]; line = "";
             for (j = 0; j < m; j++) { a[j] = v[r, j]; line = line (j ? " / " : "") v[r, j] }
             for (x = 0; x < m; x++) for (y = x + 1; y < m; y++) if (a[y] < a[x]) { t = a[x]; a[x] = a[y]; a[y] = t }
             med = m % 2 ? a[int(m / 2)] : (a[m / 2 - 1] + a[m / 2]) / 2
             printf "%s: median=%d (%s)\n", r, med, line } }' "$work/rates"
echo "goal rows: embedded-pipelined-statuses-held (scheduler_perf's shape: pipelined creates, no kubelet posting"
echo "  statuses), embedded-pipelined-agents-muxed (statuses posted, many agents' posts sharing connections) and"
echo "  etcd-pipelined; the other rows show what a connection per request and per agent costs"
echo "anchors: kube-scheduler ~100-300 pods/s at 5k nodes; Nomad C1M ~3,750/s on 5 servers"
