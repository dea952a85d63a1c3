package dev.stagger;

import dev.stagger.CircuitBreaker.Listener;
import dev.stagger.CircuitBreaker.State;
import dev.stagger.CircuitBreaker.Subscription;
import dev.stagger.CircuitBreaker.Transition;
import java.time.Instant;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;

/**
 * A {@link CircuitBreaker}'s transition listeners and count: each transition is counted, then told
 * to every listener on the thread that made it; a listener that throws is ignored.
 */
final class TransitionListeners {
    private final CopyOnWriteArrayList<Listener> listeners = new CopyOnWriteArrayList<>();
    private final LongAdder count = new LongAdder();

    Subscription add(Listener listener) {
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }

    void emit(String breaker, State from, State to, Clock clock) {
        count.increment();
        if (!listeners.isEmpty()) {
            Transition t = new Transition(breaker, from, to, Instant.ofEpochMilli(clock.currentTimeMillis()));
            for (Listener l : listeners) {
                try {
                    l.onTransition(t);
                } catch (RuntimeException ignored) {
                    // a listener must not break the breaker
                }
            }
        }
    }

    /** Transitions since creation (a total: exact when the breaker is quiescent). */
    long count() {
        return count.sum();
    }
}
