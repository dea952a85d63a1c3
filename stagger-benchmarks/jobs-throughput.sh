#!/usr/bin/env bash
# Jobs throughput: stagger-jobs (PostgreSQL, SQLite) against db-scheduler (PostgreSQL, lock-and-fetch).
# Usage: stagger-benchmarks/jobs-throughput.sh [--jobs 50000] [--workers 8] [--latency-jobs 500]
#        [--latency-rate 50] [--pg-url URL] [--pg-user U] [--pg-password P]
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -o -pl stagger-benchmarks -am package -DskipTests
exec java -Xms512m -Xmx512m -XX:+UseG1GC -XX:+AlwaysPreTouch \
  -cp stagger-benchmarks/target/benchmarks.jar dev.stagger.benchmarks.jobs.JobsThroughput "$@"
