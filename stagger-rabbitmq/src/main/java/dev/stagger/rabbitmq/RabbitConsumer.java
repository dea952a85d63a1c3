package dev.stagger.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import dev.stagger.Clock;
import dev.stagger.Nesting;
import dev.stagger.RandomSource;
import dev.stagger.RetryPolicy;
import dev.stagger.internal.Checks;
import dev.stagger.internal.ConsumerSettings;
import dev.stagger.internal.DelayLevels;
import dev.stagger.internal.RetryStep;
import dev.stagger.rabbitmq.internal.ConfirmingPublisher;
import dev.stagger.rabbitmq.internal.DeliveryProcessor;
import dev.stagger.rabbitmq.internal.Topology;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * Consumes a RabbitMQ queue and retries failed messages with backoff, without ever blocking a
 * thread for the wait and without holding a short retry behind a long one.
 *
 * <pre>{@code
 * RabbitConsumer consumer = RabbitConsumer.builder("orders", connectionFactory, message -> ship(message))
 *         .policy(RetryPolicy.builder().maxAttempts(6).backoff(Backoff.exponential(Duration.ofSeconds(1))
 *                 .maxDelay(Duration.ofMinutes(5)).jitter(Jitter.full())).build())
 *         .concurrency(8)
 *         .build();
 * consumer.start();
 * ...
 * consumer.close();   // graceful: in-flight messages finish, the rest go back to the queue
 * }</pre>
 *
 * <h2>What happens to a message</h2>
 * The handler returns: the message is acknowledged. The handler throws: the policy decides, as a
 * {@code Retry} call would (its classifier, attempt limit, deadline from the first attempt, the
 * {@code Retry-After} rule). A retry is a copy of the message, with the attempt count, the
 * backoff schedule's state and the error history in its {@link MessageHeaders headers}, published
 * to the delay queue of the smallest {@link Builder#delayLevels delay level} at least as long as
 * the backoff's (jittered) delay; when the level's time is up the broker moves it back to the work
 * queue. A permanent failure, or the last allowed attempt, goes to the dead-letter queue
 * {@code <queue>.stagger.dead} with its history and end reason ({@link DeadLetters} lists, re-drives
 * and purges them). In both cases the original is acknowledged only after the broker has
 * confirmed the copy (publisher confirms): a crash in between leaves a duplicate, never a loss.
 * The handler thread does not wait for the confirm; the original is acknowledged when it arrives.
 * A copy that cannot be published is never followed by the acknowledgement: its queue is declared
 * again (when it was gone), the message is dead-lettered with the reason in
 * {@link MessageHeaders#DEAD_CAUSE}, or, when no copy can be published at all, it goes back to
 * the queue after a growing wait on the consumer's clock; no failure sends it round at once.
 *
 * <h2>Timing</h2>
 * A retry arrives no earlier than its delay (a copy that comes back early is delayed again for
 * what remains, without counting an attempt) and, with the default levels (a 1-2-5 series from
 * 20 ms to 1 hour), no later than the next level up: within 2.5 times the delay, or within 20 ms
 * for delays under 20 ms, plus the broker's latency. Delays longer than the largest level wait in
 * it repeatedly, up to {@link Builder#maxDelay}; a due time past the policy's deadline or further
 * ahead than that is dead-lettered instead. Due times are wall-clock: consumers sharing a queue need roughly synchronised
 * clocks (NTP is plenty). The delayed-message plugin is not used.
 *
 * <h2>Delivery</h2>
 * At least once: a message can be handled twice after a crash, a lost connection or an
 * unconfirmed republish. Make the effect idempotent, or record the message id in an
 * {@code Inbox} (module stagger-inbox) in the handler's own transaction. The consumer opens its
 * own connection from the factory; the factory's automatic recovery (on by default) reconnects it
 * after a broker restart or a network failure and resumes consuming, and messages unacknowledged
 * at that moment are delivered again. Publish persistent messages to durable queues for them to
 * survive a broker restart; the queues this consumer declares are durable and its copies keep the
 * original's delivery mode.
 *
 * <p>Thread-safe. {@link #start()} once; {@link #close()} from any thread, any number of times.
 */
public final class RabbitConsumer implements AutoCloseable {
    private final String name;
    private final ConnectionFactory factory;
    private final MessageHandler handler;
    private final String queue;
    private final RetryPolicy policy;
    private final long[] levelsMillis;
    private final int prefetch;
    private final int concurrency;
    private final Duration shutdownTimeout;
    private final Duration confirmTimeout;
    private final Duration maxDelay;
    private final Duration retryInPlace;
    private final Nesting nesting;
    private final boolean declareQueue;
    private final MessageListener[] listeners;
    private final Clock clock;
    private final RandomSource random;
    private final Topology topology;

    private final ReentrantLock lifecycle = new ReentrantLock();
    private volatile boolean closing;
    private volatile boolean forced;
    private @Nullable Connection connection;
    private @Nullable Channel consuming;
    private @Nullable ExecutorService handlers;
    private @Nullable DeliveryProcessor processor;
    private boolean started;

    private RabbitConsumer(Builder b) {
        this.name = b.name;
        this.factory = b.factory;
        this.handler = b.handler;
        this.queue = b.queue != null ? b.queue : b.name;
        this.policy = b.policy;
        this.levelsMillis = DelayLevels.millis(b.levels);
        this.prefetch = b.prefetch;
        this.concurrency = b.concurrency;
        this.shutdownTimeout = b.shutdownTimeout;
        this.confirmTimeout = b.confirmTimeout;
        this.maxDelay = b.maxDelay;
        this.retryInPlace = b.retryInPlace;
        this.nesting = b.nesting;
        this.declareQueue = b.declareQueue;
        this.listeners = b.listeners.toArray(new MessageListener[0]);
        this.clock = b.clock;
        this.random = b.random;
        this.topology = new Topology(queue, levelsMillis);
    }

    /**
     * A consumer named {@code name} (its connection's name; also the work queue's unless
     * {@link Builder#queue} says otherwise) that opens its connection from {@code factory}.
     */
    public static Builder builder(String name, ConnectionFactory factory, MessageHandler handler) {
        return new Builder(name, factory, handler);
    }

    public String name() {
        return name;
    }

    /** The work queue. */
    public String queue() {
        return queue;
    }

    /** The dead-letter queue, {@code <queue>.stagger.dead}. */
    public String deadLetterQueue() {
        return topology.deadQueue();
    }

    /** The delay queues, one per level, shortest first: {@code <queue>.stagger.delay-<millis>ms}. */
    public List<String> delayQueues() {
        return topology.delayQueues();
    }

    /**
     * Connects, declares the queues (the work queue only when it does not exist yet and
     * {@link Builder#declareQueue} is on) and starts consuming.
     *
     * @throws IOException when the broker cannot be reached or refuses the declarations
     * @throws IllegalStateException when started before, or closed
     */
    public RabbitConsumer start() throws IOException {
        lifecycle.lock();
        try {
            if (started || closing) {
                throw new IllegalStateException("consumer " + name + " was started before");
            }
            started = true;
            Connection open;
            try {
                open = factory.newConnection(name);
            } catch (TimeoutException e) {
                throw new IOException("timed out connecting to the broker", e);
            }
            connection = open;
            try {
                boolean declareWork = declareQueue && !exists(open, queue);
                Channel consume = open.createChannel();
                topology.declare(consume, declareWork);
                ConfirmingPublisher publisher = new ConfirmingPublisher(open.createChannel());
                AtomicInteger threads = new AtomicInteger();
                ExecutorService pool = new ThreadPoolExecutor(concurrency, concurrency, 0, TimeUnit.MILLISECONDS,
                        new LinkedBlockingQueue<>(), r -> {
                            Thread t = new Thread(r, "stagger-rabbitmq-" + name + "-" + threads.incrementAndGet());
                            t.setDaemon(true);
                            return t;
                        });
                handlers = pool;
                DeliveryProcessor settle = new DeliveryProcessor(name, topology, consume, publisher,
                        new RetryStep(name, policy, clock, random, nesting), handler, listeners, clock, random, confirmTimeout,
                        maxDelay, open.getFrameMax(), () -> redeclare(open), retryInPlace, pool, () -> closing,
                        () -> forced);
                processor = settle;
                consume.basicQos(prefetch);
                consuming = consume;
                consume.basicConsume(queue, false, name, new DefaultConsumer(consume) {
                    @Override
                    public void handleDelivery(String consumerTag, Envelope envelope, AMQP.BasicProperties properties,
                                               byte[] body) {
                        // never blocks: at most `prefetch` deliveries are unacknowledged, so the queue stays bounded
                        try {
                            pool.execute(() -> settle.process(envelope, properties, body));
                        } catch (RejectedExecutionException closing) {
                            // arrived as the consumer closes: left unacknowledged, the broker takes it back with the channel
                        }
                    }
                });
            } catch (IOException | RuntimeException e) {
                if (handlers != null) {
                    handlers.shutdownNow();
                }
                closeQuietly();
                throw e;
            }
            return this;
        } finally {
            lifecycle.unlock();
        }
    }

    /** Declares the delay and dead-letter queues again, on a channel of its own (a failed declare closes it). */
    private void redeclare(Connection open) throws IOException {
        Channel ch = open.createChannel();
        try {
            topology.declare(ch, false);
        } finally {
            if (ch.isOpen()) {
                try {
                    ch.close();
                } catch (TimeoutException | IOException | RuntimeException ignored) {
                    // declared or not, the channel has done its job
                }
            }
        }
    }

    private static boolean exists(Connection connection, String name) throws IOException {
        Channel probe = connection.createChannel();
        try {
            probe.queueDeclarePassive(name);
            return true;
        } catch (IOException notFound) {
            return false; // the failed passive declare closed the probe channel
        } finally {
            if (probe.isOpen()) {
                try {
                    probe.close();
                } catch (TimeoutException | IOException ignored) {
                    // the probe has done its job
                }
            }
        }
    }

    /**
     * Stops gracefully: no new deliveries; deliveries received but not started are returned to the
     * queue unopened; running handlers get {@link Builder#shutdownTimeout} to finish (and their
     * outcome is settled as usual), after which they are interrupted and their messages returned
     * without counting the attempt; retries waiting {@link Builder#retryInPlace in place} are
     * published as the copies they stand for. Then the connection closes. Idempotent.
     */
    @Override
    public void close() {
        lifecycle.lock();
        try {
            if (closing) {
                return;
            }
            closing = true;
            stopDeliveries();
            if (handlers != null) {
                handlers.shutdown();
                try {
                    if (!handlers.awaitTermination(shutdownTimeout.toNanos(), TimeUnit.NANOSECONDS)) {
                        forced = true;
                        handlers.shutdownNow();
                        handlers.awaitTermination(confirmTimeout.toNanos(), TimeUnit.NANOSECONDS);
                    }
                    // copies published but not yet confirmed: their originals are acknowledged as the confirms arrive
                    if (processor != null) {
                        processor.releaseWaits(); // in-place retries still waiting go out as their copies
                        processor.awaitSettled(confirmTimeout);
                    }
                } catch (InterruptedException e) {
                    forced = true;
                    handlers.shutdownNow();
                    Thread.currentThread().interrupt();
                }
            }
            closeQuietly();
        } finally {
            lifecycle.unlock();
        }
    }

    /**
     * Cancels the subscription, so that what the consumer returns or publishes to the work queue
     * while it closes goes to other consumers, not back to this one.
     */
    private void stopDeliveries() {
        if (consuming != null && consuming.isOpen()) {
            try {
                consuming.basicCancel(name);
            } catch (IOException | RuntimeException gone) {
                // the channel is closing anyway: it stops its deliveries with it
            }
        }
    }

    private void closeQuietly() {
        if (connection != null) {
            try {
                connection.close();
            } catch (IOException | RuntimeException alreadyClosed) {
                // nothing left to release
            }
        }
    }

    @Override
    public String toString() {
        return "RabbitConsumer[" + name + ", queue=" + queue + "]";
    }

    /** Configures a {@link RabbitConsumer}. Not thread-safe. */
    public static final class Builder {
        private final String name;
        private final ConnectionFactory factory;
        private final MessageHandler handler;
        private @Nullable String queue;
        private RetryPolicy policy = RetryPolicy.background();
        private List<Duration> levels = Topology.defaultLevels();
        private int prefetch = -1;
        private int concurrency = 4;
        private Duration shutdownTimeout = Duration.ofSeconds(30);
        private Duration confirmTimeout = Duration.ofSeconds(30);
        private Duration maxDelay = Duration.ofDays(1);
        private Duration retryInPlace = Duration.ofMillis(50);
        private Nesting nesting = Nesting.DEFER;
        private boolean declareQueue = true;
        private final List<MessageListener> listeners = new ArrayList<>();
        private Clock clock = Clock.system();
        private RandomSource random = RandomSource.threadLocal();

        private Builder(String name, ConnectionFactory factory, MessageHandler handler) {
            this.name = queueName("name", name);
            this.factory = Objects.requireNonNull(factory, "factory must not be null");
            this.handler = Objects.requireNonNull(handler, "handler must not be null");
        }

        /** The work queue to consume; default: the consumer's name. */
        public Builder queue(String queue) {
            this.queue = queueName("queue", queue);
            return this;
        }

        /**
         * Decides which failures are retried, how often, how long apart and until when; default
         * {@link RetryPolicy#background()} (8 attempts, 1 s base, 60 s cap, 10 min deadline).
         * A policy built without a backoff has the default one.
         */
        public Builder policy(RetryPolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy must not be null");
            return this;
        }

        /**
         * The delay levels, one delay queue each: a retry waits in the smallest level at least as
         * long as its delay, so the levels' spacing is the timing tolerance. Default: a 1-2-5
         * series from 20 ms to 1 hour (18 queues). Each at least 1 ms, whole milliseconds, no
         * duplicates. Changing the levels of an existing queue leaves the old delay queues in
         * place (delete them once empty).
         */
        public Builder delayLevels(List<Duration> levels) {
            this.levels = DelayLevels.check("delayLevels", levels);
            return this;
        }

        /** Unacknowledged messages the broker may send ahead; at least the concurrency. Default: twice the concurrency. */
        public Builder prefetch(int prefetch) {
            if (prefetch < 1 || prefetch > 65_535) {
                throw new IllegalArgumentException("prefetch must be 1 to 65535, got " + prefetch);
            }
            this.prefetch = prefetch;
            return this;
        }

        /** Handlers running at once, each on its own thread; default 4. */
        public Builder concurrency(int concurrency) {
            this.concurrency = ConsumerSettings.concurrency(concurrency);
            return this;
        }

        /** How long {@link #close()} lets running handlers finish before interrupting them; default 30 s. */
        public Builder shutdownTimeout(Duration shutdownTimeout) {
            this.shutdownTimeout = Checks.nonNegative("shutdownTimeout", shutdownTimeout);
            return this;
        }

        /**
         * How long a republished retry or dead letter may wait for the broker's confirm (on the
         * consumer's clock) before it counts as not published; default 30 s. The handler thread
         * does not wait for it.
         */
        public Builder confirmTimeout(Duration confirmTimeout) {
            this.confirmTimeout = Checks.nonNegative("confirmTimeout", confirmTimeout);
            if (confirmTimeout.isZero()) {
                throw new IllegalArgumentException("confirmTimeout must be positive, got " + confirmTimeout);
            }
            return this;
        }

        /**
         * The longest wait a retry may have; default 1 day. A retry whose delay (backoff plus a
         * {@code Retry-After}) is longer, and a delivery whose {@link MessageHeaders#DUE_AT} lies
         * further ahead than this (or past the policy's deadline), is dead-lettered with
         * {@link MessageHeaders#DEAD_CAUSE} {@code DUE_AT_OUT_OF_RANGE} instead of waiting
         * forever in the largest delay level.
         */
        public Builder maxDelay(Duration maxDelay) {
            this.maxDelay = ConsumerSettings.maxDelay(maxDelay);
            return this;
        }

        /**
         * How long the retries of one delivery may wait <em>in place</em>, in all; default 50 ms,
         * {@link Duration#ZERO} for never. A retry whose wait (as the policy's backoff chose it,
         * in whole milliseconds) still fits in this budget, and is at most the fourth made in
         * place for the delivery, publishes no copy: the original stays unacknowledged, in its
         * prefetch slot, and the handler runs it again on a handler thread when the wait is over
         * on the consumer's clock, with the headers the copy would have carried (attempt, error
         * history, due time). Longer waits, later retries and dead letters go through the broker
         * as before. A short retry then costs no publish and no wait for the broker's confirm.
         *
         * <p>A redelivered message is never retried in place. A consumer that dies while a retry
         * waits in place leaves the original to be redelivered with the headers it had: the
         * attempts made in place since (at most four) are made again; a closing consumer
         * publishes each waiting retry as its copy, so nothing is counted twice or lost.
         */
        public Builder retryInPlace(Duration budget) {
            this.retryInPlace = Checks.nonNegative("retryInPlace", budget);
            return this;
        }

        /**
         * What the consumer does with a failure a Stagger retry inside the handler already decided
         * on (retried until it gave up, or judged not retryable: see the README's "Retrying across
         * layers and services"). {@link Nesting#DEFER} (the default): the message is not retried
         * again; it is dead-lettered with NOT_RETRYABLE and {@link MessageHeaders#DEAD_CAUSE}
         * {@code DEFERRED} naming the inner retry. {@link Nesting#RETRY_AGAIN}: the consumer's policy
         * retries it as any failure (attempts multiply, spread over the consumer's waits).
         * {@link Nesting#REFUSE} is not accepted here.
         */
        public Builder nesting(Nesting nesting) {
            this.nesting = ConsumerSettings.nesting(nesting);
            return this;
        }

        /**
         * Whether {@link #start()} declares the work queue (durable, no arguments) when it does not
         * exist; default true. An existing queue is never redeclared, whatever its arguments.
         */
        public Builder declareQueue(boolean declareQueue) {
            this.declareQueue = declareQueue;
            return this;
        }

        /** Adds a listener told what became of each delivery (metrics, logs). */
        public Builder messageListener(MessageListener listener) {
            listeners.add(Objects.requireNonNull(listener, "messageListener must not be null"));
            return this;
        }

        /** Where due times and handler times are read; default {@link Clock#system()}. */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock must not be null");
            return this;
        }

        /** Where each message's backoff seed is drawn; default {@link RandomSource#threadLocal()}. */
        public Builder random(RandomSource random) {
            this.random = Objects.requireNonNull(random, "random must not be null");
            return this;
        }

        public RabbitConsumer build() {
            if (prefetch == -1) {
                prefetch = Math.min(65_535, 2 * concurrency);
            } else if (prefetch < concurrency) {
                throw new IllegalArgumentException("prefetch must be at least concurrency (" + concurrency + "), got " + prefetch);
            }
            return new RabbitConsumer(this);
        }

        private static String queueName(String field, String name) {
            Objects.requireNonNull(name, field + " must not be null");
            // leave room for ".stagger.delay-3600000ms" within AMQP's 255-byte limit
            if (name.isBlank() || name.length() > 200 || name.startsWith("amq.")) {
                throw new IllegalArgumentException(field + " must be 1 to 200 characters, not blank and not starting with"
                        + " 'amq.', got '" + (name.length() > 64 ? name.substring(0, 64) + "...' (" + name.length()
                        + " characters)" : name + "'"));
            }
            return name;
        }
    }
}
