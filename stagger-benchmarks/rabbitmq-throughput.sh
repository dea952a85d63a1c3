#!/usr/bin/env bash
# RabbitMQ consumer throughput: a plain amqp-client consumer, Stagger's RabbitConsumer (no-op) and
# Stagger's RabbitConsumer with 10 % of messages retried once, in the same run, on the local broker.
# Usage: stagger-benchmarks/rabbitmq-throughput.sh [--messages 50000] [--rounds 3] [--prefetch 250]
#        [--concurrency 4] [--host 127.0.0.1] [--port 5672] [--retry-in-place-ms N (0: every retry a copy)]
set -euo pipefail
# shellcheck source=harness-build.sh
source "$(dirname "$0")/harness-build.sh"
exec java -Xms1g -Xmx1g -XX:+UseG1GC -XX:+AlwaysPreTouch \
  -cp stagger-benchmarks/target/benchmarks.jar dev.stagger.benchmarks.rabbitmq.RabbitThroughput "$@"
