package dev.stagger;

import dev.stagger.internal.Checks;
import java.time.Duration;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A bound on every Stagger retry started on this thread while the scope is open, and a record of
 * the ones that ended without success. A server opens one per request with the deadline its
 * caller sent (stagger-http's servlet filter does): no retry, wait or attempt timeout started while
 * serving the request outlives it, and when the answer is an error the server can tell whether a
 * retry already decided on it ({@link #decided()}), so the caller should not retry it again.
 *
 * <pre>{@code
 * try (RetryScope scope = RetryScope.open(Duration.ofMillis(800))) {
 *     return service.handle(request);          // retries inside are bounded by the 800 ms
 * }
 * }</pre>
 *
 * <p>Scopes nest, and a scope inside a retry or another scope is bounded by their deadlines too.
 * The deadline is measured on {@link Clock#system()} (or the clock given); a retry on another
 * clock is not bounded by it. A scope belongs to the thread that opened it and must be closed
 * there, innermost first. Opening the first scope with a deadline in a process makes every later
 * call keep a frame on its thread's stack (a few nanoseconds per call), as a retry with a
 * deadline does; a scope without one ({@code open(null)}) only records decisions and costs
 * nothing per call.
 */
public final class RetryScope implements AutoCloseable {
    private final Ambient.Local local;
    private final Ambient.Frame frame;
    private final Thread owner;
    private final long serial;
    private final Clock clock;
    private final long deadlineAt;
    private boolean closed;

    private RetryScope(Ambient.Local local, Ambient.Frame frame, Clock clock, long serial, long deadlineAt) {
        this.local = local;
        this.frame = frame;
        this.clock = clock;
        this.owner = Thread.currentThread();
        this.serial = serial;
        this.deadlineAt = deadlineAt;
    }

    /**
     * Opens a scope on the current thread.
     *
     * @param remaining how long the work done in the scope may take from now; null for no bound of
     *     its own (the scope still takes the bound of the retries and scopes around it, and records
     *     decisions)
     * @throws IllegalArgumentException when {@code remaining} is negative
     */
    public static RetryScope open(@Nullable Duration remaining) {
        return open(remaining, Clock.system());
    }

    /**
     * As {@link #open(Duration)}, with the deadline measured on {@code clock}: it bounds the
     * retries on that clock (a test's virtual clock, say).
     */
    public static RetryScope open(@Nullable Duration remaining, Clock clock) {
        Checks.notNull("clock", clock);
        long at = Ambient.NO_DEADLINE;
        if (remaining != null) {
            Checks.nonNegative("remaining", remaining);
            long now = clock.nanoTime();
            long nanos = Checks.nanos(remaining);
            at = nanos >= Ambient.NO_DEADLINE - now ? Ambient.NO_DEADLINE - 1 : now + nanos;
            Ambient.needFrames();
        }
        Ambient.Local local = Ambient.local();
        Ambient.Frame frame = null;
        long deadlineAt = Ambient.NO_DEADLINE;
        if (Ambient.framed()) {
            frame = local.enterScope(clock);
            frame.limit(at);
            deadlineAt = frame.deadlineAt;
        }
        return new RetryScope(local, frame, clock, Ambient.serial(), deadlineAt);
    }

    /** What is left of this scope's deadline (its own or one around it) now, never negative; empty without one. */
    public Optional<Duration> remaining() {
        return remainingOf(deadlineAt, clock);
    }

    /**
     * The latest Stagger retry that ended without success while this scope was open, on this
     * thread (or started on it, if async): it gave up, judged a failure not retryable, or was
     * refused by its breaker, budget, throttle, the nesting rule or the deadline. Empty when none
     * did. A failure a fallback answered is not one.
     */
    public Optional<Outcome> decided() {
        return outcome(local.since(serial));
    }

    /**
     * The decision of a Stagger retry inside this scope that {@code failure} is about: the latest
     * one that ended without success while the scope was open, when {@code failure} is what it
     * threw, or an exception caused by it, or follows a result it gave up on (see the README's
     * "Retrying across layers and services"). A layer that is not a {@link Retry} but retries
     * what its work throws (a job queue, a message consumer) asks this to follow the one-layer
     * rule: a failure a retry inside already decided on is not retried again.
     */
    public Optional<Outcome> decidedOn(Throwable failure) {
        Checks.notNull("failure", failure);
        Ambient.Decided d = local.since(serial);
        return outcome(d != null && d.covers(failure) ? d : null);
    }

    /**
     * Closes the scope (and any frame left open above it). Idempotent.
     *
     * @throws IllegalStateException when called on another thread than the one that opened it
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException("a RetryScope is closed on the thread that opened it ("
                    + owner.getName() + "), not on " + Thread.currentThread().getName());
        }
        closed = true;
        if (frame != null) {
            local.exit(frame);
        }
    }

    /**
     * The innermost deadline on the current thread, an open scope's or a running Stagger retry's,
     * as the time left now; empty when there is none.
     */
    public static Optional<Duration> currentRemaining() {
        if (!Ambient.framed()) {
            return Optional.empty();
        }
        Ambient.Frame top = Ambient.local().top();
        return top == null ? Optional.empty() : remainingOf(top.deadlineAt, top.clock());
    }

    private static Optional<Outcome> outcome(Ambient.Decided d) {
        return d == null ? Optional.empty() : Optional.of(new Outcome(d.inner, d.attempts, d.reason));
    }

    private static Optional<Duration> remainingOf(long deadlineAt, Clock clock) {
        if (deadlineAt == Ambient.NO_DEADLINE) {
            return Optional.empty();
        }
        return Optional.of(Duration.ofNanos(Math.max(0, deadlineAt - clock.nanoTime())));
    }

    @Override
    public String toString() {
        return "RetryScope{remaining=" + remaining().map(Duration::toString).orElse("none") + (closed ? ", closed" : "") + "}";
    }

    /**
     * A retry that ended without success inside a scope.
     *
     * @param retry the retry's name
     * @param attempts the attempts it made (0 when it was refused before the first)
     * @param reason why it ended
     */
    public record Outcome(String retry, int attempts, EndReason reason) {
    }
}
