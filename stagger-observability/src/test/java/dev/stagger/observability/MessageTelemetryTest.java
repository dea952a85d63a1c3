package dev.stagger.observability;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.stagger.EndReason;
import dev.stagger.rabbitmq.MessageEvent;
import dev.stagger.rabbitmq.MessageOutcome;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class MessageTelemetryTest {
    private final Logger logger = (Logger) LoggerFactory.getLogger("test.stagger.messages");
    private final ListAppender<ILoggingEvent> captured = new ListAppender<>();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final MessageTelemetry telemetry = MessageTelemetry.of(registry)
            .withLog(RetryLog.builder().loggerName("test.stagger.messages").build());

    @BeforeEach
    void attach() {
        captured.start();
        logger.addAppender(captured);
        logger.setAdditive(false);
        logger.setLevel(Level.INFO);
    }

    @AfterEach
    void detach() {
        logger.detachAppender(captured);
    }

    private static MessageEvent event(MessageOutcome outcome, int attempt, Duration delay, EndReason reason) {
        return new MessageEvent("billing", "orders", "m-1", attempt, 3, outcome, Duration.ofMillis(4),
                Duration.ofSeconds(2), delay, reason, outcome == MessageOutcome.SUCCEEDED ? null : new IOException("down"));
    }

    @Test
    void countsMessagesByOutcomeDelaysAndDeadLettersByReason() {
        telemetry.onMessage(event(MessageOutcome.SUCCEEDED, 1, Duration.ZERO, null));
        telemetry.onMessage(event(MessageOutcome.RETRIED, 1, Duration.ofMillis(300), null));
        telemetry.onMessage(event(MessageOutcome.RETRIED, 2, Duration.ofMillis(500), null));
        telemetry.onMessage(event(MessageOutcome.DEAD_LETTERED, 3, Duration.ZERO, EndReason.EXHAUSTED));
        assertThat(registry.get(MessageTelemetry.MESSAGES).tags("name", "billing", "outcome", "succeeded").counter().count()).isEqualTo(1);
        assertThat(registry.get(MessageTelemetry.MESSAGES).tags("outcome", "retried").counter().count()).isEqualTo(2);
        assertThat(registry.get(MessageTelemetry.MESSAGES).tags("outcome", "dead_lettered").counter().count()).isEqualTo(1);
        assertThat(registry.get(MessageTelemetry.MESSAGES).tags("outcome", "returned").counter().count()).isZero();
        assertThat(registry.get(MessageTelemetry.RETRY_DELAY).timer().count()).isEqualTo(2);
        assertThat(registry.get(MessageTelemetry.RETRY_DELAY).timer().totalTime(java.util.concurrent.TimeUnit.MILLISECONDS)).isEqualTo(800);
        assertThat(registry.get(MessageTelemetry.DEAD_LETTERS).tags("reason", "exhausted").counter().count()).isEqualTo(1);
        assertThat(registry.get(MessageTelemetry.HANDLER_DURATION).timer().count()).isEqualTo(4);
    }

    @Test
    void writesARetryLineAndADeadLetterLineWithTheRetryLogKeys() {
        telemetry.onMessage(event(MessageOutcome.RETRIED, 1, Duration.ofMillis(300), null));
        telemetry.onMessage(event(MessageOutcome.DEAD_LETTERED, 3, Duration.ZERO, EndReason.EXHAUSTED));
        telemetry.onMessage(event(MessageOutcome.SUCCEEDED, 1, Duration.ZERO, null));
        assertThat(captured.list).hasSize(2);
        assertThat(keyValues(captured.list.get(0))).containsExactly(Map.entry("event", "message_retry"),
                Map.entry("service", "billing"), Map.entry("operation", "orders"), Map.entry("attempt", 1),
                Map.entry("max_attempts", 3), Map.entry("delay_ms", 300L), Map.entry("request_id", "m-1"),
                Map.entry("reason", "IOException"));
        assertThat(captured.list.get(1).getLevel()).isEqualTo(Level.WARN);
        assertThat(keyValues(captured.list.get(1))).containsEntry("event", "message_dead")
                .containsEntry("reason", "exhausted").containsEntry("attempts", 3).containsEntry("elapsed_ms", 2000L)
                .containsEntry("request_id", "m-1").containsEntry("error", "IOException");
    }

    private static Map<String, Object> keyValues(ILoggingEvent e) {
        Map<String, Object> kv = new java.util.LinkedHashMap<>();
        e.getKeyValuePairs().forEach(p -> kv.put(p.key, p.value));
        return kv;
    }
}
