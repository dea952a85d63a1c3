package dev.stagger;

import dev.stagger.internal.Checks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * What to retry, how often, how long to wait and for how long in total. Immutable and
 * thread-safe; {@link Builder#build()} validates and snapshots the configuration.
 *
 * <p>Total attempts = 1 + retries: {@code maxAttempts(5)} and {@code maxRetries(4)} are the same.
 * Without a backoff the policy waits exponentially from 200 ms, x2, capped at 5 s, with full
 * jitter (the AWS study's winner on total work under contention).
 */
public final class RetryPolicy {
    /** The default backoff: exponential 200 ms x2, 5 s cap, full jitter. */
    public static final Backoff DEFAULT_BACKOFF =
            Backoff.exponential(Duration.ofMillis(200)).maxDelay(Duration.ofSeconds(5)).jitter(Jitter.full());

    private static final RetryPolicy INTERACTIVE = builder()
            .maxAttempts(5)
            .backoff(Backoff.exponential(Duration.ofMillis(200)).multiplier(2).maxDelay(Duration.ofSeconds(5))
                    .jitter(Jitter.full()))
            .deadline(Duration.ofSeconds(15))
            .build();

    private static final RetryPolicy BACKGROUND = builder()
            .maxAttempts(8)
            .backoff(Backoff.exponential(Duration.ofSeconds(1)).multiplier(2).maxDelay(Duration.ofSeconds(60))
                    .jitter(Jitter.full()))
            .deadline(Duration.ofMinutes(10))
            .build();

    private final int maxAttempts;
    private final Backoff backoff;
    private final Classifier classifier;
    private final boolean acceptsAllResults;
    private final long deadlineNanos;
    private final long attemptTimeoutNanos;
    private final @Nullable HedgePolicy hedge;

    private RetryPolicy(Builder b) {
        this.hedge = b.hedge;
        this.maxAttempts = b.maxAttempts;
        this.backoff = b.backoff;
        this.deadlineNanos = b.deadline == null ? 0 : Checks.nanos(b.deadline);
        this.attemptTimeoutNanos = b.attemptTimeout == null ? 0 : Checks.nanos(b.attemptTimeout);
        if (b.classifier != null) {
            this.classifier = b.classifier;
            this.acceptsAllResults = false;
        } else {
            this.classifier = new BuiltClassifier(List.copyOf(b.retryOn), List.copyOf(b.retryIf),
                    List.copyOf(b.abortOn), List.copyOf(b.resultPredicates));
            this.acceptsAllResults = b.resultPredicates.isEmpty();
        }
    }

    /**
     * For user-facing calls: 5 attempts; waits from 200 ms, x2, capped at 5 s, full jitter; the
     * whole call (attempts and waits) within 15 s.
     */
    public static RetryPolicy interactive() {
        return INTERACTIVE;
    }

    /**
     * For workers and background jobs: 8 attempts; waits from 1 s, x2, capped at 60 s, full
     * jitter; the whole call within 10 min.
     */
    public static RetryPolicy background() {
        return BACKGROUND;
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * A builder starting from this policy's settings. A policy classified by {@code retryOn},
     * {@code retryIf}, {@code abortOn} and {@code retryOnResult} keeps those rules, so more can be
     * added; a custom {@link Builder#classifier(Classifier)} is carried over as it is.
     */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.maxAttempts = maxAttempts;
        b.backoff = backoff;
        if (classifier instanceof BuiltClassifier built) {
            b.retryOn.addAll(built.retryOn);
            b.retryIf.addAll(built.retryIf);
            b.abortOn.addAll(built.abortOn);
            b.resultPredicates.addAll(built.resultPredicates);
        } else {
            b.classifier = classifier;
        }
        b.deadline = deadline().orElse(null);
        b.attemptTimeout = attemptTimeout().orElse(null);
        b.hedge = hedge;
        return b;
    }

    public int maxAttempts() {
        return maxAttempts;
    }

    public Backoff backoff() {
        return backoff;
    }

    public Classifier classifier() {
        return classifier;
    }

    public Optional<Duration> deadline() {
        return deadlineNanos == 0 ? Optional.empty() : Optional.of(Duration.ofNanos(deadlineNanos));
    }

    public Optional<Duration> attemptTimeout() {
        return attemptTimeoutNanos == 0 ? Optional.empty() : Optional.of(Duration.ofNanos(attemptTimeoutNanos));
    }

    /** The hedging of each call, if any: see {@link HedgePolicy}. */
    public Optional<HedgePolicy> hedge() {
        return Optional.ofNullable(hedge);
    }

    long deadlineNanos() {
        return deadlineNanos;
    }

    long attemptTimeoutNanos() {
        return attemptTimeoutNanos;
    }

    /** True when a user's classifier (which may read the attempt context) decides. */
    boolean hasCustomClassifier() {
        return !(classifier instanceof BuiltClassifier);
    }

    /** True when results are never classified (no result predicate and no custom classifier). */
    boolean acceptsAllResults() {
        return acceptsAllResults;
    }

    @Override
    public String toString() {
        return "RetryPolicy{maxAttempts=" + maxAttempts + ", backoff=" + backoff + ", deadline="
                + deadline().map(Duration::toString).orElse("none") + ", attemptTimeout="
                + attemptTimeout().map(Duration::toString).orElse("none") + (hedge != null ? ", hedge=" + hedge : "") + "}";
    }

    /** Builds a {@link RetryPolicy}. Not thread-safe. */
    public static final class Builder {
        private int maxAttempts = 3;
        private Backoff backoff = DEFAULT_BACKOFF;
        private @Nullable Classifier classifier;
        private final List<Class<? extends Throwable>> retryOn = new ArrayList<>();
        private final List<Predicate<Throwable>> retryIf = new ArrayList<>();
        private final List<Class<? extends Throwable>> abortOn = new ArrayList<>();
        private final List<Predicate<Object>> resultPredicates = new ArrayList<>();
        private @Nullable Duration deadline;
        private @Nullable Duration attemptTimeout;
        private @Nullable HedgePolicy hedge;

        private Builder() {
        }

        /** Total attempts including the first; at least 1. Default 3. */
        public Builder maxAttempts(int maxAttempts) {
            this.maxAttempts = Checks.atLeast("maxAttempts", maxAttempts, 1);
            return this;
        }

        /** Retries after the first attempt: {@code maxRetries(n)} is {@code maxAttempts(n + 1)}. */
        public Builder maxRetries(int maxRetries) {
            Checks.atLeast("maxRetries", maxRetries, 0);
            if (maxRetries == Integer.MAX_VALUE) {
                throw new IllegalArgumentException("maxRetries must be less than " + Integer.MAX_VALUE + ", got " + maxRetries);
            }
            this.maxAttempts = maxRetries + 1;
            return this;
        }

        public Builder backoff(Backoff backoff) {
            this.backoff = Checks.notNull("backoff", backoff);
            return this;
        }

        /**
         * Replaces the whole classification with {@code classifier}; {@link #retryOn},
         * {@link #retryIf}, {@link #abortOn} and {@link #retryOnResult(Class, Predicate)} are then
         * ignored. Whatever it says, an {@link Error} or an {@link InterruptedException} is never
         * retried.
         */
        public Builder classifier(Classifier classifier) {
            this.classifier = Checks.notNull("classifier", classifier);
            return this;
        }

        /** Retry only failures of these types (and their subclasses), plus any {@link #retryIf}. */
        @SafeVarargs
        public final Builder retryOn(Class<? extends Throwable>... types) {
            for (Class<? extends Throwable> t : types) {
                retryOn.add(Checks.notNull("retryOn type", t));
            }
            return this;
        }

        /** Retry failures matching the predicate, plus any {@link #retryOn} types. */
        public Builder retryIf(Predicate<Throwable> predicate) {
            retryIf.add(Checks.notNull("retryIf", predicate));
            return this;
        }

        /** Never retry failures of these types, whatever else matches. */
        @SafeVarargs
        public final Builder abortOn(Class<? extends Throwable>... types) {
            for (Class<? extends Throwable> t : types) {
                abortOn.add(Checks.notNull("abortOn type", t));
            }
            return this;
        }

        /**
         * Retry when a result of type {@code type} matches {@code predicate}
         * ({@code retryOnResult(HttpResponse.class, r -> r.statusCode() == 503)}); a result of
         * another type, and a null result, never match and are not given to the predicate. An
         * exception thrown by the predicate itself (a {@code ClassCastException} included) is a
         * classifier failure: it ends the call (reason NOT_RETRYABLE) and is thrown to the caller.
         */
        public <R> Builder retryOnResult(Class<R> type, Predicate<? super R> predicate) {
            Checks.notNull("retryOnResult type", type);
            Checks.notNull("retryOnResult", predicate);
            resultPredicates.add(result -> type.isInstance(result) && predicate.test(type.cast(result)));
            return this;
        }

        /**
         * One budget for the whole call: attempts and waits. A wait that would end past it is not
         * slept: the call gives up at once with reason DEADLINE.
         */
        public Builder deadline(Duration deadline) {
            this.deadline = Checks.positive("deadline", deadline);
            return this;
        }

        /**
         * Bounds one attempt: enforced by {@link Retry#callAsync}, and handed to integrations (HTTP
         * request timeout, JDBC query timeout) through {@link AttemptContext#attemptTimeout()}.
         */
        public Builder attemptTimeout(Duration attemptTimeout) {
            this.attemptTimeout = Checks.positive("attemptTimeout", attemptTimeout);
            return this;
        }

        /**
         * Hedges each call: sends up to {@link HedgePolicy#maxHedges()} extra attempts while the
         * first is slow, takes the first accepted outcome and cancels the rest; if every attempt
         * fails with a retryable failure, backs off and starts again, as this policy says. Hedges
         * count against {@link #maxAttempts(int)}. See {@link HedgePolicy}.
         */
        public Builder hedge(HedgePolicy hedge) {
            this.hedge = Checks.notNull("hedge", hedge);
            return this;
        }

        /**
         * No hedging: each call's attempts run one after another, as a policy built without
         * {@link #hedge(HedgePolicy)}. For a copy ({@link RetryPolicy#toBuilder()}) used where
         * sending a request twice at once is not safe (an HTTP POST without a key the server honours).
         */
        public Builder withoutHedge() {
            this.hedge = null;
            return this;
        }

        public RetryPolicy build() {
            if (hedge != null) {
                Checks.atLeast("maxAttempts (hedges count as attempts)", maxAttempts, 2);
            }
            return new RetryPolicy(this);
        }
    }

    /** retryOn / retryIf / abortOn / retryOnResult, evaluated in that documented order. */
    private static final class BuiltClassifier implements Classifier {
        private final List<Class<? extends Throwable>> retryOn;
        private final List<Predicate<Throwable>> retryIf;
        private final List<Class<? extends Throwable>> abortOn;
        private final List<Predicate<Object>> resultPredicates;

        BuiltClassifier(List<Class<? extends Throwable>> retryOn, List<Predicate<Throwable>> retryIf,
                        List<Class<? extends Throwable>> abortOn, List<Predicate<Object>> resultPredicates) {
            this.retryOn = retryOn;
            this.retryIf = retryIf;
            this.abortOn = abortOn;
            this.resultPredicates = resultPredicates;
        }

        @Override
        public Decision classify(@Nullable Object result, @Nullable Throwable failure, AttemptContext context) {
            if (failure == null) {
                for (Predicate<Object> p : resultPredicates) {
                    if (p.test(result)) {
                        return Decision.retry();
                    }
                }
                return Decision.accept();
            }
            if (failure instanceof Error || failure instanceof InterruptedException) {
                return Decision.stop();
            }
            for (Class<? extends Throwable> t : abortOn) {
                if (t.isInstance(failure)) {
                    return Decision.stop();
                }
            }
            if (retryOn.isEmpty() && retryIf.isEmpty()) {
                return Decision.retry();
            }
            for (Class<? extends Throwable> t : retryOn) {
                if (t.isInstance(failure)) {
                    return Decision.retry();
                }
            }
            for (Predicate<Throwable> p : retryIf) {
                if (p.test(failure)) {
                    return Decision.retry();
                }
            }
            return Decision.stop();
        }
    }
}
