package dev.stagger.internal;

/**
 * The running state of a concurrency limit: takes samples of completed work and says how much may
 * be in flight. One home for the algorithms shared by the server side (stagger-shedding's filter)
 * and the client side (core's {@link dev.stagger.Bulkhead}). Implementations are thread-safe;
 * {@link #limit()} is a volatile read, cheap enough for every request.
 */
public interface LimitAlgorithm {

    /** The number of requests that may be in flight now, at least 1. */
    int limit();

    /**
     * Records one completed request.
     *
     * @param startNanos when it was admitted ({@link dev.stagger.Clock#nanoTime()})
     * @param endNanos when it completed, on the same clock
     * @param inFlight requests in flight when it was admitted, itself included
     * @return the limit after this sample
     */
    int onSample(long startNanos, long endNanos, int inFlight);

    /**
     * Records one request that failed in a way that says the downstream is overloaded (a timeout,
     * a 503): a drop, in TCP's terms. By default a drop says nothing and the limit is unchanged.
     *
     * @return the limit after it
     */
    default int onDrop(long startNanos, long endNanos) {
        return limit();
    }

    /**
     * How long a request may run before it counts as long: it then stops holding a slot of the
     * limit (see stagger-shedding's limiter). {@link Long#MAX_VALUE}, the default, never: a fixed
     * limit or AIMD counts every request until it ends.
     */
    default long longRequestNanos() {
        return Long.MAX_VALUE;
    }

    /** A constant limit. */
    static LimitAlgorithm fixed(int limit) {
        return new LimitAlgorithm() {
            @Override
            public int limit() {
                return limit;
            }

            @Override
            public int onSample(long startNanos, long endNanos, int inFlight) {
                return limit;
            }
        };
    }
}
