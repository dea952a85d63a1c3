package dev.stagger.observability;

import dev.stagger.Decision;
import dev.stagger.EndReason;
import dev.stagger.Retry;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

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
 * <p><b>Hedged calls</b> ({@link dev.stagger.HedgePolicy}): each attempt, hedges included, is a
 * child of the call's, running on its own thread; a hedge's contextual name is
 * {@code <name> hedge <n>}. Their attempts carry {@value #HEDGE} ({@code true} for a hedge) and
 * {@value #HEDGE_OUTCOME} ({@code won}, {@code cancelled}, {@code failed}, {@code stopped}); the call
 * has a {@value #HEDGE_EVENT} event per hedge sent. A hedged attempt that failed with a retryable
 * failure ends at once with decision {@code retry} (the call went on with its other attempts, or a
 * next round; the call's reason says how it ended); a cancelled one ends with the call's end reason.
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
    /** Key on a hedged call's attempt: whether it was sent as a hedge ({@code true}) or began its round ({@code false}). */
    public static final String HEDGE = "stagger.retry.hedge";
    /**
     * Key on a hedged call's attempt: how it ended among the others: {@code won} (its outcome is
     * the call's), {@code cancelled} (stopped while running: another won, or the call ended),
     * {@code failed} (a retryable failure; the call went on), {@code stopped} (a failure that ended the call).
     */
    public static final String HEDGE_OUTCOME = "stagger.retry.hedge.outcome";
    /** Event on the call: a hedge sent (contextual name {@code hedge attempt <n> after <delay>}). */
    public static final String HEDGE_EVENT = "stagger.retry.hedge.sent";

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
        return new Call(registry, retry.name(), retry.policy().hedge().isPresent());
    }

    /**
     * One call's observations. Its events follow each other (on one thread, or with happens-before
     * edges), except in a hedged call, whose attempts start and finish on their own threads: the
     * attempts in flight are kept by number.
     */
    private static final class Call implements RetryListener {
        private final ObservationRegistry registry;
        private final String name;
        private final boolean hedged;
        private final Observation call;
        /** The attempts in flight by number; each taken once (by its end, or by the call's end when cancelled). */
        private final Map<Integer, Observation> attempts = new ConcurrentHashMap<>(4);
        /** The hedges' attempt numbers, told before they start. */
        private final Set<Integer> hedges;

        Call(ObservationRegistry registry, String name, boolean hedged) {
            this.registry = registry;
            this.name = name;
            this.hedged = hedged;
            this.hedges = hedged ? ConcurrentHashMap.newKeySet(4) : Set.of();
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
                        .contextualName(name + (hedges.contains(number) ? " hedge " : " attempt ") + number)
                        .lowCardinalityKeyValue(NAME, name)
                        .lowCardinalityKeyValue(ATTEMPT_NUMBER, Integer.toString(number))
                        .lowCardinalityKeyValue(PREVIOUS_ATTEMPTS, Integer.toString(number - 1));
                if (hedged) {
                    a.lowCardinalityKeyValue(HEDGE, Boolean.toString(hedges.contains(number)));
                }
                a.start();
            } finally {
                inCall.close();
            }
            Observation earlier = attempts.put(number, a);
            if (earlier != null) {
                earlier.stop(); // never heard its end (cannot happen with Stagger's executions)
            }
            Observation.Scope scope = a.openScope();
            return scope::close;
        }

        @Override
        public void onAttemptFinished(RetryEvent.AttemptFinished event) {
            // stopped by what follows: the retry scheduled, or the call's end
            Observation a = attempts.get(event.attempt());
            if (a == null) {
                return;
            }
            Decision.Kind kind = event.decision().kind();
            a.lowCardinalityKeyValue(CLASSIFIED, lower(kind.name()));
            if (event.failure() != null) {
                a.error(event.failure());
            }
            if (hedged) {
                a.lowCardinalityKeyValue(HEDGE_OUTCOME, kind == Decision.Kind.RETRY ? "failed"
                        : kind == Decision.Kind.STOP ? "stopped" : "won");
                if (kind == Decision.Kind.RETRY && attempts.remove(event.attempt(), a)) {
                    // the call goes on with its other attempts, or the next round: this one is over now
                    a.lowCardinalityKeyValue(DECISION, "retry").stop();
                }
            }
        }

        @Override
        public void onHedgeSent(RetryEvent.HedgeSent event) {
            hedges.add(event.attempt());
            call.event(Observation.Event.of(HEDGE_EVENT,
                    "hedge attempt " + event.attempt() + " after " + event.delay()));
        }

        @Override
        public void onAttemptCancelled(RetryEvent.AttemptCancelled event) {
            Observation a = attempts.remove(event.attempt());
            if (a != null) {
                a.lowCardinalityKeyValue(HEDGE_OUTCOME, "cancelled")
                        .lowCardinalityKeyValue(DECISION, lower(event.reason().name()))
                        .stop();
            }
        }

        @Override
        public void onRetryScheduled(RetryEvent.RetryScheduled event) {
            stopAttempts("retry");
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
            stopAttempts(lower(event.reason().name())); // the call ended after them
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

        /** Stops the attempts still open, each with what followed it. */
        private void stopAttempts(String decision) {
            for (Integer number : attempts.keySet()) {
                Observation a = attempts.remove(number);
                if (a != null) {
                    a.lowCardinalityKeyValue(DECISION, decision).stop();
                }
            }
        }

        private static String lower(String constant) {
            return constant.toLowerCase(Locale.ROOT);
        }
    }
}
