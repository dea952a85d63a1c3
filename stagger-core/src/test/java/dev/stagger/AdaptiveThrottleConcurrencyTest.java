package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testing.VirtualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Many threads counting at once lose no request and no accept, and never count into a recycled bucket. */
class AdaptiveThrottleConcurrencyTest {
    private static final int THREADS = 4;
    private static final int PER_THREAD = 50_000;

    @Test
    void concurrentRequestsAndAcceptsAreAllCounted() throws Exception {
        VirtualClock clock = new VirtualClock();
        AdaptiveThrottle throttle = AdaptiveThrottle.builder("c").k(1000).clock(clock).build();
        AtomicLong admitted = new AtomicLong();

        runConcurrently(() -> {
            for (int i = 0; i < PER_THREAD; i++) {
                if (throttle.tryAcquire()) {
                    admitted.incrementAndGet();
                }
                if (i % 2 == 0) {
                    throttle.onAccepted();
                } else {
                    throttle.onRejected();
                }
            }
        });

        assertThat(throttle.requests()).isEqualTo((long) THREADS * PER_THREAD);
        assertThat(throttle.accepts()).isEqualTo((long) THREADS * PER_THREAD / 2);
        assertThat(admitted.get()).as("K = 1000: nothing refused").isEqualTo((long) THREADS * PER_THREAD);
    }

    @Test
    void countsMadeWhileTheWindowRollsLandOnlyInLiveBuckets() throws Exception {
        // 4 buckets of 1 ms; one thread moves time on while the others count
        VirtualClock clock = new VirtualClock();
        AdaptiveThrottle throttle = AdaptiveThrottle.builder("c").window(Duration.ofMillis(4)).buckets(4)
                .k(1000).clock(clock).build();
        CountDownLatch done = new CountDownLatch(THREADS - 1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS - 1; t++) {
            threads.add(new Thread(() -> {
                for (int i = 0; i < PER_THREAD; i++) {
                    throttle.tryAcquire();
                    throttle.onAccepted();
                }
                done.countDown();
            }));
        }
        threads.forEach(Thread::start);
        while (done.getCount() > 0) {
            clock.advance(Duration.ofMillis(1));
            long requests = throttle.requests();
            assertThat(requests).isBetween(0L, (long) (THREADS - 1) * PER_THREAD);
        }
        for (Thread thread : threads) {
            thread.join();
        }

        clock.advance(Duration.ofMillis(4));
        assertThat(throttle.requests()).as("every bucket left the window").isZero();
        assertThat(throttle.accepts()).isZero();
    }

    private static void runConcurrently(Runnable body) throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        CountDownLatch start = new CountDownLatch(1);
        for (int t = 0; t < THREADS; t++) {
            threads.add(new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                body.run();
            }));
        }
        threads.forEach(Thread::start);
        start.countDown();
        for (Thread thread : threads) {
            thread.join();
        }
    }
}
