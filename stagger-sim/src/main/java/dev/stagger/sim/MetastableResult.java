package dev.stagger.sim;

import dev.stagger.EndReason;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What one {@code metastable} run of one scenario measured. Series are per second of simulated
 * time, from 0 to the end of traffic. Immutable.
 *
 * <p><b>Goodput</b> is calls that succeeded, counted in the second they succeeded: work the server
 * did for a client still waiting. <b>Recovered</b> is the first second, at or after the end of the
 * trigger, from which goodput stays at or above {@value #RECOVERED_SHARE} of the offered rate
 * until the end of traffic; the time to recover is that second minus the end of the trigger
 * (zero when goodput never dropped after the trigger), empty when it never recovered.
 */
public final class MetastableResult {
    /** The share of the offered rate that goodput must hold to count as recovered. */
    public static final double RECOVERED_SHARE = 0.9;

    private final MetastableSetup setup;
    private final double capacity;
    private final double reducedCapacity;
    private final double offeredRate;
    private final int triggerFromSecond;
    private final int triggerToSecond;
    private final int[] goodput;
    private final int[] load;
    private final long calls;
    private final long attempts;
    private final long shed;
    private final long dropped;
    private final double p50LatencyMs;
    private final double p99LatencyMs;
    private final Map<EndReason, Long> reasons;

    /** Built by the simulator. */
    public MetastableResult(MetastableSetup setup, MetastableConfig config, int[] goodput, int[] load, long calls,
                            long attempts, long shed, long dropped, double p50LatencyMs, double p99LatencyMs,
                            Map<EndReason, Long> reasons) {
        this.setup = setup;
        this.capacity = config.capacity();
        this.reducedCapacity = capacity * config.workersDuringTrigger() / config.workers();
        this.offeredRate = config.offeredRate();
        this.triggerFromSecond = (int) config.triggerStart().toSeconds();
        this.triggerToSecond = (int) config.triggerStart().plus(config.triggerLength()).toSeconds();
        this.goodput = goodput.clone();
        this.load = load.clone();
        this.calls = calls;
        this.attempts = attempts;
        this.shed = shed;
        this.dropped = dropped;
        this.p50LatencyMs = p50LatencyMs;
        this.p99LatencyMs = p99LatencyMs;
        EnumMap<EndReason, Long> copy = new EnumMap<>(EndReason.class);
        copy.putAll(reasons);
        this.reasons = Collections.unmodifiableMap(copy);
    }

    /** The clients and server this run had. */
    public MetastableSetup setup() {
        return setup;
    }

    /** Requests per second the server completes with every worker. */
    public double capacity() {
        return capacity;
    }

    /** Requests per second it completes during the trigger. */
    public double reducedCapacity() {
        return reducedCapacity;
    }

    public double offeredRate() {
        return offeredRate;
    }

    public int triggerFromSecond() {
        return triggerFromSecond;
    }

    public int triggerToSecond() {
        return triggerToSecond;
    }

    /** Calls that succeeded, per second of simulated time. */
    public List<Integer> goodput() {
        return Arrays.stream(goodput).boxed().toList();
    }

    /** Attempts that reached the server, per second (served, queued, shed or dropped). */
    public List<Integer> load() {
        return Arrays.stream(load).boxed().toList();
    }

    /** Calls started. */
    public long calls() {
        return calls;
    }

    /** Attempts that reached the server. */
    public long attempts() {
        return attempts;
    }

    /** Attempts the server shed with 503 and Retry-After. */
    public long shed() {
        return shed;
    }

    /** Attempts dropped unanswered because the server's queue was full. */
    public long dropped() {
        return dropped;
    }

    /** Median time from the start of a call to its success, in milliseconds. */
    public double p50LatencyMs() {
        return p50LatencyMs;
    }

    /** 99th percentile of the time from the start of a call to its success, in milliseconds. */
    public double p99LatencyMs() {
        return p99LatencyMs;
    }

    /** Calls ended, by reason, as the retry engine reported them. */
    public Map<EndReason, Long> reasons() {
        return reasons;
    }

    /** Calls that succeeded. */
    public long succeeded() {
        return reasons.getOrDefault(EndReason.SUCCESS, 0L) + reasons.getOrDefault(EndReason.RECOVERED, 0L);
    }

    /** The lowest goodput of a second wholly inside the trigger. */
    public int minGoodputDuringTrigger() {
        return min(triggerFromSecond, triggerToSecond);
    }

    /** Mean goodput over the trigger. */
    public double meanGoodputDuringTrigger() {
        return mean(triggerFromSecond, triggerToSecond);
    }

    /** The highest goodput of a second after the trigger. */
    public int maxGoodputAfterTrigger() {
        int max = 0;
        for (int s = triggerToSecond; s < goodput.length; s++) {
            max = Math.max(max, goodput[s]);
        }
        return max;
    }

    /** Mean goodput from the end of the trigger to the end of traffic. */
    public double meanGoodputAfterTrigger() {
        return mean(triggerToSecond, goodput.length);
    }

    /** How long after the end of the trigger goodput was back for good; empty if it never was. */
    public Optional<Duration> timeToRecover() {
        double threshold = RECOVERED_SHARE * offeredRate;
        int from = goodput.length;
        for (int s = goodput.length - 1; s >= triggerToSecond && goodput[s] >= threshold; s--) {
            from = s;
        }
        return from == goodput.length ? Optional.empty() : Optional.of(Duration.ofSeconds(from - triggerToSecond));
    }

    private int min(int from, int to) {
        int min = Integer.MAX_VALUE;
        for (int s = from; s < Math.min(to, goodput.length); s++) {
            min = Math.min(min, goodput[s]);
        }
        return min == Integer.MAX_VALUE ? 0 : min;
    }

    private double mean(int from, int to) {
        int end = Math.min(to, goodput.length);
        if (end <= from) {
            return 0;
        }
        long sum = 0;
        for (int s = from; s < end; s++) {
            sum += goodput[s];
        }
        return sum / (double) (end - from);
    }

    @Override
    public String toString() {
        return "MetastableResult{" + setup.label() + ", goodput during trigger " + Math.round(meanGoodputDuringTrigger())
                + "/s, after " + Math.round(meanGoodputAfterTrigger()) + "/s, recovered "
                + timeToRecover().map(Duration::toString).orElse("never") + ", p99 " + Math.round(p99LatencyMs) + " ms}";
    }
}
