#!/usr/bin/env bash
# A single-node Apache Kafka broker (KRaft: broker and controller in one process) on loopback,
# run from the Maven Central artifacts of Kafka 4.x, for the tests, CI and trying stagger-kafka.
#
#   stagger-kafka/kafka-broker.sh start  [--port N] [--dir D]   # default 9092, /tmp/stagger-kafka-<port>
#   stagger-kafka/kafka-broker.sh status [--port N] [--dir D]
#   stagger-kafka/kafka-broker.sh stop   [--port N] [--dir D]
#
# start resolves the broker's class path with Maven (broker/pom.xml beside this script; the jars go
# to the local repository as any dependency does), writes server.properties (PLAINTEXT listener on
# 127.0.0.1:N, controller on N+1, small segments, one partition per topic unless asked), formats
# the storage once with a fresh cluster id, starts kafka.Kafka in the background (log: D/broker.log)
# and waits until the broker says it has started. A broker already running there is left alone.
# stop ends the process it started (its pid is in D/broker.pid) and keeps the data; delete D to start over.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
command="${1:-}"
[ $# -gt 0 ] && shift
port=9092
dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --port) port="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    *) echo "kafka-broker: unknown option '$1'" >&2; exit 2 ;;
  esac
done
case "$port" in
  ''|*[!0-9]*) echo "kafka-broker: --port must be a number, got '$port'" >&2; exit 2 ;;
esac
dir="${dir:-${TMPDIR:-/tmp}/stagger-kafka-$port}"
controller_port=$((port + 1))
pidfile="$dir/broker.pid"
log="$dir/broker.log"

running() {
  [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

listening() {
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null
}

start() {
  if running; then
    echo "kafka-broker: running on 127.0.0.1:$port (pid $(cat "$pidfile"), $dir)"
    return 0
  fi
  if listening; then
    echo "kafka-broker: something else listens on 127.0.0.1:$port already" >&2
    return 1
  fi
  mkdir -p "$dir"
  local cp="$dir/classpath.txt"
  if [ ! -s "$cp" ] || [ "$here/broker/pom.xml" -nt "$cp" ]; then
    echo "kafka-broker: resolving the broker's class path with Maven"
    mvn -B -q -f "$here/broker/pom.xml" dependency:build-classpath -Dmdep.outputFile="$cp" >"$dir/maven.log" 2>&1 \
      || { cat "$dir/maven.log" >&2; echo "kafka-broker: could not resolve the broker (see above)" >&2; return 1; }
  fi
  cat >"$dir/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:$controller_port
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$controller_port
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$dir/data
num.partitions=1
auto.create.topics.enable=false
offsets.topic.replication.factor=1
offsets.topic.num.partitions=5
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=5
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
log.segment.bytes=1048576
log.retention.check.interval.ms=60000
EOF
  local java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
  if [ ! -f "$dir/data/meta.properties" ]; then
    # a cluster id: 16 random bytes, URL-safe base64 without padding, as Kafka's own tool makes them,
    # and like Kafka's not starting with '-' (the format command would take it for an option)
    local id="-"
    while [ "${id#-}" != "$id" ]; do
      id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"
    done
    "$java" -Xmx256m -cp "$(cat "$cp")" kafka.tools.StorageTool format --standalone -t "$id" \
      -c "$dir/server.properties" >"$dir/format.log" 2>&1 \
      || { cat "$dir/format.log" >&2; echo "kafka-broker: formatting $dir/data failed" >&2; return 1; }
  fi
  : >"$log"
  nohup "$java" -Xms128m -Xmx512m -XX:+UseG1GC -Djava.awt.headless=true \
    -Dorg.slf4j.simpleLogger.defaultLogLevel=info -Dorg.slf4j.simpleLogger.showDateTime=true \
    -cp "$(cat "$cp")" kafka.Kafka "$dir/server.properties" >>"$log" 2>&1 </dev/null &
  echo $! >"$pidfile"
  for _ in $(seq 1 120); do
    if ! running; then
      tail -n 40 "$log" >&2
      echo "kafka-broker: the broker exited while starting (log: $log)" >&2
      return 1
    fi
    if grep -q "Kafka Server started" "$log" && listening; then
      echo "kafka-broker: started on 127.0.0.1:$port (pid $(cat "$pidfile"), $dir)"
      return 0
    fi
    sleep 0.5
  done
  echo "kafka-broker: not ready after 60 s (log: $log)" >&2
  return 1
}

stop() {
  if ! running; then
    echo "kafka-broker: not running ($dir)"
    rm -f "$pidfile"
    return 0
  fi
  local pid
  pid="$(cat "$pidfile")"
  kill "$pid"
  for _ in $(seq 1 60); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$pidfile"; echo "kafka-broker: stopped"; return 0; }
    sleep 0.5
  done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$pidfile"
  echo "kafka-broker: killed after 30 s"
}

case "$command" in
  start) start ;;
  stop) stop ;;
  status)
    if running; then
      echo "kafka-broker: running on 127.0.0.1:$port (pid $(cat "$pidfile"), $dir)"
    else
      echo "kafka-broker: not running ($dir)"
      exit 3
    fi
    ;;
  *) echo "usage: $0 start|stop|status [--port N] [--dir D]" >&2; exit 2 ;;
esac
