package dev.stagger.shedding;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.shedding.overload.CapacityServer;
import dev.stagger.shedding.overload.OpenLoopLoad;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A real run at three times a handler's capacity, on loopback: Jetty with a handler of 4 permits
 * and 200 ms of service (20 requests/s), and an open-loop load of 60 requests/s for 6 s with a 4 s
 * client timeout; the first 2.5 s, in which the gradient limit measures its minRTT and climbs, are
 * not recorded. The assertions must hold on a loaded two-core machine, where a starved JVM adds
 * hundreds of milliseconds to any request, so they are about behaviour — bounded against
 * unbounded — with wide margins: admitted requests take a few service times (median at most 8,
 * p90 at most 15, where the timeout is 20) and hardly any client times out. The same load without
 * the filter is the negative control: the same check fails there, because the queue grows until
 * clients time out. The figures (goodput, p99 against unloaded) come from the harness in
 * stagger-benchmarks.
 */
class OverloadTest {
    private static final int PERMITS = 4;
    private static final Duration SERVICE = Duration.ofMillis(200);
    private static final Duration TIMEOUT = Duration.ofSeconds(4);

    private static OpenLoopLoad.Result overload(LoadSheddingFilter... filter) throws Exception {
        try (CapacityServer server = CapacityServer.start(PERMITS, SERVICE, filter)) {
            return new OpenLoopLoad(3 * server.capacityPerSecond(), Duration.ofSeconds(6), Duration.ofMillis(2_500),
                    TIMEOUT, 1_000).run(server.uri());
        }
    }

    /** Admitted latency within a few service times, and hardly any client gave up. */
    private static boolean bounded(OpenLoopLoad.Result r) {
        return r.ok > 0 && r.okLatency(0.5).compareTo(SERVICE.multipliedBy(8)) <= 0
                && r.okLatency(0.9).compareTo(SERVICE.multipliedBy(15)) <= 0
                && r.timedOut * 20 <= r.sent;
    }

    @Test
    void withTheFilterTheExcessIsShedWithRetryAfterAndAdmittedLatencyStaysBounded() throws Exception {
        LoadSheddingFilter filter = LoadSheddingFilter.builder("overload")
                .limit(GradientLimit.builder().minRttSamples(20).build()).build();

        OpenLoopLoad.Result result = overload(filter);

        assertThat(result.shed).as("shed, of %s", result).isPositive();
        assertThat(result.shedWithRetryAfter).as("shed with Retry-After").isEqualTo(result.shed);
        assertThat(result.minRetryAfter).as("shortest Retry-After").isPositive();
        assertThat(bounded(result)).as("bounded: %s", result).isTrue();
        assertThat(result.goodputPerSecond()).as("goodput, of %s", result)
                .isGreaterThan(PERMITS / (SERVICE.toMillis() / 1000.0) / 2);
    }

    @Test
    void withoutTheFilterTheQueueGrowsUntilClientsTimeOut() throws Exception {
        OpenLoopLoad.Result result = overload();

        assertThat(bounded(result)).as("bounded: %s", result).isFalse();
        assertThat(result.timedOut * 2).as("timed out, of %s", result).isGreaterThan(result.sent);
    }
}
