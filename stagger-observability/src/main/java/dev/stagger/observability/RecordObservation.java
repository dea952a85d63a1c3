package dev.stagger.observability;

import dev.stagger.RetryListener;
import dev.stagger.kafka.KafkaMessage;
import dev.stagger.kafka.RecordEvent;
import dev.stagger.kafka.RecordListener;
import io.micrometer.observation.ObservationRegistry;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Micrometer {@link io.micrometer.observation.Observation}s for a {@code KafkaRetryConsumer}'s
 * records, as {@link MessageObservation} makes them for RabbitMQ: each run of the handler is a call
 * observation ({@value RetryObservation#CALL}, contextual name {@code record <topic>}) with one
 * attempt child ({@value RetryObservation#ATTEMPT}) carrying {@link RetryObservation}'s keys:
 * {@value RetryObservation#NAME} is the work topic; the attempt its number in the record's life,
 * the attempts before it, the verdict, {@value RetryObservation#DECISION} ({@code retry},
 * {@code success}, {@code recovered}, the end reason of a dead-lettered record, {@code returned})
 * and {@code error.type}; the call {@value RetryObservation#REASON} ({@code rescheduled} when a
 * copy waits in a delay topic), the wait before the next attempt as an event, and the record's id
 * ({@link KafkaMessage#id()}: where it was first consumed) as the high-cardinality key
 * {@value #RECORD_ID}. While the handler runs its attempt is the current observation on the
 * handler's thread, so the spans the handler starts are its children. A record consumed before
 * its due time and put back ({@code DELAYED_AGAIN}) ran no handler and makes no observation.
 *
 * <pre>{@code
 * KafkaRetryConsumer consumer = KafkaRetryConsumer.builder("orders", config, handler)
 *         .recordListener(RecordObservation.of(observationRegistry))
 *         .build();
 * }</pre>
 */
public final class RecordObservation implements RecordListener {
    /** High-cardinality key on the call: the record's id, where it was first consumed. */
    public static final String RECORD_ID = "stagger.record.id";

    private final ObservationRegistry registry;
    private final ConsumerRuns runs;

    private RecordObservation(ObservationRegistry registry) {
        this.registry = registry;
        this.runs = new ConsumerRuns(registry, "record", RECORD_ID);
    }

    /** Observes records into {@code registry}. */
    public static RecordObservation of(ObservationRegistry registry) {
        return new RecordObservation(Objects.requireNonNull(registry, "registry"));
    }

    @Override
    public RetryListener.@Nullable Scope onHandling(KafkaMessage message) {
        return runs.handling(message.topic(), message.id(), message.attempt());
    }

    @Override
    public void onRecord(RecordEvent event) {
        ConsumerRuns.Settled outcome = switch (event.outcome()) {
            case SUCCEEDED -> ConsumerRuns.Settled.SUCCEEDED;
            case RETRIED -> ConsumerRuns.Settled.RETRIED;
            case DEAD_LETTERED -> ConsumerRuns.Settled.DEAD_LETTERED;
            case RETURNED -> ConsumerRuns.Settled.RETURNED;
            case DELAYED_AGAIN -> null; // no handler ran
        };
        if (outcome != null) {
            runs.settled(event.topic(), event.id(), event.attempt(), outcome, event.delay(), event.endReason(),
                    event.failure());
        }
    }

    @Override
    public String toString() {
        return "RecordObservation{" + registry + "}";
    }
}
