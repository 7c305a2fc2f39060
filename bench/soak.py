#!/usr/bin/env python3
"""Hours of churn against one uvsched on the embedded store (issue 24, point 5).

What runs, all on 127.0.0.1:
  - uvsched on a fixed port, restarted every --restart-every seconds (SIGTERM,
    and every third time SIGKILL, so acknowledged writes must survive a crash);
  - a stable agent_sim (8 agents) and a churning one (4 agents) that is killed
    and started again every --churn-every seconds, half the time under a new
    name prefix: agents join, leave and lose their streams;
  - kubeml_emulator as KubeML's PS and train jobs, started again with two new
    jobs each time its jobs finish; its exit status counts its violations;
  - client threads: pods created and deleted (labels, nodeSelector, host
    ports), lists with label and field selectors, watches that come and go.

Every --sample seconds one line: daemon RSS and open descriptors, p99 of the
pod creates and lists of that window, errors, and the invariants:
  lost       an acknowledged pod (201, never deleted) missing from a list;
  double     a pod whose task runs on two agents (seen in two samples running);
  orphan     a pod Running with no task for it on its node (two samples);
  overcommit an agent whose bound pods ask more CPU than it has, or a host
             port two of its pods hold.
It fails (exit 1) if any invariant broke, a KubeML job saw a violation, or
RSS or descriptors grew: each daemon incarnation's peak RSS, and its median
count of its own descriptors (those that are not a client's established
connection), in the last third of the run against the first third (RSS more
than 1.5x + 16 MiB, descriptors more than +32).

  bench/soak.py --build build --seconds 1800 [--restart-every 180]
"""
import argparse, http.client, json, os, random, signal, socket, subprocess, sys, tempfile, threading, time

AGENT_CPUS = 4.0
POD_CPU = 0.25


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def p99(xs):
    if not xs:
        return 0.0
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * 0.99))]


class Daemon:
    def __init__(self, a, port, ps_port, metrics_port, data, log):
        self.args = [os.path.join(a.build, "uvsched"), "--listen", "127.0.0.1:%d" % port,
                     "--store", "embedded:" + data, "--ps-url", "http://127.0.0.1:%d" % ps_port,
                     "--ps-metrics-url", "http://127.0.0.1:%d/metrics" % metrics_port,
                     "--metrics-poll-interval", "2", "--agent-timeout", "5", "--offer-ttl", "3",
                     "--reconcile-interval", "30", "--failover-timeout", "600", "--log-level", "warn"]
        self.port, self.log, self.proc, self.started, self.kills = port, log, None, 0, 0

    def start(self):
        self.proc = subprocess.Popen(self.args, stdout=subprocess.DEVNULL, stderr=self.log)
        self.started = time.time()
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                c.request("GET", "/readyz")
                if c.getresponse().status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise SystemExit("uvsched did not become ready")

    def restart(self):
        self.kills += 1
        sig = signal.SIGKILL if self.kills % 3 == 0 else signal.SIGTERM
        self.proc.send_signal(sig)
        self.proc.wait(timeout=30)
        self.start()
        return "SIGKILL" if sig == signal.SIGKILL else "SIGTERM"

    def usage(self):
        pid = self.proc.pid
        rss = 0
        try:
            for line in open("/proc/%d/status" % pid):
                if line.startswith("VmRSS"):
                    rss = int(line.split()[1]) // 1024
            fds = len(os.listdir("/proc/%d/fd" % pid))
        except OSError:
            return None
        # Less the clients' connections (how many the agents keep open is
        # theirs to choose): what is left is the daemon's own, and a socket
        # it forgot to close is still counted (CLOSE_WAIT, not ESTABLISHED).
        here = ":%04X" % self.port
        conns = 0
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            try:
                for line in open(table).readlines()[1:]:
                    w = line.split()
                    if w[1].endswith(here) and w[3] == "01":
                        conns += 1
            except OSError:
                pass
        return rss, fds - conns, conns


