package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testing.VirtualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Threads recording at once lose no sample while the window stands still. */
class LatencyHistogramConcurrencyTest {
    private static final int THREADS = 4;
    private static final int PER_THREAD = 50_000;

    @Test
    void concurrentRecordsAreAllCountedAndThePercentileSeesThem() throws Exception {
        LatencyHistogram h = new LatencyHistogram(new VirtualClock(), Duration.ofSeconds(30).toNanos());
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            long value = (t + 1) * 1_000_000L; // thread t records (t + 1) ms
            Thread thread = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < PER_THREAD; i++) {
                    h.record(value);
                }
            });
            thread.start();
            threads.add(thread);
        }
        start.countDown();
        for (Thread thread : threads) {
            thread.join(TimeUnit.SECONDS.toMillis(30));
            assertThat(thread.isAlive()).isFalse();
        }

        assertThat(h.count()).isEqualTo((long) THREADS * PER_THREAD);
        // a quarter of the samples each at 1, 2, 3 and 4 ms: the median is the 2 ms bucket
        assertThat(h.percentile(50)).isBetween(2_000_000L, 2_000_000L + 2_000_000L / 8);
        assertThat(h.percentile(100 - 1e-9)).isBetween(4_000_000L, 4_000_000L + 4_000_000L / 8);
    }
}
