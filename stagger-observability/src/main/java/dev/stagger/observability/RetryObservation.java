package dev.stagger.observability;

import dev.stagger.EndReason;
import dev.stagger.Retry;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Micrometer {@link Observation}s for Stagger's retries: one observation per call and a child per
 * attempt, the model of gRPC's retry tracing (a span per call, a child span per attempt with the
 * number of attempts before it). With Micrometer Tracing behind the registry each becomes a span;
 * with a meter handler, a timer. One line attaches it:
 *
 * <pre>{@code
 * Retry payments = RetryObservation.of(observationRegistry).instrument(Retry.of("payments", policy));
 * }</pre>
 *
 * <p>While an attempt runs its observation is the current one on the thread running the operation
 * (for {@code callAsync}, while the operation starts the attempt and returns its stage), so the
 * spans an instrumented client starts inside it are the attempt's children, each with its own
 * trace context.
 *
 * <h2>What is recorded</h2>
 * Every key is low-cardinality (its values come from small fixed sets or from the retry's name).
 * <table>
 *   <caption>Observations</caption>
 *   <tr><th>Observation</th><th>Keys</th><th>Events</th></tr>
 *   <tr><td>{@value #CALL} (contextual name {@code retry <name>}), from the call's start to its end</td>
 *       <td>{@value #NAME}; {@value #REASON} (the {@link EndReason} in lower case);
 *       {@value #ATTEMPTS} (attempts made); {@value #FALLBACK} (the fallback's kind and outcome,
 *       {@code none} when none ran); the caller's exception as the error</td>
 *       <td>{@value #WAIT} before each retry (contextual name {@code wait <duration> before attempt <n>});
 *       {@value #DEFERRED_EVENT} when the failure was left to an inner retry</td></tr>
 *   <tr><td>{@value #ATTEMPT} (contextual name {@code <name> attempt <n>}), one per attempt made,
 *       child of the call's</td>
 *       <td>{@value #NAME}; {@value #ATTEMPT_NUMBER} (1 for the first); {@value #PREVIOUS_ATTEMPTS}
 *       (attempts before this one); {@value #CLASSIFIED} (the classifier's verdict on its outcome:
 *       {@code accept}, {@code retry}, {@code stop}; absent when the call was cancelled while it ran);
 *       {@value #DECISION} (what followed it: {@code retry}, or the call's end reason, such as
 *       {@code recovered}, {@code exhausted}, {@code budget}, {@code cancelled}); the attempt's exception as the error</td>
 *       <td></td></tr>
 * </table>
 *
 * <p>A call refused before its first attempt (an open breaker, a throttle) has a call observation
 * and no attempt. With a no-op registry nothing is created at all: {@link #forCall} then keeps the
 * shared listener, so a call allocates nothing for it.
 */
public final class RetryObservation implements RetryListener {
    /** The call's observation. */
    public static final String CALL = "stagger.retry.call";
    /** An attempt's observation. */
    public static final String ATTEMPT = "stagger.retry.attempt";
    /** Key: the retry's name. */
    public static final String NAME = "stagger.retry.name";
    /** Key on the call: why it ended. */
    public static final String REASON = "stagger.retry.reason";
    /** Key on the call: attempts made. */
    public static final String ATTEMPTS = "stagger.retry.attempts";
    /** Key on the call: the fallback that ran ({@code <kind>.<outcome>}), or {@code none}. */
    public static final String FALLBACK = "stagger.retry.fallback";
    /** Key on an attempt: its number, 1 for the first. */
    public static final String ATTEMPT_NUMBER = "stagger.retry.attempt";
    /** Key on an attempt: how many attempts of the call came before it (gRPC's previous-rpc-attempts). */
    public static final String PREVIOUS_ATTEMPTS = "stagger.retry.previous_attempts";
    /** Key on an attempt: what followed it, {@code retry} or the call's end reason. */
    public static final String DECISION = "stagger.retry.decision";
    /** Key on an attempt: the classifier's verdict on its outcome ({@code accept}, {@code retry}, {@code stop}). */
    public static final String CLASSIFIED = "stagger.retry.classified";
    /** Event on the call: the wait before a retry. */
    public static final String WAIT = "stagger.retry.wait";
    /** Event on the call: a failure left to the inner retry that decided on it. */
    public static final String DEFERRED_EVENT = "stagger.retry.deferred";

    private final ObservationRegistry registry;

    private RetryObservation(ObservationRegistry registry) {
        this.registry = registry;
    }

    /** Observes calls into {@code registry}. */
    public static RetryObservation of(ObservationRegistry registry) {
        return new RetryObservation(Objects.requireNonNull(registry, "registry"));
    }

    /**
     * {@code retry} with this listener added (use the returned instance: a {@link Retry} is
     * immutable); {@code retry} itself when the registry is a no-op now (no handler, or
     * {@link ObservationRegistry#NOOP}), so a retry nobody traces keeps its listener-free fast path.
     * Instrument after the registry's handlers are configured (Spring Boot does so before any bean
     * sees the registry).
     */
    public Retry instrument(Retry retry) {
        Objects.requireNonNull(retry, "retry");
        return registry.isNoop() ? retry : retry.withListener(this);
    }

    /** A fresh observer for the call {@code retry} begins, or this one (hearing nothing) when the registry is a no-op. */
    @Override
    public RetryListener forCall(Retry retry) {
        if (registry.isNoop()) {
            return this;
        }
        return new Call(registry, retry.name());
    }

    /** One call's observations; its events follow each other (on one thread, or with happens-before edges). */
    private static final class Call implements RetryListener {
        private final ObservationRegistry registry;
        private final String name;
        private final Observation call;
        /** The attempt in flight; taken once (by its end, or by the call's end when cancelled). */
        private final AtomicReference<Observation> attempt = new AtomicReference<>();

        Call(ObservationRegistry registry, String name) {
            this.registry = registry;
            this.name = name;
            // parent: the observation current on the caller's thread, if any
            this.call = Observation.createNotStarted(CALL, registry)
                    .contextualName("retry " + name)
                    .lowCardinalityKeyValue(NAME, name)
                    .start();
        }

        @Override
        public Scope onAttemptStarting(String retryName, int number) {
            Observation a;
            // started with the call current: a tracer takes a current span that differs from the
            // parent observation's (the caller's, on its thread) as the parent
            Observation.Scope inCall = call.openScope();
            try {
                a = Observation.createNotStarted(ATTEMPT, registry)
                        .parentObservation(call)
                        .contextualName(name + " attempt " + number)
                        .lowCardinalityKeyValue(NAME, name)
                        .lowCardinalityKeyValue(ATTEMPT_NUMBER, Integer.toString(number))
                        .lowCardinalityKeyValue(PREVIOUS_ATTEMPTS, Integer.toString(number - 1))
                        .start();
            } finally {
                inCall.close();
            }
            Observation earlier = attempt.getAndSet(a);
            if (earlier != null) {
                earlier.stop(); // never heard its end (cannot happen with Stagger's executions)
            }
            Observation.Scope scope = a.openScope();
            return scope::close;
        }

        @Override
        public void onAttemptFinished(RetryEvent.AttemptFinished event) {
            // stopped by what follows: the retry scheduled, or the call's end
            Observation a = attempt.get();
            if (a == null) {
                return;
            }
            a.lowCardinalityKeyValue(CLASSIFIED, lower(event.decision().kind().name()));
            if (event.failure() != null) {
                a.error(event.failure());
            }
        }

        @Override
        public void onRetryScheduled(RetryEvent.RetryScheduled event) {
            Observation a = attempt.getAndSet(null);
            if (a != null) {
                a.lowCardinalityKeyValue(DECISION, "retry").stop();
            }
            call.event(Observation.Event.of(WAIT,
                    "wait " + event.delay() + " before attempt " + event.nextAttempt()));
        }

        @Override
        public void onDeferred(RetryEvent.Deferred event) {
            call.event(Observation.Event.of(DEFERRED_EVENT, "left to " + event.inner() + " ("
                    + lower(event.innerReason().name()) + " after " + event.innerAttempts() + " attempts)"));
        }

        @Override
        public void onCallFinished(RetryEvent.CallFinished event) {
            Observation a = attempt.getAndSet(null);
            if (a != null) {
                a.lowCardinalityKeyValue(DECISION, lower(event.reason().name())).stop(); // the call ended after it
            }
            RetryEvent.FallbackRun fallback = event.fallback();
            call.lowCardinalityKeyValue(REASON, lower(event.reason().name()))
                    .lowCardinalityKeyValue(ATTEMPTS, Integer.toString(event.attempts()))
                    .lowCardinalityKeyValue(FALLBACK, fallback == null ? "none"
                            : fallback.kind() + "." + lower(fallback.outcome().name()));
            if (event.failure() != null) {
                call.error(event.failure());
            }
            call.stop();
        }

        private static String lower(String constant) {
            return constant.toLowerCase(Locale.ROOT);
        }
    }
}
