#!/usr/bin/env bash
# Jobs throughput: stagger-jobs (PostgreSQL, SQLite) against db-scheduler (lock-and-fetch) and Quartz (JDBC job store) on PostgreSQL.
# Usage: stagger-benchmarks/jobs-throughput.sh [--rounds 3] [--warmup-rounds 1] [--jobs 50000] [--workers 8] [--batch 8] [--latency-jobs 500]
#        [--latency-rate 50] [--quartz-jobs 5000] [--succeeded delete|keep] [--systems stagger-pg,db-scheduler,quartz,stagger-sqlite] [--pg-url URL] [--pg-user U] [--pg-password P]
# Prints each round, then per system the median over rounds with its min..max, and the ratios.
set -euo pipefail
# shellcheck source=harness-build.sh
source "$(dirname "$0")/harness-build.sh"
exec java -Xms512m -Xmx512m -XX:+UseG1GC -XX:+AlwaysPreTouch \
  -cp stagger-benchmarks/target/benchmarks.jar dev.stagger.benchmarks.jobs.JobsThroughput "$@"
