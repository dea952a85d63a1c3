#!/usr/bin/env bash
# Kafka consumers on the local broker, in the same run: throughput of a plain kafka-clients loop
# (no-op; handing its records to one thread a partition, the floor of any consumer that does;
# and handling the same failures inline, the failures' own cost), Stagger's
# KafkaRetryConsumer (no-op; 10 % failing once) and Spring Kafka's @KafkaListener with
# @RetryableTopic retry topics (no-op; 10 % failing once), median of rounds; then healthy records'
# end-to-end latency while one record waits 5 minutes in retry (Stagger, Spring's retry topics,
# Spring's blocking retry), against the same consumers with no record waiting.
# Start the broker first: stagger-kafka/kafka-broker.sh start
# Usage: stagger-benchmarks/kafka-throughput.sh [--records 1000000] [--warmup-records 200000] [--warmup-rounds 1]
#        [--rounds 5] [--max-seconds 20] [--partitions 4] [--hand-off-threads 4] [--spring-defaults] [--rate 500]
#        [--seconds 10] [--latency-rounds 3] [--bootstrap 127.0.0.1:9092]
# Each consumer's round is a fresh topic filled with --records (not timed), drained until done or for
# --max-seconds from its first record; --warmup-rounds warm-up rounds first, then --rounds interleaved rounds.
set -euo pipefail
# shellcheck source=harness-build.sh
source "$(dirname "$0")/harness-build.sh"
java -Xms1g -Xmx1g -XX:+UseG1GC -XX:+AlwaysPreTouch \
  -cp stagger-benchmarks/target/benchmarks.jar dev.stagger.benchmarks.kafka.KafkaThroughput "$@"
exec java -Xms1g -Xmx1g -XX:+UseG1GC -XX:+AlwaysPreTouch \
  -cp stagger-benchmarks/target/benchmarks.jar dev.stagger.benchmarks.kafka.KafkaLatency "$@"
