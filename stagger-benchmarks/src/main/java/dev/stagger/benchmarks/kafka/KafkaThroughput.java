package dev.stagger.benchmarks.kafka;

import dev.stagger.Backoff;
import dev.stagger.RetryPolicy;
import dev.stagger.benchmarks.HarnessArgs;
import dev.stagger.kafka.KafkaRetryConsumer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Kafka consumer throughput harness (not JMH: each run drains a pre-filled topic). In the same run,
 * each consumer drains its own copy of the same backlog (a topic of {@code --partitions}
 * partitions, {@code --records} records of 64 bytes) on the local broker: a plain kafka-clients
 * loop (poll, count, commit asynchronously after each poll), {@link KafkaRetryConsumer} with a
 * no-op handler and with the first attempt of every tenth record failing (retried after 10 ms
 * through a 10 ms delay topic), and a Spring Kafka {@code @KafkaListener} with non-blocking retry
 * topics ({@code @RetryableTopic}'s machinery, 10 ms fixed back-off), no-op and with the same
 * failures. Records/s is the backlog over the time from the first record handled to the last
 * success (group joins and topic creation left out for all alike). Each consumer runs
 * {@code --rounds} times, interleaved; the table shows the median, the spread and the ratios.
 *
 * <p>Arguments (all optional): {@code --records 50000 --rounds 3 --partitions 4 --bootstrap 127.0.0.1:9092},
 * and {@code --only TEXT} to run only the consumers whose names contain it (and the plain loop).
 * Stagger's concurrency and Spring's container concurrency are the partition count.
 */
public final class KafkaThroughput {
    private KafkaThroughput() {
    }

    /** Drains {@code records} records of {@code topic}; returns nanoseconds from the first record to the last success. */
    private interface Run {
        long drain(Broker broker, String topic, int records) throws Exception;
    }

    /** What each run's handler does: counts successes, notes the first, fails the first attempt of every tenth when asked. */
    private static final class Work {
        final CountDownLatch done;
        final AtomicLong first = new AtomicLong();
        final boolean failSome;
        final Set<Integer> failed = ConcurrentHashMap.newKeySet();

        Work(int records, boolean failSome) {
            this.done = new CountDownLatch(records);
            this.failSome = failSome;
        }

        void handle(byte[] value) {
            first.compareAndSet(0, System.nanoTime());
            int index = Broker.index(value);
            if (failSome && index % 10 == 0 && failed.add(index)) {
                throw new IllegalStateException("first attempt of record " + index + " fails");
            }
            done.countDown();
        }

        long await() throws InterruptedException {
            if (!done.await(10, TimeUnit.MINUTES)) {
                throw new IllegalStateException("not drained in 10 minutes: " + done.getCount() + " left");
            }
            return System.nanoTime() - first.get();
        }
    }

    public static void main(String[] argv) throws Exception {
        HarnessArgs args = new HarnessArgs(argv);
        int records = args.positive("--records", 50_000);
        int rounds = args.positive("--rounds", 3);
        int partitions = args.positive("--partitions", 4);
        Broker broker = new Broker(args.text("--bootstrap", "127.0.0.1:9092"));

        Map<String, Run> runs = new LinkedHashMap<>();
        runs.put("kafka-clients, plain loop", (b, t, n) -> plain(b, t, n));
        runs.put("Stagger, no-op", (b, t, n) -> stagger(b, t, n, partitions, false));
        runs.put("Stagger, 10% fail once", (b, t, n) -> stagger(b, t, n, partitions, true));
        runs.put("Spring Kafka, no-op", (b, t, n) -> spring(b, t, n, partitions, false));
        runs.put("Spring @RetryableTopic, 10% fail once", (b, t, n) -> spring(b, t, n, partitions, true));
        String only = args.text("--only", ""); // a diagnostic: the consumers whose names contain this text, and the plain loop
        runs.keySet().removeIf(k -> !only.isEmpty() && !k.contains(only) && !k.startsWith("kafka-clients"));
        Map<String, List<Double>> rates = new LinkedHashMap<>();
        runs.keySet().forEach(k -> rates.put(k, new ArrayList<>()));

        for (int round = 1; round <= rounds; round++) {
            for (Map.Entry<String, Run> run : runs.entrySet()) {
                String topic = Broker.uniqueTopic("tp");
                try {
                    broker.create(topic, partitions);
                    broker.fill(topic, records);
                    long nanos = run.getValue().drain(broker, topic, records);
                    double rate = records / (nanos / 1e9);
                    rates.get(run.getKey()).add(rate);
                    System.out.printf(Locale.ROOT, "round %d: %-40s %,10.0f records/s%n", round, run.getKey(), rate);
                } finally {
                    broker.deleteAround(topic);
                }
            }
        }
        System.out.printf(Locale.ROOT, "%n%d records of 64 bytes, %d partitions, %d round(s)%n", records, partitions, rounds);
        System.out.printf(Locale.ROOT, "%-40s %14s %22s %9s %12s%n", "consumer", "median rec/s", "spread (min-max)", "vs plain",
                "vs Spring");
        double plain = Broker.median(rates.get("kafka-clients, plain loop"));
        for (Map.Entry<String, List<Double>> e : rates.entrySet()) {
            List<Double> r = e.getValue();
            String anchor = e.getKey().endsWith("no-op") ? "Spring Kafka, no-op" : "Spring @RetryableTopic, 10% fail once";
            String spring = e.getKey().startsWith("Stagger") && !rates.getOrDefault(anchor, List.of()).isEmpty() ? String.format(Locale.ROOT, "%11.2fx", Broker.median(r)
                    / Broker.median(rates.get(anchor))) : "";
            System.out.printf(Locale.ROOT, "%-40s %,14.0f %,10.0f-%,-11.0f %8.2fx %s%n", e.getKey(), Broker.median(r),
                    r.stream().mapToDouble(Double::doubleValue).min().orElse(0),
                    r.stream().mapToDouble(Double::doubleValue).max().orElse(0), Broker.median(r) / plain, spring);
        }
    }

    private static long plain(Broker broker, String topic, int records) throws Exception {
        Work work = new Work(records, false);
        Map<String, Object> config = new HashMap<>(broker.config());
        config.put("group.id", topic);
        config.put("auto.offset.reset", "earliest");
        config.put("enable.auto.commit", false);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            while (work.done.getCount() > 0) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    work.handle(r.value());
                }
                consumer.commitAsync();
            }
            long nanos = work.await();
            consumer.commitSync();
            return nanos;
        }
    }

    private static long stagger(Broker broker, String topic, int records, int concurrency, boolean failSome)
            throws Exception {
        Work work = new Work(records, failSome);
        try (KafkaRetryConsumer consumer = KafkaRetryConsumer.builder(topic, broker.config(), m -> work.handle(m.value()))
                .policy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(10))).build())
                .delayLevels(List.of(Duration.ofMillis(10)))
                .concurrency(concurrency)
                .build()) {
            consumer.start();
            return work.await();
        }
    }

    @SuppressWarnings("try") // the listener runs until the backlog is drained; closed at the end of the block
    private static long spring(Broker broker, String topic, int records, int concurrency, boolean failSome) throws Exception {
        Work work = new Work(records, failSome);
        try (SpringKafka ignored = SpringKafka.start(broker, topic, topic, concurrency, concurrency,
                SpringKafka.Retries.RETRY_TOPICS, 10, 3, r -> work.handle(r.value()))) {
            return work.await();
        }
    }
}
