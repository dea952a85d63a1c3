package dev.stagger.spring.internal;

import dev.stagger.CircuitBreaker;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What each named breaker counts as a failure: any exception, and any result that one of the
 * predicates added for it calls a failure. An HTTP client adds the statuses it retries for the
 * breaker guarding it when the client is built — a client listed under
 * {@code stagger.http.clients} at startup, any other name on first use — so the breaker, built
 * before or after, sees both the same way. A breaker guarding several clients counts a status any
 * of them retries. Thread-safe.
 */
public final class BreakerFailures {
    private final Map<String, Live> byBreaker = new ConcurrentHashMap<>();

    /** The predicate of breaker {@code name}; predicates added later apply to it too. */
    public CircuitBreaker.FailurePredicate of(String name) {
        return byBreaker.computeIfAbsent(name, n -> new Live());
    }

    /** Adds to what breaker {@code name} counts as a failure. */
    public void add(String name, CircuitBreaker.FailurePredicate failures) {
        byBreaker.computeIfAbsent(name, n -> new Live()).add(failures);
    }

    private static final class Live implements CircuitBreaker.FailurePredicate {
        private volatile CircuitBreaker.FailurePredicate[] added = new CircuitBreaker.FailurePredicate[0];

        synchronized void add(CircuitBreaker.FailurePredicate failures) {
            CircuitBreaker.FailurePredicate[] next = Arrays.copyOf(added, added.length + 1);
            next[added.length] = failures;
            added = next;
        }

        @Override
        public boolean isFailure(Object result, Throwable failure) {
            if (failure != null) {
                return true;
            }
            for (CircuitBreaker.FailurePredicate p : added) {
                if (p.isFailure(result, null)) {
                    return true;
                }
            }
            return false;
        }
    }
}
