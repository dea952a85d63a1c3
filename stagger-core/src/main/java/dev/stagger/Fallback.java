package dev.stagger;

import dev.stagger.internal.Checks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * What a call answers once retrying has stopped without success: a stale value, a deferred
 * answer, a message for the user. Attached with {@link Retry#withFallback(Fallback)}.
 *
 * <h2>When it runs</h2>
 * After the call has ended, at most once per call, on the thread that ended it (the caller's for
 * {@link Retry#call}; for {@link Retry#callAsync} the thread that completed the last attempt or
 * the clock's scheduler, so an async fallback should be quick). It runs when the end reason is
 * one of {@link #reasons()} and, if {@link #withFailureTypes failure types} are set, the last
 * failure (or the exception the caller would receive) is an instance of one of them. It never
 * runs for SUCCESS, RECOVERED or CANCELLED; by default it runs for every other reason except
 * INTERRUPTED (a thread asked to stop should stop), which can be chosen explicitly.
 *
 * <h2>Its answer</h2>
 * The value the fallback returns is the call's result. A fallback made with
 * {@link #ofOptional} may decline (an empty {@code Optional}: nothing cached, say): then the
 * next fallback chained with {@link #orElse} is asked, and when none serves, the call ends as it
 * would have without any. A fallback that throws ends the call with its exception, the call's own
 * failure attached to it as suppressed; it is not retried and no later fallback is asked.
 * {@link #message} answers with a {@link UserFacingException}, which counts as served.
 *
 * <h2>Types</h2>
 * {@code Retry} is not generic: a fallback's value is returned from {@code call} as the call's
 * result type unchecked, so give a {@code Retry} with a fallback to calls of the fallback's type
 * (a {@code Retry} per kind of call: {@code retry.withFallback(..)} is cheap).
 *
 * <h2>Visibility</h2>
 * The call's {@link RetryEvent.CallFinished} event is reported after the fallback ran, with
 * {@link RetryEvent.CallFinished#fallback()} saying which kind ran and whether it served.
 *
 * <p>Immutable and thread-safe; the {@code with...} methods return changed copies.
 *
 * @param <T> the type of the value it answers with
 */
public final class Fallback<T> {
    /** The value a source returns to decline. */
    static final Object DECLINED = new Object();

    private static final Set<EndReason> NEVER = Collections.unmodifiableSet(
            EnumSet.of(EndReason.SUCCESS, EndReason.RECOVERED, EndReason.CANCELLED));
    private static final Set<EndReason> DEFAULT_REASONS;

    static {
        EnumSet<EndReason> reasons = EnumSet.complementOf(EnumSet.copyOf(NEVER));
        reasons.remove(EndReason.INTERRUPTED);
        DEFAULT_REASONS = Collections.unmodifiableSet(reasons);
    }

    /** Computes an answer or {@link #DECLINED}; a {@link Raise} answers with an exception. */
    @FunctionalInterface
    interface Source {
        Object serve(FallbackContext context) throws Exception;
    }

    /** An answer that is an exception, yet served (a message for the user). */
    static final class Raise {
        final RuntimeException exception;

        Raise(RuntimeException exception) {
            this.exception = exception;
        }
    }

    private final String kind;
    private final Set<EndReason> reasons;
    private final List<Class<? extends Throwable>> failureTypes;
    private final @Nullable Predicate<? super FallbackContext> condition;
    private final Source source;
    private final @Nullable Fallback<? extends T> next;

    private Fallback(String kind, Set<EndReason> reasons, List<Class<? extends Throwable>> failureTypes,
                     @Nullable Predicate<? super FallbackContext> condition, Source source,
                     @Nullable Fallback<? extends T> next) {
        this.kind = kind;
        this.reasons = reasons;
        this.failureTypes = failureTypes;
        this.condition = condition;
        this.source = source;
        this.next = next;
    }

    static <T> Fallback<T> make(String kind, Source source) {
        return new Fallback<>(kind, DEFAULT_REASONS, List.of(), null, source, null);
    }

    /** A fallback that always answers with {@code function}'s value; its kind is "custom". */
    public static <T> Fallback<T> of(FallbackFunction<? extends T> function) {
        Checks.notNull("function", function);
        return make("custom", function::apply);
    }

    /**
     * A fallback that may decline: an empty result leaves the call's outcome to the next fallback
     * ({@link #orElse}), or as it was. Its kind is "custom".
     */
    public static <T> Fallback<T> ofOptional(Function<? super FallbackContext, Optional<? extends T>> function) {
        Checks.notNull("function", function);
        return make("custom", context -> {
            Optional<? extends T> value = function.apply(context);
            if (value == null) {
                throw new NullPointerException("fallback function returned null instead of an Optional");
            }
            return value.isPresent() ? value.get() : DECLINED;
        });
    }

    /**
     * Answers with a {@link UserFacingException} carrying {@code userMessage} (shown as is, so it
     * must hold no internal detail) and, when known, when to try again
     * ({@link FallbackContext#retryIn()}: the breaker's next probe; nothing for a call the
     * adaptive throttle refused, THROTTLED, as no time is known). Kind "message".
     */
    public static <T> Fallback<T> message(String userMessage) {
        Checks.notNull("userMessage", userMessage);
        return message(context -> userMessage, FallbackContext::retryIn);
    }

    /**
     * As {@link #message(String)}, the text chosen per call (by end reason, say) and the time to
     * try again read by {@code retryIn} (a module that knows a server's {@code Retry-After} reads
     * it from the last result).
     */
    public static <T> Fallback<T> message(Function<? super FallbackContext, String> userMessage,
                                          Function<? super FallbackContext, Optional<Duration>> retryIn) {
        Checks.notNull("userMessage", userMessage);
        Checks.notNull("retryIn", retryIn);
        return make("message", context -> {
            String text = Checks.notNull("userMessage", userMessage.apply(context));
            Duration wait = retryIn.apply(context).orElse(null);
            return new Raise(new UserFacingException(text, context.reason(), wait,
                    wait == null ? null : context.now().plus(wait)));
        });
    }

    /** The kind reported on events and metrics ("cache", "queue", "message", "custom"). */
    public String kind() {
        return kind;
    }

    /** The end reasons it runs for. */
    public Set<EndReason> reasons() {
        return reasons;
    }

    /** The failure types it is limited to; empty when any failure (or a result) qualifies. */
    public List<Class<? extends Throwable>> failureTypes() {
        return failureTypes;
    }

    /** The same fallback reporting another kind (a short lower-case word, used as a metric tag). */
    public Fallback<T> withKind(String kind) {
        Checks.notNull("kind", kind);
        if (!kind.matches("[a-z][a-z0-9_-]{0,31}")) {
            throw new IllegalArgumentException("kind must be a lower-case word of at most 32 characters, got '"
                    + (kind.length() > 64 ? kind.substring(0, 64) + "'... (" + kind.length() + " chars)" : kind + "'"));
        }
        return new Fallback<>(kind, reasons, failureTypes, condition, source, next);
    }

    /**
     * The same fallback, running only for these end reasons. SUCCESS, RECOVERED and CANCELLED are
     * refused: a fallback never replaces a success, and a cancelled call has nobody to answer.
     */
    public Fallback<T> withReasons(EndReason... reasons) {
        Checks.notNull("reasons", reasons);
        if (reasons.length == 0) {
            throw new IllegalArgumentException("reasons must not be empty");
        }
        EnumSet<EndReason> set = EnumSet.noneOf(EndReason.class);
        for (EndReason reason : reasons) {
            Checks.notNull("reason", reason);
            if (NEVER.contains(reason)) {
                throw new IllegalArgumentException("reasons must not include " + reason
                        + ": a fallback never runs for SUCCESS, RECOVERED or CANCELLED");
            }
            set.add(reason);
        }
        return new Fallback<>(kind, Collections.unmodifiableSet(set), failureTypes, condition, source, next);
    }

    /**
     * The same fallback, running only when the last failure, or the exception the caller would
     * receive, is an instance of one of {@code types} (a call that ended returning a result then
     * does not qualify).
     */
    @SafeVarargs
    public final Fallback<T> withFailureTypes(Class<? extends Throwable>... types) {
        Checks.notNull("types", types);
        if (types.length == 0) {
            throw new IllegalArgumentException("types must not be empty");
        }
        List<Class<? extends Throwable>> copy = new ArrayList<>(types.length);
        for (Class<? extends Throwable> type : types) {
            copy.add(Checks.notNull("type", type));
        }
        return new Fallback<>(kind, reasons, List.copyOf(copy), condition, source, next);
    }

    /**
     * The same fallback, running only when {@code condition} holds for the ended call (as well as
     * its reasons and failure types): a message only when the last response was a 503, say. A
     * condition that throws counts as the fallback throwing.
     */
    public Fallback<T> when(Predicate<? super FallbackContext> condition) {
        Checks.notNull("condition", condition);
        Predicate<? super FallbackContext> both = this.condition == null ? condition
                : context -> this.condition.test(context) && condition.test(context);
        return new Fallback<>(kind, reasons, failureTypes, both, source, next);
    }

    /**
     * This fallback, then {@code other} when this one does not apply or declines: a cache, then
     * a message for the user. The first that serves (or throws) answers.
     */
    public Fallback<T> orElse(Fallback<? extends T> other) {
        Checks.notNull("other", other);
        return new Fallback<>(kind, reasons, failureTypes, condition, source, next == null ? other : chain(next, other));
    }

    private static <T> Fallback<? extends T> chain(Fallback<? extends T> first, Fallback<? extends T> then) {
        @SuppressWarnings("unchecked")
        Fallback<T> f = (Fallback<T>) first;
        return f.orElse(then);
    }

    /** Whether any fallback in the chain runs for {@code reason}: the call's end event then waits for it. */
    boolean considers(@Nullable EndReason reason) {
        for (Fallback<?> f = this; f != null; f = f.next) {
            if (f.reasons.contains(reason)) {
                return true;
            }
        }
        return false;
    }

    private boolean applies(EndReason reason, @Nullable Throwable lastFailure, @Nullable Throwable thrown) {
        if (!reasons.contains(reason)) {
            return false;
        }
        if (failureTypes.isEmpty()) {
            return true;
        }
        for (Class<? extends Throwable> type : failureTypes) {
            if (type.isInstance(lastFailure) || type.isInstance(thrown)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The answer for a call that ended with {@code reason}, returning {@code value} or throwing
     * {@code thrown}: the first fallback in the chain that applies and serves, or the original.
     */
    FallbackAnswer answer(String name, EndReason reason, int attempts, @Nullable Throwable lastFailure,
                          @Nullable Object lastResult, @Nullable Object value, @Nullable Throwable thrown,
                          @Nullable CircuitBreaker breaker, Clock clock) {
        FallbackContext context = null;
        String declinedKind = null;
        for (Fallback<?> f = this; f != null; f = f.next) {
            if (!f.applies(reason, lastFailure, thrown)) {
                continue;
            }
            if (context == null) {
                context = new FallbackContext(name, reason, attempts, lastFailure,
                        lastFailure == null ? lastResult : null, thrown, retryIn(thrown, breaker), clock);
            }
            Object served;
            try {
                if (f.condition != null && !f.condition.test(context)) {
                    continue;
                }
                served = f.source.serve(context);
            } catch (Throwable own) {
                if (thrown != null && own != thrown) {
                    own.addSuppressed(thrown);
                }
                return new FallbackAnswer(null, own,
                        new RetryEvent.FallbackRun(f.kind, RetryEvent.FallbackRun.Outcome.FAILED));
            }
            if (served == DECLINED) {
                declinedKind = f.kind;
                continue;
            }
            RetryEvent.FallbackRun run = new RetryEvent.FallbackRun(f.kind, RetryEvent.FallbackRun.Outcome.SERVED);
            if (served instanceof Raise raise) {
                if (thrown != null) {
                    raise.exception.addSuppressed(thrown);
                }
                return new FallbackAnswer(null, raise.exception, run);
            }
            return new FallbackAnswer(served, null, run);
        }
        return new FallbackAnswer(value, thrown, declinedKind == null ? null
                : new RetryEvent.FallbackRun(declinedKind, RetryEvent.FallbackRun.Outcome.DECLINED));
    }

    private static @Nullable Duration retryIn(@Nullable Throwable thrown, @Nullable CircuitBreaker breaker) {
        if (thrown instanceof CircuitOpenException open) {
            return open.retryIn();
        }
        if (breaker != null && breaker.state() == CircuitBreaker.State.OPEN) {
            return breaker.openException(null, null).retryIn();
        }
        return null;
    }

    @Override
    public String toString() {
        return "Fallback{" + kind + ", " + reasons + (failureTypes.isEmpty() ? "" : ", " + failureTypes)
                + (condition != null ? ", when ..." : "")
                + (next != null ? ", orElse " + next : "") + "}";
    }
}
