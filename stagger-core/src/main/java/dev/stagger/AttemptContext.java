package dev.stagger;

import java.time.Duration;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What an operation (and a {@link Classifier}) can know about the attempt in progress. Valid only
 * during the call it was given to.
 */
public interface AttemptContext {

    /** The retry's name. */
    String name();

    /** 1 for the first attempt. */
    int attempt();

    /** Total attempts allowed (1 + retries). */
    int maxAttempts();

    /** Time since the call began. */
    Duration elapsed();

    /**
     * Time left before the whole-operation deadline, or empty if the policy has none. An operation
     * can bound itself with it (a query timeout, a request timeout).
     */
    Optional<Duration> remaining();

    /**
     * How long this attempt may run: the policy's per-attempt timeout shortened to the remaining
     * deadline; the remaining deadline alone when there is no per-attempt timeout; empty when
     * there is neither.
     */
    Optional<Duration> attemptTimeout();

    /**
     * The failure of the attempt before this one: while attempt {@code n} runs, and while a
     * {@link Classifier} classifies its outcome, what attempt {@code n - 1} threw (the outcome
     * being classified is the classifier's own {@code failure} argument, not this). Null on the
     * first attempt and when attempt {@code n - 1} returned a result (a retried result, say).
     * Work whose attempts run in separate processes ({@link RetryEngine#decide}) does not carry
     * failures from one attempt to the next: there it is always null.
     */
    @Nullable Throwable lastFailure();

    /**
     * Runs {@code work} on the current thread as part of this attempt, for code that continues
     * an attempt on another thread (a Reactor pipeline subscribing on a scheduler, a callback):
     * a Stagger retry that {@code work} starts runs inside this attempt's call, as it would had the
     * operation started it directly. It tells this call how it ended (so a failure it decided on is
     * not retried here again) and is bounded by this call's deadline. Stagger's WebClient filter
     * does this with the attempt an annotated reactive method passes in the Reactor context.
     *
     * @return what {@code work} returned
     */
    default <T> T runInside(java.util.function.Supplier<T> work) {
        return work.get();
    }
}
