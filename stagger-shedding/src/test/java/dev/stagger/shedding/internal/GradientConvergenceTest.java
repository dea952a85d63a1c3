package dev.stagger.shedding.internal;

import dev.stagger.internal.LimitAlgorithm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.RandomSource;
import dev.stagger.shedding.GradientLimit;
import java.util.ArrayDeque;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * The gradient limit against a discrete-event model of a server that works on {@code permits}
 * requests at once, each for {@code serviceMs} (varying by up to {@code jitterPerMille} either
 * way: a little, as a real server's service time always does), and queues the rest in arrival order, under more load than it can take: a free slot under
 * the limit is filled at once. A request's latency is its wait for a permit plus its service.
 * Once settled, the limit must keep the server busy (the permits busy at least 97 % of the time:
 * goodput), and admitted requests must wait at most about one more service time (p99 latency
 * within 2.1 times the longest service time: about 2x of idle).
 *
 * <p>The settled limit is about {@code 1.25 N + sqrt(1.25 N)}, hence from 8 permits up: for fewer,
 * the square-root headroom is most of {@code N} itself and some requests wait two service times.
 * And with service times varying by 1 % or more: a server whose requests all take exactly the
 * same time completes them in lockstep batches, which makes latencies jump by whole service times
 * and the limit with them.
 */
class GradientConvergenceTest {
    private static final long MS = 1_000_000L;

    /** An admitted request; {@code end} is set when it gets a permit. */
    private record Request(long start, long end, int inFlight) {
    }

    /**
     * Over the last third of the run: the lowest and highest limit, the p99 latency in service
     * times, and the share of the time the permits were busy (goodput against capacity).
     */
    private record Settled(int min, int max, double p99, double goodput, double minRttInServiceTimes) {
    }

    @Property(tries = 100)
    void keepsTheServerBusyAndAdmittedLatencyWithinTwiceIdle(@ForAll @IntRange(min = 8, max = 100) int permits,
                                                             @ForAll @IntRange(min = 5, max = 1_000) int serviceMs,
                                                             @ForAll @IntRange(min = 10, max = 200) int jitterPerMille,
                                                             @ForAll long seed) {
        Settled settled = run(permits, serviceMs, jitterPerMille, seed, beforeTheFirstReMeasure(serviceMs));
        assertThat(settled.goodput()).as("goodput once settled, %s", settled).isGreaterThanOrEqualTo(0.97);
        assertThat(settled.p99()).as("p99 latency in service times, %s", settled).isLessThanOrEqualTo(2.1 * (1 + jitterPerMille / 1000.0));
    }

    /**
     * A steady service time makes latencies two-valued (a free slot, or a wait of one service
     * time): their median flips between the two and swings the limit (from 19 to 35 here, p99 2.8
     * service times); their mean holds it between 22 and 27.
     */
    @Example
    void aSteadyServiceTimeDoesNotSwingTheLimitPastTwiceThePermits() {
        Settled settled = run(16, 40, 5, 1, beforeTheFirstReMeasure(40));
        assertThat(settled.max()).as("%s", settled).isLessThanOrEqualTo(32);
        assertThat(settled.p99()).as("%s", settled).isLessThanOrEqualTo(2.01);
    }

    /**
     * Ten minutes at full load, with nine measurements of the minRTT again. Each starts at what the
     * server was just serving (about 25 in flight); requests queue there (the limit is above the
     * permits), so it measures again at half, where they do not: the limit never drops below half
     * of what it served (12 here; it dropped to the floor of 3 before), goodput does not dip, and
     * no measurement raises the minRTT by the queueing it saw (which would ratchet the minRTT, and
     * latency with it, up at every measurement).
     */
    @Example
    void measuringTheMinRttAgainUnderFullLoadKeepsTheServerBusyAndDoesNotRaiseIt() {
        Settled settled = run(16, 40, 50, 3, 600_000 * MS);
        assertThat(settled.min()).as("%s", settled).isGreaterThanOrEqualTo(16 / 2);
        assertThat(settled.goodput()).as("%s", settled).isGreaterThanOrEqualTo(0.97);
        assertThat(settled.p99()).as("%s", settled).isLessThanOrEqualTo(2.1 * 1.05);
        assertThat(settled.minRttInServiceTimes()).as("%s", settled).isBetween(0.95, 1.05);
    }

    private static long beforeTheFirstReMeasure(int serviceMs) {
        return Math.min(55_000 * MS, 300 * Math.max(100 * MS, 2 * serviceMs * MS)); // before the 60 s re-measure
    }

    private static Settled run(int permits, int serviceMs, int jitterPerMille, long seed, long duration) {
        SplittableRandom random = new SplittableRandom(seed);
        long service = serviceMs * MS;
        GradientAlgorithm limit = (GradientAlgorithm) Limits.algorithm(GradientLimit.builder().build(),
                RandomSource.sequence(0.5), 0);
        PriorityQueue<Request> serving = new PriorityQueue<>((a, b) -> Long.compare(a.end, b.end));
        ArrayDeque<Request> waiting = new java.util.ArrayDeque<>();
        int inFlight = 0;
        long now = 0;
        int min = Integer.MAX_VALUE;
        int max = 0;
        java.util.List<Long> latencies = new java.util.ArrayList<>();
        long settledFrom = duration * 2 / 3;
        double busy = 0;
        while (now < duration) {
            while (inFlight < limit.limit()) {
                inFlight++;
                waiting.add(new Request(now, 0, inFlight));
            }
            while (serving.size() < permits && !waiting.isEmpty()) {
                Request next = waiting.poll();
                long own = (long) (service * (1 + jitterPerMille / 1000.0 * (2 * random.nextDouble() - 1)));
                serving.add(new Request(next.start, now + own, next.inFlight));
            }
            Request done = serving.poll();
            if (done.end > settledFrom) { // permits serving until this completion
                busy += (serving.size() + 1.0) * (done.end - Math.max(now, settledFrom));
            }
            now = done.end;
            limit.onSample(done.start, done.end, done.inFlight);
            inFlight--;
            if (now > settledFrom) {
                min = Math.min(min, limit.limit());
                max = Math.max(max, limit.limit());
                latencies.add(done.end - done.start);
            }
        }
        java.util.Collections.sort(latencies);
        double p99 = latencies.get((int) Math.ceil(0.99 * latencies.size()) - 1) / (double) service;
        return new Settled(min, max, p99, busy / (permits * (double) (now - settledFrom)),
                limit.minRttNanos() / (double) service);
    }
}
