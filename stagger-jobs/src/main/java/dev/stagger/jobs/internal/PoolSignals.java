package dev.stagger.jobs.internal;

import dev.stagger.Backoff;
import dev.stagger.Jitter;
import dev.stagger.RandomSource;
import dev.stagger.RetryEngine;
import dev.stagger.RetryPolicy;
import dev.stagger.RetryState;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * The pool's run state as its threads see it, and how they pause after a database failure: the
 * waits of one core retry schedule per run of consecutive failures (exponential from 100 ms to
 * 5 s with full jitter, decided by the {@link RetryEngine}), cut short when the pool stops.
 */
public final class PoolSignals {
    private static final RetryPolicy RECONNECT = RetryPolicy.builder()
            .maxAttempts(Integer.MAX_VALUE)
            .backoff(Backoff.exponential(Duration.ofMillis(100)).maxDelay(Duration.ofSeconds(5)).jitter(Jitter.full()))
            .build();

    private final CountDownLatch stopClaiming = new CountDownLatch(1);
    private final CountDownLatch stopAll = new CountDownLatch(1);
    private final RetryEngine engine;
    private final BiConsumer<Exception, Duration> onFailure;

    public PoolSignals(RandomSource random, BiConsumer<Exception, Duration> onFailure) {
        this.engine = RetryEngine.of("reconnect", RECONNECT).withRandom(random);
        this.onFailure = onFailure;
    }

    public boolean claiming() {
        return stopClaiming.getCount() > 0;
    }

    public boolean alive() {
        return stopAll.getCount() > 0;
    }

    public void stopClaiming() {
        stopClaiming.countDown();
    }

    public void stopAll() {
        stopClaiming.countDown();
        stopAll.countDown();
    }

    /** Waits {@code d}, or until the pool stops. */
    public void pauseFor(Duration d) {
        pause(d.toNanos());
    }

    /** A new run of failures for one thread's database work. */
    public Reconnect reconnect() {
        return new Reconnect();
    }

    private void pause(long nanos) {
        try {
            stopAll.await(nanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * One thread's consecutive database failures: each waits the schedule's next delay, and a
     * success starts the schedule over. Used by one thread.
     */
    public final class Reconnect {
        private RetryState state;

        private Reconnect() {
        }

        /** The database work succeeded: the next failure waits the first delay again. */
        public void succeeded() {
            state = null;
        }

        /** Waits the schedule's next delay after {@code error}, or until the pool stops. */
        public void pauseAfter(Exception error) {
            RetryEngine.Verdict verdict = engine.decide(state != null ? state : engine.firstAttempt(), null, error);
            state = verdict.next().orElse(null); // after 2^31 - 1 failures in a row, the schedule starts over
            Duration delay = verdict.delay();
            onFailure.accept(error, delay);
            pause(delay.toNanos());
        }
    }
}
