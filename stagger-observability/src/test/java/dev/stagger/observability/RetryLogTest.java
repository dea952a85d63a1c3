package dev.stagger.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.stagger.Backoff;
import dev.stagger.CircuitBreaker;
import dev.stagger.Retry;
import dev.stagger.RetryBudget;
import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.slf4j.event.KeyValuePair;

class RetryLogTest {
    /** An HTTP-like result: what the status and request id functions read. */
    record Response(int status, String requestId) {
    }

    private static final Duration ATTEMPT = Duration.ofMillis(10);
    private static final Response UNAVAILABLE = new Response(503, "req-7f3a9c");
    private static final Response OK = new Response(200, "req-7f3a9c");
    private static final AtomicInteger LOGGERS = new AtomicInteger();

    private final VirtualClock clock = new VirtualClock();
    private final String loggerName = "test.stagger.retry." + LOGGERS.incrementAndGet();
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

    private RetryLog.Builder paymentsLog() {
        return RetryLog.builder().loggerName(loggerName).service("payments").operation("charge")
                .status((result, failure) -> result instanceof Response r ? r.status() : null)
                .requestId((result, failure) -> result instanceof Response r ? r.requestId() : null);
    }

    private Retry retry(int maxAttempts, RetryLog log) {
        return Retry.of("payments-api", RetryPolicy.builder().maxAttempts(maxAttempts)
                        .backoff(Backoff.exponential(Duration.ofMillis(200)))
                        .retryOnResult(Response.class, r -> r.status() >= 500)
                        .abortOn(IllegalArgumentException.class)
                        .build())
                .withClock(clock).withListener(log);
    }

    private static void call(Retry retry, Callable<Object> operation) {
        try {
            retry.call(operation);
        } catch (Exception failureIsPartOfTheScript) {
            // the log lines, not the exception, are under test
        }
    }

    private static List<String> keys(ILoggingEvent event) {
        return event.getKeyValuePairs() == null ? List.of()
                : event.getKeyValuePairs().stream().map(kv -> kv.key).toList();
    }

    private static Object value(ILoggingEvent event, String key) {
        return event.getKeyValuePairs().stream().filter(kv -> kv.key.equals(key)).map(kv -> kv.value)
                .findFirst().orElseThrow(() -> new AssertionError("no key " + key + " in " + keys(event)));
    }

    @Test
    void aRetryLineCarriesEveryKeyOfTheSeedExampleInOrder() {
        call(retry(5, paymentsLog().build()), ScriptedOperation.on(clock)
                .returns(ATTEMPT, UNAVAILABLE).returns(ATTEMPT, UNAVAILABLE).returns(ATTEMPT, OK));

        ILoggingEvent second = captured.list.get(1);
        assertThat(second.getLevel()).isEqualTo(Level.INFO);
        assertThat(second.getKeyValuePairs()).extracting(kv -> kv.key, kv -> kv.value).containsExactly(
                tuple("event", "retry"),
                tuple("service", "payments"),
                tuple("operation", "charge"),
                tuple("attempt", 2),
                tuple("max_attempts", 5),
                tuple("status", 503),
                tuple("delay_ms", 400L),
                tuple("request_id", "req-7f3a9c"),
                tuple("reason", "result"));
        assertThat(second.getFormattedMessage())
                .isEqualTo("payments charge: attempt 2/5 failed (status 503), retrying in 400 ms");
    }

    @Test
    void writesOneLinePerRetryAndNothingWhenTheCallRecovers() {
        call(retry(5, paymentsLog().build()), ScriptedOperation.on(clock)
                .returns(ATTEMPT, UNAVAILABLE).returns(ATTEMPT, UNAVAILABLE).returns(ATTEMPT, OK));

        assertThat(captured.list).extracting(ILoggingEvent::getLevel).containsExactly(Level.INFO, Level.INFO);
        assertThat(captured.list).extracting(e -> value(e, "attempt"), e -> value(e, "delay_ms"))
                .containsExactly(tuple(1, 200L), tuple(2, 400L));
    }

