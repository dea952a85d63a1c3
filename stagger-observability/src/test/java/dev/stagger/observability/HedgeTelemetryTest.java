package dev.stagger.observability;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.stagger.HedgePolicy;
import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** Hedges sent, won and cancelled are counted and logged. */
class HedgeTelemetryTest {
    private final VirtualClock clock = new VirtualClock();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final String loggerName = "test.stagger.hedges";
    private final Logger logger = (Logger) LoggerFactory.getLogger(loggerName);
    private final ListAppender<ILoggingEvent> captured = new ListAppender<>();

    @BeforeEach
    void captureTheLogger() {
        captured.start();
        logger.addAppender(captured);
        logger.setAdditive(false);
        logger.setLevel(Level.DEBUG);
    }

    @AfterEach
    void releaseTheLogger() {
        logger.detachAppender(captured);
        captured.stop();
    }

    @Test
    void aCallWonByAHedgeCountsTheHedgeTheWinAndTheCancelledFirstAttempt() {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(3).hedge(HedgePolicy.after(Duration.ofMillis(50))).build();
        Retry retry = RetryMetrics.of(registry).instrument(Retry.of("search", policy).withClock(clock).withoutBudget())
                .withListener(RetryLog.builder().loggerName(loggerName).build());
        List<CompletableFuture<String>> attempts = new ArrayList<>();

        CompletableFuture<String> result = start(retry, attempts);
        clock.advance(Duration.ofMillis(50));
        attempts.get(1).complete("fast");

        assertThat(result).isCompletedWithValue("fast");
        assertThat(registry.get(RetryMetrics.HEDGES_SENT).tag("name", "search").counter().count()).isEqualTo(1);
        assertThat(registry.get(RetryMetrics.HEDGES_WON).tag("name", "search").counter().count()).isEqualTo(1);
        assertThat(registry.get(RetryMetrics.HEDGES_CANCELLED).tag("name", "search").counter().count()).isEqualTo(1);
        assertThat(captured.list).extracting(e -> keyValue(e, "event"))
                .containsSubsequence(RetryLog.HEDGE, RetryLog.HEDGE_WON, RetryLog.ATTEMPT_CANCELLED);
        ILoggingEvent sent = captured.list.stream().filter(e -> RetryLog.HEDGE.equals(keyValue(e, "event")))
                .findFirst().orElseThrow();
        assertThat(keyValue(sent, "attempt")).isEqualTo(2);
        assertThat(keyValue(sent, "delay_ms")).isEqualTo(50L);
        assertThat(sent.getLevel()).isEqualTo(Level.DEBUG);
    }

    @Test
    void hedgesTheHedgingRefusedAreCountedAsTheBudgetCountsItsRefusals() {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(2).hedge(HedgePolicy.after(Duration.ofMillis(50))).build();
        Retry retry = RetryMetrics.of(registry).instrument(Retry.of("lookup", policy).withClock(clock).withoutBudget());
        int calls = 10; // every hedge loses: the credit stops them
        for (int i = 0; i < calls; i++) {
            List<CompletableFuture<String>> attempts = new ArrayList<>();
            CompletableFuture<String> result = start(retry, attempts);
            clock.advance(Duration.ofMillis(50));
            attempts.get(0).complete("first");
            assertThat(result).isCompletedWithValue("first");
        }

        double sent = registry.get(RetryMetrics.HEDGES_SENT).tag("name", "lookup").counter().count();
        double refused = registry.get(RetryMetrics.HEDGES_REFUSED).tag("name", "lookup").functionCounter().count();
        assertThat(refused).isPositive().isEqualTo((double) retry.hedgesRefused());
        assertThat(sent + refused).as("every delay that passed sent a hedge or counted a refusal").isEqualTo(calls);
    }

    @Test
    void aRetryThatNeverHedgesHasNoHedgeMeters() {
        Retry retry = RetryMetrics.of(registry).instrument(Retry.of("plain", RetryPolicy.builder().build()).withClock(clock));
        retry.get(() -> "ok");
        assertThat(registry.find(RetryMetrics.HEDGES_SENT).counter()).isNull();
        assertThat(registry.find(RetryMetrics.HEDGES_REFUSED).functionCounter()).isNull();
    }

    /** Starts an async call whose attempts are futures added to {@code attempts}, for the test to complete. */
    private static CompletableFuture<String> start(Retry retry, List<CompletableFuture<String>> attempts) {
        return retry.callAsync(() -> {
            CompletableFuture<String> f = new CompletableFuture<>();
            attempts.add(f);
            return f;
        });
    }

    private static Object keyValue(ILoggingEvent e, String key) {
        return e.getKeyValuePairs() == null ? null : e.getKeyValuePairs().stream()
                .filter(kv -> kv.key.equals(key)).map(kv -> kv.value).findFirst().orElse(null);
    }
}
