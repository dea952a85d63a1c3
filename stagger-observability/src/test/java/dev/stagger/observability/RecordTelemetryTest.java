package dev.stagger.observability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.EndReason;
import dev.stagger.kafka.RecordEvent;
import dev.stagger.kafka.RecordOutcome;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RecordTelemetryTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final RecordTelemetry telemetry = RecordTelemetry.of(registry);

    private static RecordEvent event(RecordOutcome outcome, int attempt, Duration delay, EndReason reason) {
        return new RecordEvent("billing", "orders", "orders.stagger.retry-200", 0, 7, "orders/0/3", attempt, 3, outcome,
                Duration.ofMillis(4), Duration.ofSeconds(2), delay, reason,
                outcome == RecordOutcome.SUCCEEDED ? null : new IOException("down"));
    }

    @Test
    void countsRecordsAsTheRabbitMqConsumersMessagesAreCounted() {
        telemetry.onRecord(event(RecordOutcome.SUCCEEDED, 1, Duration.ZERO, null));
        telemetry.onRecord(event(RecordOutcome.RETRIED, 1, Duration.ofMillis(300), null));
        telemetry.onRecord(event(RecordOutcome.DELAYED_AGAIN, 2, Duration.ZERO, null));
        telemetry.onRecord(event(RecordOutcome.DEAD_LETTERED, 2, Duration.ZERO, EndReason.EXHAUSTED));
        assertThat(registry.get(MessageTelemetry.MESSAGES).tags("name", "billing", "outcome", "succeeded").counter().count())
                .isEqualTo(1);
        assertThat(registry.get(MessageTelemetry.MESSAGES).tags("outcome", "retried").counter().count()).isEqualTo(1);
        assertThat(registry.get(MessageTelemetry.MESSAGES).tags("outcome", "dead_lettered").counter().count()).isEqualTo(1);
        assertThat(registry.get(MessageTelemetry.RETRY_DELAY).timer().totalTime(java.util.concurrent.TimeUnit.MILLISECONDS))
                .isEqualTo(300);
        assertThat(registry.get(MessageTelemetry.DEAD_LETTERS).tags("reason", "exhausted").counter().count()).isEqualTo(1);
        assertThat(registry.get(MessageTelemetry.HANDLER_DURATION).timer().count())
                .as("a record delayed again is no attempt").isEqualTo(3);
    }
}
