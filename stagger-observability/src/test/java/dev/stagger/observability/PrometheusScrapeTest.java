package dev.stagger.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.stagger.Backoff;
import dev.stagger.CircuitBreaker;
import dev.stagger.Retry;
import dev.stagger.RetryBudget;
import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The series a Prometheus server scrapes after one scripted run, and the shares the README's
 * PromQL computes from them.
 *
 * <p>The run, on one Retry ("payments": 3 attempts, 100 ms apart, every attempt 10 ms) guarded by
 * breaker "bank" (opens after 3 failures in a row, for 30 s) and budget "bank" (3 tokens, 0.5
 * earned per success, no floor):
 * <ol>
 *   <li>ok — success;
 *   <li>fail, ok — recovered (budget 3 → 2 → 2.5);
 *   <li>fail, fail, fail — exhausted (budget → 0.5); the third failure in a row opens the breaker;
 *   <li>refused before any attempt — circuit_open, 0 attempts;
 *   <li>30 s later: ok — success; the probe closes the breaker (budget → 1.0);
 *   <li>fail, fail — budget: the second retry finds no token (budget → 0).
 * </ol>
 */
class PrometheusScrapeTest {
    private static final Duration ATTEMPT = Duration.ofMillis(10);

    private final VirtualClock clock = new VirtualClock();
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private Map<String, Double> series;

