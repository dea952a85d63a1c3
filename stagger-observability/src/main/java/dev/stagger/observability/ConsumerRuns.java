package dev.stagger.observability;

import dev.stagger.EndReason;
import dev.stagger.RetryListener;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The runs of a queue consumer's handler whose outcome is not yet told, for
 * {@link MessageObservation} (RabbitMQ) and {@link RecordObservation} (Kafka): one home for how a
 * delivery's run becomes a call observation with one attempt child, and how what became of the
 * message ends both. An outcome is told once it is safe on the broker, often on another thread,
 * so it is matched to its run by where it was consumed, the message's id and the attempt.
 */
final class ConsumerRuns {
    /** What became of the message after a run, as both consumers tell it. */
    enum Settled { SUCCEEDED, RETRIED, DEAD_LETTERED, RETURNED }

    private record Key(String source, String id, int attempt) {
    }

    private final ObservationRegistry registry;
    private final String kind;
    private final String idKey;
    private final Map<Key, DurableRun> runs = new ConcurrentHashMap<>();

    /**
     * @param kind what runs ({@code message}, {@code record}), for the contextual names
     * @param idKey the high-cardinality key that names the message on the call
     */
    ConsumerRuns(ObservationRegistry registry, String kind, String idKey) {
        this.registry = registry;
        this.kind = kind;
        this.idKey = idKey;
    }

    /**
     * Starts a run of the handler, its attempt current on this thread until the returned scope
     * closes; null when the registry is a no-op. A message without an id has its observations
     * ended as the handler returns, without the decision.
     */
    RetryListener.@Nullable Scope handling(String source, @Nullable String id, int attempt) {
        if (registry.isNoop()) {
            return null;
        }
        DurableRun run = new DurableRun(registry, kind, source, attempt, idKey, id);
        if (id == null) {
            return () -> {
                run.leave();
                run.end(null, "unknown", "unknown", attempt, null);
            };
        }
        DurableRun earlier = runs.put(new Key(source, id, attempt), run);
        if (earlier != null) {
            earlier.end(null, "returned", "returned", attempt - 1, null); // delivered again before its outcome was told
        }
        return run::leave;
    }

    /**
     * Ends the run of {@code attempt} of message {@code id} with what became of it; nothing when it
     * was not run here (returned unopened) or not observed.
     *
     * @param delay the wait before the next attempt (RETRIED)
     * @param reason why a DEAD_LETTERED message ended, or null
     */
    void settled(String source, @Nullable String id, int attempt, Settled outcome, Duration delay,
                 @Nullable EndReason reason, @Nullable Throwable failure) {
        if (id == null) {
            return;
        }
        DurableRun run = runs.remove(new Key(source, id, attempt));
        if (run == null) {
            return;
        }
        String errorType = failure == null ? null : failure.getClass().getName();
        switch (outcome) {
            case SUCCEEDED -> {
                String why = DurableRun.succeeded(attempt);
                run.end("accept", why, why, attempt, null);
            }
            case RETRIED -> {
                run.waitBefore(delay, attempt + 1);
                run.end("retry", "retry", DurableRun.RESCHEDULED, attempt, errorType);
            }
            case DEAD_LETTERED -> {
                EndReason r = reason == null ? EndReason.NOT_RETRYABLE : reason;
                String why = DurableRun.lower(r);
                run.end(r == EndReason.EXHAUSTED || r == EndReason.DEADLINE ? "retry" : "stop", why, why, attempt, errorType);
            }
            case RETURNED -> run.end(null, "returned", "returned", attempt - 1, errorType);
        }
    }
}
