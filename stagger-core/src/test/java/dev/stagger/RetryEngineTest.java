package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The engine's own API, as work that carries its state between processes uses it. */
class RetryEngineTest {
    private final VirtualClock clock = new VirtualClock();
    private final IOException down = new IOException("down");

    private RetryEngine engine(RetryPolicy policy, RandomSource random) {
        return RetryEngine.of("invoices", policy).withClock(clock).withRandom(random);
    }

    /** Decides every attempt in a fresh engine call, as one process per attempt would. */
    private List<Duration> durableWaits(RetryEngine engine, int failures) {
        List<Duration> waits = new ArrayList<>();
        RetryState state = engine.firstAttempt();
        for (int i = 0; i < failures; i++) {
            RetryEngine.Verdict verdict = engine.decide(state, null, down);
            if (!verdict.isRetry()) {
                break;
            }
            waits.add(verdict.delay());
            clock.advance(verdict.delay());
            state = verdict.next().orElseThrow();
        }
        return waits;
    }

    private List<Duration> inProcessWaits(RetryPolicy policy, RandomSource random) {
        VirtualClock own = new VirtualClock();
        catchThrowable(() -> Retry.of("invoices", policy).withClock(own).withRandom(random).call(() -> {
            throw down;
        }));
        return own.sleeps();
    }

    static Stream<Backoff> statefulBackoffs() {
        return Stream.of(Backoff.decorrelated(Duration.ofSeconds(1), Duration.ofMinutes(5)),
                Backoff.pollyDecorrelatedJitterV2(Duration.ofSeconds(1), Duration.ofMinutes(5)));
    }

    @ParameterizedTest
    @MethodSource("statefulBackoffs")
    void aStatefulBackoffCarriedBetweenAttemptsWaitsAsInOneProcess(Backoff backoff) {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(6).backoff(backoff).build();

        List<Duration> durable = durableWaits(engine(policy, RandomSource.seeded(42)), 10);

        assertThat(durable).hasSize(5).isEqualTo(inProcessWaits(policy, RandomSource.seeded(42)));
    }

    @Test
    void theNextStateCountsTheAttemptKeepsTheStartAndCarriesTheSchedule() {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(3)
                .backoff(Backoff.decorrelated(Duration.ofSeconds(1), Duration.ofMinutes(1))).build();
        RetryState first = RetryState.first(Instant.parse("2026-01-01T00:00:00Z"));

        RetryState next = engine(policy, RandomSource.sequence(0.5)).decide(first, null, down).next().orElseThrow();

        // U(1 s, 3 s) at 0.5 is 2 s: the schedule remembers it as its previous delay
        assertThat(next).isEqualTo(new RetryState(2, first.startedAt(), Duration.ofSeconds(2).toNanos()));
    }

    @Test
    void theHintIsAMinimumWithTheBackoffsJitteredDelayOnTop() {
        // the same numbers as DeadlineAndRetryAfterTest and the job workers' test: 2 s + U(0, 100 ms) at 0.5
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(3)
                .backoff(Backoff.fixed(Duration.ofMillis(100)).jitter(Jitter.full()))
                .classifier((r, f, c) -> Decision.retryAfter(Duration.ofSeconds(2))).build();

        RetryEngine.Verdict verdict = engine(policy, RandomSource.sequence(0.5)).decide(engineStart(), null, down);

        assertThat(verdict.delay()).isEqualTo(Duration.ofMillis(2050));
        assertThat(verdict.decision().minDelay()).isEqualTo(Duration.ofSeconds(2));
    }

    private RetryState engineStart() {
        return RetryState.first(Instant.ofEpochMilli(clock.currentTimeMillis()));
    }

    @Test
    void theDeadlineCountsFromTheWorksStartNotFromThisAttempt() {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(10).backoff(Backoff.fixed(Duration.ofSeconds(1)))
                .deadline(Duration.ofSeconds(10)).build();
        RetryEngine engine = engine(policy, RandomSource.threadLocal());
        RetryState state = new RetryState(4, Instant.ofEpochMilli(clock.currentTimeMillis()), 0);

        clock.advance(Duration.ofMillis(8_999));
        assertThat(engine.decide(state, null, down).isRetry()).as("1 s wait ends before 10 s").isTrue();
        clock.advance(Duration.ofMillis(1));
        assertThat(engine.decide(state, null, down).endReason()).contains(EndReason.DEADLINE);
    }

