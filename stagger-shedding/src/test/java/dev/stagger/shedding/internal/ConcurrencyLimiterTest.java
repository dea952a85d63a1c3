package dev.stagger.shedding.internal;

import dev.stagger.internal.LimitAlgorithm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.RandomSource;
import dev.stagger.shedding.GradientLimit;
import dev.stagger.shedding.Limit;
import dev.stagger.testing.VirtualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ConcurrencyLimiterTest {
    private final VirtualClock clock = new VirtualClock();

    private ConcurrencyLimiter limiter(int limit, double retryShare) {
        return new ConcurrencyLimiter(Limits.algorithm(Limit.fixed(limit), RandomSource.sequence(0.5), 0), retryShare,
                new RetryAfterRule(1, 30, 0), clock, RandomSource.sequence(0.5));
    }

    @Test
    void admitsUpToTheLimitAndShedsBeyondIt() {
        ConcurrencyLimiter limiter = limiter(2, 1.0);
        Permit first = limiter.tryAcquire(false, 0);
        assertThat(first).extracting(Permit::inFlight).isEqualTo(1);
        assertThat(inFlight(limiter.tryAcquire(false, 0))).isEqualTo(2);
        assertThat(limiter.tryAcquire(false, 0)).isNull();
        limiter.release(first, true);
        assertThat(inFlight(limiter.tryAcquire(false, 0))).isEqualTo(2);
        assertThat(limiter.inFlight()).isEqualTo(2);
    }

    @Test
    void retriesMayFillOnlyTheirShareOfTheLimit() {
        ConcurrencyLimiter limiter = limiter(10, 0.8);
        for (int i = 0; i < 8; i++) {
            assertThat(limiter.tryAcquire(true, 0)).isNotNull();
        }
        assertThat(limiter.tryAcquire(true, 0)).isNull();
        assertThat(inFlight(limiter.tryAcquire(false, 0))).isEqualTo(9);
        assertThat(inFlight(limiter.tryAcquire(false, 0))).isEqualTo(10);
        assertThat(limiter.retriesAdmitted()).isEqualTo(8);
        assertThat(limiter.firstAttemptsAdmitted()).isEqualTo(2);
    }

    @Test
    void aRetryGetsOneSlotEvenWhenItsShareRoundsToNothing() {
        ConcurrencyLimiter limiter = limiter(1, 0.8);
        assertThat(inFlight(limiter.tryAcquire(true, 0))).isEqualTo(1);
    }

    @Test
    void aShareOfZeroShedsEveryRetry() {
        ConcurrencyLimiter limiter = limiter(10, 0.0);
        assertThat(limiter.tryAcquire(true, 0)).isNull();
        assertThat(inFlight(limiter.tryAcquire(false, 0))).isEqualTo(1);
    }

    @Test
    void retryAfterIsWhatIsHeldPlusWhatWasShedOverWhatWasAdmittedInTheLastSecond() {
        ConcurrencyLimiter limiter = limiter(4, 1.0);
        // one second of a 4-permit server at 3x its rate: 100 admitted (and completed), 200 shed
        for (int i = 0; i < 100; i++) {
            clock.advance(Duration.ofMillis(3));
            long now = clock.nanoTime();
            Permit in = limiter.tryAcquire(false, now);
            assertThat(in).isNotNull();
            limiter.shed(false, now);
            limiter.shed(false, now);
            limiter.release(in, true);
        }
        for (int i = 0; i < 4; i++) {
            limiter.tryAcquire(false, clock.nanoTime()); // full again
        }
        // (4 + 200) / 104 admitted = 1.96 s: 2 s
        assertThat(limiter.baseRetryAfterSeconds()).isEqualTo(2);
        assertThat(limiter.shed(false, clock.nanoTime())).isEqualTo(2);
        assertThat(limiter.firstAttemptsShed()).isEqualTo(201);
    }

    @Test
    void retryAfterFallsBackToTheMinimumOnceTheServerIsQuietAgain() {
        ConcurrencyLimiter limiter = limiter(1, 1.0);
        Permit in = limiter.tryAcquire(false, 0);
        for (int i = 0; i < 500; i++) {
            limiter.shed(false, 0);
        }
        limiter.release(in, true);
        assertThat(limiter.baseRetryAfterSeconds()).isGreaterThan(1);
        clock.advance(Duration.ofSeconds(2));
        assertThat(limiter.baseRetryAfterSeconds()).isEqualTo(1);
    }

    @Test
    void neverAdmitsMoreThanTheLimitUnderContention() throws Exception {
        ConcurrencyLimiter limiter = limiter(3, 1.0);
        AtomicInteger running = new AtomicInteger();
        AtomicInteger highest = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            Thread thread = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < 20_000; i++) {
                    Permit in = limiter.tryAcquire(false, 0);
                    if (in != null) {
                        highest.accumulateAndGet(running.incrementAndGet(), Math::max);
                        running.decrementAndGet();
                        limiter.release(in, true);
                    }
                }
            });
            thread.start();
            threads.add(thread);
        }
        go.countDown();
        for (Thread thread : threads) {
            thread.join();
        }
        assertThat(highest.get()).isBetween(1, 3);
        assertThat(limiter.inFlight()).isZero();
    }

    /** The default gradient limit: pinned to 3 while it measures the minRTT; long after 1 s (10 sample windows). */
    private ConcurrencyLimiter gradientLimiter() {
        return new ConcurrencyLimiter(Limits.algorithm(GradientLimit.builder().build(), RandomSource.sequence(0.5), 0),
                1.0, new RetryAfterRule(1, 30, 0), clock, RandomSource.sequence(0.5));
    }

    @Test
    void aRequestInFlightLongerThanTheLongRequestThresholdGivesItsSlotBack() {
        ConcurrencyLimiter limiter = gradientLimiter();
        for (int i = 0; i < 3; i++) {
            assertThat(limiter.tryAcquire(false, clock.nanoTime())).isNotNull(); // three long polls
        }
        clock.advance(Duration.ofMillis(900));
        assertThat(limiter.tryAcquire(false, clock.nanoTime())).isNull();
        clock.advance(Duration.ofMillis(1_200)); // 2.1 s: two epochs of at least 1 s have begun since

        Permit shortOne = limiter.tryAcquire(false, clock.nanoTime());
        assertThat(shortOne).isNotNull();
        assertThat(shortOne.inFlight()).isEqualTo(1);
        assertThat(limiter.inFlight()).isEqualTo(4);
        assertThat(limiter.countedInFlight()).isEqualTo(1);
    }

    @Test
    void atMostTheLimitsSizeOfLongRequestsRunBesideIt() {
        ConcurrencyLimiter limiter = gradientLimiter();
        List<Permit> held = new ArrayList<>();
        for (int round = 0; round < 3; round++) {
            while (true) {
                Permit permit = limiter.tryAcquire(false, clock.nanoTime());
                if (permit == null) {
                    break;
                }
                held.add(permit);
            }
            clock.advance(Duration.ofMillis(2_100));
        }
        assertThat(held).hasSize(6); // 3 under the limit, then 3 more once the first were long; no more
        assertThat(limiter.countedInFlight()).isEqualTo(3);

        limiter.release(held.get(0), true); // a long one ends: one slot again
        assertThat(limiter.tryAcquire(false, clock.nanoTime())).isNotNull();
        assertThat(limiter.tryAcquire(false, clock.nanoTime())).isNull();
    }

    @Test
    void aFixedLimitCountsEveryRequestUntilItEnds() {
        ConcurrencyLimiter limiter = limiter(2, 1.0);
        limiter.tryAcquire(false, clock.nanoTime());
        limiter.tryAcquire(false, clock.nanoTime());
        clock.advance(Duration.ofHours(1));
        assertThat(limiter.tryAcquire(false, clock.nanoTime())).isNull();
    }

    /** The in-flight count a permit was admitted with. */
    private static int inFlight(Permit permit) {
        assertThat(permit).as("admitted").isNotNull();
        return permit.inFlight();
    }
}
