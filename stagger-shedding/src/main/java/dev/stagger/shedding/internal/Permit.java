package dev.stagger.shedding.internal;

/**
 * An admitted request, as {@link ConcurrencyLimiter#tryAcquire(boolean, long)} returns it and
 * {@link ConcurrencyLimiter#release(Permit, boolean)} takes it back. Immutable.
 */
public final class Permit {
    private final long startNanos;
    private final int inFlight;
    private final long epoch;

    Permit(long startNanos, int inFlight, long epoch) {
        this.startNanos = startNanos;
        this.inFlight = inFlight;
        this.epoch = epoch;
    }

    /** When it was admitted, on the limiter's clock. */
    public long startNanos() {
        return startNanos;
    }

    /** Requests counted against the limit when it was admitted, itself included. */
    public int inFlight() {
        return inFlight;
    }

    /** The limiter's epoch when it was admitted: how many epochs it has run says whether it is long. */
    long epoch() {
        return epoch;
    }
}
