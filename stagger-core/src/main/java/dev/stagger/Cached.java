package dev.stagger;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A value and how old it is: fresh from the downstream, or served by a {@link FallbackCache}
 * after the call failed, with the time it was stored so a page can say "as of 2 minutes ago".
 * Immutable.
 *
 * @param <V> the value's type
 */
public final class Cached<V> {
    private final V value;
    private final Instant storedAt;
    private final Duration age;
    private final @Nullable EndReason staleBecause;

    Cached(V value, Instant storedAt, Duration age, @Nullable EndReason staleBecause) {
        this.value = value;
        this.storedAt = storedAt;
        this.age = age;
        this.staleBecause = staleBecause;
    }

    public V value() {
        return value;
    }

    /** When the value came from the downstream. */
    public Instant storedAt() {
        return storedAt;
    }

    /** How old the value was when answered (zero for a fresh one). */
    public Duration age() {
        return age;
    }

    /** True when the value was answered because the call failed: the downstream did not give it just now. */
    public boolean isStale() {
        return staleBecause != null;
    }

    /** Why the call that answered with this stale value ended; empty for a fresh value. */
    public Optional<EndReason> staleBecause() {
        return Optional.ofNullable(staleBecause);
    }

    @Override
    public String toString() {
        return "Cached{" + (isStale() ? "stale (" + staleBecause + "), age " + age : "fresh") + ", as of " + storedAt + "}";
    }
}
