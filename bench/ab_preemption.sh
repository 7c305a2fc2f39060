#!/usr/bin/env bash
# A/B: preemption on a full cluster for two uvsched builds (OLD_BUILD,
# NEW_BUILD), alternating rounds on fresh embedded stores, with the same
# agent_sim: AGENTS agents of 0.5 cpu filled by PODS pods of 250m, then a
# tenth as many of priority 1000, each placed by preempting one. Prints
# preemptions/s, the decision time's p99 bucket and the pods evicted.
# Loopback only.
#   OLD_BUILD=/tmp/old/build NEW_BUILD=build bench/ab_preemption.sh [AGENTS] [PODS] [ROUNDS]
set -u
. "$(dirname "$0")/lib.sh"
agents=${1:-5000}
pods=${2:-10000}
rounds=${3:-3}
for round in $(seq "$rounds"); do
  for which in old new; do
    bin=${OLD_BUILD:?}; [ $which = new ] && bin=${NEW_BUILD:-build}
    d=$(mktemp -d); start_uvsched "$bin" "embedded:$d/data" "$d/log"
    out=$(AGENT_SIM_EXIT_AFTER_REPORT=1 timeout 300 "${NEW_BUILD:-build}/agent_sim" --server "http://127.0.0.1:$UVSCHED_PORT" \
      --agents "$agents" --pods "$pods" --concurrency 64 --pipeline 8 --pod-status 0 --cpus 0.5 --high-pods $((pods / 10)) \
      2>/dev/null | grep -o "high_priority.*" | head -1)
    m=$(curl -s "http://127.0.0.1:$UVSCHED_PORT/metrics")
    p99=$(echo "$m" | awk '
      /^uvsched_preemption_decision_seconds_bucket/ { split($0, a, "le=\""); split(a[2], b, "\""); le[n] = b[1]; c[n++] = $NF }
      /^uvsched_preemption_decision_seconds_count/ { total = $NF }
      END { for (i = 0; i < n; i++) if (c[i] >= 0.99 * total) { print le[i] " s of " total; exit } }')
    under1=$(echo "$m" | awk '/^uvsched_preemption_decision_seconds_bucket\{le="0.001"\}/ { b = $NF } /^uvsched_preemption_decision_seconds_count/ { t = $NF } END { if (t) printf "%.1f%%", 100 * b / t }')
    evicted=$(echo "$m" | awk '/^uvsched_preemptions_total/ { print $NF }')
    echo "round $round $which: $out decision_p99<=$p99 decisions<=1ms=$under1 evicted=$evicted"
    kill "$UVSCHED_PID"; wait "$UVSCHED_PID" 2>/dev/null; rm -rf "$d"
  done
done
