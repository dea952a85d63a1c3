package dev.stagger.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.stagger.Backoff;
import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** A failure an enclosing retry leaves to the inner one is counted and logged once, naming both. */
class DeferredTelemetryTest {
    private final VirtualClock clock = new VirtualClock();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final RetryMetrics metrics = RetryMetrics.of(registry);
    private final String loggerName = "test.stagger.deferred";
    private final Logger logger = (Logger) LoggerFactory.getLogger(loggerName);
    private final ListAppender<ILoggingEvent> captured = new ListAppender<>();

    @BeforeEach
    void captureTheLogger() {
        captured.start();
        logger.addAppender(captured);
        logger.setAdditive(false);
        logger.setLevel(Level.INFO);
    }

    @AfterEach
    void releaseTheLogger() {
        logger.detachAppender(captured);
        captured.stop();
    }

    private Retry retry(String name, int attempts) {
        return Retry.of(name, RetryPolicy.builder().maxAttempts(attempts).backoff(Backoff.fixed(Duration.ofMillis(10)))
                .build()).withClock(clock);
    }

    @Test
    void theEnclosingRetryCountsAndLogsTheDeferralOnce() {
        Retry outer = metrics.instrument(retry("orders", 5))
                .withListener(RetryLog.builder().loggerName(loggerName).build());
        Retry inner = metrics.instrument(retry("inventory", 3));

        try {
            outer.call(() -> inner.call(() -> {
                throw new IOException("reset");
            }));
        } catch (Exception expected) {
            // the telemetry is under test
        }

        assertThat(registry.get(RetryMetrics.DEFERRED).tag("name", "orders").tag("inner", "inventory").counter()
                .count()).isEqualTo(1.0);
        assertThat(registry.get(RetryMetrics.CALLS).tag("name", "orders").tag("reason", "not_retryable").counter()
                .count()).isEqualTo(1.0);
        assertThat(captured.list).filteredOn(e -> "deferred".equals(e.getKeyValuePairs().get(0).value))
                .singleElement().satisfies(line -> {
                    assertThat(line.getKeyValuePairs()).extracting(kv -> kv.key, kv -> kv.value).containsExactly(
                            tuple("event", "deferred"),
                            tuple("service", "orders"),
                            tuple("inner", "inventory"),
                            tuple("inner_attempts", 3),
                            tuple("inner_reason", "exhausted"),
                            tuple("attempt", 1),
                            tuple("error", "IOException"));
                    assertThat(line.getFormattedMessage())
                            .isEqualTo("orders: not retried, retry 'inventory' decided on it after 3 attempts (exhausted)");
                });
    }
}