class Agents:
    """The agent_sim processes and what their event logs say runs where."""

    def __init__(self, a, url, tmp):
        self.a, self.url, self.tmp = a, url, tmp
        self.procs = {}  # prefix -> (Popen, log path, offset)
        self.tasks = {}  # task id -> (host, pod name)
        self.lock = threading.Lock()
        self.generation = 0

    def start(self, prefix, n):
        log = os.path.join(self.tmp, "events-%s.log" % prefix)
        open(log, "w").close()
        p = subprocess.Popen([os.path.join(self.a.build, "agent_sim"), "--server", self.url, "--agents", str(n),
                              "--prefix", prefix, "--cpus", str(AGENT_CPUS), "--mem", "8192",
                              "--ports", "31000-31009", "--events-log", log],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs[prefix] = [p, log, 0]

    def stop(self, prefix):
        p, log, _ = self.procs.pop(prefix)
        p.kill()
        p.wait()
        with self.lock:  # its tasks died with it
            for tid in [t for t, (h, _) in self.tasks.items() if h.startswith(prefix + "-")]:
                del self.tasks[tid]

    def churn(self):
        old = [p for p in self.procs if p.startswith("churn")]
        for p in old:
            self.stop(p)
        self.generation += 1
        self.start("churn%d" % (self.generation % 4 if self.generation % 2 else 0), 4)

    def read_events(self):
        with self.lock:
            for prefix, entry in self.procs.items():
                with open(entry[1]) as f:
                    f.seek(entry[2])
                    data = f.read()
                cut = data.rfind("\n") + 1
                entry[2] += len(data[:cut].encode())
                for line in data[:cut].splitlines():
                    w = line.split()
                    if w[0] == "LAUNCH" and len(w) >= 4:
                        self.tasks[w[3]] = (w[1], w[2].split("/")[-1])
                    elif w[0] == "KILL" and len(w) >= 3:
                        self.tasks.pop(w[2], None)
                    elif w[0] == "SHUTDOWN_FRAMEWORK":
                        for tid in [t for t, (h, _) in self.tasks.items() if h == w[1]]:
                            del self.tasks[tid]
            by_pod = {}
            for host, name in self.tasks.values():
                by_pod.setdefault(name, set()).add(host)
            return by_pod

    def close(self):
        for p in list(self.procs):
            self.stop(p)


class Clients:
    """Pods created and deleted, lists and watches; what was acknowledged."""

    def __init__(self, port):
        self.port = port
        self.live, self.uncertain = set(), set()
        self.lock = threading.Lock()
        self.lat = {"create": [], "list": []}
        self.errors = {"create": 0, "delete": 0, "list": 0, "watch": 0, "unexpected": 0}
        self.watch_events = 0
        self.stop = False
        self.n = 0

    def call(self, method, path, body=None, timeout=10):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            c.request(method, path, body=json.dumps(body) if body is not None else None,
                      headers={"Content-Type": "application/json"})
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()

    def pod(self, name):
        i = self.n
        ports = [{"containerPort": 80, "hostPort": 31000 + i % 10}] if i % 3 == 0 else []
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "labels": {"app": "soak-%d" % (i % 5), "tier": "t%d" % (i % 2)}},
                "spec": {"restartPolicy": "Always" if i % 2 else "Never",
                         "nodeSelector": {"sim": "true"},
                         "containers": [{"name": "c", "image": "busybox", "ports": ports,
                                         "resources": {"requests": {"cpu": "%dm" % int(POD_CPU * 1000), "memory": "64Mi"}}}]}}

    def churn_pods(self):
        while not self.stop:
            with self.lock:
                count = len(self.live)
            try:
                if count < 150 or (count < 300 and random.random() < 0.55):
                    self.n += 1
                    name = "s-%d" % self.n
                    t0 = time.time()
                    try:
                        status, body = self.call("POST", "/api/v1/namespaces/soak/pods", self.pod(name))
                    except OSError:
                        with self.lock:
                            self.uncertain.add(name)
                        self.errors["create"] += 1
                        time.sleep(0.2)
                        continue
                    if status == 201:
                        self.lat["create"].append((time.time() - t0) * 1000)
                        with self.lock:
                            self.live.add(name)
                    elif status in (429, 503):
                        self.errors["create"] += 1
                        time.sleep(0.2)
                    else:
                        self.errors["unexpected"] += 1
                        print("unexpected create reply %d %s" % (status, body[:200]), flush=True)
                else:
                    with self.lock:
                        name = random.choice(sorted(self.live))
                        self.live.discard(name)  # from now on it may or may not exist
                        self.uncertain.add(name)
                    try:
                        status, body = self.call("DELETE", "/api/v1/namespaces/soak/pods/" + name)
                        if status not in (200, 202, 404, 503):
                            self.errors["unexpected"] += 1
                            print("unexpected delete reply %d %s" % (status, body[:200]), flush=True)
                        elif status == 503:
                            self.errors["delete"] += 1
                    except OSError:
                        self.errors["delete"] += 1
            except Exception as e:  # keep going, but say so
                self.errors["unexpected"] += 1
                print("client error: %r" % e, flush=True)
            time.sleep(0.02)

    def lists(self):
        while not self.stop:
            q = random.choice(["labelSelector=app%3Dsoak-1", "labelSelector=tier%3Dt0%2Capp%21%3Dsoak-2",
                               "fieldSelector=status.phase%3DRunning", "fieldSelector=spec.nodeName%3Dstable-3",
                               "labelSelector=app+in+%28soak-3%2Csoak-4%29"])
            t0 = time.time()
            try:
                status, _ = self.call("GET", "/api/v1/namespaces/soak/pods?" + q)
                if status == 200:
                    self.lat["list"].append((time.time() - t0) * 1000)
                else:
                    self.errors["list"] += 1
            except OSError:
                self.errors["list"] += 1
            time.sleep(0.1)

    def watches(self):
        while not self.stop:
            try:
                s = socket.create_connection(("127.0.0.1", self.port), timeout=2)
                s.sendall(b"GET /api/v1/namespaces/soak/pods?watch=1&labelSelector=app%%3Dsoak-%d HTTP/1.1\r\n"
                          b"Host: t\r\n\r\n" % random.randrange(5))
                until = time.time() + random.uniform(2, 20)
                while time.time() < until and not self.stop:
                    try:
                        data = s.recv(65536)
                    except socket.timeout:
                        continue
                    if not data:
                        break
                    self.watch_events += data.count(b'"type":')
                s.close()
            except OSError:
                self.errors["watch"] += 1
                time.sleep(0.2)


