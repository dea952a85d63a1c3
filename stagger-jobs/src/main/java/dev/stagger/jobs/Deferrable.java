package dev.stagger.jobs;

import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The answer of a call that may have been handed to a queue: either the operation's value, or a
 * {@link Deferred} saying the work will be done later. Immutable.
 *
 * @param <T> the operation's value type
 */
public final class Deferrable<T> {
    private final @Nullable T value;
    private final @Nullable Deferred deferred;

    private Deferrable(@Nullable T value, @Nullable Deferred deferred) {
        this.value = value;
        this.deferred = deferred;
    }

    static <T> Deferrable<T> done(@Nullable T value) {
        return new Deferrable<>(value, null);
    }

    static <T> Deferrable<T> deferredTo(Deferred deferred) {
        return new Deferrable<>(null, deferred);
    }

    /** True when the work was queued instead of done. */
    public boolean isDeferred() {
        return deferred != null;
    }

    /**
     * The operation's value (null when the operation returned null).
     *
     * @throws IllegalStateException when the work was deferred: check {@link #isDeferred()} first
     */
    public @Nullable T value() {
        if (deferred != null) {
            throw new IllegalStateException("the work was deferred to job " + deferred.jobId() + " in queue "
                    + deferred.queue() + "; it has no value yet");
        }
        return value;
    }

    /** The queued job, when the work was deferred. */
    public Optional<Deferred> deferred() {
        return Optional.ofNullable(deferred);
    }

    @Override
    public String toString() {
        return deferred != null ? "Deferrable{deferred to job " + deferred.jobId() + "}" : "Deferrable{done}";
    }
}
