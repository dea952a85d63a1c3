package dev.stagger.sim.internal;

import dev.stagger.Retry;
import dev.stagger.sim.ContentionConfig;
import dev.stagger.sim.SimulationResult;
import dev.stagger.sim.Strategy;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * One run of the {@code contention} scenario. Every message is an event on the run's
 * {@link EventLoop}; the retry engine schedules its waits on the same clock, so the whole run
 * is one deterministic event loop on the calling thread.
 */
public final class ContentionRun {
    private final ContentionConfig config;
    private final EventLoop clock = new EventLoop();
    private final NetworkDelay network;
    private final LoadCounter load = new LoadCounter(SimulationResult.BUCKET_MS * 1_000_000L);
    private final RunStats stats = new RunStats();
    private final Retry retry;
    private long version;

    public ContentionRun(ContentionConfig config, Strategy strategy, long seed) {
        this.config = config;
        SplittableRandom random = new SplittableRandom(seed);
        this.network = new NetworkDelay(random.split(), config.networkMean().toNanos(), config.networkSd().toNanos());
        SplittableRandom jitter = random.split();
        this.retry = Guards.retry(strategy.backoff(config.base(), config.cap()), config.maxAttempts(), clock,
                jitter::nextDouble, config.budget(), config.circuitBreaker(), stats);
    }

    public RunStats run() {
        for (int i = 0; i < config.clients(); i++) {
            stats.started++;
            retry.callAsync(new Client()).whenComplete((ok, failure) -> {
                long now = clock.nanoTime();
                if (failure == null) {
                    stats.succeeded++;
                } else {
                    stats.gaveUp++;
                }
                stats.callDurations.add(now);
                stats.completionNanos = Math.max(stats.completionNanos, now);
            });
        }
        stats.events = clock.runUntilIdle(Integer.MAX_VALUE);
        stats.loadBuckets = load.counts();
        stats.peakBucket = load.peak();
        return stats;
    }

    /**
     * One client: its attempts (read the version, then write with it) and the messages of the
     * attempt under way. A client has at most one message in flight, so one object serves as the
     * attempt's operation and as each of its message events, moving through the phases below;
     * only the reply future is new per attempt.
     */
    private final class Client implements Supplier<CompletableFuture<Void>>, Runnable {
        private static final int READ_ARRIVES = 0;
        private static final int WRITE_ARRIVES = 1;
        private static final int WRITE_OK_ARRIVES = 2;
        private static final int CONFLICT_ARRIVES = 3;

        private int phase;
        private long seen;
        /** The current attempt's reply; null between attempts. */
        private @Nullable CompletableFuture<Void> reply;

        /** Starts an attempt: the read request travels out. */
        @Override
        public CompletableFuture<Void> get() {
            reply = new CompletableFuture<>();
            phase = READ_ARRIVES;
            clock.post(this, network.nextNanos());
            return reply;
        }

        /** The message in flight arrives. */
        @Override
        public void run() {
            switch (phase) {
                case READ_ARRIVES:
                    load.record(clock.nanoTime());
                    seen = version;
                    phase = WRITE_ARRIVES; // read response travels back, then the write request travels out
                    clock.post(this, network.nextNanos() + network.nextNanos());
                    break;
                case WRITE_ARRIVES:
                    load.record(clock.nanoTime());
                    stats.calls++;
                    if (version == seen) {
                        version++;
                        phase = WRITE_OK_ARRIVES;
                    } else {
                        stats.wasted++;
                        phase = CONFLICT_ARRIVES;
                    }
                    clock.post(this, network.nextNanos());
                    break;
                case WRITE_OK_ARRIVES:
                    settle().complete(null);
                    break;
                default:
                    Rejection.CONFLICT.fail(settle());
                    break;
            }
        }

        /** The reply future, released: the engine may start the next attempt from its callback. */
        private CompletableFuture<Void> settle() {
            CompletableFuture<Void> r = Objects.requireNonNull(reply, "reply"); // an attempt is in flight
            reply = null;
            return r;
        }
    }
}
