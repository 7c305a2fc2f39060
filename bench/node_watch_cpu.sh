#!/usr/bin/env bash
# The daemon's CPU over 10 s with 5,000 agents (agent_sim) and 8 node watchers
# resumed from a resourceVersion (as kubectl get nodes -w and informers watch),
# for one build. Loopback only.
#   bench/node_watch_cpu.sh OLD_BUILD/uvsched 18801; bench/node_watch_cpu.sh build/uvsched 18802
set -u
bin=$1; port=$2
here=$(cd "$(dirname "$0")/.." && pwd)
d=$(mktemp -d)
$bin --listen 127.0.0.1:$port --store embedded:$d/data > $d/log 2>&1 & pid=$!
sleep 1
"$here/build/agent_sim" --server http://127.0.0.1:$port --agents 5000 --agent-mux 16 > $d/sim.log 2>&1 & sim=$!
for i in $(seq 60); do n=$(curl -s 127.0.0.1:$port/api/v1/nodes | grep -o '"kind":"Node"' | wc -l); [ "$n" -ge 5000 ] && break; sleep 0.5; done
echo "nodes=$n"
for i in $(seq 8); do curl -sN "127.0.0.1:$port/api/v1/nodes?watch=1&resourceVersion=1" > /dev/null & done
sleep 3
t0=$(awk '{print $14+$15}' /proc/$pid/stat); sleep 10; t1=$(awk '{print $14+$15}' /proc/$pid/stat)
echo "$bin cpu_ticks_per_10s=$((t1-t0)) (100 ticks = 1 cpu-second)"
kill $sim; pkill -f "curl -sN 127.0.0.1:$port"; kill $pid; wait $pid 2>/dev/null; rm -rf $d
