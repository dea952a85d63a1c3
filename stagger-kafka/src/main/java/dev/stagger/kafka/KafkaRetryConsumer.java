package dev.stagger.kafka;

import dev.stagger.Clock;
import dev.stagger.EndReason;
import dev.stagger.Nesting;
import dev.stagger.RandomSource;
import dev.stagger.RetryPolicy;
import dev.stagger.internal.Checks;
import dev.stagger.internal.ConsumerSettings;
import dev.stagger.internal.DelayLevels;
import dev.stagger.internal.RetryStep;
import dev.stagger.kafka.internal.KeyOrder;
import dev.stagger.kafka.internal.MemoryRetries;
import dev.stagger.kafka.internal.PollLoop;
import dev.stagger.kafka.internal.RecordProcessor;
import dev.stagger.kafka.internal.RetryingKeys;
import dev.stagger.kafka.internal.TopicSet;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.jspecify.annotations.Nullable;

/**
 * Consumes a Kafka topic and retries failed records with backoff without blocking their
 * partition: a failed record's copy waits in a delay topic while the records behind it go on.
 *
 * <pre>{@code
 * KafkaRetryConsumer consumer = KafkaRetryConsumer.builder("orders",
 *                 Map.of("bootstrap.servers", "127.0.0.1:9092"), message -> ship(message))
 *         .policy(RetryPolicy.builder().maxAttempts(6).backoff(Backoff.exponential(Duration.ofSeconds(1))
 *                 .maxDelay(Duration.ofMinutes(5)).jitter(Jitter.full())).build())
 *         .concurrency(8)
 *         .build();
 * consumer.start();
 * ...
 * consumer.close();   // graceful: records in hand finish and are committed, the rest are consumed again later
 * }</pre>
 *
 * <h2>What happens to a record</h2>
 * The handler returns: the record is settled and its offset committed. The handler throws: the
 * policy decides, as a {@code Retry} call would (its classifier, attempt limit, deadline from the
 * first attempt, the {@code Retry-After} rule). A retry is a copy of the record (same key, value
 * and application headers) with the attempt count, the backoff schedule's state, the due time and
 * the error history in its {@link KafkaHeaders headers}, produced to the delay topic
 * {@code <topic>.stagger.retry-<millis>} of the smallest {@link Builder#delayLevels delay level} at
 * least as long as the backoff's (jittered) delay. A permanent failure, or the last allowed
 * attempt, goes to the dead-letter topic {@code <topic>.stagger.dlt} with its history and end
 * reason. In both cases the original's offset is committed only after the broker has
 * acknowledged the copy ({@code acks=all}, idempotent producer): a crash in between leaves a
 * duplicate, never a loss. A retry's copy is sent without the handler thread waiting for it (the
 * partition's next records are handled meanwhile; the offset does not pass the record until the
 * acknowledgement); a dead letter is waited for. A copy that cannot be produced is never followed by the commit: its
 * topic is created again (when it was deleted), a copy too large for the producer is
 * dead-lettered with {@link KafkaHeaders#DEAD_CAUSE} {@code UNPUBLISHABLE}, and any other failure
 * is produced again after a wait that grows with each failure; no failure sends it round at once.
 * With {@link Builder#inMemoryRetries}, a retry due soon enough waits in the consumer's memory
 * instead of a delay topic (no copy; the offset does not pass the record until it settles).
 *
 * <h2>Timing and pauses</h2>
 * Two Kafka consumers read: one, a member of the {@linkplain #group() group}, the work topic; the
 * other the delay topics' partitions that go with the work partitions the group gives the first
 * (partition {@code d} of a delay topic goes with work partition {@code d} modulo the work topic's
 * partition count), assigned by hand and committing under {@link #delayGroup()}. Two, because a
 * fetch that asks only for empty partitions is held by the broker up to {@code fetch.max.wait.ms}:
 * with the delay topics' partitions (mostly empty) in the same consumer, the work topic's next
 * fetch would wait behind that held one again and again. A delay topic's partition whose
 * head is not yet due is paused, alone, and resumed when the head is due; every record in one
 * delay topic waits the same time, so the records behind the head are due after it, and a short
 * retry never waits behind a long one (they are in different topics). A retry arrives no earlier
 * than its delay and, with the default levels (a 1-2-5 series from 20 ms to 1 hour), within 2.5
 * times the delay (or 20 ms for shorter delays), plus the broker's latency. Longer delays wait in
 * the largest level repeatedly, up to {@link Builder#maxDelay}. Due times are wall-clock: consumers
 * of one group need roughly synchronised clocks. Pauses are recomputed before every poll, so a
 * rebalance leaves no partition paused: a revoked partition's record in hand is settled and
 * committed before it goes, and a partition assigned anew starts unpaused.
 *
 * <h2>Delivery</h2>
 * At least once: after a crash or a rebalance that outran a handler, a record can be handled
 * again. Make the effect idempotent, or record {@link KafkaMessage#id()} in an {@code Inbox}
 * (module stagger-inbox) in the handler's own transaction. Records of one partition are handled
 * one at a time in offset order; different partitions in parallel, up to the concurrency. A retry
 * leaves its key's later records free to overtake it (as with every retry-topic design), unless
 * {@link Builder#keyOrder key order} is on.
 *
 * <p>Thread-safe. {@link #start()} once; {@link #close()} from any thread, any number of times.
 */
