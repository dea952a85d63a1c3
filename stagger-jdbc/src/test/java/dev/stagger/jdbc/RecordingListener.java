package dev.stagger.jdbc;

import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/** Counts the retries and attempts a Retry reports, and keeps the retried failures. */
final class RecordingListener implements RetryListener {
    final AtomicInteger attempts = new AtomicInteger();
    final AtomicInteger retries = new AtomicInteger();
    final List<Throwable> retriedFailures = new CopyOnWriteArrayList<>();
    final List<RetryEvent.CallFinished> calls = new CopyOnWriteArrayList<>();

    @Override
    public void onAttemptFinished(RetryEvent.AttemptFinished event) {
        attempts.incrementAndGet();
    }

    @Override
    public void onRetryScheduled(RetryEvent.RetryScheduled event) {
        retries.incrementAndGet();
        retriedFailures.add(event.cause());
    }

    @Override
    public void onCallFinished(RetryEvent.CallFinished event) {
        calls.add(event);
    }

    /** The SQLStates (or "code N" for a vendor code without a state) of the retried failures. */
    List<String> retriedStates() {
        return retriedFailures.stream().map(RecordingListener::stateOf).toList();
    }

    static String stateOf(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof SQLException e) {
                return e.getSQLState() != null ? e.getSQLState() : "code " + e.getErrorCode();
            }
        }
        return t == null ? "null" : t.getClass().getSimpleName();
    }
}
