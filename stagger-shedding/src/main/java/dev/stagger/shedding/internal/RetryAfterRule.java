package dev.stagger.shedding.internal;

/**
 * How many seconds a shed request is told to wait. Immutable and thread-safe.
 *
 * <p>Base: {@code (inFlight + shed) / admitted} seconds, where {@code shed} and {@code admitted}
 * are counted over the same trailing second: the time the server needs, at the rate it is
 * draining now, to work through what it holds plus the demand it turned away in the last second.
 * Admissions measure the drain rate: while requests are being shed the server is at its limit,
 * where a request is admitted only when another completes, so admissions per second are
 * completions per second — without the lag of one latency that would make a count of completions
 * far too low just after overload begins. Rounded up, then clamped to [min, max]. With nothing
 * admitted in the last second there is no rate to divide by, and the base is the minimum.
 *
 * <p>Jitter: Retry-After is whole seconds (RFC 9110 delay-seconds), so the spread is too. The
 * value is uniform over the integers {@code base .. base + spread}, with
 * {@code spread = max(1, ceil(base * jitter))} (none when jitter is 0), shifted down where it
 * would pass the maximum so that the maximum stays a hard ceiling.
 */
public final class RetryAfterRule {
    private final long minSeconds;
    private final long maxSeconds;
    private final double jitter;

    public RetryAfterRule(long minSeconds, long maxSeconds, double jitter) {
        if (minSeconds < 0 || maxSeconds < minSeconds || !(jitter >= 0)) {
            throw new IllegalArgumentException("need 0 <= min <= max and jitter >= 0, got " + minSeconds + ", "
                    + maxSeconds + ", " + jitter);
        }
        this.minSeconds = minSeconds;
        this.maxSeconds = maxSeconds;
        this.jitter = jitter;
    }

    /** The wait before jitter, in whole seconds. */
    public long baseSeconds(int inFlight, double shedLastSecond, double admittedLastSecond) {
        if (!(admittedLastSecond > 0)) {
            return minSeconds;
        }
        double seconds = (Math.max(0, inFlight) + Math.max(0.0, shedLastSecond)) / admittedLastSecond;
        if (!(seconds < maxSeconds)) {
            return maxSeconds; // also NaN and infinity
        }
        return Math.max(minSeconds, (long) Math.ceil(seconds));
    }

    /**
     * The jittered wait.
     *
     * @param base a value from {@link #baseSeconds}
     * @param uniform a random number in [0, 1)
     */
    public long jittered(long base, double uniform) {
        long spread = jitter == 0 ? 0 : Math.max(1, (long) Math.ceil(base * jitter));
        long low = base;
        long high = base + spread;
        if (high > maxSeconds) {
            high = maxSeconds;
            low = Math.max(minSeconds, maxSeconds - spread);
        }
        long pick = low + (long) (uniform * (high - low + 1));
        return Math.min(high, pick);
    }
}
