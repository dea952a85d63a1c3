package dev.stagger.idempotency.internal;

import dev.stagger.idempotency.IdempotencyCompletion;
import dev.stagger.idempotency.IdempotencyListener;
import dev.stagger.idempotency.IdempotencyOutcome;

/** Calls a user's listener and ignores what it throws: a listener must never change an answer. */
public final class SafeListener implements IdempotencyListener {
    private final IdempotencyListener delegate;

    public SafeListener(IdempotencyListener delegate) {
        this.delegate = delegate;
    }

    @Override
    public void decided(IdempotencyOutcome outcome, String method, String route) {
        try {
            delegate.decided(outcome, method, route);
        } catch (RuntimeException ignored) {
            // a listener's failure is its own
        }
    }

    @Override
    public void completed(IdempotencyCompletion completion, String method, String route, int status) {
        try {
            delegate.completed(completion, method, route, status);
        } catch (RuntimeException ignored) {
            // a listener's failure is its own
        }
    }

    @Override
    public void purged(long removed) {
        try {
            delegate.purged(removed);
        } catch (RuntimeException ignored) {
            // a listener's failure is its own
        }
    }

    @Override
    public void purgeFailed(RuntimeException error) {
        try {
            delegate.purgeFailed(error);
        } catch (RuntimeException ignored) {
            // a listener's failure is its own
        }
    }
}
