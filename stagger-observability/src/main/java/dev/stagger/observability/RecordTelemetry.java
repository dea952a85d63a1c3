package dev.stagger.observability;

import dev.stagger.kafka.RecordEvent;
import dev.stagger.kafka.RecordListener;
import dev.stagger.kafka.RecordOutcome;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;

/**
 * Meters and log lines for Kafka consumers, built from a {@code KafkaRetryConsumer}'s
 * {@link RecordEvent}s: the same meters ({@link MessageTelemetry#MESSAGES},
 * {@link MessageTelemetry#RETRY_DELAY}, {@link MessageTelemetry#DEAD_LETTERS},
 * {@link MessageTelemetry#HANDLER_DURATION}) and log lines ({@code message_retry},
 * {@code message_dead}) as {@link MessageTelemetry} writes for RabbitMQ, so dashboards and alerts
 * serve both brokers. The {@code operation} of a line is the work topic and its {@code request_id}
 * the record's origin ({@code <topic>/<partition>/<offset>} where it was consumed). A record put
 * back in a delay topic before its due time ({@link RecordOutcome#DELAYED_AGAIN}) is no attempt and
 * is not counted.
 *
 * <pre>{@code
 * KafkaRetryConsumer consumer = KafkaRetryConsumer.builder("orders", config, handler)
 *         .recordListener(RecordTelemetry.of(registry).withLog(RetryLog.builder().build()))
 *         .build();
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class RecordTelemetry implements RecordListener {
    private final ConsumerTelemetry telemetry;

    private RecordTelemetry(ConsumerTelemetry telemetry) {
        this.telemetry = telemetry;
    }

    /** Meters in {@code registry}, no log lines. */
    public static RecordTelemetry of(MeterRegistry registry) {
        return new RecordTelemetry(ConsumerTelemetry.of(Objects.requireNonNull(registry, "registry must not be null")));
    }

    /** Log lines through {@code log}, no meters. */
    public static RecordTelemetry of(RetryLog log) {
        return new RecordTelemetry(ConsumerTelemetry.of(Objects.requireNonNull(log, "log must not be null")));
    }

    /** This telemetry writing its lines through {@code log} as well. */
    public RecordTelemetry withLog(RetryLog log) {
        return new RecordTelemetry(telemetry.withLog(Objects.requireNonNull(log, "log must not be null")));
    }

    @Override
    public void onRecord(RecordEvent e) {
        if (e.outcome() == RecordOutcome.DELAYED_AGAIN) {
            return;
        }
        telemetry.on(e.consumer(), e.topic(), e.id(), e.attempt(), e.maxAttempts(),
                ConsumerTelemetry.Outcome.valueOf(e.outcome().name()), e.handlerTime(), e.elapsed(), e.delay(),
                e.endReason(), e.failure());
    }
}
