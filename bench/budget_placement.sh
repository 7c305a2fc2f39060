#!/usr/bin/env bash
# What a PodDisruptionBudget over the pods costs their placement: 10,000 pods
# on 1,000 agents (agent_sim, as bench/ab_placement.sh places them), with no
# budget, and with one budget (minAvailable 1) selecting every pod of the
# namespace, whose status the disruption controller keeps current while they
# are created, bound and run. With OLD_BUILD set, a third row: that build with
# the budget (to compare two designs of the controller). Rounds alternate, on
# fresh embedded stores; pods placed per second and the daemon's CPU over the
# run; then, the 10,000 placed, 10 s of churn (a label patched on one pod
# every 50 ms, as a controller or a user edits them) and the daemon's CPU
# over those 10 s: what keeping the budget current costs while its pods change.
# Loopback only.
#   [OLD_BUILD=/tmp/old/build] NEW_BUILD=build bench/budget_placement.sh
set -u
. "$(dirname "$0")/lib.sh"
new=${NEW_BUILD:-build}
rows="none budget"
[ -n "${OLD_BUILD:-}" ] && rows="$rows old-budget"
budget='{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"all"},"spec":{"minAvailable":1,"selector":{}}}'
for round in 1 2 3; do
  for row in $rows; do
    bin=$new; [ $row = old-budget ] && bin=$OLD_BUILD
    d=$(mktemp -d); start_uvsched $bin embedded:$d/data $d/log
    if [ $row != none ]; then
      curl -sf -XPOST "http://127.0.0.1:$UVSCHED_PORT/apis/policy/v1/namespaces/default/poddisruptionbudgets" \
        -H 'Content-Type: application/json' -d "$budget" >/dev/null || echo "budget not created"
    fi
    t0=$(cpu_ticks $UVSCHED_PID)
    out=$(AGENT_SIM_EXIT_AFTER_REPORT=1 timeout 120 $new/agent_sim --server http://127.0.0.1:$UVSCHED_PORT --agents 1000 --pods 10000 --concurrency 8 --pipeline 8 --agent-mux 16 --pod-status 0 2>&1 | grep -o "placed=[0-9]* .*" | head -1)
    t1=$(cpu_ticks $UVSCHED_PID)
    sleep 1; status=""
    [ $row != none ] && status=$(curl -s "http://127.0.0.1:$UVSCHED_PORT/apis/policy/v1/namespaces/default/poddisruptionbudgets/all" | grep -o '"expectedPods":[0-9]*')
    c0=$(cpu_ticks $UVSCHED_PID); end=$((SECONDS + 10)); i=0
    while [ $SECONDS -lt $end ]; do
      curl -sf -XPATCH "http://127.0.0.1:$UVSCHED_PORT/api/v1/namespaces/default/pods/perf-$((i % 10000))" \
        -H 'Content-Type: application/merge-patch+json' -d "{\"metadata\":{\"labels\":{\"churn\":\"$i\"}}}" >/dev/null
      i=$((i + 1)); sleep 0.05
    done
    c1=$(cpu_ticks $UVSCHED_PID)
    cpu() { awk -v t=$1 -v hz=$(getconf CLK_TCK) 'BEGIN {printf "%.2f", t / hz}'; }
    echo "round $round $row: $out daemon_cpu_s=$(cpu $((t1 - t0))) $status churn_patches=$i churn_daemon_cpu_s=$(cpu $((c1 - c0)))"
    kill $UVSCHED_PID; wait $UVSCHED_PID 2>/dev/null; rm -rf $d
  done
done
