package dev.stagger.sim;

/**
 * What one {@code tail} run of one set-up at one load measured. Latency is a call's time from its
 * start to its answer as the caller sees it (the first good answer of any attempt). Extra load is
 * the attempts that reached the server beyond one per call, as a share of the calls: what the
 * hedges cost the server, loser's work included when it had started.
 *
 * @param setup the client set-up
 * @param overloaded whether this is the overloaded run
 * @param offeredRate calls per second offered
 * @param calls calls made
 * @param attempts attempts that reached the server
 * @param hedges hedges sent ({@link dev.stagger.RetryEvent.HedgeSent})
 * @param hedgesWon calls a hedge answered first ({@link dev.stagger.RetryEvent.HedgeWon})
 * @param p50Ms median latency, in milliseconds
 * @param p99Ms 99th percentile latency, in milliseconds
 * @param p999Ms 99.9th percentile latency, in milliseconds
 */
public record TailResult(TailSetup setup, boolean overloaded, double offeredRate, long calls, long attempts,
                         long hedges, long hedgesWon, double p50Ms, double p99Ms, double p999Ms) {
    /** Attempts beyond one per call, as a share of the calls: 0.05 is 5 % more requests. */
    public double extraLoad() {
        return calls == 0 ? 0 : (attempts - calls) / (double) calls;
    }

    /** {@code "normal"} or {@code "overload"}. */
    public String loadLabel() {
        return overloaded ? "overload" : "normal";
    }
}
