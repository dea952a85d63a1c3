package dev.stagger.benchmarks.kafka;

import dev.stagger.Backoff;
import dev.stagger.RetryPolicy;
import dev.stagger.benchmarks.HarnessArgs;
import dev.stagger.benchmarks.harness.CpuProbe;
import dev.stagger.kafka.KafkaRetryConsumer;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.jspecify.annotations.Nullable;

/**
 * Kafka consumer throughput harness (not JMH: each run drains a pre-filled topic). In the same run,
 * each consumer drains its own copy of the same backlog (a topic of {@code --partitions}
 * partitions, {@code --records} records of 64 bytes, produced before the consumer starts and not
 * timed) on the local broker: a plain kafka-clients loop (poll, count, commit asynchronously after
 * each poll), {@link KafkaRetryConsumer} with a no-op handler and with the first attempt of every
 * tenth record failing (retried after 10 ms through a 10 ms delay topic, and again with the retries
 * waiting in the consumer's memory instead, {@code inMemoryRetries(100 ms, 100,000)}), and a
 * Spring Kafka {@code @KafkaListener} with non-blocking retry topics ({@code @RetryableTopic}'s
 * machinery, 10 ms fixed back-off), no-op and with the same failures; the plain loop with the same
 * failures, each handled again at once on the poll thread ({@link #plainRetryingAtOnce}: what the
 * failures themselves cost, the handler's exceptions included, with no wait and no bookkeeping);
 * and, as the floor of any retry through a topic, the plain loop sending each failing record to a
 * second topic that a second plain loop reads back at once ({@link #plainWithCopies}); and, as the
 * floor of any consumer that hands records to handler threads, the plain loop handing each poll's
 * records of a partition to that partition's thread ({@link #plainHandingOff}). Every
 * consumer has the same fetch and poll settings ({@code Broker.FETCH}). A round of one consumer
 * lasts from the first record handled to the last success, or {@code --max-seconds} when that
 * comes first (a slow consumer is measured on part of the backlog); records/s is the successes
 * over that time (group joins and topic creation left out for all alike). Warm-up rounds of every
 * consumer ({@code --warmup-rounds}, not counted) come first; then {@code --rounds} rounds,
 * interleaved, each starting with a different consumer; the table shows the median, the spread (min-max) and the ratios of the
 * medians. Each round also measures the CPU time this JVM spent from the first record to the last
 * success, per record: every thread of it (poll and handler threads, a producer of copies, GC and
 * JIT; not the broker's), what a consumer costs whether or not the host has a core to spare; the
 * table's last two columns are its median and its ratio to the plain loop's. That time is split
 * three ways in each round's line: the busiest thread (the one that polls: the plain loop's, or
 * Stagger's poll thread), the other Java threads (Stagger's handler threads, a producer of copies,
 * the clients' own), and the rest of the JVM (GC and JIT threads); the table's "busiest" column is
 * the first's median.
 *
 * <p>Arguments (all optional): {@code --records 1000000 --rounds 5 --partitions 4 --max-seconds 20
 * --warmup-records 200000 --warmup-rounds 1 --hand-off-threads 4 --bootstrap 127.0.0.1:9092} (the
 * hand-off floor's threads: the partition count unless given), {@code --only TEXT} to run only the
 * consumers whose names contain it, or one of several texts separated by {@code |} (and the plain
 * loop; the plain loop's failing rows too when one of them fails), and {@code --spring-defaults}
 * to add Spring's retry topics with its own defaults (see
 * {@code SpringKafka.Retries.RETRY_TOPICS_DEFAULTS}). Stagger's concurrency and Spring's container
 * concurrency are the partition count.
 */