    @Test
    void givingUpIsOneWarnLineWithTheReasonAndTheAttempts() {
        call(retry(3, paymentsLog().build()), ScriptedOperation.on(clock).returns(ATTEMPT, UNAVAILABLE));

        ILoggingEvent last = captured.list.get(captured.list.size() - 1);
        assertThat(captured.list).hasSize(3);
        assertThat(last.getLevel()).isEqualTo(Level.WARN);
        assertThat(last.getKeyValuePairs()).extracting(kv -> kv.key, kv -> kv.value).containsExactly(
                tuple("event", "give_up"),
                tuple("service", "payments"),
                tuple("operation", "charge"),
                tuple("reason", "exhausted"),
                tuple("attempts", 3),
                tuple("max_attempts", 3),
                tuple("elapsed_ms", 630L), // three 10 ms attempts, 200 + 400 ms of waiting
                tuple("status", 503),
                tuple("request_id", "req-7f3a9c"));
        assertThat(last.getFormattedMessage())
                .isEqualTo("payments charge: giving up after 3/3 attempts in 630 ms (exhausted, last status 503)");
    }

    @Test
    void anExceptionIsNamedByItsClassNeverByItsMessage() {
        call(retry(2, paymentsLog().build()), ScriptedOperation.on(clock)
                .fails(ATTEMPT, new IOException("card 4111-1111 declined")));

        assertThat(value(captured.list.get(0), "reason")).isEqualTo("IOException");
        assertThat(value(captured.list.get(1), "error")).isEqualTo("IOException");
        assertThat(captured.list).flatExtracting(ILoggingEvent::getKeyValuePairs)
                .extracting(kv -> String.valueOf(kv.value)).noneMatch(v -> v.contains("4111"));
    }

    @Test
    void aBudgetRefusalGivesUpNamingTheFailureBehindIt() {
        RetryBudget spent = RetryBudget.builder("payments").maxTokens(1).minRetriesPerSecond(0).clock(clock).build();
        spent.tryAcquireRetry();

        call(retry(3, paymentsLog().build()).withBudget(spent), ScriptedOperation.on(clock).fails(ATTEMPT));

        ILoggingEvent giveUp = captured.list.get(0);
        assertThat(captured.list).hasSize(1);
        assertThat(giveUp.getLevel()).isEqualTo(Level.WARN);
        assertThat(value(giveUp, "reason")).isEqualTo("budget");
        assertThat(value(giveUp, "attempts")).isEqualTo(1);
        assertThat(value(giveUp, "error")).isEqualTo("IOException");
    }

    @Test
    void aPermanentFailureOfTheFirstAttemptWritesNothing() {
        call(retry(3, paymentsLog().build()), ScriptedOperation.on(clock)
                .fails(ATTEMPT, new IllegalArgumentException("bad amount")));

        assertThat(captured.list).isEmpty();
    }

    @Test
    void aPermanentFailureAfterARetryIsAGiveUp() {
        call(retry(3, paymentsLog().build()), ScriptedOperation.on(clock)
                .fails(ATTEMPT).fails(ATTEMPT, new IllegalArgumentException("bad amount")));

        ILoggingEvent giveUp = captured.list.get(1);
        assertThat(value(giveUp, "reason")).isEqualTo("not_retryable");
        assertThat(value(giveUp, "attempts")).isEqualTo(2);
        assertThat(value(giveUp, "error")).isEqualTo("IllegalArgumentException");
    }

    @Test
    void aCallRefusedBeforeItsFirstAttemptWritesNothing() {
        CircuitBreaker open = CircuitBreaker.builder("payments").consecutiveFailures(1).clock(clock).build();
        open.record(open.tryAcquirePermission(), null, new IOException("down"));

        call(retry(3, paymentsLog().build()).withCircuitBreaker(open), ScriptedOperation.on(clock).succeeds(ATTEMPT));

        assertThat(captured.list).isEmpty();
    }

    @Test
    void retriesCanBeWrittenAtDebug() {
        logger.setLevel(Level.DEBUG);

        call(retry(2, paymentsLog().retryLevel(org.slf4j.event.Level.DEBUG).build()),
                ScriptedOperation.on(clock).returns(ATTEMPT, UNAVAILABLE));

        assertThat(captured.list).extracting(ILoggingEvent::getLevel).containsExactly(Level.DEBUG, Level.WARN);
    }

