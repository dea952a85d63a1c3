package dev.stagger.internal;

import dev.stagger.Backoff;
import dev.stagger.RandomSource;
import java.time.Duration;

/**
 * Kubernetes apimachinery's {@code wait.Backoff.Step()}, with the same integer arithmetic. Per
 * retry, with {@code D} the current duration:
 * <ul>
 *   <li>steps left below 1: sleep {@code D} (jittered); nothing changes;
 *   <li>otherwise one step is used; if {@code factor != 0} the next duration is
 *       {@code (long) (D · factor)}, and if {@code cap > 0} and it exceeds the cap it becomes the
 *       cap and no steps are left; if {@code factor == 0} it stays {@code D} (the cap is not
 *       applied); then sleep {@code D} (jittered) and move to the next duration.
 *   <li>jittered: {@code D + (long) (r · jitter · D)} with {@code r} in [0, 1), only when
 *       {@code jitter > 0}.
 * </ul>
 * The sleep itself is never capped, only the next duration: a first duration above the cap is
 * slept once as given, then the cap. Where Go's int64 arithmetic would overflow (past ~292 years)
 * the values saturate at {@link Long#MAX_VALUE} nanoseconds instead. See {@link Backoff#kubernetes}.
 */
public final class KubernetesBackoff implements Backoff {
    /** Steps simulated to find the largest duration; beyond it a growing schedule is bounded by the cap or not at all. */
    private static final int SIMULATED_STEPS = 10_000;

    private final long durationNanos;
    private final double factor;
    private final double jitter;
    private final int steps;
    private final long capNanos;
    private final long ceilingNanos;

    public KubernetesBackoff(Duration duration, double factor, double jitter, int steps, Duration cap) {
        this.durationNanos = Checks.nanos(Checks.positive("duration", duration));
        if (!(factor >= 0) || Double.isInfinite(factor)) {
            throw new IllegalArgumentException("factor must be a finite number >= 0, got " + factor);
        }
        this.factor = factor;
        if (!(jitter >= 0) || Double.isInfinite(jitter)) {
            throw new IllegalArgumentException("jitter must be a finite number >= 0, got " + jitter);
        }
        this.jitter = jitter;
        this.steps = Checks.atLeast("steps", steps, 0);
        this.capNanos = Checks.nanos(Checks.nonNegative("cap", cap));
        this.ceilingNanos = largestJittered(largestDuration());
    }

    /** The largest sleep: the largest duration the schedule holds, plus all of its jitter. */
    @Override
    public Duration maxDelay() {
        return Duration.ofNanos(ceilingNanos);
    }

    @Override
    public Schedule start(RandomSource random) {
        return new KubernetesSchedule(random, durationNanos, steps, false);
    }

    /**
     * The state is the current duration {@code D}, as {@code ~D} (negative) once the cap has used
     * up the steps or {@code D} is 0 (nothing changes any more either way); the steps left are
     * otherwise derived from the retry number, one per retry. 0 is a schedule that has not begun.
     */
    @Override
    public Schedule resume(RandomSource random, long state) {
        if (state == 0) {
            return start(random);
        }
        return state < 0 ? new KubernetesSchedule(random, ~state, 0, true)
                : new KubernetesSchedule(random, state, -1, false);
    }

    private final class KubernetesSchedule implements Schedule {
        private final RandomSource random;
        private long d;
        /** Steps left; -1 until the first retry number tells how many a resumed schedule has used. */
        private int stepsLeft;
        private boolean frozen;

        KubernetesSchedule(RandomSource random, long d, int stepsLeft, boolean frozen) {
            this.random = random;
            this.d = d;
            this.stepsLeft = stepsLeft;
            this.frozen = frozen;
        }

        @Override
        public long nextDelayNanos(int retry) {
            if (stepsLeft < 0) {
                stepsLeft = (int) Math.max(0, (long) steps - (retry - 1));
            }
            long current = d;
            if (stepsLeft >= 1) {
                stepsLeft--;
                if (factor != 0) {
                    long next = next(current);
                    if (capNanos > 0 && next > capNanos) {
                        next = capNanos;
                        stepsLeft = 0;
                        frozen = true;
                    }
                    d = next;
                }
            }
            return jitter > 0 ? jittered(current, random.nextDouble()) : current;
        }

        @Override
        public long state() {
            return frozen || d == 0 ? ~d : d;
        }
    }

    /** Go's {@code time.Duration(float64(d) * factor)}; Java's cast saturates where Go's overflows. */
    private long next(long d) {
        return (long) (d * factor);
    }

    /** Go's {@code wait.Jitter}: {@code d + time.Duration(r * jitter * float64(d))}, saturating. */
    private long jittered(long d, double r) {
        long extra = (long) (r * jitter * d);
        return d > Long.MAX_VALUE - extra ? Long.MAX_VALUE : d + extra;
    }

    private long largestJittered(long d) {
        if (jitter == 0) {
            return d;
        }
        // r < 1, so r·jitter·d rounds to at most jitter·d: this is the bound of jittered(d, r)
        long extra = (long) (jitter * d);
        return d > Long.MAX_VALUE - extra ? Long.MAX_VALUE : d + extra;
    }

    /** The largest duration the schedule ever holds (the sleep before its jitter). */
    private long largestDuration() {
        if (steps == 0 || factor == 0) {
            return durationNanos; // never changes
        }
        if (factor <= 1) {
            // only shrinks, except that float64(D) may round up past 2^53; no step goes further
            return Math.max(durationNanos, (long) (double) durationNanos);
        }
        long largest = durationNanos;
        long d = durationNanos;
        for (int i = 0; i < Math.min(steps, SIMULATED_STEPS); i++) {
            long next = next(d);
            if (capNanos > 0 && next > capNanos) {
                return Math.max(largest, capNanos);
            }
            if (next == d) {
                return largest; // a fixed point: truncation ate the growth, or saturated
            }
            d = next;
            largest = Math.max(largest, d);
        }
        if (steps > SIMULATED_STEPS) {
            return capNanos > 0 ? Math.max(largest, capNanos) : Long.MAX_VALUE;
        }
        return largest;
    }

    @Override
    public String toString() {
        return "kubernetes(duration=" + Duration.ofNanos(durationNanos) + ", factor=" + factor + ", jitter="
                + jitter + ", steps=" + steps + ", cap=" + Duration.ofNanos(capNanos) + ")";
    }
}
