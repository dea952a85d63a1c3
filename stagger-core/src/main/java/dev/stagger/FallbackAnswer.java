package dev.stagger;

import org.jspecify.annotations.Nullable;

/** What a call answers after its fallback ran (or declined): a value or an exception. */
final class FallbackAnswer {
    final @Nullable Object value;
    final @Nullable Throwable failure;
    /** Which fallback ran and how, or null when none applied. */
    final RetryEvent.@Nullable FallbackRun run;

    FallbackAnswer(@Nullable Object value, @Nullable Throwable failure, RetryEvent.@Nullable FallbackRun run) {
        this.value = value;
        this.failure = failure;
        this.run = run;
    }
}
