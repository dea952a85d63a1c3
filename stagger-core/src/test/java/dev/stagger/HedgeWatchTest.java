package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The sync hedged call's fast path ({@link HedgeWatch}): a retry with nothing per attempt to
 * report, on the system clock. No test here checks a delay's length (the virtual-clock tests of
 * {@link HedgedSyncCallTest} do, on the general path); they check what the fast path does and
 * that it allocates nothing when the first attempt answers in time.
 */
class HedgeWatchTest {
    private static final long WAIT_SECONDS = 10;

    @BeforeAll
    static void allocationIsMeasurable() {
        Allocations.requireMeasurable();
    }

    private static Retry hedged(Duration delay) {
        return Retry.of("watched", RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none())
                .hedge(HedgePolicy.after(delay)).build());
    }

    @Test
    void aCallWhoseFirstAttemptAnswersBeforeTheDelayAllocatesNothing() throws Exception {
        Retry retry = hedged(Duration.ofSeconds(10));
        Callable<String> ok = () -> "ok";
        long bytes = Allocations.bytesPerCallWithoutFrames(() -> {
            try {
                retry.call(ok);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });

        assertThat(bytes).as("bytes per hedged call answered before the delay").isZero();
    }

    @Test
    void whileCallsKeepFramesACallAnsweredBeforeTheDelayAllocatesNoMoreThanAPlainRetry() {
        Retry plain = Retry.of("plain", RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none()).build());
        Retry hedged = hedged(Duration.ofSeconds(10));
        Callable<String> ok = () -> "ok";
        boolean framed = Ambient.framed();
        Ambient.framed(true);
        long plainBytes;
        long hedgedBytes;
        try {
            plainBytes = Allocations.bytesPerCall(() -> callQuietly(plain, ok));
            hedgedBytes = Allocations.bytesPerCall(() -> callQuietly(hedged, ok));
        } finally {
            Ambient.framed(framed);
        }

        assertThat(hedgedBytes).as("hedged bytes per call with frames, plain " + plainBytes).isLessThanOrEqualTo(plainBytes);
        assertThat(hedgedBytes).as("hedged bytes per call with frames").isZero();
    }

    @Test
    void whileCallsKeepFramesTheFirstAttemptRunsInsideTheHedgedCall() throws Exception {
        Retry outer = hedged(Duration.ofSeconds(10));
        Retry refusing = Retry.of("refusing", RetryPolicy.builder().maxAttempts(2).backoff(Backoff.none()).build())
                .withNesting(Nesting.REFUSE); // frames from now on in this JVM
        AtomicInteger innerRuns = new AtomicInteger();

        Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(() -> outer.call(() -> refusing.call(() -> {
            innerRuns.incrementAndGet();
            return "inner";
        })));

        assertThat(thrown).isInstanceOf(RetryNestingException.class);
        assertThat(innerRuns).as("the refusing retry saw the hedged call around it and ran nothing").hasValue(0);
        assertThat(outer.call(() -> "after")).as("the thread's frames were left as found").isEqualTo("after");
    }

    private static void callQuietly(Retry retry, Callable<String> operation) {
        try {
            retry.call(operation);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aFirstAttemptSlowerThanTheDelayIsBackedUpAndTheCallerAnswersWithTheHedge() throws Exception {
        Retry retry = hedged(Duration.ofMillis(5));
        CountDownLatch never = new CountDownLatch(1);
        AtomicInteger calls = new AtomicInteger();
        AtomicReference<Thread> firstRanOn = new AtomicReference<>();

        String result = retry.call(() -> {
            if (calls.incrementAndGet() == 1) {
                firstRanOn.set(Thread.currentThread());
                never.await(WAIT_SECONDS, TimeUnit.SECONDS); // a slow answer, cut short by the hedge's win
                return "slow";
            }
            return "hedge";
        });

        assertThat(result).isEqualTo("hedge");
        assertThat(firstRanOn.get()).isSameAs(Thread.currentThread());
        assertThat(Thread.currentThread().isInterrupted()).as("the interrupt that ended the attempt is cleared").isFalse();
    }

    @Test
    void aFirstAttemptFailingBeforeTheDelayIsRetriedByTheEngine() throws Exception {
        Retry retry = hedged(Duration.ofSeconds(10));
        AtomicInteger calls = new AtomicInteger();

        String result = retry.call(() -> {
            if (calls.incrementAndGet() == 1) {
                throw new IOException("transient");
            }
            return "second";
        });

        assertThat(result).isEqualTo("second");
        assertThat(calls).hasValue(2);
    }

    @Test
    void aFailureTheClassifierStopsEndsTheCallAtOnce() {
        Retry retry = Retry.of("watched", RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none())
                .retryOn(IOException.class).hedge(HedgePolicy.after(Duration.ofSeconds(10))).build());
        AtomicInteger calls = new AtomicInteger();

        Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(() -> retry.call(() -> {
            calls.incrementAndGet();
            throw new IllegalStateException("permanent");
        }));

        assertThat(thrown).isInstanceOf(IllegalStateException.class);
        assertThat(calls).hasValue(1);
    }

    @Test
    void aHedgedCallInsideAnotherOnTheSameThreadRunsOnTheGeneralPath() throws Exception {
        Retry outer = hedged(Duration.ofSeconds(10));
        Retry inner = hedged(Duration.ofSeconds(10));

        String result = outer.call(() -> inner.call(() -> "inner") + " in outer");

        assertThat(result).isEqualTo("inner in outer");
    }
}
