# Helpers the benchmarks share; sourced, not run. Loopback only.

# A free TCP port on 127.0.0.1.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Waits (up to 20 s) for URL to answer 2xx.
wait_url() { for _ in $(seq 400); do curl -sf -o /dev/null "$1" && return 0; sleep 0.05; done; return 1; }

# Starts build/uvsched (BUILD) on a free port with the store STORE, its log in
# LOG, in the background; sets UVSCHED_PORT and UVSCHED_PID once it answers.
start_uvsched() {
  local build=$1 store=$2 log=$3
  UVSCHED_PORT=$(free_port)
  "$build/uvsched" --listen "127.0.0.1:$UVSCHED_PORT" --store "$store" --metrics-poll-interval 0 --log-level error \
    --max-connections 20000 2>"$log" &
  UVSCHED_PID=$!
  wait_url "http://127.0.0.1:$UVSCHED_PORT/health"
}

# CPU time (user + system, all threads) of process PID so far, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# Starts a single-member etcd with its data in DIR, in the background (the
# caller's EXIT trap kills its jobs), and sets ETCD_URL once it is healthy.
start_etcd() {
  local dir=$1 cport pport
  cport=$(free_port); pport=$(free_port)
  etcd --name bench --data-dir "$dir" --log-level error --quota-backend-bytes 8589934592 \
    --listen-client-urls "http://127.0.0.1:$cport" --advertise-client-urls "http://127.0.0.1:$cport" \
    --listen-peer-urls "http://127.0.0.1:$pport" --initial-advertise-peer-urls "http://127.0.0.1:$pport" \
    --initial-cluster "bench=http://127.0.0.1:$pport" >/dev/null 2>&1 &
  ETCD_URL="http://127.0.0.1:$cport"
  ETCD_PID=$!
  wait_url "$ETCD_URL/health"
}
