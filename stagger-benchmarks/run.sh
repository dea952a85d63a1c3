#!/usr/bin/env bash
# Builds the JMH benchmarks and runs them, then prints one table per group (ns/op, B/op, and each
# library's time as a multiple of Stagger's). See README.md.
#
#   stagger-benchmarks/run.sh             # everything (several minutes)
#   stagger-benchmarks/run.sh happyPath   # only benchmarks matching a JMH regex
#
# Raw results: stagger-benchmarks/target/jmh.json. Set STAGGER_MVN_FLAGS=-o to build offline.
set -euo pipefail

# shellcheck source=harness-build.sh
source "$(dirname "$0")/harness-build.sh"

results="$module/target/jmh.json"
# Pre-touching the heap matters: these VMs back memory lazily and an allocating benchmark runs
# 5-15x slower for its first seconds, longer than the warmup.
java -jar "$module/target/benchmarks.jar" ${1:+"$1"} \
    -f 1 -wi 3 -w 1s -i 5 -r 1s \
    -prof gc \
    -jvmArgs "-Xms1g -Xmx1g -XX:+UseG1GC -XX:+AlwaysPreTouch" \
    -rf json -rff "$results"

python3 "$module/print-table.py" "$results"
