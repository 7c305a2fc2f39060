#!/usr/bin/env bash
# `make bench`: every benchmark, each comparing side by side within one run.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== build/bench/hot_path_bench: per-pod JSON and packing costs, side by side"
build/bench/hot_path_bench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
echo "== bench/http.sh: GET /health, uvsched vs nginx"
bench/http.sh build
echo "== bench/store.sh: acknowledged puts/s, embedded vs etcd"
bench/store.sh build
echo "== bench/ml.sh: POST /job decisions/s with a PS stub"
bench/ml.sh build
echo "== bench/pods.sh: pod creates/s and the list of 100k pods"
bench/pods.sh build
echo "== bench/placement.sh: 5k agents x 10k pods, embedded and etcd"
bench/placement.sh build
echo "== bench/memory.sh: RSS at 5k agents x 100k pods, embedded and etcd"
bench/memory.sh build
