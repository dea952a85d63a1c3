package dev.stagger.observability;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import dev.stagger.EndReason;
import dev.stagger.RetryListener;
import dev.stagger.rabbitmq.Message;
import dev.stagger.rabbitmq.MessageEvent;
import dev.stagger.rabbitmq.MessageOutcome;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link MessageObservation} driven as a {@code RabbitConsumer} drives its listeners (the hook
 * around the handler on one thread, the outcome told later; the hook itself is tested against a
 * broker in stagger-rabbitmq), with a real tracer.
 */
class MessageObservationTest {
    private final InMemoryTracing tracing = new InMemoryTracing();
    private final ObservationRegistry registry = tracing.registry;
    private final MessageObservation observation = MessageObservation.of(registry);

    @AfterEach
    void close() {
        tracing.close();
    }

    private static String attr(SpanData span, String key) {
        return InMemoryTracing.attr(span, key);
    }

    private List<SpanData> named(String prefix) {
        return tracing.named(prefix);
    }

    private static Message message(String id, int attempt) {
        return new Message("orders", new byte[0], new AMQP.BasicProperties.Builder().messageId(id).build(), false, attempt,
                Instant.EPOCH, List.of());
    }

    private static MessageEvent told(String id, int attempt, MessageOutcome outcome, Duration delay, EndReason reason) {
        return new MessageEvent("billing", "orders", id, attempt, 3, outcome, Duration.ofMillis(3), Duration.ofSeconds(1),
                delay, reason, outcome == MessageOutcome.SUCCEEDED ? null : new IOException("down"));
    }

    /** Runs the hook around a "handler" that reports the current observation, as the consumer would. */
    private String handle(Message message) {
        RetryListener.Scope scope = observation.onHandling(message);
        try {
            Observation current = registry.getCurrentObservation();
            return current == null ? "none" : current.getContext().getContextualName();
        } finally {
            scope.close();
        }
    }

    @Test
    void aMessageRetriedTwiceIsThreeRunsWithTheirAttemptsDecisionsAndWaits() {
        assertThat(handle(message("m-1", 1))).isEqualTo("orders attempt 1");
        assertThat(registry.getCurrentObservation()).as("closed as the handler returned").isNull();
        observation.onMessage(told("m-1", 1, MessageOutcome.RETRIED, Duration.ofMillis(300), null));
        assertThat(handle(message("m-1", 2))).isEqualTo("orders attempt 2");
        observation.onMessage(told("m-1", 2, MessageOutcome.RETRIED, Duration.ofMillis(600), null));
        assertThat(handle(message("m-1", 3))).isEqualTo("orders attempt 3");
        observation.onMessage(told("m-1", 3, MessageOutcome.DEAD_LETTERED, Duration.ZERO, EndReason.EXHAUSTED));

        List<SpanData> calls = named("message orders");
        List<SpanData> attempts = named("orders attempt");
        assertThat(calls).hasSize(3);
        assertThat(attempts).hasSize(3);
        for (int i = 0; i < 3; i++) {
            assertThat(attempts.get(i).getParentSpanId()).isEqualTo(calls.get(i).getSpanId());
            assertThat(attr(attempts.get(i), RetryObservation.PREVIOUS_ATTEMPTS)).isEqualTo(Integer.toString(i));
            assertThat(attr(calls.get(i), MessageObservation.MESSAGE_ID)).isEqualTo("m-1");
            assertThat(attr(attempts.get(i), DurableRun.ERROR_TYPE)).isEqualTo(IOException.class.getName());
        }
        assertThat(attempts).extracting(s -> attr(s, RetryObservation.DECISION)).containsExactly("retry", "retry", "exhausted");
        assertThat(calls).extracting(s -> attr(s, RetryObservation.REASON)).containsExactly("rescheduled", "rescheduled", "exhausted");
        assertThat(calls.get(1).getEvents()).extracting(EventData::getName).containsExactly("wait PT0.6S before attempt 3");
    }

    @Test
    void aMessageWithoutAnIdEndsItsRunAsTheHandlerReturnsAndAnUnknownOutcomeIsIgnored() {
        assertThat(handle(message(null, 1))).isEqualTo("orders attempt 1");
        observation.onMessage(told(null, 1, MessageOutcome.SUCCEEDED, Duration.ZERO, null));
        observation.onMessage(told("never-run", 1, MessageOutcome.SUCCEEDED, Duration.ZERO, null));
        List<SpanData> attempts = named("orders attempt");
        assertThat(attempts).hasSize(1);
        assertThat(attr(attempts.get(0), RetryObservation.DECISION)).isEqualTo("unknown");
        assertThat(named("message orders")).hasSize(1);
    }

    @Test
    void aNoopRegistryOpensNothing() {
        assertThat(MessageObservation.of(ObservationRegistry.NOOP).onHandling(message("m-2", 1))).isNull();
    }
}
