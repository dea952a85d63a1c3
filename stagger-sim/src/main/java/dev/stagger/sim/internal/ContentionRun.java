package dev.stagger.sim.internal;

import dev.stagger.Retry;
import dev.stagger.sim.ContentionConfig;
import dev.stagger.sim.SimulationResult;
import dev.stagger.sim.Strategy;
import dev.stagger.testing.VirtualClock;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;

/**
 * One run of the {@code contention} scenario. Every message is an event on the run's
 * {@link VirtualClock}; the retry engine schedules its waits on the same clock, so the whole run
 * is one deterministic event loop on the calling thread.
 */
public final class ContentionRun {
    private final ContentionConfig config;
    private final VirtualClock clock = new VirtualClock();
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
                jitter::nextDouble, config.budget(), config.breaker(), stats);
    }

    public RunStats run() {
        for (int i = 0; i < config.clients(); i++) {
            stats.started++;
            retry.callAsync(this::readThenWrite).whenComplete((ok, failure) -> {
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

    /** One attempt: read the version, then write with it. */
    private CompletableFuture<Void> readThenWrite() {
        CompletableFuture<Void> reply = new CompletableFuture<>();
        clock.schedule(() -> {
            load.record(clock.nanoTime());
            long seen = version;
            // read response travels back, then the write request travels out
            clock.schedule(() -> write(seen, reply), network.nextNanos() + network.nextNanos());
        }, network.nextNanos());
        return reply;
    }

    private void write(long seen, CompletableFuture<Void> reply) {
        load.record(clock.nanoTime());
        stats.calls++;
        if (version == seen) {
            version++;
            clock.schedule(() -> reply.complete(null), network.nextNanos());
        } else {
            stats.wasted++;
            clock.schedule(() -> reply.completeExceptionally(Rejection.CONFLICT), network.nextNanos());
        }
    }
}
