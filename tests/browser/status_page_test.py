#!/usr/bin/python3
"""The status page in a real browser (issue 23): Debian's chromium, headless,
driven over the DevTools protocol, loads /ui/ from a real daemon with
agent_sim agents, pending pods that wait for different reasons and two
training jobs fed by the KubeML emulator, and checks what a person would see:
the agents and their figures, each pending pod's reason, each job's chart
with its points, the Health view, a phone-sized screen, and a console free of
errors. Then a daemon with a token file: the page asks for a token, a reader
token shows the views and may change nothing, and the token is in no URL.
Screenshots go to the build directory (status-page-*.png).

  status_page_test.py BUILD_DIR        (UVSCHED_BIN, UVSCHED_AGENT_SIM and
                                        UVSCHED_KUBEML_EMULATOR name the programs)
Every wait has a deadline; nothing sleeps for an event.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import Browser, wait_for  # noqa: E402

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what, flush=True)
    return cond


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(port, method, path, body=None, token=None):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), method=method,
                                 data=json.dumps(body).encode() if body is not None else None)
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


class Process:
    def __init__(self, name, args, workdir):
        self.name = name
        self.log_path = os.path.join(workdir, name + ".log")
        self.log = open(self.log_path, "w+")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, cwd=workdir)

    def text(self):
        with open(self.log_path) as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def pod(name, cpu="0.5", selector=None, group=None):
    spec = {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]}
    if selector:
        spec["nodeSelector"] = selector
    meta = {"name": name}
    if group:
        meta["labels"] = {"scheduling.x-k8s.io/pod-group": group}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def start_daemon(workdir, port, extra):
    d = Process("uvsched-%d" % port, [os.environ["UVSCHED_BIN"], "--listen", "127.0.0.1:%d" % port,
                                      "--store", "embedded:" + os.path.join(workdir, "data-%d" % port)] + extra, workdir)
    if not wait_for("the daemon", lambda: http(port, "GET", "/healthz")[0] == 200, 30):
        raise RuntimeError("daemon did not start:\n" + d.text())
    return d


def chart_points(b, job_id):
    return b.eval("""(() => { const c = document.querySelector('#job-%s canvas'); const ch = c && Chart.getChart(c);
                     return ch ? ch.data.datasets.map(d => d.data.length) : null; })()""" % job_id)


def open_daemon(workdir, build):
    port = free_port()
    emu = Process("kubeml-emulator", [os.environ["UVSCHED_KUBEML_EMULATOR"], "--listen", "127.0.0.1:0",
                                      "--metrics-listen", "127.0.0.1:0", "--scheduler", "http://127.0.0.1:%d" % port,
                                      "--start-delay", "0.2", "--jobs", "2", "--epochs", "100000", "--epoch-ms", "60",
                                      "--wait-limit", "60", "--quiet", "1"], workdir)
    ports = wait_for("the emulator's ports", lambda: re.search(r"listening ps=(\d+) metrics=(\d+)", emu.text()), 20)
    if not ports:
        raise RuntimeError("emulator did not start:\n" + emu.text())
    daemon = start_daemon(workdir, port, ["--ps-url", "http://127.0.0.1:" + ports.group(1),
                                          "--ps-metrics-url", "http://127.0.0.1:%s/metrics" % ports.group(2),
                                          "--metrics-poll-interval", "0.5"])
    agents = Process("agent-sim", [os.environ["UVSCHED_AGENT_SIM"], "--server", "http://127.0.0.1:%d" % port,
                                   "--agents", "4", "--cpus", "2", "--mem", "4096", "--labels", "zone=edge"], workdir)
    return port, [agents, emu, daemon]


def test_views(workdir, build):
    port, procs = open_daemon(workdir, build)
    b = None
    try:
        check(wait_for("4 agents", lambda: http(port, "GET", "/v1/cluster")[1].count('"connected"') >= 4, 20),
              "the agents subscribed")
        for p in [pod("runs-1", "1"), pod("runs-2", "1"), pod("too-big", "6"),
                  pod("wrong-zone", "0.5", {"zone": "core"})]:
            status, body = http(port, "POST", "/api/v1/namespaces/default/pods", p)
            check(status == 201, "create %s: %d %s" % (p["metadata"]["name"], status, body))
        # A gang of four of 1.5 cpu: the agents that run the two pods above
        # have 1 cpu left at most, so no more than three fit, and it waits whole.
        status, body = http(port, "POST", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups",
                            {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                             "metadata": {"name": "quad"}, "spec": {"minMember": 4}})
        check(status == 201, "create the pod group: %d %s" % (status, body))
        for i in range(4):
            status, body = http(port, "POST", "/api/v1/namespaces/default/pods", pod("quad-%d" % i, "1.5", group="quad"))
            check(status == 201, "create quad-%d: %d %s" % (i, status, body))

        b = Browser(workdir)
        b.open("http://127.0.0.1:%d/ui/" % port)
        # Cluster: every agent, its state as a word, its figures, its pods.
        cluster = wait_for("the cluster view", lambda: (lambda t: t if "sim-3" in t and "default/runs-" in t else None)(
            b.visible_text("#view-cluster")), 20) or ""
        check("1–4 of 4 agents" in cluster, "the agent count shows: " + cluster[:400])
        for h in ("sim-0", "sim-1", "sim-2", "sim-3"):
            check(h in cluster, h + " is listed")
        check(cluster.count("connected") >= 4, "each agent says connected")
        check("zone=edge" in cluster, "an agent's labels show")
        check(re.search(r"1 cpu of 2 cpu \(50%\)", cluster), "a bar's figures say what it shows: " + cluster[:600])
        check(re.search(r"Pods pending\s+6", cluster), "the totals count the six pending pods: " + cluster[:400])
        # Searching narrows the list.
        b.eval("(() => { const i = document.getElementById('cluster-search'); i.value = 'sim-2';"
               " i.dispatchEvent(new Event('input')); })()")
        narrowed = wait_for("the search", lambda: (lambda t: t if "1–1 of 1 agents" in t else None)(
            b.visible_text("#view-cluster")), 10) or ""
        check("sim-2" in narrowed and "sim-0" not in narrowed, "search shows only sim-2: " + narrowed[:300])
        b.screenshot(os.path.join(build, "status-page-cluster.png"))

        # Queue: both pending pods with their reasons in kube-scheduler's words.
        b.eval("document.querySelector('nav [data-view=queue]').click()")
        queue = wait_for("the queue view", lambda: (lambda t: t if "default/too-big" in t and "default/wrong-zone" in t
                                                    else None)(b.visible_text("#view-queue")), 20) or ""
        check("6 pod(s) waiting" in queue, "the queue counts six: " + queue[:300])
        check(re.search(r"default/quad-\d\s+default/quad\s.*[0-3] of its 4 members needed \(minMember 4\) fit now", queue),
              "a gang's member says how many of its group fit: " + queue[:1500])
        check(re.search(r"default/quad\s+Pending\s+4\s+0\s+0", queue), "the pod groups table shows the gang pending")
        check(re.search(r"default/too-big.*Insufficient cpu", queue), "too-big waits for cpu: " + queue[:800])
        check(re.search(r"default/wrong-zone.*didn't match Pod's node affinity/selector", queue),
              "wrong-zone waits for a node that matches: " + queue[:800])
        check("Successfully assigned default/runs-1" in queue, "the recent events show a placement")
        check("FailedScheduling" in queue, "the recent events show a failed scheduling")
        # A change shows within a few seconds: a new pending pod appears without a reload.
        http(port, "POST", "/api/v1/namespaces/default/pods", pod("late-comer", "8"))
        check(wait_for("the late pod", lambda: "default/late-comer" in b.visible_text("#view-queue"), 8),
              "a new pending pod shows within a few seconds")
        b.screenshot(os.path.join(build, "status-page-queue.png"))

        # Training: two jobs, each with a chart of points, decisions, PS state and metrics.
        b.eval("document.querySelector('nav [data-view=training]').click()")
        jobs = wait_for("two jobs with history",
                        lambda: (lambda j: j if len(j["jobs"]) == 2 and all(x["epochs_reported"] >= 3 for x in j["jobs"])
                                 else None)(json.loads(http(port, "GET", "/v1/jobs")[1])), 30)
        check(jobs, "two training jobs reported epochs")
        for j in (jobs or {"jobs": []})["jobs"]:
            pts = wait_for("job %s's chart" % j["id"], lambda: (lambda p: p if p and min(p) >= 3 else None)(
                chart_points(b, j["id"])), 15)
            check(pts, "job %s has a chart with points (%r)" % (j["id"], pts))
        training = b.visible_text("#view-training")
        check("2 job(s)" in training, "the training view counts two jobs: " + training[:300])
        check("Decisions (newest first" in training and "PS delivery" in training, "decisions and PS state show")
        reasons = {h["reason"] for j in (jobs or {"jobs": []})["jobs"]
                   for h in json.loads(http(port, "GET", "/v1/jobs/" + j["id"])[1])["history"]}
        check(reasons and any(r in training for r in reasons), "a decision's reason shows (%r)" % reasons)
        check(wait_for("polled metrics", lambda: re.search(r"accuracy \d", b.visible_text("#view-training")), 15),
              "the polled accuracy shows: " + b.visible_text("#view-training")[:1200])
        b.screenshot(os.path.join(build, "status-page-training.png"))

        # Health.
        b.eval("document.querySelector('nav [data-view=health]').click()")
        health = wait_for("the health view", lambda: (lambda t: t if "leader" in t and "Pods placed" in t else None)(
            b.visible_text("#view-health")), 10) or ""
        check("embedded" in health, "the store backend shows: " + health[:400])
        check(re.search(r"Store read latency\s+[\d.]+ ms", health), "the store latency shows")
        check(re.search(r"Version\s+\d+\.\d+\.\d+", health), "the version shows")
        check(wait_for("a rate", lambda: re.search(r"HTTP requests\s+\d+\s+[\d.]+", b.visible_text("#view-health")), 8),
              "a counter's rate shows after a refresh")
        b.screenshot(os.path.join(build, "status-page-health.png"))

        # A phone-sized screen: nothing wider than the screen but the tables' own scrollers.
        b.call("Emulation.setDeviceMetricsOverride", width=390, height=844, deviceScaleFactor=2, mobile=True)
        b.eval("document.querySelector('nav [data-view=cluster]').click()")
        wait_for("the cluster on a phone", lambda: "sim-2" in b.visible_text("#view-cluster"), 10)
        width = b.eval("document.documentElement.scrollWidth")
        check(width is not None and width <= 390, "on a 390 px screen the page is %s px wide" % width)
        # and the agents' table is cards there, wholly on the screen: no sideways scrolling to read it.
        check(b.eval("[...document.querySelectorAll('#view-cluster .scroll')].every(e => e.scrollWidth <= e.clientWidth)"),
              "on a phone the agents are read without scrolling sideways")
        b.screenshot(os.path.join(build, "status-page-phone.png"))
        b.call("Emulation.clearDeviceMetricsOverride")

        b.pump()
        check(not b.errors, "nothing in the browser console is an error: %r" % b.errors)
    finally:
        if b:
            b.close()
        for p in procs:
            p.stop()
        if FAILURES:
            for p in procs:
                print("---- %s\n%s" % (p.name, p.text()[-3000:]))


def test_tokens(workdir, build):
    tokens = os.path.join(workdir, "tokens.csv")
    with open(tokens, "w") as f:
        f.write("admin-secret-0123456789,root,admin\nreader-secret-0123456789,ops,reader\n")
    os.chmod(tokens, 0o600)
    port = free_port()
    daemon = start_daemon(workdir, port, ["--token-file", tokens])
    b = None
    try:
        check(http(port, "GET", "/v1/cluster")[0] == 401, "the data needs a token")
        check(http(port, "GET", "/ui/")[0] == 200, "the page itself opens without one")
        b = Browser(workdir)
        b.open("http://127.0.0.1:%d/ui/#health" % port)
        check(wait_for("the token form", lambda: b.eval("!document.getElementById('token-form').hidden"), 10),
              "the page asks for a token")
        b.eval("document.getElementById('token-input').value = 'wrong-token-0123456789';"
               "document.querySelector('#token-form button').click()")
        check(wait_for("a refusal", lambda: "not accepted" in b.visible_text("#token-form"), 10),
              "a wrong token is refused and it asks again")
        b.eval("document.getElementById('token-input').value = 'reader-secret-0123456789';"
               "document.querySelector('#token-form button').click()")
        check(wait_for("the health view", lambda: "leader" in b.visible_text("#view-health"), 10),
              "a reader token shows the views: " + b.text()[:300])
        write = b.eval("""fetch('/api/v1/namespaces/default/pods', {method: 'POST',
            headers: {'Content-Type': 'application/json',
                      Authorization: 'Bearer ' + sessionStorage.getItem('uvsched-token')},
            body: JSON.stringify({apiVersion: 'v1', kind: 'Pod', metadata: {name: 'x'},
                                  spec: {containers: [{name: 'c', image: 'i'}]}})}).then(r => r.status)""")
        check(write == 403, "a reader token changes nothing (POST answered %r)" % write)
        check("secret" not in b.eval("location.href"), "the token is in no URL")
        # Kept for the tab's session: a reload does not ask again.
        b.call("Page.reload")
        check(wait_for("the view after a reload", lambda: "leader" in b.visible_text("#view-health"), 10),
              "after a reload the kept token is used")
        check(b.eval("document.getElementById('token-form').hidden"), "and no token is asked for")
        b.screenshot(os.path.join(build, "status-page-token.png"))
        b.pump()
        # The 401s the page met before it had a token, and the 403 of the
        # write this test made, are the browser's network log, not the page's errors.
        errors = [e for e in b.errors if "status of 401" not in e and "status of 403" not in e]
        check(not errors, "nothing in the browser console is an error: %r" % errors)
    finally:
        if b:
            b.close()
        daemon.stop()
        if FAILURES:
            print("---- daemon\n" + daemon.text()[-3000:])


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    workdir = tempfile.mkdtemp(prefix="status-page-")
    try:
        test_views(workdir, build)
        test_tokens(workdir, build)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if FAILURES:
        print("%d check(s) failed" % len(FAILURES))
        return 1
    print("status page: every check passed; screenshots in %s" % build)
    return 0


if __name__ == "__main__":
    sys.exit(main())
