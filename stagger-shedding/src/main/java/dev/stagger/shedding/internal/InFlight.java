package dev.stagger.shedding.internal;

/**
 * The requests in flight, by how long they have run, as an immutable value a
 * {@link ConcurrencyLimiter} swaps by compare-and-set. Time is cut into epochs of at least the
 * limit's long-request threshold {@code T}: a request is {@code young} in the epoch it was admitted
 * in, {@code older} in the next, and {@code long} from the one after, by when it has run for more
 * than {@code T} (and, as epochs begin only when the limiter is used, for up to about {@code 2 T}).
 *
 * <p>Long requests count against the limit only beyond the limit's own size: up to {@code limit}
 * of them (long polls, uploads, downloads) run beside the limit, so a few of them cannot fill
 * every slot and starve the rest, while in flight never passes twice the limit.
 */
final class InFlight {
    final long epoch;
    final long epochStartNanos;
    final int young;
    final int older;
    final int longRunning;

    private InFlight(long epoch, long epochStartNanos, int young, int older, int longRunning) {
        this.epoch = epoch;
        this.epochStartNanos = epochStartNanos;
        this.young = young;
        this.older = older;
        this.longRunning = longRunning;
    }

    /** The first epoch, beginning at {@code nowNanos}. */
    static InFlight startingAt(long nowNanos) {
        return new InFlight(0, nowNanos, 0, 0, 0);
    }

    /** This state in the epoch that {@code nowNanos} falls in, with epochs of at least {@code epochNanos}. */
    InFlight at(long nowNanos, long epochNanos) {
        long elapsed = nowNanos - epochStartNanos;
        if (elapsed < epochNanos) {
            return this;
        }
        if (elapsed / 2 < epochNanos) { // one epoch passed: every request moves on by one
            return new InFlight(epoch + 1, nowNanos, 0, young, older + longRunning);
        }
        return new InFlight(epoch + 2, nowNanos, 0, 0, young + older + longRunning);
    }

    /** Requests that count against {@code limit}: all but up to {@code limit} long ones. */
    int counted(int limit) {
        return young + older + Math.max(0, longRunning - limit);
    }

    int total() {
        return young + older + longRunning;
    }

    InFlight admitted() {
        return new InFlight(epoch, epochStartNanos, young + 1, older, longRunning);
    }

    /** Without one request admitted in epoch {@code admittedIn}. */
    InFlight released(long admittedIn) {
        long age = epoch - admittedIn;
        if (age <= 0) {
            return new InFlight(epoch, epochStartNanos, young - 1, older, longRunning);
        }
        if (age == 1) {
            return new InFlight(epoch, epochStartNanos, young, older - 1, longRunning);
        }
        return new InFlight(epoch, epochStartNanos, young, older, longRunning - 1);
    }

    /** True when a request admitted in epoch {@code admittedIn} is long now. */
    boolean isLong(long admittedIn) {
        return epoch - admittedIn >= 2;
    }
}
