#!/usr/bin/env bash
# Runs every libFuzzer target for SECONDS, starting from its seed corpus in
# tests/fuzz/corpus/<target>. New inputs go to a scratch directory, not the
# repository; a crash leaves its input in the current directory and fails.
# Usage: scripts/fuzz.sh BUILD_DIR SECONDS
set -euo pipefail
build=${1:-build-fuzz}
secs=${2:-60}
cd "$(dirname "$0")/.."
passed=0; failed=0
for target in wal_recovery json_decoders text_parsers http_path etcd_responses; do
  scratch=$(mktemp -d)
  echo "== fuzz_$target for ${secs}s"
  if "$build/fuzz_$target" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       "$scratch" "tests/fuzz/corpus/$target" 2>"$scratch.log"; then
    passed=$((passed + 1))
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$scratch.log" | sed 's/^/   /'
  else
    failed=$((failed + 1))
    tail -40 "$scratch.log"
  fi
  rm -rf "$scratch" "$scratch.log"
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
