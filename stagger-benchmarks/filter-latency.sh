#!/usr/bin/env bash
# Idempotency filter latency: no filter, SQLite and PostgreSQL stores side by side in one run.
# Usage: stagger-benchmarks/filter-latency.sh [--requests 2000] [--warmup 400] [--runs 3]
#        [--pg-url URL] [--pg-user U] [--pg-password P]
set -euo pipefail
# shellcheck source=harness-build.sh
source "$(dirname "$0")/harness-build.sh"
exec java -Xms1g -Xmx1g -XX:+UseG1GC -XX:+AlwaysPreTouch \
  -cp stagger-benchmarks/target/benchmarks.jar dev.stagger.benchmarks.idempotency.FilterLatency "$@"
