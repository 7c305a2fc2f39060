#!/usr/bin/env python3
"""Readers that would stall the loop or take the daemon's memory (issue 25's
findings 3 and 4), against a running uvsched on loopback: N pods are created,
then one socket pipelines 64 pod lists and reads none, 4 sockets send lists and
read none, and 200 watches never read, while /healthz is asked every 5 ms.
Prints /healthz p50/p99/max and the daemon's RSS before and after (VmHWM).
With --big-list, instead reads one whole pod list (JSON, then as a Table)
while probing, to show what a single large list costs the loop.

  bench/overload.py --port 10200 --pid PID [--pods 10000] [--big-list]
"""
import argparse, json, socket, threading, time


def status(pid):
    out = {}
    for line in open("/proc/%d/status" % pid):
        if line.startswith(("VmRSS", "VmHWM")):
            k, v = line.split(":")
            out[k] = v.strip()
    return out


def create_pods(port, n):
    s = socket.create_connection(("127.0.0.1", port))
    pad = "x" * 300
    done = 0
    while done < n:
        k = min(500, n - done)
        buf = b""
        for i in range(k):
            body = json.dumps({"apiVersion": "v1", "kind": "Pod",
                               "metadata": {"name": "p-%d" % (done + i), "annotations": {"pad": pad}},
                               "spec": {"containers": [{"name": "c", "image": "busybox"}]}}).encode()
            buf += (b"POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: t\r\n"
                    b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)) + body
        s.sendall(buf)
        data = b""
        while data.count(b"HTTP/1.1 ") < k:
            data += s.recv(1 << 20)
        done += k
    s.close()


class Probe:
    def __init__(self, port):
        self.port, self.lat, self.stop = port, [], False
        self.t = threading.Thread(target=self.run)

    def run(self):
        while not self.stop:
            t0 = time.time()
            c = socket.create_connection(("127.0.0.1", self.port))
            c.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            while c.recv(65536):
                pass
            c.close()
            self.lat.append((time.time() - t0) * 1000)
            time.sleep(0.005)

    def report(self):
        l = sorted(self.lat)
        return "healthz probes %d p50 %.1f ms p99 %.1f ms max %.1f ms" % (
            len(l), l[len(l) // 2], l[int(len(l) * 0.99)], l[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=10200)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--big-list", action="store_true")
    a = ap.parse_args()
    t0 = time.time()
    create_pods(a.port, a.pods)
    print("created %d pods in %.1f s" % (a.pods, time.time() - t0))
    print("before:", status(a.pid))
    probe = Probe(a.port)
    probe.t.start()
    time.sleep(0.5)
    if a.big_list:
        for accept in ("", "Accept: application/json;as=Table;v=v1;g=meta.k8s.io\r\n"):
            c = socket.create_connection(("127.0.0.1", a.port))
            c.sendall(("GET /api/v1/pods HTTP/1.1\r\nHost: t\r\n%sConnection: close\r\n\r\n" % accept).encode())
            n, t1 = 0, time.time()
            while True:
                d = c.recv(1 << 20)
                if not d:
                    break
                n += len(d)
            print("%s list: %d bytes in %.0f ms" % ("table" if accept else "json", n, (time.time() - t1) * 1000))
    else:
        socks = []
        s = socket.create_connection(("127.0.0.1", a.port))
        s.sendall(b"GET /api/v1/pods HTTP/1.1\r\nHost: t\r\n\r\n" * 64)
        socks.append(s)
        for _ in range(4):
            s = socket.create_connection(("127.0.0.1", a.port))
            s.sendall(b"GET /api/v1/pods HTTP/1.1\r\nHost: t\r\n\r\n" * 4)
            socks.append(s)
        for _ in range(200):
            s = socket.create_connection(("127.0.0.1", a.port))
            s.sendall(b"GET /api/v1/pods?watch=true HTTP/1.1\r\nHost: t\r\n\r\n")
            socks.append(s)
        time.sleep(5)
    probe.stop = True
    probe.t.join()
    print(probe.report())
    print("after:", status(a.pid))


if __name__ == "__main__":
    main()
