#!/usr/bin/env python3
"""Leader failover on one etcd: kill -9 the leader, time the standby's takeover.

For each --leader-ttl given, two daemons share a fresh etcd; the leader is killed
KILLS times (a fresh standby is started after each kill). Two figures per kill:
  ready: from the kill to the new leader's /readyz 200,
  place: from then to the first LAUNCH on an agent that subscribes to it then
         (subscribe, one offer, one pod create).
Prints p50 and p99 of each. Loopback only.
Usage: bench/failover.py BUILD_DIR KILLS TTL [TTL ...]
"""
import http.client, json, os, signal, socket, subprocess, sys, tempfile, threading, time


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def request(port, method, path, body=None, timeout=2.0):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        c.request(method, path, body=body, headers={"Content-Type": "application/json"} if body else {})
        r = c.getresponse(); data = r.read(); c.close()
        return r.status, data
    except OSError:
        return 0, b""


def wait(pred, deadline, step=0.005):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(step)
    return False


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def start_daemon(build, etcd_url, ttl, work):
    port = free_port()
    log = open(os.path.join(work, f"uvsched-{port}.log"), "w")
    p = subprocess.Popen([f"{build}/uvsched", "--listen", f"127.0.0.1:{port}", "--store", f"etcd:{etcd_url}",
                          "--leader-ttl", str(ttl), "--metrics-poll-interval", "0", "--log-level", "warn"],
                         stderr=log)
    assert wait(lambda: request(port, "GET", "/health")[0] == 200, 10), "daemon did not start"
    return p, port


def first_placement(port, n):
    """Subscribes an agent, offers, creates a pod: seconds until its LAUNCH."""
    host = f"fo-{n}"
    sock = socket.create_connection(("127.0.0.1", port))
    body = json.dumps({"labels": {}, "resources": []}).encode()
    sock.sendall(f"POST /v1/agents/{host}/subscribe HTTP/1.1\r\nHost: b\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
    seen = {"buf": b""}
    launched = threading.Event()
    subscribed = threading.Event()

    def read():
        sock.settimeout(15)
        try:
            while not launched.is_set():
                chunk = sock.recv(65536)
                if not chunk:
                    return
                seen["buf"] += chunk
                if b"SUBSCRIBED" in seen["buf"]:
                    subscribed.set()
                if b'"LAUNCH"' in seen["buf"]:
                    launched.set()
        except OSError:
            return
    t = threading.Thread(target=read, daemon=True); t.start()
    start = time.monotonic()
    if not subscribed.wait(10):
        raise RuntimeError("no SUBSCRIBED")
    res = [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 1}},
           {"name": "mem", "type": "SCALAR", "scalar": {"value": 1024}}]
    request(port, "POST", f"/v1/agents/{host}/offers", json.dumps({"offers": [{"resources": res}]}))
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"fo-{n}"},
           "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i",
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}
    request(port, "POST", "/api/v1/namespaces/default/pods", json.dumps(pod))
    ok = launched.wait(10)
    took = time.monotonic() - start
    sock.close()
    if not ok:
        raise RuntimeError("no LAUNCH")
    return took


def run(build, kills, ttl):
    work = tempfile.mkdtemp()
    cport, pport = free_port(), free_port()
    etcd = subprocess.Popen(["etcd", "--name", "fo", "--data-dir", f"{work}/etcd", "--log-level", "error",
                             "--listen-client-urls", f"http://127.0.0.1:{cport}",
                             "--advertise-client-urls", f"http://127.0.0.1:{cport}",
                             "--listen-peer-urls", f"http://127.0.0.1:{pport}",
                             "--initial-advertise-peer-urls", f"http://127.0.0.1:{pport}",
                             "--initial-cluster", f"fo=http://127.0.0.1:{pport}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{cport}"
    daemons = []
    try:
        assert wait(lambda: request(cport, "GET", "/health")[0] == 200, 20), "etcd did not start"
        daemons = [start_daemon(build, url, ttl, work)]
        assert wait(lambda: request(daemons[0][1], "GET", "/readyz")[0] == 200, 20)
        daemons.append(start_daemon(build, url, ttl, work))
        ready, place = [], []
        for n in range(kills):
            leader = next(d for d in daemons if request(d[1], "GET", "/readyz")[0] == 200)
            standby = next(d for d in daemons if d is not leader)
            leader[0].send_signal(signal.SIGKILL); leader[0].wait()
            t0 = time.monotonic()
            assert wait(lambda: request(standby[1], "GET", "/readyz", timeout=0.5)[0] == 200, ttl + 30), "no takeover"
            ready.append(time.monotonic() - t0)
            place.append(first_placement(standby[1], n))
            daemons = [standby, start_daemon(build, url, ttl, work)]
            print(f"  ttl {ttl}s kill {n + 1}: ready after {ready[-1]:.2f}s, first placement {place[-1] * 1000:.0f} ms later",
                  flush=True)
        print(f"--leader-ttl {ttl}: {kills} kills; leader dead -> new leader ready: p50 {pct(ready, .5):.2f}s, "
              f"p99 {pct(ready, .99):.2f}s (goal <= ttl + 2 = {ttl + 2}s); ready -> first placement: "
              f"p50 {pct(place, .5) * 1000:.0f} ms, p99 {pct(place, .99) * 1000:.0f} ms (goal <= 1 s)", flush=True)
    finally:
        for p, _ in daemons:
            p.kill()
        etcd.kill()


if __name__ == "__main__":
    build, kills, ttls = sys.argv[1], int(sys.argv[2]), [int(t) for t in sys.argv[3:]]
    for ttl in ttls:
        run(build, kills, ttl)