public final class KafkaThroughput {
    /** The plain loop, the anchor of every ratio. */
    private static final String PLAIN = "kafka-clients, plain loop";
    /** The plain loop on the failing workload, each failure handled again at once: see {@link #plainRetryingAtOnce}. */
    private static final String PLAIN_FAILING = "kafka-clients, plain, 10% fail once, inline";
    /** The least work of a retry through a topic: see {@link #plainWithCopies}. */
    private static final String COPIES = "kafka-clients, plain + copies, 10% fail once";
    /** Stagger with the same failures, its retries waiting in memory ({@code inMemoryRetries}), not in a topic. */
    private static final String IN_MEMORY = "Stagger, 10% fail once, retries in memory";
    /** The least work of a consumer that hands records to handler threads: see {@link #plainHandingOff}. */
    private static final String HAND_OFF = "kafka-clients, plain + hand-off, no-op";
    private KafkaThroughput() {
    }

    /** Drains up to {@code records} records of {@code topic} within {@code maxNanos}; returns what it measured. */
    private interface Run {
        Result drain(Broker broker, String topic, int records, long maxNanos) throws Exception;
    }

    /**
     * Successes in a round, the nanoseconds they took, the CPU time this JVM spent meanwhile, and of
     * that, the busiest Java thread's ({@code busiest}) and the other Java threads' together.
     */
    private record Result(long successes, long nanos, long cpuNanos, long busiestNanos, String busiest,
                          long otherThreadsNanos) {
        double rate() {
            return successes / (nanos / 1e9);
        }

        /** This JVM's CPU time per success, in microseconds (every thread: poll, handlers, producers, GC, JIT). */
        double cpuMicros() {
            return perRecord(cpuNanos);
        }

        double perRecord(long cpu) {
            return cpu / 1e3 / Math.max(1, successes);
        }

        /** What is left of this JVM's CPU time for its threads that are not Java threads (GC, JIT). */
        long jvmNanos() {
            return Math.max(0, cpuNanos - busiestNanos - otherThreadsNanos);
        }
    }

    /**
     * What each run's handler does: counts successes (a striped counter: handler threads do not
     * contend on it), notes the first, fails the first attempt of every tenth when asked.
     */
    private static final class Work {
        final int records;
        final LongAdder successes = new LongAdder();
        final AtomicLong first = new AtomicLong();
        /** This JVM's CPU time when the first record was handled. */
        volatile long cpuAtFirst;
        /** Each Java thread's CPU time when the first record was handled. */
        volatile Map<Long, Long> threadsAtFirst = Map.of();
        final boolean failSome;
        final Set<Integer> failed = ConcurrentHashMap.newKeySet();

        Work(int records, boolean failSome) {
            this.records = records;
            this.failSome = failSome;
        }

        void handle(byte[] value) {
            if (first.get() == 0 && first.compareAndSet(0, System.nanoTime())) {
                threadsAtFirst = CpuProbe.threadNanos();
                cpuAtFirst = CpuProbe.processNanos();
            }
            int index = Broker.index(value);
            if (failSome && index % 10 == 0 && failed.add(index)) {
                throw new IllegalStateException("first attempt of record " + index + " fails");
            }
            successes.increment();
        }

        boolean drained() {
            return successes.sum() >= records;
        }

        /** Waits until every record succeeded, or {@code maxNanos} after the first (10 minutes for the first to come). */
        Result await(long maxNanos) throws InterruptedException {
            long giveUp = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
            while (first.get() == 0) {
                if (System.nanoTime() > giveUp) {
                    throw new IllegalStateException("no record handled in 10 minutes");
                }
                Thread.sleep(1);
            }
            long end = first.get() + maxNanos;
            while (!drained() && System.nanoTime() < end) {
                Thread.sleep(1);
            }
            long now = System.nanoTime();
            long cpu = CpuProbe.processNanos() - cpuAtFirst;
            Map<Long, Long> before = threadsAtFirst;
            long busiest = 0;
            long busiestId = -1;
            long all = 0;
            for (Map.Entry<Long, Long> t : CpuProbe.threadNanos().entrySet()) {
                long used = t.getValue() - before.getOrDefault(t.getKey(), 0L); // a thread started since: all of its time
                all += used;
                if (used > busiest) {
                    busiest = used;
                    busiestId = t.getKey();
                }
            }
            ThreadInfo info = busiestId < 0 ? null : ManagementFactory.getThreadMXBean().getThreadInfo(busiestId);
            return new Result(Math.min(records, successes.sum()), now - first.get(), cpu, busiest,
                    info == null ? "?" : info.getThreadName(), all - busiest);
        }
    }

