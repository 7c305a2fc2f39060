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

# Starts build/uvsched (BUILD) on the embedded store in WORK, and AGENTS
# simulated agents of 8 cpus / 16 GiB (tools/agent_sim) that create PLACED
# pods and keep running them; returns once they are placed, and prints how
# fast. Sets UVSCHED_PORT and UVSCHED_PID.
start_with_placed_pods() {
  local build=$1 work=$2 agents=$3 placed=$4
  start_uvsched "$build" "embedded:$work/data" "$work/uvsched.log"
  "$build/agent_sim" --server "http://127.0.0.1:$UVSCHED_PORT" --agents "$agents" --cpus 8 --mem 16384 \
    --pods "$placed" --concurrency 64 >"$work/sim.out" 2>"$work/sim.log" &
  for _ in $(seq 3000); do grep -q placed "$work/sim.out" && break; sleep 0.1; done
  echo "placed first: $(tail -1 "$work/sim.out")"
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

# Starts nginx (one worker, `return 200` everywhere, no access log) with its
# files in DIR, in the background under PREFIX (a taskset, or nothing); sets
# NGINX_PORT and NGINX_PID once it answers.
start_nginx() {
  local dir=$1 prefix=${2:-}
  NGINX_PORT=$(free_port)
  mkdir -p "$dir/logs"
  cat > "$dir/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log stderr warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  server { listen 127.0.0.1:$NGINX_PORT; location / { return 200; } }
}
CONF
  $prefix nginx -p "$dir" -c "$dir/nginx.conf" &
  NGINX_PID=$!
  wait_url "http://127.0.0.1:$NGINX_PORT/health"
}