public final class KafkaRetryConsumer implements AutoCloseable {
    private final String name;
    private final Map<String, Object> config;
    private final KafkaHandler handler;
    private final String topic;
    private final RetryPolicy policy;
    private final int concurrency;
    private final int maxPending;
    private final Duration shutdownTimeout;
    private final Duration sendTimeout;
    private final Duration maxDelay;
    private final Nesting nesting;
    private final boolean createTopic;
    private final List<RecordListener> listeners;
    private final Clock clock;
    private final RandomSource random;
    private final TopicSet topics;
    private final @Nullable KeyOrder keyOrder;
    private final @Nullable MemoryRetries memory;

    private final ReentrantLock lifecycle = new ReentrantLock();
    private volatile boolean closing;
    private volatile boolean forced;
    private boolean started;
    private @Nullable Admin admin;
    private @Nullable KafkaProducer<byte[], byte[]> producer;
    private @Nullable ExecutorService handlers;
    /** The work topic's loop and the delay topics' (see {@link PollLoop}). */
    private volatile @Nullable PollLoop loop;
    private volatile @Nullable PollLoop delayLoop;
    private @Nullable Thread poller;
    private @Nullable Thread delayPoller;

    private KafkaRetryConsumer(Builder b) {
        this.name = b.name;
        this.config = Map.copyOf(b.config);
        this.handler = b.handler;
        this.topic = b.topic != null ? b.topic : b.name;
        this.policy = b.policy;
        this.concurrency = b.concurrency;
        this.maxPending = b.maxPending;
        this.shutdownTimeout = b.shutdownTimeout;
        this.sendTimeout = b.sendTimeout;
        this.maxDelay = b.maxDelay;
        this.nesting = b.nesting;
        this.createTopic = b.createTopic;
        this.listeners = List.copyOf(b.listeners);
        this.clock = b.clock;
        this.random = b.random;
        this.topics = new TopicSet(topic, DelayLevels.millis(b.levels));
        this.keyOrder = b.maxHeldPerKey > 0 ? new KeyOrder(b.maxHeldPerKey, b.maxHeld) : null;
        this.memory = b.inMemoryUpTo != null ? new MemoryRetries(b.inMemoryUpTo, b.maxInMemory) : null;
    }

    /**
     * A consumer named {@code name} (its consumer group, unless {@code config} sets
     * {@code group.id}; also its topic unless {@link Builder#topic} says otherwise), whose Kafka
     * clients are configured by {@code config} ({@code bootstrap.servers} at least; security
     * settings and the like are passed on to the consumer, the producer and the admin client).
     */
    public static Builder builder(String name, Map<String, ?> config, KafkaHandler handler) {
        return new Builder(name, config, handler);
    }

