package dev.stagger.sim.internal;

import dev.stagger.Backoff;
import dev.stagger.CircuitBreaker;
import dev.stagger.Clock;
import dev.stagger.RandomSource;
import dev.stagger.Retry;
import dev.stagger.RetryBudget;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import dev.stagger.RetryPolicy;
import java.time.Duration;

/**
 * Builds the one {@link Retry} that every simulated client of a run shares, exactly as a service
 * shares one per downstream: the real policy, and optionally the real budget and breaker, all on
 * the run's virtual clock.
 */
public final class Guards {
    /** The breaker's settings: trips at 50 % failures over a 2 s window once 20 calls were seen. */
    public static final Duration BREAKER_WINDOW = Duration.ofSeconds(2);
    public static final int BREAKER_MINIMUM_CALLS = 20;
    public static final double BREAKER_FAILURE_RATE = 0.5;
    public static final Duration BREAKER_OPEN = Duration.ofMillis(500);

    private Guards() {
    }

    public static Retry retry(Backoff backoff, int maxAttempts, Clock clock, RandomSource random,
                              boolean budget, boolean breaker, RunStats stats) {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(maxAttempts).backoff(backoff).build();
        Retry retry = Retry.of("sim", policy).withClock(clock).withRandom(random)
                .withListener(new RetryListener() {
                    @Override
                    public void onCallFinished(RetryEvent.CallFinished event) {
                        stats.ended(event.reason());
                    }
                });
        // the switch says whether there is a budget: off is the explicit opt-out of the default one
        retry = budget ? retry.withBudget(RetryBudget.builder("sim").clock(clock).build()) : retry.withoutBudget();
        if (breaker) {
            retry = retry.withCircuitBreaker(CircuitBreaker.builder("sim").clock(clock).random(random)
                    .failureRateThreshold(BREAKER_FAILURE_RATE).minimumCalls(BREAKER_MINIMUM_CALLS)
                    .window(BREAKER_WINDOW).buckets(20).openDuration(BREAKER_OPEN).build());
        }
        return retry;
    }
}
