package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Many threads recording and asking at once, on a shared clock that the threads themselves move
 * forward: no count is lost and every transition is a legal one. Bounded: a few hundred thousand
 * operations, well under five seconds.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class CircuitBreakerStressTest {
    private static final int THREADS = 8;
    private static final IOException FAILURE = new IOException("down");
    private static final Set<String> LEGAL = Set.of(
            "CLOSED->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->CLOSED", "HALF_OPEN->OPEN",
            "OPEN->CLOSED" /* reset */);

    private final ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    private final TickingClock clock = new TickingClock();

    @AfterEach
    void stopThreads() throws InterruptedException {
        pool.shutdownNow();
        assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void noRecordedOutcomeIsLostWhileThreadsRaceAcrossBucketBoundaries() throws Exception {
        // Never trips (minimumCalls out of reach); one-second buckets in a ten-second window, and the
        // threads push time across eight bucket boundaries while they record.
        CircuitBreaker breaker = CircuitBreaker.builder("stress").clock(clock).window(Duration.ofSeconds(10)).buckets(10)
                .minimumCalls(Integer.MAX_VALUE).slowCallThreshold(Duration.ofMillis(100)).build();
        int perThread = 40_000;
        LongAdder failures = new LongAdder();
        LongAdder slow = new LongAdder();

        runConcurrently(thread -> {
            for (int i = 0; i < perThread; i++) {
                CircuitBreaker.Permit permit = breaker.tryAcquirePermission();
                assertThat(permit.isGranted()).isTrue();
                if (i % 7 == 0) {
                    breaker.record(permit, null, FAILURE, Duration.ZERO);
                    failures.increment();
                } else if (i % 13 == 0) {
                    breaker.record(permit, "ok", null, Duration.ofMillis(150));
                    failures.increment();
                    slow.increment();
                } else {
                    breaker.record(permit, "ok", null, Duration.ZERO);
                }
                if (i % 1000 == 0) {
                    clock.advance(Duration.ofMillis(25)); // 8 threads × 40 × 25 ms = 8 s in all
                }
            }
        });

        CircuitBreaker.Metrics metrics = breaker.metrics();
        assertThat(clock.nanoTime()).isBetween(Duration.ofSeconds(7).toNanos(), Duration.ofSeconds(9).toNanos());
        assertThat(metrics.state()).isEqualTo(CircuitBreaker.State.CLOSED);
        assertThat(metrics.calls()).isEqualTo((long) THREADS * perThread);
        assertThat(metrics.failures()).isEqualTo(failures.sum());
        assertThat(metrics.slowCalls()).isEqualTo(slow.sum());
    }

    @Test
    void onlyLegalTransitionsHappenAndEveryOneIsCounted() throws Exception {
        Queue<CircuitBreaker.Transition> seen = new ConcurrentLinkedQueue<>();
        CircuitBreaker breaker = CircuitBreaker.builder("stress").clock(clock)
                .window(Duration.ofSeconds(1)).buckets(10).minimumCalls(20).failureRateThreshold(0.5)
                .consecutiveFailures(5).openDuration(Duration.ofMillis(2)).halfOpenPermits(3).build();
        breaker.subscribe(seen::add);
        int perThread = 40_000;
        LongAdder refused = new LongAdder();

        runConcurrently(thread -> {
            SplittableRandom random = new SplittableRandom(thread);
            for (int i = 0; i < perThread; i++) {
                CircuitBreaker.Permit permit = breaker.tryAcquirePermission();
                if (permit.isGranted()) {
                    // Failure-heavy phases alternate with healthy ones, so the breaker keeps cycling.
                    boolean failing = (i / 2_000) % 2 == 0 ? random.nextDouble() < 0.7 : random.nextDouble() < 0.05;
                    breaker.record(permit, failing ? null : "ok", failing ? FAILURE : null);
                } else {
                    refused.increment();
                }
                clock.advance(Duration.ofNanos(20_000));
                if (thread == 0 && i % 5_000 == 4_999) {
                    breaker.reset();
                }
            }
        });

        List<String> kinds = seen.stream().map(t -> t.from() + "->" + t.to()).collect(Collectors.toList());
        assertThat(kinds).isNotEmpty().allSatisfy(kind -> assertThat(LEGAL).contains(kind));
        assertThat(kinds).as("the run exercised every kind of transition")
                .contains("CLOSED->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->CLOSED", "HALF_OPEN->OPEN");
        assertThat(breaker.metrics().transitions()).isEqualTo(seen.size());
        assertThat(breaker.metrics().rejected()).isEqualTo(refused.sum());
    }

    private interface Worker {
        void run(int thread) throws Exception;
    }

    private void runConcurrently(Worker worker) throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int thread = t;
            futures.add(pool.submit(() -> {
                start.await();
                worker.run(thread);
                return null;
            }));
        }
        start.countDown();
        for (Future<?> f : futures) {
            f.get(20, TimeUnit.SECONDS);
        }
    }

    /** A lock-free test clock that any thread can move forward; it cannot sleep or schedule. */
    private static final class TickingClock implements Clock {
        private final AtomicLong now = new AtomicLong();

        void advance(Duration d) {
            now.addAndGet(d.toNanos());
        }

        @Override
        public long nanoTime() {
            return now.get();
        }

        @Override
        public long currentTimeMillis() {
            return now.get() / 1_000_000;
        }

        @Override
        public void sleep(long nanos) {
            throw new UnsupportedOperationException("the stress test never sleeps");
        }

        @Override
        public Cancellable schedule(Runnable task, long delayNanos) {
            throw new UnsupportedOperationException("the stress test never schedules");
        }
    }
}