    public static void main(String[] argv) throws Exception {
        HarnessArgs args = new HarnessArgs(argv);
        int records = args.positive("--records", 1_000_000);
        int warmupRecords = args.positive("--warmup-records", 200_000);
        int warmupRounds = args.positive("--warmup-rounds", 1);
        int rounds = args.positive("--rounds", 5);
        int partitions = args.positive("--partitions", 4);
        long maxNanos = TimeUnit.SECONDS.toNanos(args.positive("--max-seconds", 20));
        Broker broker = new Broker(args.text("--bootstrap", "127.0.0.1:9092"));

        Map<String, Run> runs = new LinkedHashMap<>();
        runs.put(PLAIN, (b, t, n, max) -> plain(b, t, n, max));
        int handOffThreads = args.positive("--hand-off-threads", partitions);
        runs.put(HAND_OFF, (b, t, n, max) -> plainHandingOff(b, t, n, max, partitions, handOffThreads));
        runs.put(PLAIN_FAILING, (b, t, n, max) -> plainRetryingAtOnce(b, t, n, max));
        runs.put(COPIES, (b, t, n, max) -> plainWithCopies(b, t, n, max, partitions));
        runs.put("Stagger, no-op", (b, t, n, max) -> stagger(b, t, n, max, partitions, false, false));
        runs.put("Stagger, 10% fail once", (b, t, n, max) -> stagger(b, t, n, max, partitions, true, false));
        runs.put(IN_MEMORY, (b, t, n, max) -> stagger(b, t, n, max, partitions, true, true));
        runs.put("Spring Kafka, no-op", (b, t, n, max) -> spring(b, t, n, max, partitions, false,
                SpringKafka.Retries.RETRY_TOPICS));
        runs.put("Spring @RetryableTopic, 10% fail once", (b, t, n, max) -> spring(b, t, n, max, partitions, true,
                SpringKafka.Retries.RETRY_TOPICS));
        if (List.of(argv).contains("--spring-defaults")) {
            runs.put("Spring @RetryableTopic defaults, 10% fail", (b, t, n, max) -> spring(b, t, n, max, partitions, true,
                    SpringKafka.Retries.RETRY_TOPICS_DEFAULTS));
        }
        // a diagnostic: the consumers whose names contain this text, the plain loop, and the plain failing anchors if one fails
        List<String> only = List.of(args.text("--only", "").split("\\|"));
        Predicate<String> wanted = k -> only.stream().anyMatch(k::contains);
        boolean anyFailing = runs.keySet().stream().anyMatch(k -> wanted.test(k) && k.contains("fail"));
        runs.keySet().removeIf(k -> !wanted.test(k) && !k.equals(PLAIN)
                && !(anyFailing && k.startsWith("kafka-clients")));
        Map<String, List<Double>> rates = new LinkedHashMap<>();
        Map<String, List<Double>> cpu = new LinkedHashMap<>();
        Map<String, List<Double>> busiest = new LinkedHashMap<>();
        runs.keySet().forEach(k -> {
            rates.put(k, new ArrayList<>());
            cpu.put(k, new ArrayList<>());
            busiest.put(k, new ArrayList<>());
        });
        List<String> names = new ArrayList<>(runs.keySet());

        for (int round = 1 - warmupRounds; round <= rounds; round++) {
            int n = round <= 0 ? Math.min(records, warmupRecords) : records;
            for (int i = 0; i < names.size(); i++) {
                String name = names.get(Math.floorMod(i + round, names.size())); // each round starts with another consumer
                String topic = Broker.uniqueTopic("tp");
                try {
                    broker.create(topic, partitions);
                    broker.fill(topic, n);
                    Result r = runs.get(name).drain(broker, topic, n, maxNanos);
                    String what = round <= 0 ? "warm-up" : "round " + round;
                    if (round > 0) {
                        rates.get(name).add(r.rate());
                        cpu.get(name).add(r.cpuMicros());
                        busiest.get(name).add(r.perRecord(r.busiestNanos()));
                    }
                    System.out.printf(Locale.ROOT, "%-8s %-44s %,10.0f records/s (%,d in %.1f s, %.2f µs CPU a record:"
                            + " %.2f busiest thread %s, %.2f other threads, %.2f GC and JIT)%n",
                            what + ":", name, r.rate(), r.successes(), r.nanos() / 1e9, r.cpuMicros(),
                            r.perRecord(r.busiestNanos()), r.busiest(), r.perRecord(r.otherThreadsNanos()),
                            r.perRecord(r.jvmNanos()));
                } finally {
                    broker.deleteAround(topic);
                }
            }
        }
        System.out.printf(Locale.ROOT, "%n%d records of 64 bytes (at most %d s a round), %d partitions, %d round(s) after %d"
                + " warm-up round(s)%n", records, TimeUnit.NANOSECONDS.toSeconds(maxNanos), partitions, rounds, warmupRounds);
        System.out.printf(Locale.ROOT, "%-44s %14s %24s %9s %12s %10s %12s %12s %11s %9s %9s%n", "consumer",
                "median rec/s", "spread (min-max)", "vs plain", "vs plain, 10%", "vs Spring", "vs + copies", "vs hand-off",
                "µs CPU/rec", "vs plain", "busiest");
        double plainCpu = Broker.median(cpu.get(PLAIN));
        double plain = Broker.median(rates.get(PLAIN));
        double plainFailing = rates.containsKey(PLAIN_FAILING) ? Broker.median(rates.get(PLAIN_FAILING)) : Double.NaN;
        List<Double> floor = rates.getOrDefault(COPIES, List.of());
        List<Double> handOff = rates.getOrDefault(HAND_OFF, List.of());
        for (Map.Entry<String, List<Double>> e : rates.entrySet()) {
            List<Double> r = e.getValue();
            String anchor = e.getKey().endsWith("no-op") ? "Spring Kafka, no-op" : "Spring @RetryableTopic, 10% fail once";
            String spring = e.getKey().startsWith("Stagger") && !rates.getOrDefault(anchor, List.of()).isEmpty()
                    ? String.format(Locale.ROOT, "%9.2fx", Broker.median(r) / Broker.median(rates.get(anchor))) : "";
            boolean failing = e.getKey().contains("fail") && !e.getKey().startsWith("kafka-clients");
            String copies = failing && !floor.isEmpty()
                    ? String.format(Locale.ROOT, "%11.2fx", Broker.median(r) / Broker.median(floor)) : "";
            String overHandOff = e.getKey().startsWith("Stagger") && !failing && !handOff.isEmpty()
                    ? String.format(Locale.ROOT, "%11.2fx", Broker.median(r) / Broker.median(handOff)) : "";
            String sameFailures = failing ? String.format(Locale.ROOT, "%12.2fx", Broker.median(r) / plainFailing) : "";
            double cpuMicros = Broker.median(cpu.get(e.getKey()));
            System.out.printf(Locale.ROOT, "%-44s %,14.0f %,11.0f-%,-12.0f %8.2fx %13s %10s %12s %12s %11.2f %8.2fx %9.2f%n",
                    e.getKey(), Broker.median(r), r.stream().mapToDouble(Double::doubleValue).min().orElse(0),
                    r.stream().mapToDouble(Double::doubleValue).max().orElse(0), Broker.median(r) / plain, sameFailures, spring,
                    copies, overHandOff, cpuMicros, cpuMicros / plainCpu, Broker.median(busiest.get(e.getKey())));
        }
    }

