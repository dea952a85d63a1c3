package dev.stagger;

import dev.stagger.CircuitBreaker.State;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.function.Supplier;

/**
 * The breaker's documented contract as a plain sequential object: the specification the Lincheck
 * tests hold {@link CircuitBreaker} to. One method per harness operation, with the same
 * signatures as {@link BreakerHarness}; each caller holds its permits on a stack, as the harness does.
 *
 * <p>What it states, in the order the Javadoc of {@link CircuitBreaker} states it:
 * <ul>
 *   <li>CLOSED counts every recorded outcome, whatever phase issued its permit, in the bucket of
 *       the time it is recorded; after each one it trips when {@code consecutive >= N} or when the
 *       window holds at least {@code minimumCalls} and {@code failures / calls >= threshold},
 *       compared exactly as decimals; the open period starts at that moment.</li>
 *   <li>OPEN ignores outcomes and refuses calls until its end; the first call after it moves the
 *       breaker to HALF_OPEN and takes one of its permits.</li>
 *   <li>HALF_OPEN admits {@code halfOpenPermits} probes; a released probe permit returns only to
 *       the period that issued it; a success counts only when its permit is a probe of this period
 *       (all probes succeeding closes it with fresh counts); any failure re-opens it.</li>
 *   <li>{@code reset()} closes it with fresh counts.</li>
 *   <li>{@code forceOpen()} opens it (from any state) and holds it there, refusing every call and
 *       ignoring every outcome, until {@code reset()}.</li>
 * </ul>
 */
class BreakerModel {

    /** One configuration, shared by a harness and its model. */
    record Config(int consecutiveFailures, double failureRateThreshold, int minimumCalls, Duration window,
                  int buckets, Duration openDuration, int halfOpenPermits, Duration step,
                  Supplier<Backoff> openBackoff, long seed) {

        boolean rateMode() {
            return failureRateThreshold > 0;
        }

        CircuitBreaker.Builder builder(dev.stagger.Clock clock) {
            CircuitBreaker.Builder b = CircuitBreaker.builder("lincheck").clock(clock).openDuration(openDuration)
                    .halfOpenPermits(halfOpenPermits).window(window).buckets(buckets)
                    .random(RandomSource.seeded(seed));
            if (consecutiveFailures > 0) {
                b.consecutiveFailures(consecutiveFailures);
            }
            if (rateMode()) {
                b.failureRateThreshold(failureRateThreshold).minimumCalls(minimumCalls);
            }
            if (openBackoff != null) {
                b.openBackoff(openBackoff.get());
            }
            return b;
        }
    }

    /** What a metrics read is compared on: the fields the Javadoc says are one consistent reading. */
    record Reading(State state, long calls, long failures, int consecutiveFailures) {
        static Reading of(CircuitBreaker.Metrics m) {
            return new Reading(m.state(), m.calls(), m.failures(), m.consecutiveFailures());
        }
    }

    private final Config config;
    private final long bucketNanos;
    private final BigDecimal threshold;
    private final Backoff openBackoff;
    private final RandomSource random;

    private long now;
    private State phase = State.CLOSED;
    private int phaseId;
    private final List<long[]> outcomes = new ArrayList<>(); // {epoch, 1 if failure}
    private int consecutive;
    private long until;
    /** Held open by forceOpen until reset. */
    private boolean forced;
    private int opens;
    private Backoff.Schedule schedule;
    private int permitsLeft;
    private int successes;
    @SuppressWarnings("unchecked")
    private final Deque<Integer>[] held = (Deque<Integer>[]) new Deque<?>[BreakerHarness.CALLERS];

    BreakerModel(Config config) {
        this.config = config;
        this.bucketNanos = config.window().toNanos() / config.buckets();
        this.threshold = config.rateMode() ? BigDecimal.valueOf(config.failureRateThreshold()) : null;
        this.openBackoff = config.openBackoff() == null ? null : config.openBackoff().get();
        this.random = RandomSource.seeded(config.seed());
        for (int i = 0; i < held.length; i++) {
            held[i] = new ArrayDeque<>();
        }
    }

