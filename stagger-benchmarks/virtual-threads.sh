#!/usr/bin/env bash
# 100,000 concurrent synchronous Retry.call()s on virtual threads (plain, and sharing one breaker
# and one budget) against a bounded platform-thread pool, with a JFR recording of pinning. Needs
# JDK 21+ to run (the module still builds with JDK 17). See README.md, "Virtual threads".
#
#   stagger-benchmarks/virtual-threads.sh             # 100,000 calls, 3 JVMs
#   stagger-benchmarks/virtual-threads.sh 10000       # fewer calls
#   STAGGER_VT_RUNS=1 stagger-benchmarks/virtual-threads.sh   # one JVM
#
# Raw results: stagger-benchmarks/target/virtual-threads.jsonl; recordings target/virtual-threads-RUN.jfr.
# STAGGER_JAVA21 names the java to run (default Temurin 25); STAGGER_VT_PLATFORM_THREADS the pool
# size (default 200); STAGGER_MVN_FLAGS=-o builds offline; STAGGER_SKIP_BUILD=1 reuses the jar.
set -euo pipefail

# shellcheck source=harness-build.sh
source "$(dirname "$0")/harness-build.sh"

java21="${STAGGER_JAVA21:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}"
calls="${1:-100000}"
runs="${STAGGER_VT_RUNS:-3}"
results="$module/target/virtual-threads.jsonl"
: > "$results"

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((run = 1; run <= runs; run++)); do
    echo "run $run/$runs" >&2
    "$java21" -Xms2g -Xmx2g -XX:+UseG1GC -XX:+AlwaysPreTouch \
        -cp "$module/target/benchmarks.jar" dev.stagger.benchmarks.vthreads.VirtualThreadRetries \
        --calls "$calls" --platform-threads "${STAGGER_VT_PLATFORM_THREADS:-200}" \
        --jfr "$module/target/virtual-threads-$run.jfr" >> "$results"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

python3 "$module/print-vthreads.py" "$results"
