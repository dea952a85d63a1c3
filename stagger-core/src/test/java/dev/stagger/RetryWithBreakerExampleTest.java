package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.CircuitBreaker.State;
import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A Retry with a circuit breaker and a budget, call by call: recovery, exhaustion that opens the
 * breaker, a fast failure while it is open, and the probe that closes it. The same scenario is the
 * example in the README.
 */
class RetryWithBreakerExampleTest {
    private final VirtualClock clock = new VirtualClock();
    private final RecordingListener events = new RecordingListener();
    private final CircuitBreaker breaker = CircuitBreaker.builder("inventory")
            .consecutiveFailures(3)
            .openDuration(Duration.ofSeconds(30))
            .clock(clock)
            .build();
    private final Retry retry = Retry.of("inventory", RetryPolicy.builder()
                    .maxAttempts(3)
                    .backoff(Backoff.exponential(Duration.ofMillis(200)).jitter(Jitter.full()))
                    .build())
            .withCircuitBreaker(breaker)
            .withBudget(RetryBudget.builder("inventory").clock(clock).build())
            .withClock(clock)
            .withListener(events);
    private final AtomicInteger invocations = new AtomicInteger();

    private String failsTwiceThenSucceeds() throws IOException {
        if (invocations.incrementAndGet() <= 2) {
            throw new IOException("connection reset");
        }
        return "42 in stock";
    }

    private String alwaysFails() throws IOException {
        invocations.incrementAndGet();
        throw new IOException("connection refused");
    }

    @Test
    void aCallThatFailsTwiceThenSucceedsReportsThreeAttempts() throws Exception {
        String result = retry.call(this::failsTwiceThenSucceeds);

        assertThat(result).isEqualTo("42 in stock");
        assertThat(events.onlyFinish().attempts()).isEqualTo(3);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.RECOVERED);
        assertThat(breaker.state()).isEqualTo(State.CLOSED);
    }

    @Test
    void afterTheFailureThresholdTheNextCallFailsWithCircuitOpenWithoutInvokingTheOperation() {
        assertThatThrownBy(() -> retry.call(this::alwaysFails)).isInstanceOf(IOException.class);
        assertThat(invocations).hasValue(3);
        assertThat(breaker.state()).isEqualTo(State.OPEN);

        assertThatThrownBy(() -> retry.call(this::alwaysFails))
                .isInstanceOf(CircuitOpenException.class)
                .hasMessageContaining("circuit 'inventory' is open");
        assertThat(invocations).as("the operation was not invoked").hasValue(3);
    }

    @Test
    void afterTheCooldownASuccessfulCallClosesTheCircuit() throws Exception {
        assertThatThrownBy(() -> retry.call(this::alwaysFails)).isInstanceOf(IOException.class);
        assertThat(breaker.state()).isEqualTo(State.OPEN);

        clock.advance(Duration.ofSeconds(30));
        String result = retry.call(() -> "42 in stock");

        assertThat(result).isEqualTo("42 in stock");
        assertThat(breaker.state()).isEqualTo(State.CLOSED);
    }
}
