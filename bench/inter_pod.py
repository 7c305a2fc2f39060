#!/usr/bin/env python3
"""What a pod's inter-pod constraints cost placement among many placed pods.

Creates COUNT pods one after another on one keep-alive connection to a
uvsched on 127.0.0.1:PORT whose agents have room, each of KIND:
  plain   no constraints (the baseline)
  anti    a required podAntiAffinity on kubernetes.io/hostname to its own kind
  spread  a DoNotSchedule topologySpreadConstraint on kubernetes.io/hostname
and prints creates/s and the create's p50/p99 (a create that fits is placed
by the create itself, so its latency includes the filters' walk over the
placed pods), then how many were bound. Loopback only.
Usage: bench/inter_pod.py PORT KIND COUNT [NAMESPACE]
"""
import http.client
import json
import sys
import time

port, kind, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
ns = sys.argv[4] if len(sys.argv) > 4 else "default"
spec = {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "10m", "memory": "1Mi"}}}]}
selector = {"matchLabels": {"bench": kind}}
if kind == "anti":
    spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": selector, "topologyKey": "kubernetes.io/hostname"}]}}
elif kind == "spread":
    spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                          "whenUnsatisfiable": "DoNotSchedule", "labelSelector": selector}]
elif kind != "plain":
    sys.exit("KIND is plain, anti or spread")
conn = http.client.HTTPConnection("127.0.0.1", port)
latencies = []
start = time.monotonic()
for i in range(count):
    body = json.dumps({"metadata": {"name": f"{kind}-{i}", "labels": {"bench": kind}}, "spec": spec})
    t = time.monotonic()
    conn.request("POST", f"/api/v1/namespaces/{ns}/pods", body, {"Content-Type": "application/json"})
    r = conn.getresponse()
    r.read()
    latencies.append(time.monotonic() - t)
    if r.status != 201:
        sys.exit(f"create {i}: {r.status}")
elapsed = time.monotonic() - start
conn.request("GET", f"/api/v1/namespaces/{ns}/pods?labelSelector=bench%3D{kind}")
pods = json.loads(conn.getresponse().read())["items"]
bound = sum(1 for p in pods if p["spec"].get("nodeName"))
latencies.sort()
print(f"{kind}: creates={count} per_second={count / elapsed:.0f} p50_ms={latencies[len(latencies) // 2] * 1000:.2f} "
      f"p99_ms={latencies[int(len(latencies) * 0.99)] * 1000:.2f} bound={bound}")
