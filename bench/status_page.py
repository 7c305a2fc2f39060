#!/usr/bin/python3
"""The status page's first view, in Debian's headless chromium, against a
daemon already holding its agents and pods (bench/status_page.sh starts
them): for each view, ROUNDS cold loads (the browser's cache cleared), the
time from the start of navigation until the view stood with its figures
(the page's 'uvsched-first-view' mark), and the bytes the page took over the
wire. Prints one line per view and its median and worst.

  status_page.py PORT [ROUNDS]
"""
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "browser"))
from cdp import Browser, wait_for  # noqa: E402


def main():
    port = int(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    b = Browser(os.environ.get("TMPDIR", "/tmp"))
    worst_all = 0
    try:
        for view in ("cluster", "queue", "training", "health"):
            times, sizes = [], []
            for _ in range(rounds):
                b.open("about:blank")
                b.call("Network.clearBrowserCache")
                b.open("http://127.0.0.1:%d/ui/#%s" % (port, view))
                ms = wait_for("the first view", lambda: b.eval(
                    "(m => m.length ? m[0].startTime : null)(performance.getEntriesByName('uvsched-first-view'))"),
                    30, 0.02)
                if ms is None:
                    print("%s: no first view in 30 s: %s" % (view, b.text()[:300]))
                    return 1
                times.append(ms)
                sizes.append(b.eval("performance.getEntriesByType('navigation').concat("
                                    "performance.getEntriesByType('resource')).reduce((s, e) => s + e.transferSize, 0)"))
            worst_all = max(worst_all, max(times))
            print("view=%-8s first_view_ms median=%.0f worst=%.0f  transferred_kb=%.0f  (%s)" % (
                view, statistics.median(times), max(times), statistics.median(sizes) / 1024,
                " ".join("%.0f" % t for t in times)), flush=True)
        b.pump()
        if b.errors:
            print("browser errors: %r" % b.errors)
            return 1
    finally:
        b.close()
    print("worst first view: %.0f ms (goal < 1000)" % worst_all)
    return 0


if __name__ == "__main__":
    sys.exit(main())