    public String name() {
        return name;
    }

    /** The work topic. */
    public String topic() {
        return topic;
    }

    /** The dead-letter topic, {@code <topic>.stagger.dlt}. */
    public String deadLetterTopic() {
        return topics.deadTopic();
    }

    /** The consumer group whose committed offsets are the work topic's: {@code group.id}, else the name. */
    public String group() {
        Object group = config.get(ConsumerConfig.GROUP_ID_CONFIG);
        return group != null ? group.toString() : name;
    }

    /**
     * Where the delay topics' offsets are committed: {@code <group>.stagger-delays}. The delay topics
     * are read by a second consumer of this retry consumer, assigned by hand the delay partitions
     * that go with the work partitions the group gives it (so it is never a member of this group);
     * monitor its lag like the group's.
     */
    public String delayGroup() {
        return group() + ".stagger-delays";
    }

    /** The delay topics, one per level, shortest first: {@code <topic>.stagger.retry-<millis>}. */
    public List<String> delayTopics() {
        return topics.retryTopics();
    }

    /**
     * The partitions this consumer has paused, as of its latest poll: delay-topic partitions whose
     * head is not yet due, and partitions with more than {@link Builder#maxPending} records waiting
     * for a handler. Empty before {@link #start()} and after {@link #close()}. For health checks
     * and tests; any thread.
     */
    public Set<TopicPartition> pausedPartitions() {
        PollLoop running = loop;
        PollLoop delays = delayLoop;
        if (running == null || delays == null || closing) {
            return Set.of();
        }
        Set<TopicPartition> both = new java.util.HashSet<>(running.paused());
        both.addAll(delays.paused());
        return Set.copyOf(both);
    }

    /**
     * The records held back now because their key has a record in retry ({@link Builder#keyOrder});
     * always 0 without key order.
     */
    public int heldRecords() {
        PollLoop running = loop;
        return running == null || closing ? 0 : running.held();
    }

    /**
     * The retries waiting in this consumer's memory now ({@link Builder#inMemoryRetries}), due or
     * not; always 0 without them.
     */
    public int retriesInMemory() {
        MemoryRetries m = memory;
        return m == null ? 0 : m.kept();
    }

