#!/usr/bin/env bash
# Heap and scheduling cost of async calls waiting for their retry: Stagger, Resilience4j and
# Failsafe, each in a fresh JVM per library and size, interleaved, then printed side by side with
# ratios (median of the runs, min-max spread). See README.md, "Pending async retries".
#
#   stagger-benchmarks/pending-retries.sh                    # N = 10^4, 10^5, 10^6; 3 runs each
#   stagger-benchmarks/pending-retries.sh 10000 100000       # chosen sizes
#   STAGGER_PENDING_RUNS=1 stagger-benchmarks/pending-retries.sh 10000   # a quick smoke run
#
# Raw results: stagger-benchmarks/target/pending.jsonl (one JSON object per JVM).
# STAGGER_PENDING_HEAP sets -Xms/-Xmx (default 4g, enough for Failsafe at 10^6);
# STAGGER_MVN_FLAGS=-o builds offline; STAGGER_SKIP_BUILD=1 reuses target/benchmarks.jar.
set -euo pipefail

# shellcheck source=harness-build.sh
source "$(dirname "$0")/harness-build.sh"

sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000 1000000)
runs="${STAGGER_PENDING_RUNS:-3}"
heap="${STAGGER_PENDING_HEAP:-4g}"
results="$module/target/pending.jsonl"
: > "$results"

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for n in "${sizes[@]}"; do
    for ((run = 1; run <= runs; run++)); do
        for library in stagger resilience4j failsafe; do
            echo "N=$n run $run/$runs: $library" >&2
            # Fixed, pre-touched heap: these VMs back memory lazily, and a growing heap would
            # make the first calls pay for page faults.
            java "-Xms$heap" "-Xmx$heap" -XX:+UseG1GC -XX:+AlwaysPreTouch \
                -cp "$module/target/benchmarks.jar" dev.stagger.benchmarks.pending.PendingRetries \
                --library "$library" --calls "$n" --histogram >> "$results"
        done
    done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

python3 "$module/print-pending.py" "$results"
