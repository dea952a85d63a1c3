package dev.stagger;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Keeps every event a {@link Retry} emits, in order, for tests to inspect. */
class RecordingListener implements RetryListener {
    final List<RetryEvent.AttemptFinished> attempts = Collections.synchronizedList(new ArrayList<>());
    final List<RetryEvent.RetryScheduled> scheduled = Collections.synchronizedList(new ArrayList<>());
    final List<RetryEvent.CallFinished> finished = Collections.synchronizedList(new ArrayList<>());

    @Override
    public void onAttemptFinished(RetryEvent.AttemptFinished event) {
        attempts.add(event);
    }

    @Override
    public void onRetryScheduled(RetryEvent.RetryScheduled event) {
        scheduled.add(event);
    }

    @Override
    public void onCallFinished(RetryEvent.CallFinished event) {
        finished.add(event);
    }

    /** The single CallFinished event; fails if there were none or several. */
    RetryEvent.CallFinished onlyFinish() {
        if (finished.size() != 1) {
            throw new AssertionError("expected exactly one CallFinished, got " + finished);
        }
        return finished.get(0);
    }
}
