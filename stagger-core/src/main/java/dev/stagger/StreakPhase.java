package dev.stagger;

import org.jspecify.annotations.Nullable;

/**
 * A {@link CircuitBreaker} phase of an open streak (open or half-open): the opens in a row so far
 * and the one schedule they draw from.
 */
abstract class StreakPhase extends CircuitBreaker.Phase {
    final int opens;
    /** Kept across the re-opens in a row, so stateful backoffs grow as they do in a retry; null without one. */
    final Backoff.@Nullable Schedule schedule;

    StreakPhase(int opens, Backoff.@Nullable Schedule schedule) {
        this.opens = opens;
        this.schedule = schedule;
    }
}
