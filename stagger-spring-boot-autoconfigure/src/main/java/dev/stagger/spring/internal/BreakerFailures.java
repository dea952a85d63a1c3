package dev.stagger.spring.internal;

import dev.stagger.CircuitBreaker;
import dev.stagger.spring.BreakerFailureClassifier;
import dev.stagger.spring.BreakerFailureClassifier.Verdict;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * What each named breaker counts as a failure. An exception: what the
 * {@link BreakerFailureClassifier} beans say of it, else its breaker's {@code ignore-exceptions}
 * (neither a success nor a failure), else its {@code record-exceptions} (a failure when listed,
 * a success when the list is not empty and does not list it), else a failure. A result: a failure
 * when one of the predicates added for the breaker calls it one. An HTTP client adds the statuses
 * it retries for the breaker guarding it when the client is built — a client listed under
 * {@code stagger.http.clients} at startup, any other name on first use — so the breaker, built
 * before or after, sees both the same way. A breaker guarding several clients counts a status any
 * of them retries. Thread-safe.
 */
public final class BreakerFailures {
    private final Map<String, Live> byBreaker = new ConcurrentHashMap<>();
    private volatile List<BreakerFailureClassifier> classifiers = List.of();

    /** The predicate of breaker {@code name}; predicates added later apply to it too. */
    public CircuitBreaker.FailurePredicate of(String name) {
        return live(name);
    }

    /** Adds to what breaker {@code name} counts as a failure. */
    public void add(String name, CircuitBreaker.FailurePredicate failures) {
        live(name).add(failures);
    }

    /** The classifier beans, asked in this order before any breaker's properties. */
    public void classifiers(List<BreakerFailureClassifier> classifiers) {
        this.classifiers = List.copyOf(classifiers);
    }

    /** The exceptions breaker {@code name} counts ({@code record}; empty: all) and ignores. */
    public void exceptions(String name, List<Class<? extends Throwable>> record, List<Class<? extends Throwable>> ignore) {
        Live live = live(name);
        live.record = record.toArray(Class<?>[]::new);
        live.ignore = ignore.toArray(Class<?>[]::new);
    }

    private Live live(String name) {
        return byBreaker.computeIfAbsent(name, Live::new);
    }

    private Verdict verdict(String breaker, Throwable failure) {
        for (BreakerFailureClassifier c : classifiers) {
            Verdict v = c.classify(breaker, failure);
            if (v != Verdict.UNDECIDED) {
                return v;
            }
        }
        return Verdict.UNDECIDED;
    }

    private static boolean matches(Class<?>[] types, Throwable failure) {
        for (Class<?> t : types) {
            if (t.isInstance(failure)) {
                return true;
            }
        }
        return false;
    }

    private final class Live implements CircuitBreaker.FailurePredicate {
        private final String name;
        private volatile CircuitBreaker.FailurePredicate[] added = new CircuitBreaker.FailurePredicate[0];
        private volatile Class<?>[] record = new Class<?>[0];
        private volatile Class<?>[] ignore = new Class<?>[0];

        Live(String name) {
            this.name = name;
        }

        synchronized void add(CircuitBreaker.FailurePredicate failures) {
            CircuitBreaker.FailurePredicate[] next = Arrays.copyOf(added, added.length + 1);
            next[added.length] = failures;
            added = next;
        }

        @Override
        public boolean isIgnored(Throwable failure) {
            Verdict v = verdict(name, failure);
            return v == Verdict.IGNORED || v == Verdict.UNDECIDED && matches(ignore, failure);
        }

        @Override
        public boolean isFailure(@Nullable Object result, @Nullable Throwable failure) {
            if (failure != null) {
                return switch (verdict(name, failure)) {
                    case FAILURE -> true;
                    case SUCCESS, IGNORED -> false;
                    case UNDECIDED -> record.length == 0 || matches(record, failure);
                };
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