    @Test
    void endsExhaustedAtTheLimitAndALimitOfItsOwnReplacesThePolicys() {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(5).backoff(Backoff.none()).build();
        RetryState third = new RetryState(3, Instant.EPOCH, 0);

        assertThat(engine(policy, RandomSource.threadLocal()).decide(third, null, down).isRetry()).isTrue();
        RetryEngine.Verdict verdict = engine(policy, RandomSource.threadLocal()).withMaxAttempts(3)
                .decide(third, null, down);
        assertThat(verdict.endReason()).contains(EndReason.EXHAUSTED);
        assertThat(verdict.next()).isEmpty();
        assertThat(verdict.delay()).isZero();
        assertThat(verdict.failure()).containsSame(down);
    }

    @Test
    void aThrowingClassifierEndsTheWorkWithItsExceptionAttached() {
        IllegalStateException bug = new IllegalStateException("classifier bug");
        RetryPolicy policy = RetryPolicy.builder().classifier((r, f, c) -> {
            throw bug;
        }).build();

        RetryEngine.Verdict verdict = engine(policy, RandomSource.threadLocal()).decide(engineStart(), null, down);

        assertThat(verdict.endReason()).contains(EndReason.NOT_RETRYABLE);
        assertThat(verdict.failure()).containsSame(down);
        assertThat(down.getSuppressed()).containsExactly(bug);
    }

    @Test
    void aClassifierThatThrowsOnAResultMakesItsExceptionTheFailure() {
        IllegalStateException bug = new IllegalStateException("classifier bug");
        RetryPolicy policy = RetryPolicy.builder().classifier((r, f, c) -> {
            throw bug;
        }).build();

        RetryEngine.Verdict verdict = engine(policy, RandomSource.threadLocal()).decide(engineStart(), 503, null);

        assertThat(verdict.endReason()).contains(EndReason.NOT_RETRYABLE);
        assertThat(verdict.failure()).containsSame(bug);
    }

    @Test
    void aClassifierThatReturnsNullEndsTheWorkLikeOneThatThrows() {
        RetryPolicy policy = RetryPolicy.builder().classifier((r, f, c) -> null).build();

        RetryEngine.Verdict verdict = engine(policy, RandomSource.threadLocal()).decide(engineStart(), null, down);

        assertThat(verdict.endReason()).contains(EndReason.NOT_RETRYABLE);
        assertThat(down.getSuppressed()).singleElement().isInstanceOf(NullPointerException.class);
    }

    @Test
    void errorsAndInterruptsAreNeverRetriedWhateverTheClassifierSays() {
        RetryPolicy policy = RetryPolicy.builder().classifier((r, f, c) -> Decision.retry()).build();
        RetryEngine engine = engine(policy, RandomSource.threadLocal());

        assertThat(engine.decide(engineStart(), null, new StackOverflowError()).endReason())
                .contains(EndReason.NOT_RETRYABLE);
        assertThat(engine.decide(engineStart(), null, new InterruptedException()).endReason())
                .contains(EndReason.INTERRUPTED);
    }

    @Test
    void anAcceptedOutcomeEndsAsASuccessOnTheFirstAttemptAndARecoveryLater() {
        RetryEngine engine = engine(RetryPolicy.builder().build(), RandomSource.threadLocal());

        assertThat(engine.decide(engineStart(), "ok", null).endReason()).contains(EndReason.SUCCESS);
        assertThat(engine.decide(new RetryState(2, Instant.EPOCH, 0), "ok", null).endReason())
                .contains(EndReason.RECOVERED);
    }

    @Test
    void theClassifierSeesTheCarriedAttemptAndTheTimeSinceTheWorkStarted() {
        List<String> seen = new ArrayList<>();
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(7).deadline(Duration.ofMinutes(1))
                .classifier((r, f, c) -> {
                    seen.add(c.name() + " " + c.attempt() + "/" + c.maxAttempts() + " " + c.elapsed() + " "
                            + c.remaining().orElseThrow() + " " + c.lastFailure());
                    return Decision.stop();
                }).build();
        RetryState state = new RetryState(3, Instant.ofEpochMilli(clock.currentTimeMillis()), 0);
        clock.advance(Duration.ofSeconds(20));

        engine(policy, RandomSource.threadLocal()).decide(state, null, down);

        assertThat(seen).containsExactly("invoices 3/7 PT20S PT40S null");
    }

    @Test
    void aStateMustNameAnAttemptFromOneAndAStart() {
        assertThatThrownBy(() -> new RetryState(0, Instant.EPOCH, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("attempt must be at least 1, got 0");
        assertThatThrownBy(() -> new RetryState(1, null, 0)).hasMessageContaining("startedAt must not be null");
        assertThatThrownBy(() -> RetryEngine.of("x", RetryPolicy.builder().build()).withMaxAttempts(0))
                .hasMessage("maxAttempts must be at least 1, got 0");
    }
}
