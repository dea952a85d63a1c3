package dev.stagger.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.tuple;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.stagger.Backoff;
import dev.stagger.CircuitBreaker;
import dev.stagger.Fallback;
import dev.stagger.FallbackCache;
import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** {@code stagger.fallbacks} in {@link RetryMetrics} and the fallback line of {@link RetryLog}. */
class FallbackTelemetryTest {
    private static final AtomicInteger LOGGERS = new AtomicInteger();

    private final VirtualClock clock = new VirtualClock();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final String loggerName = "test.stagger.fallback." + LOGGERS.incrementAndGet();
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

    private Retry prices() {
        return Retry.of("prices", RetryPolicy.builder().maxAttempts(2).backoff(Backoff.fixed(Duration.ofSeconds(1)))
                .build()).withClock(clock)
                .withListener(RetryMetrics.of(registry).listener("prices"))
                .withListener(RetryLog.builder().loggerName(loggerName).build());
    }

    private static String down() throws IOException {
        throw new IOException("down");
    }

    private double fallbacks(String kind, String reason) {
        return registry.get(RetryMetrics.FALLBACKS).tag("name", "prices").tag("kind", kind).tag("reason", reason)
                .counter().count();
    }

    @Test
    void countsACallAnsweredByAFallbackUnderItsKindAndEndReason() throws Exception {
        FallbackCache<String, String> cache = FallbackCache.<String, String>builder("prices").clock(clock).build();
        cache.put("ACME", "41.50");

        cache.call(prices(), "ACME", FallbackTelemetryTest::down);
        cache.call(prices(), "ACME", FallbackTelemetryTest::down);

        assertThat(fallbacks("cache", "exhausted")).isEqualTo(2);
    }

    @Test
    void countsTheReasonACircuitOpenCallWasAnswered() throws Exception {
        CircuitBreaker breaker = CircuitBreaker.builder("prices").consecutiveFailures(1).clock(clock).build();
        Retry retry = prices().withCircuitBreaker(breaker).withFallback(Fallback.of(c -> "default"));
        retry.call(FallbackTelemetryTest::down); // its failure opens the breaker, which refuses the retry

        retry.call(FallbackTelemetryTest::down); // refused before its first attempt

        assertThat(fallbacks("custom", "circuit_open")).isEqualTo(2);
        assertThat(registry.find(RetryMetrics.FALLBACKS).tag("reason", "exhausted").counters()).isEmpty();
    }

    @Test
    void doesNotCountAFallbackThatDeclined() {
        Retry retry = prices().withFallback(Fallback.ofOptional(c -> Optional.empty()));

        catchThrowable(() -> retry.call(FallbackTelemetryTest::down));

        assertThat(registry.find(RetryMetrics.FALLBACKS).counters()).isEmpty();
    }

    @Test
    void logsAFallbackLineInsteadOfAGiveUpLine() throws Exception {
        prices().withFallback(Fallback.of(c -> "default").withKind("defaults")).call(FallbackTelemetryTest::down);

        assertThat(captured.list).hasSize(2); // the retry, then the fallback
        ILoggingEvent line = captured.list.get(1);
        assertThat(line.getLevel()).isEqualTo(Level.INFO);
        assertThat(line.getKeyValuePairs()).extracting(kv -> kv.key, kv -> kv.value).containsExactly(
                tuple("event", "fallback"), tuple("service", "prices"), tuple("reason", "exhausted"),
                tuple("kind", "defaults"), tuple("outcome", "served"), tuple("attempts", 2),
                tuple("max_attempts", 2), tuple("elapsed_ms", 1000L));
    }

    @Test
    void logsAFallbackThatThrewAtWarnWithItsError() {
        Retry retry = prices().withFallback(Fallback.of(c -> {
            throw new IllegalStateException("no defaults");
        }));

        catchThrowable(() -> retry.call(FallbackTelemetryTest::down));

        ILoggingEvent line = captured.list.get(captured.list.size() - 1);
        assertThat(line.getLevel()).isEqualTo(Level.WARN);
        assertThat(line.getKeyValuePairs()).extracting(kv -> kv.key, kv -> kv.value)
                .contains(tuple("outcome", "failed"), tuple("error", "IllegalStateException"));
    }

    @Test
    void aDeclinedFallbackIsFollowedByTheGiveUpLine() {
        Retry retry = prices().withFallback(Fallback.ofOptional(c -> Optional.empty()));

        catchThrowable(() -> retry.call(FallbackTelemetryTest::down));

        assertThat(captured.list).extracting(e -> e.getKeyValuePairs().get(0).value)
                .containsExactly("retry", "fallback", "give_up");
    }
}
