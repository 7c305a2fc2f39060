#!/usr/bin/env python3
"""What the speedup policy's allocation could do if parallelism were fluid.

tools/ml_trace_sim replays a workload as KubeML runs it: a job's parallelism
changes only when it reports an epoch, and the policy knows a job's speed only
from the epochs reported. This model drops both limits, to bound what the
allocation rule itself can reach on a trace: every `--dt` seconds it re-divides
the cluster among the jobs that have arrived, by the same greedy as
policy/speedup_allocation.cc (the first `slots` jobs in arrival order get one
worker each; each further worker goes to the job whose epochs per second it
raises the most, times remaining_epochs ** power), using the trace's true
curves (sim_epoch_seconds at the job's batch size), and each job progresses at
1 / t(p) epochs a second, fractions included. No restart cost, no noise.

The figure it prints is not a lower bound on every schedule, only on this
rule's loss to epoch-by-epoch resizing and to learning the curves: the gap
between its average JCT and ml_trace_sim's is what those two cost.

  bench/ml_fluid_bound.py --trace bench/ml-trace --slots 32,64,128 --powers 0,-0.5,-1
"""
import argparse
import csv
import heapq
import math
import os


def load(trace):
    epochs = {r["application"]: int(r["epochs_to_finish"])
              for r in csv.DictReader(open(os.path.join(trace, "epochs.csv")))}
    curves = {}
    for r in csv.DictReader(open(os.path.join(trace, "scaling_by_batch_size.csv"))):
        key = (r["application"], int(r["nominal_batch_size"]))
        curves.setdefault(key, {})[int(r["replicas"])] = float(r["sim_epoch_seconds"])
    jobs = []
    for r in csv.DictReader(open(os.path.join(trace, "workload.csv"))):
        app = r["application"]
        jobs.append({"submit": float(r["submit_seconds"]), "epochs": epochs[app],
                     "curve": curves[(app, int(r["batch_size"]))]})
    jobs.sort(key=lambda j: j["submit"])
    return jobs


def allocate(live, slots, power):
    """The greedy of allocate_by_speedup, on the true curves; {index: workers}."""
    p = {i: 1 for i, _ in live}
    left = slots - len(live)

    def gain(i, job):
        now, nxt = job["curve"].get(p[i]), job["curve"].get(p[i] + 1)
        if nxt is None or nxt >= now:
            return 0.0
        return (1 / nxt - 1 / now) * job["left"] ** power

    heap = [(-gain(i, j), i, j) for i, j in live]
    heapq.heapify(heap)
    while left > 0 and heap:
        g, i, job = heapq.heappop(heap)
        if g >= 0:
            break
        p[i] += 1
        left -= 1
        heapq.heappush(heap, (-gain(i, job), i, job))
    return p


def run(jobs, slots, power, dt):
    for j in jobs:
        j["left"], j["done"] = float(j["epochs"]), None
    t, pending = 0.0, len(jobs)
    while pending:
        live = [(i, j) for i, j in enumerate(jobs) if j["submit"] <= t and j["done"] is None][:slots]
        p = allocate(live, slots, power)
        for i, j in live:
            rate = 1 / j["curve"][p[i]]
            if j["left"] <= rate * dt:
                j["done"], j["left"] = t + j["left"] / rate, 0.0
                pending -= 1
            else:
                j["left"] -= rate * dt
        t += dt
    jct = sorted(j["done"] - j["submit"] for j in jobs)
    p99 = jct[min(len(jct) - 1, math.ceil(0.99 * len(jct)) - 1)]  # as ml_trace_sim's
    n = len(jct)
    median = jct[n // 2] if n % 2 else (jct[n // 2 - 1] + jct[n // 2]) / 2
    return sum(jct) / n, median, p99, max(j["done"] for j in jobs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", default="bench/ml-trace")
    ap.add_argument("--slots", default="32,64,128")
    ap.add_argument("--powers", default="-0.5", help="the weight's power of the epochs left (the policy's: -0.5)")
    ap.add_argument("--dt", type=float, default=5.0, help="seconds between re-divisions")
    a = ap.parse_args()
    jobs = load(a.trace)
    print(f"{'slots':>5} {'power':>6} {'avg JCT s':>10} {'median s':>9} {'p99 s':>8} {'makespan s':>11}")
    for slots in (int(s) for s in a.slots.split(",")):
        for power in (float(x) for x in a.powers.split(",")):
            mean, median, p99, makespan = run(jobs, slots, power, a.dt)
            print(f"{slots:>5} {power:>6g} {mean:>10.0f} {median:>9.0f} {p99:>8.0f} {makespan:>11.0f}")


if __name__ == "__main__":
    main()