    private static Result plain(Broker broker, String topic, int records, long maxNanos) throws Exception {
        return drainPlainly(broker, topic, new Work(records, false), maxNanos, null);
    }

    /**
     * The plain loop on the failing workload: a record whose handling fails is handled again at
     * once, on the poll thread, before the next (it then succeeds). What the failures cost by
     * themselves (the handler's exception, thrown and caught, and the second call), with none of a
     * retry's wait, bookkeeping or promises: a retry that blocks its partition, with no delay.
     */
    private static Result plainRetryingAtOnce(Broker broker, String topic, int records, long maxNanos) throws Exception {
        Work work = new Work(records, true);
        return drainPlainly(broker, topic, work, maxNanos, r -> work.handle(r.value()));
    }

    /**
     * The least work any retry through a topic does, with none of its safety: the plain loop, which
     * sends each failing record to a second topic (kafka-clients' producer defaults: acks=all,
     * idempotent) without waiting for the acknowledgement before it commits, and a second plain
     * loop that reads that topic back at once (no delay, no headers) and handles its records again.
     */
    private static Result plainWithCopies(Broker broker, String topic, int records, long maxNanos, int partitions)
            throws Exception {
        Work work = new Work(records, true);
        String copies = topic + ".copies";
        broker.create(copies, partitions);
        AtomicBoolean done = new AtomicBoolean();
        Thread reader = new Thread(() -> {
            try (KafkaConsumer<byte[], byte[]> consumer = plainConsumer(broker, copies)) {
                while (!done.get()) {
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                        work.handle(r.value());
                    }
                    consumer.commitAsync();
                }
            }
        }, "copies-reader");
        reader.start();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of("bootstrap.servers", broker.bootstrap()),
                new ByteArraySerializer(), new ByteArraySerializer())) {
            return drainPlainly(broker, topic, work, maxNanos,
                    r -> producer.send(new ProducerRecord<>(copies, r.key(), r.value())));
        } finally {
            done.set(true);
            reader.join(10_000);
        }
    }

    /**
     * The plain loop: poll, handle each record on the poll thread, commit asynchronously after each
     * poll, until {@code work} is drained or {@code maxNanos} after its first record. A record whose
     * handling fails goes to {@code failed} (null: {@code work} never fails).
     */
    private static Result drainPlainly(Broker broker, String topic, Work work, long maxNanos,
                                       @Nullable Consumer<ConsumerRecord<byte[], byte[]>> failed)
            throws Exception {
        try (KafkaConsumer<byte[], byte[]> consumer = plainConsumer(broker, topic)) {
            pollUntilDrained(consumer, work, maxNanos, polled -> {
                for (ConsumerRecord<byte[], byte[]> r : polled) {
                    try {
                        work.handle(r.value());
                    } catch (IllegalStateException e) {
                        if (failed == null) {
                            throw e;
                        }
                        failed.accept(r);
                    }
                }
                consumer.commitAsync();
            });
            Result result = work.await(maxNanos);
            consumer.commitSync();
            return result;
        }
    }

    /**
     * Polls {@code consumer} and gives each poll's records to {@code onPoll}, until {@code work} is
     * drained or {@code maxNanos} after its first record.
     */
    private static void pollUntilDrained(KafkaConsumer<byte[], byte[]> consumer, Work work, long maxNanos,
                                         Consumer<ConsumerRecords<byte[], byte[]>> onPoll) {
        long end = Long.MAX_VALUE;
        while (!work.drained() && System.nanoTime() < end) {
            onPoll.accept(consumer.poll(Duration.ofMillis(100)));
            if (end == Long.MAX_VALUE && work.first.get() != 0) {
                end = work.first.get() + maxNanos;
            }
        }
    }

    /**
     * The least work of a consumer that hands records to handler threads, with none of a retry's
     * bookkeeping: the plain loop hands each poll's records of a partition, as one list, to that
     * partition's own thread (one a partition unless {@code threads} is fewer, then partition
     * {@code p} to thread {@code p % threads}: a partition's records stay in order), which handles
     * them and then publishes the offset after the last; after each poll the loop commits
     * asynchronously what the handler threads have published. No bound on what waits for a handler
     * thread, no retry, no header, no clock.
     */
    private static Result plainHandingOff(Broker broker, String topic, int records, long maxNanos, int partitions,
                                          int threads) throws Exception {
        Work work = new Work(records, false);
        ExecutorService[] handlers = new ExecutorService[partitions];
        AtomicLong[] handled = new AtomicLong[partitions];
        for (int p = 0; p < partitions; p++) {
            handlers[p] = p < threads ? Executors.newSingleThreadExecutor() : handlers[p % threads];
            handled[p] = new AtomicLong(-1);
        }
        try (KafkaConsumer<byte[], byte[]> consumer = plainConsumer(broker, topic)) {
            pollUntilDrained(consumer, work, maxNanos, polled -> {
                for (TopicPartition tp : polled.partitions()) {
                    List<ConsumerRecord<byte[], byte[]>> batch = polled.records(tp);
                    AtomicLong next = handled[tp.partition()];
                    handlers[tp.partition()].execute(() -> {
                        for (ConsumerRecord<byte[], byte[]> r : batch) {
                            work.handle(r.value());
                        }
                        next.set(batch.get(batch.size() - 1).offset() + 1);
                    });
                }
                Map<TopicPartition, OffsetAndMetadata> commits = new HashMap<>();
                for (int p = 0; p < partitions; p++) {
                    long offset = handled[p].get();
                    if (offset >= 0) {
                        commits.put(new TopicPartition(topic, p), new OffsetAndMetadata(offset));
                    }
                }
                if (!commits.isEmpty()) {
                    consumer.commitAsync(commits, null);
                }
            });
            return work.await(maxNanos);
        } finally {
            for (int p = 0; p < threads && p < partitions; p++) {
                handlers[p].shutdownNow();
            }
        }
    }

    /** A plain consumer of {@code topic} in a group of that name, from the earliest offset, committing by hand. */
    private static KafkaConsumer<byte[], byte[]> plainConsumer(Broker broker, String topic) {
        Map<String, Object> config = new HashMap<>(broker.config());
        config.put("group.id", topic);
        config.put("auto.offset.reset", "earliest");
        config.put("enable.auto.commit", false);
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
                new ByteArrayDeserializer());
        consumer.subscribe(List.of(topic));
        return consumer;
    }

    /** With {@code inMemory}, the retries (10 ms) wait in the consumer's memory rather than the delay topic. */
    private static Result stagger(Broker broker, String topic, int records, long maxNanos, int concurrency, boolean failSome,
                                  boolean inMemory) throws Exception {
        Work work = new Work(records, failSome);
        KafkaRetryConsumer.Builder builder = KafkaRetryConsumer.builder(topic, broker.config(), m -> work.handle(m.value()))
                .policy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(10))).build())
                .delayLevels(List.of(Duration.ofMillis(10)))
                .concurrency(concurrency);
        if (inMemory) {
            builder.inMemoryRetries(Duration.ofMillis(100), 100_000);
        }
        try (KafkaRetryConsumer consumer = builder.build()) {
            consumer.start();
            return work.await(maxNanos);
        }
    }

    @SuppressWarnings("try") // the listener runs until the backlog is drained; closed at the end of the block
    private static Result spring(Broker broker, String topic, int records, long maxNanos, int concurrency, boolean failSome,
                                 SpringKafka.Retries retries) throws Exception {
        Work work = new Work(records, failSome);
        try (SpringKafka ignored = SpringKafka.start(broker, topic, topic, concurrency, concurrency, retries, 10, 3,
                r -> work.handle(r.value()))) {
            return work.await(maxNanos);
        }
    }
}
