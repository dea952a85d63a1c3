package dev.stagger;

import java.time.Duration;

/** What a hedged call tells its listeners of its hedges; called only when it has listeners. */
final class HedgeEvents {
    private HedgeEvents() {
    }

    /** Hedge {@code number} was sent after {@code delayNanos}. */
    static void hedgeSent(RetryListener[] listeners, Retry retry, int number, long delayNanos) {
        RetryEvent.HedgeSent e = new RetryEvent.HedgeSent(retry.name, number, retry.engine.maxAttempts,
                Duration.ofNanos(delayNanos));
        for (RetryListener l : listeners) {
            try {
                l.onHedgeSent(e);
            } catch (RuntimeException ignored) {
                // listeners must not change the call's outcome
            }
        }
    }

    /** Hedge {@code number} won, with {@code othersRunning} other attempts still running (to be cancelled). */
    static void hedgeWon(RetryListener[] listeners, Retry retry, int number, int othersRunning) {
        RetryEvent.HedgeWon e = new RetryEvent.HedgeWon(retry.name, number, othersRunning);
        for (RetryListener l : listeners) {
            try {
                l.onHedgeWon(e);
            } catch (RuntimeException ignored) {
                // listeners must not change the call's outcome
            }
        }
    }

    /** Attempt {@code number} was cancelled as the call ended with {@code reason}. */
    static void attemptCancelled(RetryListener[] listeners, Retry retry, int number, EndReason reason) {
        RetryEvent.AttemptCancelled e = new RetryEvent.AttemptCancelled(retry.name, number, reason);
        for (RetryListener l : listeners) {
            try {
                l.onAttemptCancelled(e);
            } catch (RuntimeException ignored) {
                // listeners must not change the call's outcome
            }
        }
    }
}