    @Test
    void debugRetriesAreSilencedByAnInfoLoggerWhileGiveUpsStillShow() {
        call(retry(2, paymentsLog().retryLevel(org.slf4j.event.Level.DEBUG).build()),
                ScriptedOperation.on(clock).returns(ATTEMPT, UNAVAILABLE));

        assertThat(captured.list).extracting(ILoggingEvent::getLevel).containsExactly(Level.WARN);
    }

    @Test
    void unknownValuesAreLeftOutAndTheServiceDefaultsToTheRetrysName() {
        call(retry(2, RetryLog.builder().loggerName(loggerName).build()), ScriptedOperation.on(clock).fails(ATTEMPT));

        assertThat(keys(captured.list.get(0)))
                .containsExactly("event", "service", "attempt", "max_attempts", "delay_ms", "reason");
        assertThat(value(captured.list.get(0), "service")).isEqualTo("payments-api");
        assertThat(captured.list.get(0).getFormattedMessage())
                .isEqualTo("payments-api: attempt 1/2 failed (IOException), retrying in 200 ms");
    }

    @Test
    void aStatusFunctionThatThrowsLeavesOnlyItsKeyOut() {
        RetryLog log = paymentsLog().status((result, failure) -> {
            throw new IllegalStateException("not a response");
        }).build();

        call(retry(2, log), ScriptedOperation.on(clock).returns(ATTEMPT, UNAVAILABLE));

        assertThat(keys(captured.list.get(0))).doesNotContain("status").contains("request_id", "delay_ms");
    }

    @Test
    void anIntegrationsRetryLineIsRenderedExactlyLikeTheListenersLine() {
        RetryLog log = paymentsLog().build();
        call(retry(5, log), ScriptedOperation.on(clock).returns(ATTEMPT, UNAVAILABLE).returns(ATTEMPT, OK));
        log.logRetry("http_retry", "payments", "charge", 1, 5, 503, 200, "req-7f3a9c", "result");

        ILoggingEvent fromListener = captured.list.get(0);
        ILoggingEvent fromIntegration = captured.list.get(1);
        assertThat(value(fromIntegration, "event")).isEqualTo("http_retry");
        assertThat(fromIntegration.getKeyValuePairs().subList(1, 9))
                .extracting(kv -> kv.key, kv -> kv.value)
                .containsExactlyElementsOf(fromListener.getKeyValuePairs().subList(1, 9).stream()
                        .map(kv -> tuple(kv.key, kv.value)).toList());
        assertThat(fromIntegration.getFormattedMessage()).isEqualTo(fromListener.getFormattedMessage());
        assertThat(fromIntegration.getLevel()).isEqualTo(fromListener.getLevel());
    }

    @Test
    void anIntegrationsGiveUpLineLeavesUnknownValuesOut() {
        paymentsLog().build().logGiveUp("http_give_up", "payments", "charge", 2, 5, null, 1200, null,
                "deadline", "HttpTimeoutException");

        ILoggingEvent line = captured.list.get(0);
        assertThat(line.getLevel()).isEqualTo(Level.WARN);
        assertThat(line.getKeyValuePairs()).extracting(kv -> kv.key, kv -> kv.value).containsExactly(
                tuple("event", "http_give_up"), tuple("service", "payments"), tuple("operation", "charge"),
                tuple("reason", "deadline"), tuple("attempts", 2), tuple("max_attempts", 5),
                tuple("elapsed_ms", 1200L), tuple("error", "HttpTimeoutException"));
    }

    @Test
    void refusesWarnForRetriesSoThatGiveUpsStandOut() {
        assertThatThrownBy(() -> RetryLog.builder().retryLevel(org.slf4j.event.Level.WARN))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("retryLevel").hasMessageContaining("WARN");
    }

    @Test
    void refusesABlankServiceNamingIt() {
        assertThatThrownBy(() -> RetryLog.builder().service(" "))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("service");
    }

    /** Guards the assumption the lines rely on: logback keeps SLF4J's key-value pairs in order. */
    @Test
    void keyValuePairsReachTheAppenderAsSlf4jPairs() {
        paymentsLog().build().logRetry("retry", "payments", "charge", 1, 5, null, 200, null, null);

        assertThat(captured.list.get(0).getKeyValuePairs()).first().isInstanceOf(KeyValuePair.class)
                .extracting(kv -> kv.key).isEqualTo("event");
    }
}
