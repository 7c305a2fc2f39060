#!/usr/bin/env python3
"""What a Prometheus scrape of /metrics costs with many connections open, to
the scraper and to everyone else: N idle connections are opened to a running
uvsched on loopback; then R times, /metrics is asked on one keep-alive
connection and /health 10 times on another, 1 ms apart, right after it (the
daemon counts its descriptors on a thread after each scrape, listing
/proc/self/fd, under a millisecond per thousand: /health shows whether that
holds the loop). Prints scrape and /health times and process_open_fds.

  bench/scrape.py --port 10200 [--connections 9000] [--rounds 40]
"""
import argparse, socket, statistics, time


def ask(s, path):
    s.sendall(b"GET " + path + b" HTTP/1.1\r\nHost: b\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(1 << 16)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length"))
    while len(body) < length:
        body += s.recv(1 << 16)
    return body.decode(errors="replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=10200)
    ap.add_argument("--connections", type=int, default=9000)
    ap.add_argument("--rounds", type=int, default=40)
    a = ap.parse_args()
    idle = [socket.create_connection(("127.0.0.1", a.port)) for _ in range(a.connections)]
    scraper = socket.create_connection(("127.0.0.1", a.port))
    prober = socket.create_connection(("127.0.0.1", a.port))
    text = ask(scraper, b"/metrics")  # the daemon has taken every connection once this is answered
    scrape_ms, health_ms = [], []
    for _ in range(a.rounds):
        t0 = time.perf_counter()
        text = ask(scraper, b"/metrics")
        scrape_ms.append((time.perf_counter() - t0) * 1e3)
        for _ in range(10):
            t0 = time.perf_counter()
            ask(prober, b"/health")
            health_ms.append((time.perf_counter() - t0) * 1e3)
            time.sleep(0.001)
        time.sleep(0.03)
    fds = next((l.split()[1] for l in text.splitlines() if l.startswith("process_open_fds ")), "absent")
    health_ms.sort()
    print("connections %d  scrape ms median %.2f max %.2f  /health ms median %.2f p99 %.2f max %.2f"
          "  process_open_fds %s" % (len(idle), statistics.median(scrape_ms), max(scrape_ms),
                                      statistics.median(health_ms), health_ms[int(len(health_ms) * 0.99)],
                                      health_ms[-1], fds))


if __name__ == "__main__":
    main()
