package dev.stagger.sim;

import dev.stagger.EndReason;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * What one {@code layers} run of one set-up measured. Immutable.
 *
 * <p>Per-request figures ({@link #arrivalsPerRequest()}, {@link #bottomAttemptsPerRequest()},
 * {@link #lateAttemptsPerRequest()}) are means over the requests that met the failure: those
 * started while the bottom was down, or every request when the configuration has no outage. An
 * attempt is <b>late</b> when it reaches the bottom at or after the moment its user stopped
 * waiting ({@code userTimeout} after the request began): work for nobody. <b>Latency</b> is what
 * the user saw: the time to an answer (success or failure), or the whole {@code userTimeout} when
 * none came in time.
 */
public final class LayersResult {
    private final LayersSetup setup;
    private final int tiers;
    private final int attempts;
    private final long userTimeoutMs;
    private final long requests;
    private final long affected;
    private final long succeeded;
    private final long failed;
    private final long timedOut;
    private final double[] arrivalsPerRequest;
    private final int maxBottomAttempts;
    private final double latePerRequest;
    private final long bottomAttempts;
    private final long lateAttempts;
    private final double p50Ms;
    private final double p90Ms;
    private final double p99Ms;
    private final int[] bottomLoad;
    private final Map<EndReason, Long> edgeReasons;
    private final Map<EndReason, Long> innerReasons;

    /** Built by the simulator. */
    public LayersResult(LayersSetup setup, LayersConfig config, long requests, long affected, long succeeded,
                        long failed, long timedOut, double[] arrivalsPerRequest, int maxBottomAttempts,
                        double latePerRequest, long bottomAttempts, long lateAttempts, double p50Ms, double p90Ms,
                        double p99Ms, int[] bottomLoad, Map<EndReason, Long> edgeReasons,
                        Map<EndReason, Long> innerReasons) {
        this.setup = setup;
        this.tiers = config.tiers();
        this.attempts = config.attempts();
        this.userTimeoutMs = config.userTimeout().toMillis();
        this.requests = requests;
        this.affected = affected;
        this.succeeded = succeeded;
        this.failed = failed;
        this.timedOut = timedOut;
        this.arrivalsPerRequest = arrivalsPerRequest.clone();
        this.maxBottomAttempts = maxBottomAttempts;
        this.latePerRequest = latePerRequest;
        this.bottomAttempts = bottomAttempts;
        this.lateAttempts = lateAttempts;
        this.p50Ms = p50Ms;
        this.p90Ms = p90Ms;
        this.p99Ms = p99Ms;
        this.bottomLoad = bottomLoad.clone();
        this.edgeReasons = copy(edgeReasons);
        this.innerReasons = copy(innerReasons);
    }

    private static Map<EndReason, Long> copy(Map<EndReason, Long> reasons) {
        EnumMap<EndReason, Long> copy = new EnumMap<>(EndReason.class);
        copy.putAll(reasons);
        return Collections.unmodifiableMap(copy);
    }

    /** The guards this run had. */
    public LayersSetup setup() {
        return setup;
    }

    /** Services between the user and the bottom, the edge included. */
    public int tiers() {
        return tiers;
    }

    /** Attempts each tier makes on its downstream. */
    public int attempts() {
        return attempts;
    }

    public long userTimeoutMs() {
        return userTimeoutMs;
    }

    /** User requests sent. */
    public long requests() {
        return requests;
    }

    /** Requests that met the failure: the per-request means are over these. */
    public long affectedRequests() {
        return affected;
    }

    /** Requests whose user got a success in time. */
    public long succeeded() {
        return succeeded;
    }

    /** Requests whose user got a failure in time. */
    public long failed() {
        return failed;
    }

    /** Requests whose user stopped waiting before any answer came. */
    public long timedOut() {
        return timedOut;
    }

    /** The share of requests whose user got a success in time, in [0, 1]. */
    public double successShare() {
        return requests == 0 ? 0 : succeeded / (double) requests;
    }

    /**
     * Attempts that reached each tier per request that met the failure: index 0 is the edge
     * (1 for every request), index {@code tiers} the bottom.
     */
    public List<Double> arrivalsPerRequest() {
        return Arrays.stream(arrivalsPerRequest).boxed().toList();
    }

    /** Attempts that reached the bottom per request that met the failure. */
    public double bottomAttemptsPerRequest() {
        return arrivalsPerRequest[tiers];
    }

    /** The most attempts one request made at the bottom. */
    public int maxBottomAttemptsPerRequest() {
        return maxBottomAttempts;
    }

    /** Attempts that reached the bottom after their user stopped waiting, per request that met the failure. */
    public double lateAttemptsPerRequest() {
        return latePerRequest;
    }

    /** Attempts that reached the bottom, all requests. */
    public long bottomAttempts() {
        return bottomAttempts;
    }

    /** Attempts that reached the bottom after their user stopped waiting, all requests. */
    public long lateAttempts() {
        return lateAttempts;
    }

    /** Median latency the users saw, in milliseconds. */
    public double p50LatencyMs() {
        return p50Ms;
    }

    public double p90LatencyMs() {
        return p90Ms;
    }

    public double p99LatencyMs() {
        return p99Ms;
    }

    /** Attempts reaching the bottom per second of simulated time, until the last one. */
    public List<Integer> bottomLoad() {
        return Arrays.stream(bottomLoad).boxed().toList();
    }

    /** How the edge's calls ended, as its retry engine reported them. */
    public Map<EndReason, Long> edgeReasons() {
        return edgeReasons;
    }

    /** How the calls of the tier next to the bottom ended, as its retry engine reported them. */
    public Map<EndReason, Long> innerReasons() {
        return innerReasons;
    }

    @Override
    public String toString() {
        return "LayersResult{" + setup.label() + ", " + String.format(java.util.Locale.ROOT,
                "%.1f attempts at the bottom per request (%.1f late, max %d), %.0f %% succeeded, p99 %.0f ms}",
                bottomAttemptsPerRequest(), latePerRequest, maxBottomAttempts, 100 * successShare(), p99Ms);
    }
}