    @BeforeEach
    void runTheScenarioAndScrape() {
        CircuitBreaker breaker = CircuitBreaker.builder("bank").consecutiveFailures(3)
                .openDuration(Duration.ofSeconds(30)).clock(clock).build();
        RetryBudget budget = RetryBudget.builder("bank").maxTokens(3).ratio(0.5).minRetriesPerSecond(0)
                .clock(clock).build();
        Retry payments = RetryMetrics.of(registry).instrument(Retry.of("payments",
                        RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(100))).build())
                .withCircuitBreaker(breaker).withBudget(budget).withClock(clock));

        call(payments, ScriptedOperation.on(clock).succeeds(ATTEMPT));
        call(payments, ScriptedOperation.on(clock).fails(ATTEMPT).succeeds(ATTEMPT));
        call(payments, ScriptedOperation.on(clock).fails(ATTEMPT));
        call(payments, ScriptedOperation.on(clock).succeeds(ATTEMPT));
        clock.advance(Duration.ofSeconds(30));
        call(payments, ScriptedOperation.on(clock).succeeds(ATTEMPT));
        call(payments, ScriptedOperation.on(clock).fails(ATTEMPT));

        series = parse(registry.scrape());
    }

    private static void call(Retry retry, Callable<Object> operation) {
        try {
            retry.call(operation);
        } catch (Exception failureIsPartOfTheScript) {
            // the scrape, not the exception, is under test
        }
    }

    /** Sample lines of the text format, keyed by series exactly as written: {@code name{labels}}. */
    private static Map<String, Double> parse(String scrape) {
        Map<String, Double> samples = new LinkedHashMap<>();
        for (String line : scrape.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            int space = line.lastIndexOf(' ');
            samples.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
        }
        return samples;
    }

    private double sample(String seriesName) {
        assertThat(series).as("scraped series").containsKey(seriesName);
        return series.get(seriesName);
    }

    @Test
    void callsAreCountedByReasonWithEveryReasonPresent() {
        assertThat(sample("stagger_calls_total{name=\"payments\",reason=\"success\"}")).isEqualTo(2);
        assertThat(sample("stagger_calls_total{name=\"payments\",reason=\"recovered\"}")).isEqualTo(1);
        assertThat(sample("stagger_calls_total{name=\"payments\",reason=\"exhausted\"}")).isEqualTo(1);
        assertThat(sample("stagger_calls_total{name=\"payments\",reason=\"circuit_open\"}")).isEqualTo(1);
        assertThat(sample("stagger_calls_total{name=\"payments\",reason=\"budget\"}")).isEqualTo(1);
        for (String idle : new String[] {"not_retryable", "deadline", "interrupted", "cancelled"}) {
            assertThat(sample("stagger_calls_total{name=\"payments\",reason=\"" + idle + "\"}")).isZero();
        }
    }

    @Test
    void attemptsPerCallIsAHistogramWithAttemptBuckets() {
        assertThat(sample("stagger_call_attempts_count{name=\"payments\"}")).isEqualTo(6);
        assertThat(sample("stagger_call_attempts_sum{name=\"payments\"}")).isEqualTo(9);
        assertThat(sample("stagger_call_attempts_max{name=\"payments\"}")).isEqualTo(3);
        assertThat(sample("stagger_call_attempts_bucket{name=\"payments\",le=\"1.0\"}")).isEqualTo(3);
        assertThat(sample("stagger_call_attempts_bucket{name=\"payments\",le=\"2.0\"}")).isEqualTo(5);
        assertThat(sample("stagger_call_attempts_bucket{name=\"payments\",le=\"3.0\"}")).isEqualTo(6);
        assertThat(sample("stagger_call_attempts_bucket{name=\"payments\",le=\"+Inf\"}")).isEqualTo(6);
    }

    @Test
    void attemptsAreCountedByOutcomeAndTimedByNumber() {
        assertThat(sample("stagger_attempts_total{name=\"payments\",outcome=\"success\"}")).isEqualTo(3);
        assertThat(sample("stagger_attempts_total{name=\"payments\",outcome=\"failure\"}")).isEqualTo(6);
        assertThat(sample("stagger_attempt_duration_seconds_count{attempt=\"1\",name=\"payments\"}")).isEqualTo(5);
        assertThat(sample("stagger_attempt_duration_seconds_sum{attempt=\"1\",name=\"payments\"}"))
                .isCloseTo(0.05, within(1e-9));
        assertThat(sample("stagger_attempt_duration_seconds_count{attempt=\"2\",name=\"payments\"}")).isEqualTo(3);
        assertThat(sample("stagger_attempt_duration_seconds_count{attempt=\"3\",name=\"payments\"}")).isEqualTo(1);
        assertThat(sample("stagger_attempt_duration_seconds_count{attempt=\"5+\",name=\"payments\"}")).isZero();
    }

    @Test
    void scheduledDelaysAreASummaryInSeconds() {
        assertThat(sample("stagger_retry_delay_seconds_count{name=\"payments\"}")).isEqualTo(4);
        assertThat(sample("stagger_retry_delay_seconds_sum{name=\"payments\"}")).isCloseTo(0.4, within(1e-9));
        assertThat(sample("stagger_retry_delay_seconds_max{name=\"payments\"}")).isCloseTo(0.1, within(1e-9));
        assertThat(sample("stagger_retry_delay_seconds{name=\"payments\",quantile=\"0.99\"}"))
                .as("Micrometer's percentiles are approximate").isCloseTo(0.1, within(0.01));
    }

    @Test
    void breakerStateTransitionsAndRejectionsAreExported() {
        assertThat(sample("stagger_circuit_state{name=\"bank\"}")).isZero();
        assertThat(sample("stagger_circuit_transitions_total{from=\"closed\",name=\"bank\",to=\"open\"}")).isEqualTo(1);
        assertThat(sample("stagger_circuit_transitions_total{from=\"open\",name=\"bank\",to=\"half_open\"}")).isEqualTo(1);
        assertThat(sample("stagger_circuit_transitions_total{from=\"half_open\",name=\"bank\",to=\"closed\"}")).isEqualTo(1);
        assertThat(sample("stagger_circuit_transitions_total{from=\"half_open\",name=\"bank\",to=\"open\"}")).isZero();
        assertThat(sample("stagger_circuit_rejected_total{name=\"bank\"}")).isEqualTo(1);
    }

    @Test
    void budgetTokensRetriesAndRefusalsAreExported() {
        assertThat(sample("stagger_budget_tokens{name=\"bank\"}")).isZero();
        assertThat(sample("stagger_budget_retries_total{name=\"bank\"}")).isEqualTo(4);
        assertThat(sample("stagger_budget_refusals_total{name=\"bank\"}")).isEqualTo(1);
    }

    /** The README's shares, evaluated on one scrape as PromQL evaluates them on rates. */
    @Test
    void theReadmeSharesComeOutOfTheScrape() {
        double calls = series.entrySet().stream().filter(e -> e.getKey().startsWith("stagger_calls_total{"))
                .mapToDouble(Map.Entry::getValue).sum();
        double count = sample("stagger_call_attempts_count{name=\"payments\"}");
        assertThat(count).as("one attempts sample per call").isEqualTo(calls);

        double neededARetry = (sample("stagger_calls_total{name=\"payments\",reason=\"recovered\"}")
                + sample("stagger_calls_total{name=\"payments\",reason=\"exhausted\"}")
                + sample("stagger_calls_total{name=\"payments\",reason=\"deadline\"}")
                + sample("stagger_calls_total{name=\"payments\",reason=\"budget\"}")) / calls;
        double twoOrMore = 1 - sample("stagger_call_attempts_bucket{name=\"payments\",le=\"1.0\"}") / count;
        double threeOrFour = (sample("stagger_call_attempts_bucket{name=\"payments\",le=\"4.0\"}")
                - sample("stagger_call_attempts_bucket{name=\"payments\",le=\"2.0\"}")) / count;
        double hitMax = sample("stagger_calls_total{name=\"payments\",reason=\"exhausted\"}") / calls;
        double attemptsPerCall = (sample("stagger_attempts_total{name=\"payments\",outcome=\"success\"}")
                + sample("stagger_attempts_total{name=\"payments\",outcome=\"failure\"}")) / calls;

        assertThat(neededARetry).isEqualTo(0.5); // calls 2, 3 and 6
        assertThat(twoOrMore).isEqualTo(0.5);
        assertThat(threeOrFour).isEqualTo(1 / 6.0); // call 3
        assertThat(hitMax).isEqualTo(1 / 6.0);
        assertThat(attemptsPerCall).isEqualTo(1.5);
    }
}
