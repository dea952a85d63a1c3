package dev.stagger.shedding.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.RandomSource;
import dev.stagger.shedding.GradientLimit;
import java.util.PriorityQueue;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * The gradient limit against a discrete-event model of a server that works on {@code permits}
 * requests at once, each for {@code serviceMs}, and queues the rest in arrival order, under more
 * load than it can take (a free slot under the limit is filled at once). A request admitted as the
 * {@code k}-th in flight takes {@code service * max(1, k / permits)}. Once settled, the limit must
 * stay where the server is always busy (at least {@code permits}: full goodput) and admitted
 * requests wait at most one more service time (at most {@code 2 * permits}: latency within 2x of
 * idle).
 */
class GradientConvergenceTest {
    private static final long MS = 1_000_000L;

    private record Request(long start, long end, int inFlight) {
    }

    @Property(tries = 100)
    void settlesBetweenCapacityAndTwiceCapacity(@ForAll @IntRange(min = 3, max = 100) int permits,
                                                 @ForAll @IntRange(min = 5, max = 1_000) int serviceMs) {
        long service = serviceMs * MS;
        long duration = Math.min(55_000 * MS, 300 * Math.max(100 * MS, 2 * service)); // before the 60 s re-measure
        LimitAlgorithm limit = LimitAlgorithm.of(GradientLimit.builder().build(), RandomSource.sequence(0.5), 0);
        PriorityQueue<Request> running = new PriorityQueue<>((a, b) -> Long.compare(a.end, b.end));
        int inFlight = 0;
        long now = 0;
        int settledMin = Integer.MAX_VALUE;
        int settledMax = 0;
        while (now < duration) {
            while (inFlight < limit.limit()) {
                inFlight++;
                running.add(new Request(now, now + service * Math.max(permits, inFlight) / permits, inFlight));
            }
            Request done = running.poll();
            now = done.end;
            limit.onSample(done.start, done.end, done.inFlight);
            inFlight--;
            if (now > duration * 2 / 3) {
                settledMin = Math.min(settledMin, limit.limit());
                settledMax = Math.max(settledMax, limit.limit());
            }
        }
        assertThat(settledMin).as("lowest limit once settled, %d permits", permits).isGreaterThanOrEqualTo(permits);
        assertThat(settledMax).as("highest limit once settled, %d permits", permits).isLessThanOrEqualTo(2 * permits);
    }
}
