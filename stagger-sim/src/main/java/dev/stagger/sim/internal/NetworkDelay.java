package dev.stagger.sim.internal;

import java.util.SplittableRandom;

/** One-way message delays drawn from {@code |Normal(mean, sd)|}, as in the AWS post's model. */
public final class NetworkDelay {
    private final SplittableRandom random;
    private final double meanNanos;
    private final double sdNanos;
    private double spare = Double.NaN;

    public NetworkDelay(SplittableRandom random, long meanNanos, long sdNanos) {
        this.random = random;
        this.meanNanos = meanNanos;
        this.sdNanos = sdNanos;
    }

    /** The next delay in nanoseconds; never negative. */
    public long nextNanos() {
        return (long) Math.abs(meanNanos + sdNanos * nextGaussian());
    }

    /** Box-Muller, keeping the second value of each pair for the next call. */
    private double nextGaussian() {
        if (!Double.isNaN(spare)) {
            double g = spare;
            spare = Double.NaN;
            return g;
        }
        double u1 = 1.0 - random.nextDouble(); // (0, 1]: log is finite
        double u2 = random.nextDouble();
        double r = Math.sqrt(-2.0 * Math.log(u1));
        spare = r * Math.sin(2 * Math.PI * u2);
        return r * Math.cos(2 * Math.PI * u2);
    }
}