    /**
     * Creates the topics that are missing (the work topic only when {@link Builder#createTopic} is
     * on; the delay and dead-letter topics with as many partitions as the work topic) and starts
     * consuming on a thread of its own.
     *
     * @throws KafkaException when the broker cannot be reached or refuses the topics
     * @throws IllegalStateException when started before, or closed, or the work topic is missing
     */
    public KafkaRetryConsumer start() {
        lifecycle.lock();
        try {
            if (started || closing) {
                throw new IllegalStateException("consumer " + name + " was started before");
            }
            started = true;
            try {
                admin = Admin.create(adminConfig());
                createTopics();
                producer = new KafkaProducer<>(producerConfig(), new ByteArraySerializer(), new ByteArraySerializer());
                AtomicInteger threads = new AtomicInteger();
                handlers = new ThreadPoolExecutor(concurrency, concurrency, 0, TimeUnit.MILLISECONDS,
                        new LinkedBlockingQueue<>(), r -> {
                            Thread t = new Thread(r, "stagger-kafka-" + name + "-" + threads.incrementAndGet());
                            t.setDaemon(true);
                            return t;
                        });
                RecordProcessor processor = new RecordProcessor(topics, producer,
                        new RetryStep(name, policy, clock, random, nesting), handler, clock, random, sendTimeout.toMillis(),
                        maxDelay.toMillis(), this::createTopicsAgain, () -> closing, () -> forced, this::tell, keyOrder != null,
                        listeners.toArray(new RecordListener[0]));
                KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerConfig(), new ByteArrayDeserializer(),
                        new ByteArrayDeserializer());
                KafkaConsumer<byte[], byte[]> delayConsumer = new KafkaConsumer<>(delayConsumerConfig(),
                        new ByteArrayDeserializer(), new ByteArrayDeserializer());
                RetryingKeys retrying = keyOrder == null ? null : new RetryingKeys(topics,
                        () -> new KafkaConsumer<>(readerConfig(), new ByteArrayDeserializer(), new ByteArrayDeserializer()),
                        sendTimeout);
                PollLoop.Settings settings = new PollLoop.Settings(topics, processor, handlers, clock, maxPending,
                        shutdownTimeout, () -> closing, keyOrder, PollLoop.FULL_HOLD, memory);
                PollLoop delays = PollLoop.delays(delayConsumer, settings);
                PollLoop running = PollLoop.work(consumer, settings, retrying, delays);
                delayLoop = delays;
                loop = running;
                delayPoller = pollThread(delays, delayConsumer, "-delays");
                poller = pollThread(running, consumer, "-poll");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                closeClients();
                throw new KafkaException("interrupted creating the topics of " + topic, e);
            } catch (ExecutionException | TimeoutException e) {
                closeClients();
                throw new KafkaException("could not create the topics of " + topic + ": " + e.getMessage(), e);
            } catch (RuntimeException e) {
                closeClients();
                throw e;
            }
            return this;
        } finally {
            lifecycle.unlock();
        }
    }

    /** Starts {@code loop} on a daemon thread of its own, which closes {@code consumer} when the loop ends. */
    private Thread pollThread(PollLoop loop, KafkaConsumer<byte[], byte[]> consumer, String suffix) {
        Thread t = new Thread(() -> {
            try {
                loop.run();
            } finally {
                consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
            }
        }, "stagger-kafka-" + name + suffix);
        t.setDaemon(true);
        t.start();
        return t;
    }

    /**
     * A copy found a topic missing: creates what is missing, and the delay loop reads the delay
     * topics created again from their start.
     */
    private void createTopicsAgain() throws ExecutionException, InterruptedException, TimeoutException {
        Set<String> again = createTopics();
        PollLoop delays = delayLoop;
        if (delays != null) {
            delays.topicsCreatedAgain(again);
        }
    }

    private Set<String> createTopics() throws ExecutionException, InterruptedException, TimeoutException {
        return topics.create(Objects.requireNonNull(admin), createTopic, sendTimeout.toMillis(), clock);
    }

    private Map<String, Object> adminConfig() {
        Map<String, Object> c = new HashMap<>(config);
        c.keySet().removeIf(k -> k.startsWith("group.") || k.startsWith("auto.") || k.startsWith("enable.")
                || k.startsWith("max.poll") || k.startsWith("acks") || k.startsWith("key.") || k.startsWith("value."));
        return c;
    }

    private Map<String, Object> producerConfig() {
        Map<String, Object> c = new HashMap<>(config);
        c.keySet().removeIf(k -> k.startsWith("group.") || k.startsWith("auto.") || k.startsWith("enable.auto")
                || k.startsWith("max.poll") || k.startsWith("isolation.") || k.startsWith("key.") || k.startsWith("value."));
        c.put(ProducerConfig.ACKS_CONFIG, "all");
        c.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        c.put(ProducerConfig.CLIENT_ID_CONFIG, "stagger-" + name + "-copies");
        int timeout = (int) Math.min(Integer.MAX_VALUE, sendTimeout.toMillis());
        c.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, timeout);
        c.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, 0);
        // the producer refuses a delivery timeout shorter than the linger plus the request timeout
        long linger = lingerMillis(c.get(ProducerConfig.LINGER_MS_CONFIG));
        c.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) Math.min(Integer.MAX_VALUE, timeout + linger));
        c.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, timeout);
        return c;
    }

    /** {@code linger.ms} as given (a number or its text); the producer itself reports a value that is neither. */
    private static long lingerMillis(@Nullable Object value) {
        if (value instanceof Number n) {
            return Math.max(0, n.longValue());
        }
        try {
            return value == null ? 0 : Math.max(0, Long.parseLong(value.toString().trim()));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private Map<String, Object> consumerConfig() {
        Map<String, Object> c = new HashMap<>(config);
        c.keySet().removeIf(k -> k.startsWith("acks") || k.startsWith("enable.idempotence") || k.startsWith("linger.")
                || k.startsWith("key.") || k.startsWith("value.") || k.startsWith("max.request") || k.startsWith("delivery."));
        c.putIfAbsent(ConsumerConfig.GROUP_ID_CONFIG, name);
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.putIfAbsent(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.putIfAbsent(ConsumerConfig.METADATA_MAX_AGE_CONFIG, 10_000);
        c.putIfAbsent(ConsumerConfig.CLIENT_ID_CONFIG, "stagger-" + name);
        return c;
    }

    /**
     * The delay topics' consumer: assigned by hand (never a group member), committing under
     * {@link #delayGroup()}; a delay partition with no committed offset is read from its start,
     * whatever the work topic's {@code auto.offset.reset}, so no retry's copy is skipped.
     */
    private Map<String, Object> delayConsumerConfig() {
        Map<String, Object> c = consumerConfig();
        c.keySet().removeIf(k -> k.startsWith("group.") || k.startsWith("partition.assignment"));
        c.put(ConsumerConfig.GROUP_ID_CONFIG, delayGroup());
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, c.get(ConsumerConfig.CLIENT_ID_CONFIG) + "-delays");
        return c;
    }

    /**
     * Key order: a consumer that reads which keys have a record in retry ({@link RetryingKeys}),
     * with the delay group's committed offsets; it never joins the group nor commits.
     */
    private Map<String, Object> readerConfig() {
        Map<String, Object> c = delayConsumerConfig();
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, "stagger-" + name + "-keys");
        return c;
    }

    private void tell(org.apache.kafka.clients.consumer.ConsumerRecord<byte[], byte[]> record, RecordProcessor.Outcome outcome,
                      int attempt, long firstAtMillis, long handlerNanos, Duration delay, @Nullable EndReason reason,
                      @Nullable Throwable failure) {
        if (listeners.isEmpty()) {
            return;
        }
        long elapsedMillis = firstAtMillis < 0 ? 0 : clock.currentTimeMillis() - firstAtMillis;
        RecordEvent event = new RecordEvent(name, topic, record.topic(), record.partition(), record.offset(),
                RecordProcessor.origin(record), attempt,
                policy.maxAttempts(), RecordOutcome.valueOf(outcome.name()), Duration.ofNanos(handlerNanos),
                Duration.ofMillis(Math.max(0, elapsedMillis)), delay, reason, failure);
        for (RecordListener l : listeners) {
            try {
                l.onRecord(event);
            } catch (RuntimeException ignored) {
                // listeners must not change what becomes of the record
            }
        }
    }

    /**
     * Stops gracefully: no new records are handed out; running handlers get
     * {@link Builder#shutdownTimeout} to finish (and their records are settled and committed as
     * usual), after which they are interrupted and their records left to be consumed again. Then
     * the settled offsets are committed and the clients closed. Idempotent.
     */
    @Override
    public void close() {
        lifecycle.lock();
        try {
            if (closing) {
                return;
            }
            closing = true;
            if (handlers != null) {
                handlers.shutdown();
                try {
                    if (!handlers.awaitTermination(shutdownTimeout.toNanos(), TimeUnit.NANOSECONDS)) {
                        forced = true;
                        handlers.shutdownNow();
                        handlers.awaitTermination(sendTimeout.toNanos(), TimeUnit.NANOSECONDS);
                    }
                } catch (InterruptedException e) {
                    forced = true;
                    handlers.shutdownNow();
                    Thread.currentThread().interrupt();
                }
            }
            // the work loop first: as it ends it hands the delay partitions that go with its partitions back
            stopAndJoin(loop, poller);
            stopAndJoin(delayLoop, delayPoller);
            closeClients();
        } finally {
            lifecycle.unlock();
        }
    }

    private void stopAndJoin(@Nullable PollLoop running, @Nullable Thread thread) {
        if (running != null && thread != null) {
            running.stop();
            try {
                thread.join(shutdownTimeout.toMillis() + 10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void closeClients() {
        if (producer != null) {
            producer.close(Duration.ofSeconds(5));
        }
        if (admin != null) {
            admin.close(Duration.ofSeconds(5));
        }
    }

    @Override
    public String toString() {
        return "KafkaRetryConsumer[" + name + ", topic=" + topic + "]";
    }

    /** Configures a {@link KafkaRetryConsumer}. Not thread-safe. */
    public static final class Builder {
        private final String name;
        private final Map<String, Object> config;
        private final KafkaHandler handler;
        private @Nullable String topic;
        private RetryPolicy policy = RetryPolicy.background();
        private List<Duration> levels = DelayLevels.defaults();
        private int concurrency = 4;
        private int maxPending = 10_000;
        private Duration shutdownTimeout = Duration.ofSeconds(30);
        private Duration sendTimeout = Duration.ofSeconds(30);
        private Duration maxDelay = Duration.ofDays(1);
        private Nesting nesting = Nesting.DEFER;
        private boolean createTopic = true;
        private int maxHeldPerKey;
        private int maxHeld;
        private @Nullable Duration inMemoryUpTo;
        private int maxInMemory;
        private final List<RecordListener> listeners = new java.util.ArrayList<>();
        private Clock clock = Clock.system();
        private RandomSource random = RandomSource.threadLocal();

        private Builder(String name, Map<String, ?> config, KafkaHandler handler) {
            this.name = topicName("name", name);
            Objects.requireNonNull(config, "config must not be null");
            if (!config.containsKey("bootstrap.servers")) {
                throw new IllegalArgumentException("config must set bootstrap.servers, got keys " + config.keySet());
            }
            this.config = new HashMap<>(config);
            this.handler = Objects.requireNonNull(handler, "handler must not be null");
        }

        /** The work topic to consume; default: the consumer's name. */
        public Builder topic(String topic) {
            this.topic = topicName("topic", topic);
            return this;
        }

        /**
         * Decides which failures are retried, how often, how long apart and until when; default
         * {@link RetryPolicy#background()} (8 attempts, 1 s base, 60 s cap, 10 min deadline).
         */
        public Builder policy(RetryPolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy must not be null");
            return this;
        }

        /**
         * The delay levels, one delay topic each: a retry waits in the smallest level at least as
         * long as its delay, so the levels' spacing is the timing tolerance. Default: a 1-2-5
         * series from 20 ms to 1 hour (18 topics). Each at least 1 ms, whole milliseconds, no
         * duplicates.
         */
        public Builder delayLevels(List<Duration> levels) {
            this.levels = DelayLevels.check("delayLevels", levels);
            return this;
        }

        /** Handlers running at once (each partition's records one at a time); default 4. */
        public Builder concurrency(int concurrency) {
            this.concurrency = ConsumerSettings.concurrency(concurrency);
            return this;
        }

        /**
         * Records a partition may have fetched and waiting for a handler before it is paused; default
         * 10,000 (about what one fetch of {@code max.partition.fetch.bytes}, 1 MiB, holds of small
         * records: a partition whose handler keeps up is not paused between two fetches). A lane
         * that fills first holds the poll thread for up to 50 ms and is paused only if still full
         * then; a paused partition is fetched again as soon as its handler takes the records waiting.
         */
        public Builder maxPending(int maxPending) {
            if (maxPending < 1 || maxPending > 1_000_000) {
                throw new IllegalArgumentException("maxPending must be 1 to 1000000, got " + maxPending);
            }
            this.maxPending = maxPending;
            return this;
        }

        /** How long {@link #close()} lets running handlers finish before interrupting them; default 30 s. */
        public Builder shutdownTimeout(Duration shutdownTimeout) {
            this.shutdownTimeout = Checks.nonNegative("shutdownTimeout", shutdownTimeout);
            return this;
        }

        /**
         * How long producing one copy (a retry or a dead letter) may take, acknowledgement included,
         * before it counts as failed; also the admin client's timeout; default 30 s.
         */
        public Builder sendTimeout(Duration sendTimeout) {
            this.sendTimeout = Checks.positive("sendTimeout", sendTimeout);
            return this;
        }

        /**
         * The longest wait a retry may have; default 1 day. A retry whose delay is longer, and a
         * record whose {@link KafkaHeaders#DUE_AT} lies further ahead than this (or past the
         * policy's deadline), is dead-lettered with {@link KafkaHeaders#DEAD_CAUSE}
         * {@code DUE_AT_OUT_OF_RANGE}.
         */
        public Builder maxDelay(Duration maxDelay) {
            this.maxDelay = ConsumerSettings.maxDelay(maxDelay);
            return this;
        }

        /**
         * What the consumer does with a failure a Stagger retry inside the handler already decided
         * on: {@link Nesting#DEFER} (the default) dead-letters it with NOT_RETRYABLE and
         * {@link KafkaHeaders#DEAD_CAUSE} {@code DEFERRED}; {@link Nesting#RETRY_AGAIN} retries it
         * as any failure. {@link Nesting#REFUSE} is not accepted here.
         */
        public Builder nesting(Nesting nesting) {
            this.nesting = ConsumerSettings.nesting(nesting);
            return this;
        }

        /** Whether {@link #start()} creates the work topic (with the broker's defaults) when it does not exist; default true. */
        public Builder createTopic(boolean createTopic) {
            this.createTopic = createTopic;
            return this;
        }

        /**
         * Keeps the order of each key's records: while a key has a record in retry (its copy in a
         * delay topic, not yet succeeded or dead-lettered), the key's later records are held back,
         * in order, instead of overtaking it, and handled after it; other keys flow past. Off by
         * default (a retried record's later records of its key overtake it).
         *
         * <p>Bounds: at most {@code maxHeldPerKey} records of one key and {@code maxHeld} in all
         * (all partitions of this consumer) are held. A record past either bound is not held and
         * does not overtake: its partition stops there until a held key is released (records
         * behind it wait, up to {@link #maxPending}, then the partition is paused), as a blocking
         * retry would stop it.
         *
         * <p>Costs: a partition's committed offset cannot pass its first held record, so after a
         * crash or a rebalance every record after it is consumed again (more duplicates: use an
         * inbox); held records take memory; the consumer uses the range assignor (partition
         * {@code n} of the work topic and of the delay topics to one consumer) and produces copies
         * to the partition of the record's number. Across a rebalance or a crash, a consumer given
         * a partition of the work topic first reads which keys have a copy waiting in the delay
         * topics' partition of the same number (past the group's committed offsets) and holds
         * their records from the first; if that read fails or takes longer than
         * {@link #sendTimeout}, the partition starts without it and a later record can overtake a
         * retry that was waiting before. Records without a key are never held.
         *
         * @param maxHeldPerKey 1 to 1,000,000
         * @param maxHeld 1 to 10,000,000, at least {@code maxHeldPerKey}
         */
        public Builder keyOrder(int maxHeldPerKey, int maxHeld) {
            if (maxHeldPerKey < 1 || maxHeldPerKey > 1_000_000) {
                throw new IllegalArgumentException("maxHeldPerKey must be 1 to 1000000, got " + maxHeldPerKey);
            }
            if (maxHeld < maxHeldPerKey || maxHeld > 10_000_000) {
                throw new IllegalArgumentException("maxHeld must be maxHeldPerKey (" + maxHeldPerKey + ") to 10000000, got "
                        + maxHeld);
            }
            this.maxHeldPerKey = maxHeldPerKey;
            this.maxHeld = maxHeld;
            return this;
        }

        /**
         * Keeps a retry whose wait is at most {@code upTo} in this consumer's memory instead of
         * producing its copy to a delay topic, at most {@code maxWaiting} at once over all its
         * partitions (past either, the retry goes through its delay topic as any other). Off by
         * default: every retry goes through a delay topic.
         *
         * <p>What it saves: a copy produced, acknowledged, fetched and parsed again for each short
         * retry, the largest cost of a consumer whose records fail now and then. What it keeps:
         * the partition's next records are handled while the retry waits (not a blocking retry),
         * and the retry runs no earlier than its delay, with the attempt, history and
         * {@link KafkaMessage#id()} a copy would carry, decided by the same policy; its outcome is
         * told to the listeners as a retry through a topic. What it costs: the partition's
         * committed offset does not pass the record until its retry settles (succeeds, is
         * dead-lettered, or goes to a delay topic for a longer wait), so after a crash the records
         * after it are consumed again (more duplicates: use an inbox), and the crashed consumer's
         * attempt count is lost with its memory (the record starts again at its first attempt). A
         * partition revoked, or a consumer closing, sends the retries it keeps to their delay topics
         * for what remains of their waits before committing, so a rebalance does not lose them or
         * hand them out twice. Not with {@link #keyOrder}, whose held records are released by the
         * retry's delay topic.
         *
         * @param upTo the longest wait kept in memory, 1 ms to 1 minute
         * @param maxWaiting 1 to 1,000,000
         */
        public Builder inMemoryRetries(Duration upTo, int maxWaiting) {
            Objects.requireNonNull(upTo, "inMemoryRetries upTo must not be null");
            if (upTo.compareTo(Duration.ofMinutes(1)) > 0 || upTo.compareTo(Duration.ofMillis(1)) < 0) {
                throw new IllegalArgumentException("inMemoryRetries upTo must be 1 ms to 1 minute, got " + upTo);
            }
            if (maxWaiting < 1 || maxWaiting > 1_000_000) {
                throw new IllegalArgumentException("inMemoryRetries maxWaiting must be 1 to 1000000, got " + maxWaiting);
            }
            this.inMemoryUpTo = upTo;
            this.maxInMemory = maxWaiting;
            return this;
        }

        /** Adds a listener told what became of each record (metrics, logs). */
        public Builder recordListener(RecordListener listener) {
            listeners.add(Objects.requireNonNull(listener, "recordListener must not be null"));
            return this;
        }

        /** Where due times and handler times are read, and copy retries wait; default {@link Clock#system()}. */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock must not be null");
            return this;
        }

        /** Where each record's backoff jitter is drawn; default {@link RandomSource#threadLocal()}. */
        public Builder random(RandomSource random) {
            this.random = Objects.requireNonNull(random, "random must not be null");
            return this;
        }

        /**
         * @throws IllegalStateException when {@link #inMemoryRetries} and {@link #keyOrder} are both set
         */
        public KafkaRetryConsumer build() {
            if (inMemoryUpTo != null && maxHeldPerKey > 0) {
                throw new IllegalStateException("inMemoryRetries cannot be combined with keyOrder: a key's held records are"
                        + " released when its retry settles in its delay topic");
            }
            return new KafkaRetryConsumer(this);
        }

        private static String topicName(String field, String name) {
            Objects.requireNonNull(name, field + " must not be null");
            // Kafka allows 249 characters of [a-zA-Z0-9._-]; leave room for ".stagger.retry-3600000"
            if (name.isEmpty() || name.length() > 200 || !name.matches("[a-zA-Z0-9._-]+")) {
                throw new IllegalArgumentException(field + " must be 1 to 200 characters of a-z, A-Z, 0-9, '.', '_' and '-', got '"
                        + (name.length() > 64 ? name.substring(0, 64) + "...' (" + name.length() + " characters)" : name + "'"));
            }
            return name;
        }
    }
}
