package dev.stagger;

import dev.stagger.internal.Checks;
import java.time.Instant;

/**
 * Where a piece of work stands between attempts, as {@link RetryEngine#decide} needs it when the
 * attempts do not all run in one process: three plain values to store with the work (columns of a
 * job row, headers of a queue message) and read back before the next attempt is decided.
 *
 * @param attempt the attempt whose outcome is to be decided; 1 for the first
 * @param startedAt when the work's first attempt began; the policy's deadline counts from it
 * @param backoffState what the backoff schedule remembers from earlier retries
 *     ({@link Backoff.Schedule#state()}); 0 before the first retry
 */
public record RetryState(int attempt, Instant startedAt, long backoffState) {

    public RetryState {
        Checks.atLeast("attempt", attempt, 1);
        Checks.notNull("startedAt", startedAt);
    }

    /** The state of new work whose first attempt began at {@code startedAt}. */
    public static RetryState first(Instant startedAt) {
        return new RetryState(1, startedAt, 0);
    }
}
