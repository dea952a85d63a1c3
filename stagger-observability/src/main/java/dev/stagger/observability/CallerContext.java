package dev.stagger.observability;

import dev.stagger.Retry;
import dev.stagger.RetryListener;
import io.micrometer.context.ContextSnapshot;
import io.micrometer.context.ContextSnapshotFactory;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Runs the attempts a call makes off its caller's thread with the caller's thread-local context:
 * the current observation and span, baggage, the logging MDC, whatever the
 * {@link io.micrometer.context.ContextRegistry} behind the factory knows how to capture (Micrometer's
 * Context Propagation). Which attempts: a hedge and the later rounds of a hedged {@code call}
 * (they run on the {@link dev.stagger.HedgePolicy}'s executor), and the attempts a
 * {@code callAsync} starts from the clock's thread (a hedge, a retry after a wait). Without it,
 * a span an HTTP client opens inside such an attempt starts a trace of its own, and a log line
 * written there has none of the request's MDC.
 *
 * <pre>{@code
 * Retry search = RetryObservation.of(observations).instrument(
 *         CallerContext.of().instrument(Retry.of("search", hedgedPolicy)));
 * }</pre>
 *
 * <p>The context is captured once per call, on the caller's thread as the call begins, and put in
 * place around each attempt that runs on another thread while its operation is invoked; an
 * attempt on the caller's own thread is left alone. Add it <em>before</em> {@link RetryObservation}:
 * listeners' scopes open in the order the listeners were added, so the attempt's observation, opened
 * after the caller's context is back, is the current one and a span opened inside the attempt is its
 * child ({@link #instrument} refuses a retry that is observed already). A retry without it pays
 * nothing: this is an ordinary listener, and Stagger makes no capture of its own.
 */
public final class CallerContext implements RetryListener {
    private final ContextSnapshotFactory snapshots;

    private CallerContext(ContextSnapshotFactory snapshots) {
        this.snapshots = snapshots;
    }

    /** Captures what the global {@link io.micrometer.context.ContextRegistry} knows (the current observation, with Micrometer). */
    public static CallerContext of() {
        return of(ContextSnapshotFactory.builder().build());
    }

    /** Captures with {@code snapshots} (a registry of its own, a filter of keys). */
    public static CallerContext of(ContextSnapshotFactory snapshots) {
        return new CallerContext(Objects.requireNonNull(snapshots, "snapshots"));
    }

    /**
     * {@code retry} with this listener added (use the returned instance: a {@link Retry} is
     * immutable).
     *
     * @throws IllegalArgumentException when {@code retry} already has a {@link RetryObservation}:
     *     the caller's context would then be put back over each attempt's observation
     */
    public Retry instrument(Retry retry) {
        Objects.requireNonNull(retry, "retry");
        for (RetryListener l : retry.listeners()) {
            if (l instanceof RetryObservation) {
                throw new IllegalArgumentException("retry " + retry.name() + " is observed already: add CallerContext"
                        + " before RetryObservation, or a span opened inside an attempt is not the attempt's child");
            }
        }
        return retry.withListener(this);
    }

    /** The caller's context, captured on the caller's thread as the call begins. */
    @Override
    public RetryListener forCall(Retry retry) {
        return new Call(Thread.currentThread(), snapshots.captureAll());
    }

    /** One call: its caller's thread and context. */
    private static final class Call implements RetryListener {
        private final Thread caller;
        private final ContextSnapshot context;

        Call(Thread caller, ContextSnapshot context) {
            this.caller = caller;
            this.context = context;
        }

        @Override
        public @Nullable Scope onAttemptStarting(String name, int attempt) {
            if (Thread.currentThread() == caller) {
                return null; // the context is in place already
            }
            ContextSnapshot.Scope restored = context.setThreadLocals();
            return restored::close;
        }
    }
}
