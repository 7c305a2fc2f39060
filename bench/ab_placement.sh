#!/usr/bin/env bash
# A/B: placement rate of two uvsched builds (OLD_BUILD, NEW_BUILD), alternating
# rounds on fresh embedded stores, with the same agent_sim. Loopback only.
#   OLD_BUILD=/tmp/old/build NEW_BUILD=build bench/ab_placement.sh
set -u
. "$(dirname "$0")/lib.sh"
for round in 1 2 3; do
  for which in old new; do
    bin=${OLD_BUILD:?}; [ $which = new ] && bin=${NEW_BUILD:-build}
    d=$(mktemp -d); start_uvsched $bin embedded:$d/data $d/log
    out=$(AGENT_SIM_EXIT_AFTER_REPORT=1 timeout 120 ${NEW_BUILD:-build}/agent_sim --server http://127.0.0.1:$UVSCHED_PORT --agents 1000 --pods 10000 --concurrency 8 --pipeline 8 --agent-mux 16 --pod-status 0 2>&1 | grep -o "placed=[0-9]* .*" | head -1)
    echo "round $round $which: $out"
    kill $UVSCHED_PID; wait $UVSCHED_PID 2>/dev/null; rm -rf $d
  done
done
