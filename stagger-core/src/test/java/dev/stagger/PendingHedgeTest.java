package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The async hedged call's light path with a pending first stage ({@link PendingHedge}), on the
 * system clock (the only clock it is taken on). No test checks a delay's length (the virtual-clock
 * tests of {@link HedgedCallTest} do, on the general path): the races between the first
 * attempt's outcome, the timer firing and the caller cancelling are driven step by step through
 * {@link PendingHedge#tryFire()} and {@link PendingHedge#run()} with a delay that never passes.
 */
class PendingHedgeTest {
    private static final long WAIT_SECONDS = 10;

    @BeforeAll
    static void allocationIsMeasurable() {
        Allocations.requireMeasurable();
    }

    private static RetryPolicy.Builder policy() {
        return RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none());
    }

    private static Retry hedged(Duration delay) {
        return Retry.of("pending", policy().hedge(HedgePolicy.after(delay)).build());
    }

    /** The attempts an operation returned, in order: each a pending future the test completes. */
    private static final class Attempts implements Supplier<CompletableFuture<String>> {
        final List<CompletableFuture<String>> made = new ArrayList<>();

        @Override
        public synchronized CompletableFuture<String> get() {
            CompletableFuture<String> f = new CompletableFuture<>();
            made.add(f);
            return f;
        }

        synchronized CompletableFuture<String> get(int i) {
            return made.get(i);
        }

        synchronized int count() {
            return made.size();
        }
    }

    @Test
    void aPendingStageAnsweredBeforeTheDelayAllocatesNoMoreThanAPlainAsyncRetry() {
        Retry plain = Retry.of("plain", policy().build());
        Retry hedged = hedged(Duration.ofSeconds(10));
        CompletableFuture<?>[] pending = new CompletableFuture<?>[1];
        Supplier<CompletableFuture<String>> operation = () -> {
            CompletableFuture<String> f = new CompletableFuture<>();
            pending[0] = f;
            return f;
        };

        long plainBytes = Allocations.bytesPerCallWithoutFrames(() -> answerLater(plain, operation, pending));
        long hedgedBytes = Allocations.bytesPerCallWithoutFrames(() -> answerLater(hedged, operation, pending));

        assertThat(hedgedBytes).as("hedged bytes per call, plain " + plainBytes).isLessThanOrEqualTo(plainBytes);
    }

    @SuppressWarnings("unchecked")
    private static void answerLater(Retry retry, Supplier<CompletableFuture<String>> operation,
                                    CompletableFuture<?>[] pending) {
        CompletableFuture<String> call = retry.callAsync(operation);
        ((CompletableFuture<String>) pending[0]).complete("ok");
        if (!"ok".equals(call.join())) {
            throw new AssertionError("the call did not answer with its attempt's value");
        }
    }

    @Test
    void aPendingStageSlowerThanTheDelayIsBackedUpByAHedgeWhichWins() throws Exception {
        Retry retry = hedged(Duration.ofMillis(5));
        Attempts attempts = new Attempts();
        AtomicInteger calls = new AtomicInteger();

        CompletableFuture<String> answer = retry.callAsync(() -> calls.incrementAndGet() == 1
                ? attempts.get() : CompletableFuture.completedFuture("hedge"));

        assertThat(answer.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("hedge");
        assertThat(attempts.get(0)).as("the slow first attempt, cancelled").isCancelled();
        assertThat(calls).hasValue(2);
    }

    @Test
    void aPendingStageFailingBeforeTheDelayIsRetriedByTheEngine() throws Exception {
        Retry retry = hedged(Duration.ofSeconds(10));
        Attempts attempts = new Attempts();

        CompletableFuture<String> answer = retry.callAsync(attempts);
        attempts.get(0).completeExceptionally(new IOException("transient"));
        assertThat(attempts.count()).as("the retry's attempt").isEqualTo(2);
        attempts.get(1).complete("second");

        assertThat(answer.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("second");
    }

    @Test
    void cancellingTheCallersFutureAfterAFailedFirstAttemptCancelsTheRetry() {
        Retry retry = hedged(Duration.ofSeconds(10));
        Attempts attempts = new Attempts();

        CompletableFuture<String> answer = retry.callAsync(attempts);
        attempts.get(0).completeExceptionally(new IOException("transient"));
        answer.cancel(true);

        assertThat(attempts.get(1)).as("the retry's attempt, running as the caller cancelled").isCancelled();
    }

    @Test
    void aFailureTheClassifierStopsEndsTheCallAtOnce() {
        Retry retry = Retry.of("pending", policy().retryOn(IOException.class)
                .hedge(HedgePolicy.after(Duration.ofSeconds(10))).build());
        Attempts attempts = new Attempts();

        CompletableFuture<String> answer = retry.callAsync(attempts);
        attempts.get(0).completeExceptionally(new IllegalStateException("permanent"));

        assertThat(answer).isCompletedExceptionally();
        assertThat(attempts.count()).isEqualTo(1);
    }

    @Test
    void cancellingTheCallersFutureCancelsThePendingFirstAttempt() {
        Retry retry = hedged(Duration.ofSeconds(10));
        Attempts attempts = new Attempts();

        CompletableFuture<String> answer = retry.callAsync(attempts);
        answer.cancel(true);

        assertThat(attempts.get(0)).isCancelled();
        assertThat(attempts.count()).isEqualTo(1);
    }

    @Test
    void theFirstAttemptAnsweringWhileTheHedgeIsBeingSentWinsOverAPendingHedge() throws Exception {
        Retry retry = hedged(Duration.ofSeconds(10));
        Attempts attempts = new Attempts();
        PendingHedge<String> call = PendingHedge.watched(retry, attempts, attempts.get(), System.nanoTime());

        assertThat(call.tryFire()).as("the delay passed").isTrue();
        attempts.get(0).complete("first"); // arrives before the hand-over made the execution
        call.run();

        assertThat(call.promise().get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("first");
        assertThat(attempts.count()).as("the hedge was sent").isEqualTo(2);
        assertThat(attempts.get(1)).as("the losing hedge, cancelled").isCancelled();
    }

    @Test
    void afterTheHandOverTheFirstAttemptsOutcomeGoesToTheExecution() throws Exception {
        Retry retry = hedged(Duration.ofSeconds(10));
        Attempts attempts = new Attempts();
        PendingHedge<String> call = PendingHedge.watched(retry, attempts, attempts.get(), System.nanoTime());

        assertThat(call.tryFire()).isTrue();
        call.run();
        assertThat(call.promise()).isNotDone();
        attempts.get(0).complete("first");

        assertThat(call.promise().get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("first");
        assertThat(attempts.get(1)).isCancelled();
    }

    @Test
    void theCallerCancellingWhileTheHedgeIsBeingSentCancelsEveryAttempt() {
        Retry retry = hedged(Duration.ofSeconds(10));
        Attempts attempts = new Attempts();
        PendingHedge<String> call = PendingHedge.watched(retry, attempts, attempts.get(), System.nanoTime());

        assertThat(call.tryFire()).isTrue();
        call.promise().cancel(true);
        call.run();

        assertThat(attempts.get(0)).isCancelled();
        assertThat(attempts.get(1)).as("the hedge sent by the hand-over").isCancelled();
        assertThat(call.promise()).isCancelled();
    }

    @Test
    void aCallAnsweredBeforeTheTimerFiresIsNotTakenByIt() throws Exception {
        Retry retry = hedged(Duration.ofSeconds(10));
        Attempts attempts = new Attempts();
        PendingHedge<String> call = PendingHedge.watched(retry, attempts, attempts.get(), System.nanoTime());

        attempts.get(0).complete("first");

        assertThat(call.tryFire()).as("the timer, late").isFalse();
        assertThat(call.waiting()).isFalse();
        assertThat(call.promise().get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("first");
        assertThat(attempts.count()).isEqualTo(1);
    }
}
