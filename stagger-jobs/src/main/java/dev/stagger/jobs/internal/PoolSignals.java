package dev.stagger.jobs.internal;

import dev.stagger.Backoff;
import dev.stagger.Jitter;
import dev.stagger.RandomSource;
import dev.stagger.RetryEngine;
import dev.stagger.RetryPolicy;
import dev.stagger.RetryState;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * The pool's run state as its threads see it, and how they pause after a database failure: the
 * waits of one core retry schedule per run of consecutive failures (exponential from 100 ms to
 * 5 s with full jitter, decided by the {@link RetryEngine}), on the thread's {@link Pacer}, cut
 * short when the pool stops. Stopping wakes every pacer registered here. Thread-safe.
 */
public final class PoolSignals {
    private static final RetryPolicy RECONNECT = RetryPolicy.builder()
            .maxAttempts(Integer.MAX_VALUE)
            .backoff(Backoff.exponential(Duration.ofMillis(100)).maxDelay(Duration.ofSeconds(5)).jitter(Jitter.full()))
            .build();

    private volatile boolean claiming = true;
    private volatile boolean alive = true;
    private final List<Pacer> pacers = new CopyOnWriteArrayList<>();
    private final List<Runnable> onStop = new CopyOnWriteArrayList<>();
    private final RetryEngine engine;
    private final BiConsumer<Exception, Duration> onFailure;

    public PoolSignals(RandomSource random, BiConsumer<Exception, Duration> onFailure) {
        this.engine = RetryEngine.of("reconnect", RECONNECT).withRandom(random);
        this.onFailure = onFailure;
    }

    /** A pacer for one thread, woken whenever the pool's state changes. */
    public Pacer pacer(dev.stagger.Clock clock) {
        Pacer p = new Pacer(clock);
        pacers.add(p);
        return p;
    }

    /** Runs {@code action} when the pool stops entirely (after {@link #stopAll()}). */
    public void onStop(Runnable action) {
        onStop.add(action);
    }

    public boolean claiming() {
        return claiming;
    }

    public boolean alive() {
        return alive;
    }

    public void stopClaiming() {
        claiming = false;
        pacers.forEach(Pacer::wake);
    }

    public void stopAll() {
        claiming = false;
        alive = false;
        pacers.forEach(Pacer::wake);
        onStop.forEach(Runnable::run);
    }

    /** A new run of failures for one thread's database work, pausing on {@code pacer}. */
    public Reconnect reconnect(Pacer pacer) {
        return new Reconnect(pacer);
    }

    /**
     * One thread's consecutive database failures: each waits the schedule's next delay, and a
     * success starts the schedule over. Used by one thread.
     */
    public final class Reconnect {
        private final Pacer pacer;
        private @Nullable RetryState state;

        private Reconnect(Pacer pacer) {
            this.pacer = pacer;
        }

        /** The database work succeeded: the next failure waits the first delay again. */
        public void succeeded() {
            state = null;
        }

        /** Waits the schedule's next delay after {@code error}, or until the pool stops. */
        public void pauseAfter(Exception error) throws InterruptedException {
            RetryEngine.Verdict verdict = engine.decide(state != null ? state : engine.firstAttempt(), null, error);
            state = verdict.next().orElse(null); // after 2^31 - 1 failures in a row, the schedule starts over
            Duration delay = verdict.delay();
            onFailure.accept(error, delay);
            pacer.awaitUntil(pacer.clock().nanoTime() + delay.toNanos(), () -> !alive);
        }
    }
}
