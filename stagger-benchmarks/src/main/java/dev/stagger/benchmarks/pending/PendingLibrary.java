package dev.stagger.benchmarks.pending;

import dev.failsafe.Failsafe;
import dev.failsafe.FailsafeExecutor;
import dev.stagger.Backoff;
import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
import io.github.resilience4j.retry.RetryConfig;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Supplier;

/**
 * One library's way of starting an async call that retries once after a long wait: 2 attempts,
 * a fixed wait between them, every exception retried. Each is configured as its documentation
 * shows for async use, with nothing else switched on.
 */
abstract class PendingLibrary {

    /** The name on the command line and in the results. */
    abstract String name();

    /** Starts one call of {@code operation}; the returned future completes when the call ends. */
    abstract CompletableFuture<?> start(Supplier<CompletionStage<Object>> operation);

    /** Drops whatever scheduler state the warm-up left behind, where the harness owns the scheduler. */
    void resetAfterWarmUp() {
    }

    /** Stops the threads the harness created for this library. */
    void close() {
    }

    static PendingLibrary named(String name, Duration wait) {
        switch (name.toLowerCase(Locale.ROOT)) {
            case "stagger":
                return new StaggerLibrary(wait);
            case "resilience4j":
                return new Resilience4jLibrary(wait);
            case "failsafe":
                return new FailsafeLibrary(wait);
            default:
                throw new IllegalArgumentException("library must be stagger, resilience4j or failsafe, got " + name);
        }
    }

    /** {@code Retry.callAsync}; waits scheduled on {@code Clock.system()} (one shared timer thread). */
    private static final class StaggerLibrary extends PendingLibrary {
        private final Retry retry;

        StaggerLibrary(Duration wait) {
            // every call retries once, which a budget would refuse past its floor; the anchors have none
            retry = Retry.of("pending", RetryPolicy.builder().maxAttempts(2).backoff(Backoff.fixed(wait)).build())
                    .withoutBudget();
        }

        @Override
        String name() {
            return "stagger";
        }

        @Override
        CompletableFuture<?> start(Supplier<CompletionStage<Object>> operation) {
            return retry.callAsync(operation);
        }
    }

    /**
     * {@code Retry.executeCompletionStage} with a {@code ScheduledExecutorService} of one thread, as
     * Resilience4j's documentation shows. The pool is replaced after the warm-up, because waits of
     * cancelled warm-up calls stay in its queue until they are due.
     */
    private static final class Resilience4jLibrary extends PendingLibrary {
        private final io.github.resilience4j.retry.Retry retry;
        private ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

        Resilience4jLibrary(Duration wait) {
            retry = io.github.resilience4j.retry.Retry.of("pending",
                    RetryConfig.custom().maxAttempts(2).waitDuration(wait).build());
        }

        @Override
        String name() {
            return "resilience4j";
        }

        @Override
        CompletableFuture<?> start(Supplier<CompletionStage<Object>> operation) {
            return retry.executeCompletionStage(scheduler, operation).toCompletableFuture();
        }

        @Override
        void resetAfterWarmUp() {
            scheduler.shutdownNow();
            scheduler = Executors.newSingleThreadScheduledExecutor();
        }

        @Override
        void close() {
            scheduler.shutdownNow();
        }
    }

    /** {@code Failsafe.with(policy).getStageAsync}, on Failsafe's default scheduler. */
    private static final class FailsafeLibrary extends PendingLibrary {
        private final FailsafeExecutor<Object> executor;

        FailsafeLibrary(Duration wait) {
            executor = Failsafe.with(dev.failsafe.RetryPolicy.builder().withMaxAttempts(2).withDelay(wait).build());
        }

        @Override
        String name() {
            return "failsafe";
        }

        @Override
        CompletableFuture<?> start(Supplier<CompletionStage<Object>> operation) {
            return executor.getStageAsync(operation::get);
        }
    }
}
