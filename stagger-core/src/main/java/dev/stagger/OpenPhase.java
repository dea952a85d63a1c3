package dev.stagger;

import org.jspecify.annotations.Nullable;

/** A {@link CircuitBreaker}'s open phase: every call is refused until {@code untilNanos}. */
final class OpenPhase extends StreakPhase {
    final long untilNanos;
    /** Held open by {@code forceOpen()}: no probe until {@code reset()}. */
    final boolean forced;

    OpenPhase(long untilNanos, int opens, Backoff.@Nullable Schedule schedule, boolean forced) {
        super(opens, schedule);
        this.untilNanos = untilNanos;
        this.forced = forced;
    }

    /** An open period of {@code durationNanos} (never negative) from the clock reading {@code startedAt}. */
    static OpenPhase startingAt(long startedAt, long durationNanos, int opens, Backoff.@Nullable Schedule schedule) {
        long until = startedAt + durationNanos;
        if (until < startedAt) {
            until = Long.MAX_VALUE; // overflowed; a negative reading is fine
        }
        return new OpenPhase(until, opens, schedule, false);
    }

    @Override
    public boolean isGranted() {
        return false;
    }
}
