package dev.stagger.observability;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * One run of durable work (a job's handler, a message's handler) as {@link RetryObservation}'s
 * observations: a call observation for the run and an attempt child carrying the attempt's number,
 * with the same names and keys as a {@code Retry}'s, so one query finds every Stagger attempt.
 * A durable call's attempts are hours and often processes apart, so each run is its own call
 * observation; its attempt keys say where in the job's or message's life it was. Shared by
 * {@link JobObservation} and {@link MessageObservation}.
 */
final class DurableRun {
    /** {@value RetryObservation#REASON} of a run after which the work runs again later. */
    static final String RESCHEDULED = "rescheduled";
    /** Key: the failure's exception class (OpenTelemetry's {@code error.type}), on the attempt. */
    static final String ERROR_TYPE = "error.type";

    private final Observation call;
    private final Observation attempt;
    private final Observation.Scope scope;

    /**
     * Starts both observations, the attempt's current on this thread until {@link #leave()}.
     *
     * @param kind what runs ({@code job}, {@code message}), for the contextual names
     * @param idKey the high-cardinality key naming this piece of work, or null
     * @param id its value (the job id, the message id), or null when unknown
     */
    DurableRun(ObservationRegistry registry, String kind, String name, int number,
               @Nullable String idKey, @Nullable String id) {
        Observation c = Observation.createNotStarted(RetryObservation.CALL, registry)
                .contextualName(kind + " " + name)
                .lowCardinalityKeyValue(RetryObservation.NAME, name);
        if (idKey != null && id != null) {
            c.highCardinalityKeyValue(idKey, id);
        }
        this.call = c.start();
        Observation.Scope inCall = call.openScope(); // as in RetryObservation: the tracer's parent is the current span
        try {
            this.attempt = Observation.createNotStarted(RetryObservation.ATTEMPT, registry)
                    .parentObservation(call)
                    .contextualName(name + " attempt " + number)
                    .lowCardinalityKeyValue(RetryObservation.NAME, name)
                    .lowCardinalityKeyValue(RetryObservation.ATTEMPT_NUMBER, Integer.toString(number))
                    .lowCardinalityKeyValue(RetryObservation.PREVIOUS_ATTEMPTS, Integer.toString(number - 1))
                    .start();
        } finally {
            inCall.close();
        }
        this.scope = attempt.openScope();
    }

    /** Makes the attempt no longer current on this thread (it goes on until {@link #end}). */
    void leave() {
        scope.close();
    }

    /** A wait before the next attempt, as an event on the call. */
    void waitBefore(Duration delay, int nextAttempt) {
        call.event(Observation.Event.of(RetryObservation.WAIT, "wait " + delay + " before attempt " + nextAttempt));
    }

    /**
     * Ends the run.
     *
     * @param classified the verdict on the attempt's outcome ({@code accept}, {@code retry}, {@code stop}), or null when unknown
     * @param decision what followed the attempt: {@code retry}, or the run's end reason
     * @param reason the call's {@value RetryObservation#REASON}
     * @param attempts attempts made so far
     * @param errorType the failure's exception class, or null
     */
    void end(@Nullable String classified, String decision, String reason, int attempts, @Nullable String errorType) {
        if (classified != null) {
            attempt.lowCardinalityKeyValue(RetryObservation.CLASSIFIED, classified);
        }
        if (errorType != null) {
            attempt.lowCardinalityKeyValue(ERROR_TYPE, errorType);
        }
        attempt.lowCardinalityKeyValue(RetryObservation.DECISION, decision).stop();
        call.lowCardinalityKeyValue(RetryObservation.REASON, reason)
                .lowCardinalityKeyValue(RetryObservation.ATTEMPTS, Integer.toString(attempts))
                .lowCardinalityKeyValue(RetryObservation.FALLBACK, "none")
                .stop();
    }

    /** The success reason of a run that was attempt {@code number}. */
    static String succeeded(int number) {
        return number <= 1 ? "success" : "recovered";
    }

    static String lower(Enum<?> constant) {
        return constant.name().toLowerCase(Locale.ROOT);
    }
}
