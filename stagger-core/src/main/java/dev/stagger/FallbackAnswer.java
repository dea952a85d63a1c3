package dev.stagger;

/** What a call answers after its fallback ran (or declined): a value or an exception. */
final class FallbackAnswer {
    final Object value;
    final Throwable failure;
    /** Which fallback ran and how, or null when none applied. */
    final RetryEvent.FallbackRun run;

    FallbackAnswer(Object value, Throwable failure, RetryEvent.FallbackRun run) {
        this.value = value;
        this.failure = failure;
        this.run = run;
    }
}