    public boolean acquire(int caller) {
        switch (phase) {
            case CLOSED:
                break;
            case OPEN:
                if (forced || now < until) {
                    return false;
                }
                enter(State.HALF_OPEN);
                permitsLeft = config.halfOpenPermits();
                successes = 0;
                break;
            default:
                break;
        }
        if (phase == State.HALF_OPEN) {
            if (permitsLeft == 0) {
                return false;
            }
            permitsLeft--;
        }
        held[caller].push(phaseId);
        return true;
    }

    public boolean succeed(int caller) {
        return record(caller, false);
    }

    public boolean fail(int caller) {
        return record(caller, true);
    }

    private boolean record(int caller, boolean failure) {
        Integer issuedBy = held[caller].poll();
        if (issuedBy == null) {
            return false;
        }
        switch (phase) {
            case CLOSED:
                long epoch = Math.floorDiv(now, bucketNanos);
                outcomes.add(new long[] {epoch, failure ? 1 : 0});
                consecutive = failure ? consecutive + 1 : 0;
                long[] counts = window();
                boolean trip = config.consecutiveFailures() > 0 && consecutive >= config.consecutiveFailures();
                if (config.rateMode() && counts[0] >= config.minimumCalls()
                        && BigDecimal.valueOf(counts[1]).compareTo(threshold.multiply(BigDecimal.valueOf(counts[0]))) >= 0) {
                    trip = true;
                }
                if (trip) {
                    schedule = openBackoff == null ? null : openBackoff.start(random);
                    open(1);
                }
                break;
            case HALF_OPEN:
                if (failure) {
                    open(opens + 1);
                } else if (issuedBy == phaseId && ++successes == config.halfOpenPermits()) {
                    close();
                }
                break;
            default:
                break; // OPEN: the breaker already refuses; the outcome changes nothing
        }
        return true;
    }

    public boolean release(int caller) {
        Integer issuedBy = held[caller].poll();
        if (issuedBy == null) {
            return false;
        }
        if (phase == State.HALF_OPEN && issuedBy == phaseId) {
            permitsLeft++;
        }
        return true;
    }

    public State state() {
        return phase == State.OPEN && !forced && now >= until ? State.HALF_OPEN : phase;
    }

    public Reading metrics() {
        State s = state();
        if (s != State.CLOSED) {
            return new Reading(s, 0, 0, 0);
        }
        long[] counts = config.rateMode() ? window() : new long[2];
        return new Reading(s, counts[0], counts[1], consecutive);
    }

    public void reset() {
        close();
    }

    /** Holds the breaker open, without probes, until reset; the open streak is kept as it was. */
    public void forceOpen() {
        if (phase == State.OPEN && forced) {
            return;
        }
        forced = true;
        enter(State.OPEN);
    }

    public void advance() {
        now += config.step().toNanos();
    }

    private long[] window() {
        long current = Math.floorDiv(now, bucketNanos);
        long calls = 0;
        long failures = 0;
        for (long[] o : outcomes) {
            if (o[0] > current - config.buckets() && o[0] <= current) {
                calls++;
                failures += o[1];
            }
        }
        return new long[] {calls, failures};
    }

    private void open(int k) {
        long duration = config.openDuration().toNanos();
        if (schedule != null) {
            duration = Math.max(duration, schedule.nextDelayNanos(k));
        }
        until = now + duration;
        opens = k;
        enter(State.OPEN);
    }

    private void close() {
        forced = false;
        outcomes.clear();
        consecutive = 0;
        opens = 0;
        schedule = null;
        if (phase != State.CLOSED) {
            enter(State.CLOSED);
        } else {
            phaseId++;
        }
    }

    private void enter(State s) {
        phase = s;
        phaseId++;
    }
}
