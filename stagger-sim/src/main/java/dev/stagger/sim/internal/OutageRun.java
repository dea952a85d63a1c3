package dev.stagger.sim.internal;

import dev.stagger.Retry;
import dev.stagger.sim.OutageConfig;
import dev.stagger.sim.SimulationResult;
import dev.stagger.sim.Strategy;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;

/**
 * One run of the {@code outage} scenario: open-loop clients, a first-come-first-served server of
 * finite capacity that sheds requests queued too long, and a window in which it answers 503.
 */
public final class OutageRun {
    private final OutageConfig config;
    private final EventLoop clock = new EventLoop();
    private final NetworkDelay network;
    private final SplittableRandom phases;
    private final LoadCounter load = new LoadCounter(SimulationResult.BUCKET_MS * 1_000_000L);
    private final RunStats stats = new RunStats();
    private final Retry retry;
    private final long intervalNanos;
    private final long trafficEndNanos;
    private final long downFrom;
    private final long downTo;
    private final long serviceNanos;
    private final long maxQueueNanos;
    private long serverFreeAt;
    private long lastEndOfEarlyCalls;

    public OutageRun(OutageConfig config, Strategy strategy, long seed) {
        this.config = config;
        SplittableRandom random = new SplittableRandom(seed);
        this.network = new NetworkDelay(random.split(), config.networkMean().toNanos(), config.networkSd().toNanos());
        SplittableRandom jitter = random.split();
        this.phases = random.split();
        this.retry = Guards.retry(strategy.backoff(config.base(), config.cap()), config.maxAttempts(), clock,
                jitter::nextDouble, config.budget(), config.circuitBreaker(), stats);
        this.intervalNanos = Math.max(1, Math.round(1e9 / config.callsPerSecondPerClient()));
        this.trafficEndNanos = config.trafficDuration().toNanos();
        this.downFrom = config.outageStart().toNanos();
        this.downTo = downFrom + config.outageLength().toNanos();
        this.serviceNanos = Math.max(1, Math.round(1e9 / (config.offeredRate() * config.capacityFactor())));
        this.maxQueueNanos = config.maxQueueDelay().toNanos();
    }

    public RunStats run() {
        for (int i = 0; i < config.clients(); i++) {
            long phase = (long) (phases.nextDouble() * intervalNanos);
            clock.post(this::startCall, phase);
        }
        stats.events = clock.runUntilIdle(Integer.MAX_VALUE);
        stats.loadBuckets = load.counts();
        stats.peakBucket = load.peak();
        stats.wasted = stats.arrivalsWhileDown;
        stats.drainNanos = Math.max(0, lastEndOfEarlyCalls - downTo);
        return stats;
    }

    /** A client starts one call and plans its next. */
    private void startCall() {
        long startedAt = clock.nanoTime();
        if (startedAt + intervalNanos < trafficEndNanos) {
            clock.post(this::startCall, intervalNanos);
        }
        stats.started++;
        retry.callAsync(this::attempt).whenComplete((ok, failure) -> {
            long now = clock.nanoTime();
            if (failure == null) {
                stats.succeeded++;
            } else {
                stats.gaveUp++;
            }
            stats.callDurations.add(now - startedAt);
            stats.completionNanos = Math.max(stats.completionNanos, now);
            if (startedAt < downTo) {
                lastEndOfEarlyCalls = Math.max(lastEndOfEarlyCalls, now);
            }
        });
    }

    private CompletableFuture<Void> attempt() {
        CompletableFuture<Void> reply = new CompletableFuture<>();
        clock.post(() -> arrive(reply), network.nextNanos());
        return reply;
    }

    private void arrive(CompletableFuture<Void> reply) {
        long now = clock.nanoTime();
        load.record(now);
        stats.calls++;
        if (now >= downFrom && now < downTo) {
            stats.arrivalsWhileDown++;
            clock.post(() -> Rejection.UNAVAILABLE.fail(reply), network.nextNanos());
            return;
        }
        long start = Math.max(now, serverFreeAt);
        if (start - now > maxQueueNanos) {
            clock.post(() -> Rejection.OVERLOADED.fail(reply), network.nextNanos());
            return;
        }
        serverFreeAt = start + serviceNanos;
        clock.post(() -> reply.complete(null), serverFreeAt - now + network.nextNanos());
    }
}
