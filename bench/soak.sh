#!/usr/bin/env bash
# The soak (issue 24, point 5): bench/soak.py for SECONDS (default 1800) on
# the binaries of BUILD, copied first so a rebuild meanwhile does not change
# what runs. RESTART_EVERY (default 180 s) and CHURN_EVERY (45 s) set how
# often the daemon restarts and the churning agents come and go. Loopback only.
#   bench/soak.sh [BUILD] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
seconds=${2:-1800}
for b in uvsched agent_sim kubeml_emulator; do
  [[ -x "$build/$b" ]] || { echo "soak: $build/$b is missing; build first (make build)" >&2; exit 2; }
done
bin=$(mktemp -d /tmp/uvsched-soak-bin.XXXXXX)
trap 'rm -rf "$bin"' EXIT
cp "$build/uvsched" "$build/agent_sim" "$build/kubeml_emulator" "$bin/"
exec_args=(--build "$bin" --seconds "$seconds" --restart-every "${RESTART_EVERY:-180}" --churn-every "${CHURN_EVERY:-45}")
python3 bench/soak.py "${exec_args[@]}"
