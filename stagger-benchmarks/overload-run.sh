#!/usr/bin/env bash
# Load shedding at 3x overload: Jetty on 127.0.0.1 with a handler of fixed capacity, an open-loop
# load generator (plain java.net.http.HttpClient), unloaded / no filter / GradientLimit / AimdLimit
# side by side in one run; then Stagger's retrying clients (default policy + budget) with and without
# the adaptive throttle, against the server with and without the filter. Stops by itself.
# Usage: stagger-benchmarks/overload-run.sh [--permits 16] [--service-ms 40] [--overload 3]
#        [--seconds 15] [--warmup 5] [--timeout-ms 2000] [--rounds 3] [--clients plain|stagger|both]
set -euo pipefail
# shellcheck source=harness-build.sh
source "$(dirname "$0")/harness-build.sh"
exec java -Xms1g -Xmx1g -XX:+UseG1GC -XX:+AlwaysPreTouch \
  -cp stagger-benchmarks/target/benchmarks.jar dev.stagger.benchmarks.shedding.OverloadRun "$@"
