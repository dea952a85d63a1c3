package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * On the system clock, a cancelled async call waiting for its retry leaves nothing behind: its
 * wait is unlinked from the timer at once, so once the caller drops the future, the call's state
 * (here: its operation) can be collected — not ten minutes later when the wait would have ended.
 */
class CancelFreesPendingCallTest {
    private static final Retry RETRY = Retry.of("pending",
            RetryPolicy.builder().maxAttempts(2).backoff(Backoff.fixed(Duration.ofMinutes(10))).build());

    /**
     * An operation whose first attempt fails, so the call waits 10 minutes for its retry. A new
     * object per call (it captures one): a lambda capturing nothing is one shared instance that
     * would never be collected.
     */
    private static Supplier<CompletionStage<String>> failingOperation() {
        IOException failure = new IOException("down");
        return () -> CompletableFuture.failedFuture(failure);
    }

    private static boolean collectedAfterGc(WeakReference<?> ref) throws InterruptedException {
        for (int i = 0; i < 20 && ref.get() != null; i++) {
            System.gc();
            Thread.sleep(10);
        }
        return ref.get() == null;
    }

    @Test
    void aCancelledPendingCallCanBeCollectedAtOnce() throws InterruptedException {
        Supplier<CompletionStage<String>> operation = failingOperation();
        WeakReference<Object> ref = new WeakReference<>(operation);
        CompletableFuture<String> future = RETRY.callAsync(operation);
        operation = null;

        assertThat(future.cancel(false)).isTrue();
        future = null;

        assertThat(collectedAfterGc(ref)).isTrue();
    }

    @Test
    void aPendingCallIsHeldByTheTimerUntilItsWaitEndsEvenWhenTheCallerDropsIt() throws InterruptedException {
        // The control: without the cancel, the timer keeps the call (and retries it in 10 minutes).
        Supplier<CompletionStage<String>> operation = failingOperation();
        WeakReference<Object> ref = new WeakReference<>(operation);
        CompletableFuture<String> future = RETRY.callAsync(operation);
        operation = null;
        future = null;

        assertThat(collectedAfterGc(ref)).isFalse();
    }
}
