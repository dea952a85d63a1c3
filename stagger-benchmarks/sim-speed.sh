#!/usr/bin/env bash
# Simulator speed: events per second of the contention scenario at 100, 1,000 and 10,000 clients,
# 100 runs each (the 10,000-client batch is the "10,000 clients x 100 runs" goal), and the live
# heap per simulated client. See README.md, "Simulator speed".
#
#   stagger-benchmarks/sim-speed.sh                      # 100, 1,000, 10,000 clients; 100 runs
#   stagger-benchmarks/sim-speed.sh 100,1000 20          # chosen sizes and runs
#
# Raw results: stagger-benchmarks/target/sim-speed.jsonl. STAGGER_MVN_FLAGS=-o builds offline;
# STAGGER_SKIP_BUILD=1 reuses target/benchmarks.jar.
set -euo pipefail

# shellcheck source=harness-build.sh
source "$(dirname "$0")/harness-build.sh"

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
java -Xms2g -Xmx2g -XX:+UseG1GC -XX:+AlwaysPreTouch \
    -cp "$module/target/benchmarks.jar" dev.stagger.benchmarks.sim.SimulatorSpeed \
    --clients "${1:-100,1000,10000}" --runs "${2:-100}" > "$module/target/sim-speed.jsonl"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
