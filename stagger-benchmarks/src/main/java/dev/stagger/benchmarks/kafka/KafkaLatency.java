package dev.stagger.benchmarks.kafka;

import dev.stagger.Backoff;
import dev.stagger.RetryPolicy;
import dev.stagger.benchmarks.HarnessArgs;
import dev.stagger.kafka.KafkaRetryConsumer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * End-to-end latency of healthy records while one record waits 5 minutes in retry (harness, not
 * JMH). A producer sends {@code --rate} records/s for {@code --seconds} to a topic of
 * {@code --partitions} partitions; the record sent after one second fails its first attempt and is
 * retried 5 minutes later. A healthy record's latency is from just before its send to the end of its
 * handler (one JVM, {@link System#nanoTime()}). Consumers: {@link KafkaRetryConsumer} (the waiting
 * record's copy in a 5-minute delay topic), Spring Kafka with retry topics (its copy in a retry
 * topic whose partition waits paused), each also with no record waiting, and Spring Kafka's blocking
 * retry ({@code DefaultErrorHandler} with a 5-minute back-off: the partition stops at the record,
 * and the healthy records behind it are not delivered before the run ends). The table shows, per
 * consumer, the median over {@code --latency-rounds} of each round's p50, p99 and max, the records
 * delivered, and the p99 with a waiting record over the p99 without one.
 */
public final class KafkaLatency {
    private static final long WAIT_MILLIS = Duration.ofMinutes(5).toMillis();

    private KafkaLatency() {
    }

    /** Starts a consumer of {@code topic} whose handler is {@code probe}; closing it stops the consumer. */
    private interface Start {
        AutoCloseable start(Broker broker, String topic, int partitions, Probe probe) throws Exception;
    }

    /** The handler side of one run: warm-up records, the waiting record's first failure, latencies. */
    private static final class Probe {
        final int waiting;
        final AtomicLongArray latency;
        final AtomicInteger warm = new AtomicInteger();
        final AtomicInteger delivered = new AtomicInteger();
        private final AtomicInteger waitingAttempts = new AtomicInteger();

        Probe(int records, int waiting) {
            this.latency = new AtomicLongArray(records);
            this.waiting = waiting;
        }

        void handle(byte[] value) {
            long now = System.nanoTime();
            int index = Broker.index(value);
            if (index < 0) {
                warm.incrementAndGet();
                return;
            }
            if (index == waiting && waitingAttempts.incrementAndGet() == 1) {
                throw new IllegalStateException("the waiting record's first attempt fails");
            }
            if (index != waiting && latency.compareAndSet(index, 0, now - Broker.sentAt(value))) {
                delivered.incrementAndGet();
            }
        }
    }

    /** One round's figures for one consumer, in milliseconds. */
    private record Figures(double p50, double p99, double max, int delivered, int healthy) {
    }

    public static void main(String[] argv) throws Exception {
        HarnessArgs args = new HarnessArgs(argv);
        int rate = args.positive("--rate", 500);
        int seconds = args.positive("--seconds", 10);
        int partitions = args.positive("--partitions", 4);
        int rounds = args.positive("--latency-rounds", 3);
        Broker broker = new Broker(args.text("--bootstrap", "127.0.0.1:9092"));
        int records = rate * seconds;

        Map<String, Start> consumers = new LinkedHashMap<>();
        consumers.put("Stagger, none waiting", KafkaLatency::stagger);
        consumers.put("Stagger, one waiting 5 min", KafkaLatency::stagger);
        consumers.put("Spring retry topics, none waiting", (b, t, p, probe) -> spring(b, t, p, probe, SpringKafka.Retries.RETRY_TOPICS));
        consumers.put("Spring retry topics, one waiting 5 min", (b, t, p, probe) -> spring(b, t, p, probe, SpringKafka.Retries.RETRY_TOPICS));
        consumers.put("Spring blocking retry, one waiting 5 min", (b, t, p, probe) -> spring(b, t, p, probe, SpringKafka.Retries.BLOCKING));
        Map<String, List<Figures>> results = new LinkedHashMap<>();
        consumers.keySet().forEach(k -> results.put(k, new ArrayList<>()));

        for (int round = 1; round <= rounds; round++) {
            for (Map.Entry<String, Start> c : consumers.entrySet()) {
                int waiting = c.getKey().contains("none waiting") ? -1 : rate; // the record sent after one second
                Figures f = run(broker, c.getValue(), partitions, rate, records, waiting);
                results.get(c.getKey()).add(f);
                System.out.printf(Locale.ROOT, "round %d: %-42s p50 %8.1f ms  p99 %8.1f ms  max %8.1f ms  delivered %d/%d%n",
                        round, c.getKey(), f.p50(), f.p99(), f.max(), f.delivered(), f.healthy());
            }
        }
        System.out.printf(Locale.ROOT, "%n%d records/s for %d s, %d partitions, %d round(s); medians of the rounds%n", rate,
                seconds, partitions, rounds);
        System.out.printf(Locale.ROOT, "%-42s %10s %10s %10s %14s %16s%n", "consumer", "p50 ms", "p99 ms", "max ms", "delivered",
                "p99 vs none");
        for (Map.Entry<String, List<Figures>> e : results.entrySet()) {
            List<Figures> fs = e.getValue();
            double p99 = median(fs, Figures::p99);
            String none = e.getKey().startsWith("Stagger") ? "Stagger, none waiting" : "Spring retry topics, none waiting";
            String ratio = e.getKey().contains("none waiting") ? "" : String.format(Locale.ROOT, "%15.2fx",
                    p99 / median(results.get(none), Figures::p99));
            System.out.printf(Locale.ROOT, "%-42s %10.1f %10.1f %10.1f %14s %s%n", e.getKey(), median(fs, Figures::p50), p99,
                    median(fs, Figures::max), (int) median(fs, f -> f.delivered()) + "/" + fs.get(0).healthy(), ratio);
        }
    }

    @SuppressWarnings("try") // the consumer runs while the producer sends; closed at the end of the block
    private static Figures run(Broker broker, Start start, int partitions, int rate, int records, int waiting)
            throws Exception {
        String topic = Broker.uniqueTopic("lat");
        Probe probe = new Probe(records, waiting);
        try {
            broker.create(topic, partitions);
            try (AutoCloseable consumer = start.start(broker, topic, partitions, probe);
                 KafkaProducer<byte[], byte[]> producer = broker.producer()) {
                for (int p = 0; p < partitions; p++) { // one record per partition: measured once every partition is consumed
                    producer.send(new ProducerRecord<>(topic, p, null, Broker.value(-1 - p))).get(60, TimeUnit.SECONDS);
                }
                awaitUntil(Duration.ofSeconds(120), () -> probe.warm.get() >= partitions);
                long interval = 1_000_000_000L / rate;
                long next = System.nanoTime();
                for (int i = 0; i < records; i++) {
                    LockSupport.parkNanos(next - System.nanoTime());
                    next += interval;
                    producer.send(new ProducerRecord<>(topic, Integer.toString(i).getBytes(), Broker.value(i)));
                }
                producer.flush();
                int healthy = waiting >= 0 ? records - 1 : records;
                awaitUntil(Duration.ofSeconds(10), () -> probe.delivered.get() >= healthy);
            }
        } finally {
            broker.deleteAround(topic);
        }
        int healthy = waiting >= 0 ? records - 1 : records;
        long[] l = new long[probe.delivered.get()];
        int n = 0;
        for (int i = 0; i < records && n < l.length; i++) {
            long v = probe.latency.get(i);
            if (v > 0) {
                l[n++] = v;
            }
        }
        Arrays.sort(l, 0, n);
        return new Figures(percentile(l, n, 0.50), percentile(l, n, 0.99), n == 0 ? 0 : l[n - 1] / 1e6, n, healthy);
    }

    private static double percentile(long[] sorted, int n, double q) {
        return n == 0 ? 0 : sorted[Math.min(n - 1, (int) Math.ceil(q * n) - 1)] / 1e6;
    }

    private static double median(List<Figures> fs, java.util.function.ToDoubleFunction<Figures> f) {
        return Broker.median(fs.stream().map(x -> f.applyAsDouble(x)).toList());
    }

    private static void awaitUntil(Duration within, java.util.function.BooleanSupplier done) throws InterruptedException {
        long end = System.nanoTime() + within.toNanos();
        while (!done.getAsBoolean() && System.nanoTime() < end) {
            Thread.sleep(10);
        }
    }

    private static AutoCloseable stagger(Broker broker, String topic, int partitions, Probe probe) {
        return KafkaRetryConsumer.builder(topic, broker.config(), m -> probe.handle(m.value()))
                .policy(RetryPolicy.builder().maxAttempts(2).backoff(Backoff.fixed(Duration.ofMillis(WAIT_MILLIS))).build())
                .delayLevels(List.of(Duration.ofMillis(10), Duration.ofMillis(WAIT_MILLIS)))
                .concurrency(partitions)
                .build().start();
    }

    private static AutoCloseable spring(Broker broker, String topic, int partitions, Probe probe, SpringKafka.Retries retries) {
        return SpringKafka.start(broker, topic, topic, partitions, partitions, retries, WAIT_MILLIS, 2, r -> probe.handle(r.value()));
    }
}