def summary(peak):
    """An incarnation's (start, peak RSS, median own fds, peak own fds): the
    median, so that one sample taken while sockets were closing is not read
    as growth; a leak raises every sample after it."""
    fds = sorted(peak[2]) or [0]
    return (peak[0], peak[1], fds[len(fds) // 2], fds[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--seconds", type=float, default=1800)
    ap.add_argument("--restart-every", type=float, default=180)
    ap.add_argument("--churn-every", type=float, default=45)
    ap.add_argument("--sample", type=float, default=10)
    a = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="uvsched-soak-")
    port, ps_port, metrics_port = free_port(), free_port(), free_port()
    url = "http://127.0.0.1:%d" % port
    dlog = open(os.path.join(tmp, "uvsched.log"), "ab")
    daemon = Daemon(a, port, ps_port, metrics_port, os.path.join(tmp, "data"), dlog)
    daemon.start()
    agents = Agents(a, url, tmp)
    agents.start("stable", 8)
    agents.start("churn0", 4)
    clients = Clients(port)
    status, body = clients.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                              "metadata": {"name": "soak"}})
    if status not in (201, 409):
        raise SystemExit("cannot create the soak namespace: %d %s" % (status, body[:200]))

    ml = {"runs": 0, "failed": 0, "proc": None}
    emu_log = open(os.path.join(tmp, "emulator.log"), "ab")

    def start_ml():
        ml["proc"] = subprocess.Popen([os.path.join(a.build, "kubeml_emulator"), "--listen", "127.0.0.1:%d" % ps_port,
                                       "--metrics-listen", "127.0.0.1:%d" % metrics_port, "--scheduler", url,
                                       "--start-delay", "1", "--jobs", "2", "--epochs", "20", "--epoch-ms", "200",
                                       "--wait-limit", "30", "--exit-when-done", "1", "--quiet", "1"],
                                      stdout=emu_log, stderr=emu_log)

    start_ml()
    threads = [threading.Thread(target=f, daemon=True) for f in (clients.churn_pods, clients.lists, clients.watches)]
    for t in threads:
        t.start()

    began = time.time()
    next_restart, next_churn = began + a.restart_every, began + a.churn_every
    peaks = []  # per incarnation: (start time, peak RSS MiB, median own fds, peak own fds)
    peak = [daemon.started, 0, []]
    suspects = {"double": set(), "orphan": set(), "overcommit": set()}
    broken = {"lost": 0, "double": 0, "orphan": 0, "overcommit": 0}
    print("t_s  rss_mib  own_fds  conns  pods  create_p99_ms  list_p99_ms  errors  watch_events  ml_runs/failed  broken  note",
          flush=True)
    note = ""
    while time.time() - began < a.seconds:
        time.sleep(a.sample)
        now = time.time()
        if ml["proc"].poll() is not None:
            ml["runs"] += 1
            if ml["proc"].returncode != 0:
                ml["failed"] += 1
                note += " ml_rc=%d" % ml["proc"].returncode
            start_ml()
        use = daemon.usage()
        if use:
            peak[1] = max(peak[1], use[0])
            peak[2].append(use[1])
        checks = now - daemon.started > 20
        pods = []
        with clients.lock:
            live_before = set(clients.live)  # acknowledged before the list was asked for
        if checks:
            try:
                status, body = clients.call("GET", "/api/v1/namespaces/soak/pods", timeout=20)
                pods = json.loads(body)["items"] if status == 200 else []
            except (OSError, ValueError):
                pods, checks = [], False
        if checks and pods:
            names = {p["metadata"]["name"] for p in pods}
            with clients.lock:  # and not deleted since
                lost = [n for n in live_before & clients.live if n not in names]
            for n in lost:
                print("LOST %s" % n, flush=True)
            broken["lost"] += len(lost)
            with clients.lock:
                clients.live -= set(lost)  # each counted once
            by_pod = agents.read_events()
            per_node = {}
            seen = {"double": set(), "orphan": set(), "overcommit": set()}
            for p in pods:
                name, node = p["metadata"]["name"], p["spec"].get("nodeName")
                phase = p.get("status", {}).get("phase")
                if node and phase in ("Pending", "Running") and "deletionTimestamp" not in p["metadata"]:
                    cpu, ports = per_node.setdefault(node, [0.0, []])
                    per_node[node][0] += POD_CPU
                    for c in p["spec"]["containers"]:
                        for prt in c.get("ports", []):
                            if prt.get("hostPort"):
                                ports.append(prt["hostPort"])
                hosts = by_pod.get(name, set())
                if len(hosts) > 1:
                    seen["double"].add(name)
                if phase == "Running" and node and node not in hosts and "deletionTimestamp" not in p["metadata"]:
                    seen["orphan"].add(name)
            for node, (cpu, ports) in per_node.items():
                if cpu > AGENT_CPUS + 1e-9 or len(ports) != len(set(ports)):
                    seen["overcommit"].add(node)
            # A state seen in two samples in a row: the agent timeout (5 s)
            # and a reconciliation round (1 s) are over by then.
            for kind in ("double", "orphan", "overcommit"):
                for n in seen[kind] & suspects[kind]:
                    detail = per_node.get(n) if kind == "overcommit" else sorted(by_pod.get(n, []))
                    print("%s %s %s" % (kind.upper(), n, detail), flush=True)
                broken[kind] += len(seen[kind] & suspects[kind])
                suspects[kind] = seen[kind] - suspects[kind]
        errors = sum(clients.errors.values())
        print("%5.0f %7d %8d %6d %5d %13.1f %12.1f %7d %13d %7d/%d %7d %s" % (
            now - began, use[0] if use else -1, use[1] if use else -1, use[2] if use else -1, len(pods), p99(clients.lat["create"]),
            p99(clients.lat["list"]), errors, clients.watch_events, ml["runs"], ml["failed"],
            sum(broken.values()), note.strip()), flush=True)
        clients.lat = {"create": [], "list": []}
        note = ""
        if now >= next_churn:
            agents.churn()
            next_churn = now + a.churn_every
            note += " agents_churned"
        if now >= next_restart:
            if peak[1] > 0:  # an incarnation with no sample says nothing of growth
                peaks.append(summary(peak))
            how = daemon.restart()
            peak = [daemon.started, 0, []]
            next_restart = time.time() + a.restart_every
            note += " restart(%s)" % how
    if peak[1] > 0:
        peaks.append(summary(peak))

    clients.stop = True
    for t in threads:
        t.join(timeout=30)
    ml["proc"].kill()
    agents.close()
    daemon.proc.send_signal(signal.SIGTERM)
    rc_daemon = daemon.proc.wait(timeout=30)

    if len(peaks) < 2:
        raise SystemExit("SOAK FAILED: fewer than two sampled daemon incarnations; run longer than two restarts")
    third = max(1, len(peaks) // 3)
    first, last = peaks[:third], peaks[-third:]
    rss_first, rss_last = max(p[1] for p in first), max(p[1] for p in last)
    fd_first, fd_last = max(p[2] for p in first), max(p[2] for p in last)
    fd_spike = max(p[3] for p in peaks)
    failures = []
    if rss_last > 1.5 * rss_first + 16:
        failures.append("RSS grew: %d MiB -> %d MiB" % (rss_first, rss_last))
    if fd_last > fd_first + 32:
        failures.append("own descriptors grew: %d -> %d" % (fd_first, fd_last))
    for k, v in broken.items():
        if v:
            failures.append("%d %s" % (v, k))
    if ml["failed"]:
        failures.append("%d of %d KubeML emulator runs saw violations" % (ml["failed"], ml["runs"]))
    if clients.errors["unexpected"]:
        failures.append("%d unexpected replies" % clients.errors["unexpected"])
    if rc_daemon != 0:
        failures.append("uvsched exited %d on SIGTERM" % rc_daemon)
    if ml["runs"] == 0:
        failures.append("no KubeML run finished")
    print("\nincarnations %d; peak RSS first third %d MiB, last third %d MiB; own fds (an incarnation's median) "
          "%d -> %d, highest single sample %d" % (len(peaks), rss_first, rss_last, fd_first, fd_last, fd_spike))
    print("pods created %d, KubeML runs %d (%d with violations), watch events %d, errors %s" % (
        clients.n, ml["runs"], ml["failed"], clients.watch_events, clients.errors))
    print("invariants: %s" % broken)
    print("logs in %s" % tmp)
    if failures:
        print("SOAK FAILED: " + "; ".join(failures))
        sys.exit(1)
    print("SOAK PASSED")


if __name__ == "__main__":
    main()
