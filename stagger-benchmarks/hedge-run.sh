#!/usr/bin/env bash
# Hedged requests against a long-tail server: p50/p99/p999 and extra requests for no hedging, a
# fixed delay, a p95 delay, and at overload with and without a budget. See README.md.
# Usage: stagger-benchmarks/hedge-run.sh [--rate 50] [--seconds 20] [--warmup 5] [--base-ms 50]
#        [--slow-share 0.02] [--slow-factor 20] [--permits 2] [--overload 1.05] [--timeout-ms 5000] [--budget-ratio 0.05] [--rounds 3] [--seed 1]
set -euo pipefail
# shellcheck source=harness-build.sh
source "$(dirname "$0")/harness-build.sh"
exec java -Xms1g -Xmx1g -XX:+UseG1GC -XX:+AlwaysPreTouch \
  -cp stagger-benchmarks/target/benchmarks.jar dev.stagger.benchmarks.hedge.HedgeRun "$@"
