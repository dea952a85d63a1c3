package dev.stagger;

import java.time.Duration;
import java.util.function.BiConsumer;

/** What a hedged call tells its listeners of its hedges; called only when it has listeners. */
final class HedgeEvents {
    private HedgeEvents() {
    }

    /** Hedge {@code number} was sent after {@code delayNanos}. */
    static void hedgeSent(RetryListener[] listeners, Retry retry, int number, long delayNanos) {
        tell(listeners, new RetryEvent.HedgeSent(retry.name, number, retry.engine.maxAttempts,
                Duration.ofNanos(delayNanos)), RetryListener::onHedgeSent);
    }

    /** Hedge {@code number} won, with {@code othersRunning} other attempts still running (to be cancelled). */
    static void hedgeWon(RetryListener[] listeners, Retry retry, int number, int othersRunning) {
        tell(listeners, new RetryEvent.HedgeWon(retry.name, number, othersRunning), RetryListener::onHedgeWon);
    }

    /** Attempt {@code number} was cancelled as the call ended with {@code reason}. */
    static void attemptCancelled(RetryListener[] listeners, Retry retry, int number, EndReason reason) {
        tell(listeners, new RetryEvent.AttemptCancelled(retry.name, number, reason), RetryListener::onAttemptCancelled);
    }

    private static <E> void tell(RetryListener[] listeners, E event, BiConsumer<RetryListener, E> how) {
        for (RetryListener l : listeners) {
            try {
                how.accept(l, event);
            } catch (RuntimeException ignored) {
                // listeners must not change the call's outcome
            }
        }
    }
}
