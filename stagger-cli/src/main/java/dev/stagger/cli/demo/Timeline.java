package dev.stagger.cli.demo;

import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntToLongFunction;
import org.jspecify.annotations.Nullable;

/** Records one call's attempts and waits, in milliseconds from the call's start, for the page. */
final class Timeline implements RetryListener {
    /** One attempt on the timeline. */
    record Attempt(int attempt, double startMs, double endMs, String outcome, boolean ok) {
    }

    /**
     * One wait; {@code rawMs} is the backoff before jitter (-1 when the strategy has none),
     * {@code hintMs} the server's Retry-After.
     */
    record Wait(int beforeAttempt, double startMs, double delayMs, double rawMs, double hintMs) {
    }

    /** The whole call. */
    record Result(List<Attempt> attempts, List<Wait> waits, String reason, double totalMs, String answer) {
    }

    private final long start = System.nanoTime();
    private final IntToLongFunction rawDelayNanos;
    private final ReentrantLock lock = new ReentrantLock();
    private final List<Attempt> attempts = new ArrayList<>();
    private final List<Wait> waits = new ArrayList<>();
    private String reason = "?";
    private double totalMs;

    /** @param rawDelayNanos the un-jittered delay of retry k, to show the jitter's share */
    Timeline(IntToLongFunction rawDelayNanos) {
        this.rawDelayNanos = rawDelayNanos;
    }

    private double now() {
        return (System.nanoTime() - start) / 1e6;
    }

    @Override
    public void onAttemptFinished(RetryEvent.AttemptFinished e) {
        double end = now();
        double startMs = Math.max(0, end - e.duration().toNanos() / 1e6);
        String outcome = describe(e.result(), e.failure());
        lock.lock();
        try {
            attempts.add(new Attempt(e.attempt(), startMs, end, outcome, !e.failed()));
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void onRetryScheduled(RetryEvent.RetryScheduled e) {
        int retry = e.nextAttempt() - 1;
        long raw = rawDelayNanos.applyAsLong(retry);
        lock.lock();
        try {
            waits.add(new Wait(e.nextAttempt(), now(), e.delay().toNanos() / 1e6, raw < 0 ? -1 : raw / 1e6,
                    e.decision().minDelay().toNanos() / 1e6));
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void onCallFinished(RetryEvent.CallFinished e) {
        lock.lock();
        try {
            reason = e.reason().name();
            totalMs = now();
        } finally {
            lock.unlock();
        }
    }

    Result result(String answer) {
        lock.lock();
        try {
            return new Result(List.copyOf(attempts), List.copyOf(waits), reason, totalMs, answer);
        } finally {
            lock.unlock();
        }
    }

    static String describe(@Nullable Object result, @Nullable Throwable failure) {
        if (failure != null) {
            return failure.getClass().getSimpleName() + (failure.getMessage() == null ? "" : ": " + failure.getMessage());
        }
        if (result instanceof HttpResponse<?> r) {
            return "HTTP " + r.statusCode();
        }
        return String.valueOf(result);
    }
}
