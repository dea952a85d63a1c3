package dev.stagger.observability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.EndReason;
import dev.stagger.RetryListener;
import dev.stagger.kafka.KafkaMessage;
import dev.stagger.kafka.RecordEvent;
import dev.stagger.kafka.RecordOutcome;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link RecordObservation} driven as a {@code KafkaRetryConsumer} drives its listeners (the hook
 * around the handler, the outcome told once the copy is acknowledged; the hook itself is tested on
 * a broker in stagger-kafka), with a real tracer.
 */
class RecordObservationTest {
    private final InMemoryTracing tracing = new InMemoryTracing();
    private final ObservationRegistry registry = tracing.registry;
    private final RecordObservation observation = RecordObservation.of(registry);

    @AfterEach
    void close() {
        tracing.close();
    }

    private static KafkaMessage record(String id, int attempt) {
        return new KafkaMessage("orders", 0, attempt, null, new byte[0], new RecordHeaders(), id, attempt, Instant.EPOCH,
                List.of());
    }

    private static RecordEvent told(String id, int attempt, RecordOutcome outcome, Duration delay, EndReason reason) {
        return new RecordEvent("billing", "orders", attempt == 1 ? "orders" : "orders.stagger.retry-1000", 0, attempt, id,
                attempt, 3, outcome, Duration.ofMillis(3), Duration.ofSeconds(1), delay, reason,
                outcome == RecordOutcome.SUCCEEDED ? null : new IOException("down"));
    }

    private String handle(KafkaMessage message) {
        RetryListener.Scope scope = observation.onHandling(message);
        try {
            Observation current = registry.getCurrentObservation();
            return current == null ? "none" : current.getContext().getContextualName();
        } finally {
            scope.close();
        }
    }

    @Test
    void aRecordRetriedOnceIsTwoRunsWithTheirDecisionsAndTheWait() {
        assertThat(handle(record("orders/0/7", 1))).isEqualTo("orders attempt 1");
        assertThat(registry.getCurrentObservation()).as("closed as the handler returned").isNull();
        observation.onRecord(told("orders/0/7", 1, RecordOutcome.RETRIED, Duration.ofMillis(300), null));
        assertThat(handle(record("orders/0/7", 2))).isEqualTo("orders attempt 2");
        observation.onRecord(told("orders/0/7", 2, RecordOutcome.SUCCEEDED, Duration.ZERO, null));

        List<SpanData> calls = named("record orders");
        List<SpanData> attempts = named("orders attempt");
        assertThat(calls).hasSize(2);
        assertThat(attempts).hasSize(2);
        for (int i = 0; i < 2; i++) {
            assertThat(attempts.get(i).getParentSpanId()).isEqualTo(calls.get(i).getSpanId());
            assertThat(InMemoryTracing.attr(calls.get(i), RecordObservation.RECORD_ID)).isEqualTo("orders/0/7");
        }
        assertThat(attempts).extracting(s -> InMemoryTracing.attr(s, RetryObservation.DECISION))
                .containsExactly("retry", "recovered");
        assertThat(calls).extracting(s -> InMemoryTracing.attr(s, RetryObservation.REASON))
                .containsExactly("rescheduled", "recovered");
        assertThat(calls.get(0).getEvents()).extracting(EventData::getName).containsExactly("wait PT0.3S before attempt 2");
    }

    @Test
    void aDeadLetteredRecordCarriesItsEndReasonAndARecordPutBackUnrunEndsNothing() {
        handle(record("orders/0/9", 1));
        observation.onRecord(told("orders/0/9", 1, RecordOutcome.DELAYED_AGAIN, Duration.ZERO, null));
        assertThat(named("record orders")).as("a delayed-again record ran no handler: the run still waits").isEmpty();
        observation.onRecord(told("orders/0/9", 1, RecordOutcome.DEAD_LETTERED, Duration.ZERO, EndReason.NOT_RETRYABLE));
        assertThat(named("orders attempt")).singleElement()
                .satisfies(s -> assertThat(InMemoryTracing.attr(s, RetryObservation.DECISION)).isEqualTo("not_retryable"));
    }

    @Test
    void aNoopRegistryOpensNothing() {
        assertThat(RecordObservation.of(ObservationRegistry.NOOP).onHandling(record("orders/0/1", 1))).isNull();
    }

    private List<SpanData> named(String prefix) {
        return tracing.named(prefix);
    }
}
