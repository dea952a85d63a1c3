package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.testing.VirtualClock;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The synchronous {@link Retry#call} contract. */
class RetryCallTest {
    private final VirtualClock clock = new VirtualClock();
    private final AtomicInteger calls = new AtomicInteger();

    @AfterEach
    void clearInterruptStatus() {
        Thread.interrupted();
    }

    private Retry retry(RetryPolicy policy) {
        return Retry.of("test", policy).withClock(clock).withRandom(RandomSource.sequence(0.5));
    }

    private static RetryPolicy.Builder fixed(int maxAttempts) {
        return RetryPolicy.builder().maxAttempts(maxAttempts).backoff(Backoff.fixed(Duration.ofMillis(100)));
    }

    @Test
    void returnsTheFirstResultWithoutWaitingWhenTheFirstAttemptSucceeds() throws Exception {
        String result = retry(fixed(3).build()).call(() -> {
            calls.incrementAndGet();
            return "ok";
        });

        assertThat(result).isEqualTo("ok");
        assertThat(calls).hasValue(1);
        assertThat(clock.sleeps()).isEmpty();
    }

    @Test
    void retriesAFailureAndReturnsTheResultOfTheAttemptThatSucceeds() throws Exception {
        String result = retry(fixed(5).build()).call(() -> {
            if (calls.incrementAndGet() < 3) {
                throw new IOException("reset");
            }
            return "ok";
        });

        assertThat(result).isEqualTo("ok");
        assertThat(calls).hasValue(3);
    }

    @Test
    void waitsFollowTheBackoffOnTheClock() throws Exception {
        Retry retry = retry(RetryPolicy.builder().maxAttempts(5).backoff(Backoff.exponential(Duration.ofMillis(200))).build());

        catchThrowable(() -> retry.call(() -> {
            throw new IOException("down");
        }));

        assertThat(clock.sleeps()).isEqualTo(Delays.millis(200, 400, 800, 1600));
    }

    @Test
    void rethrowsTheLastFailureUnchangedWithEarlierFailuresSuppressedInOrder() {
        List<IOException> thrown = new ArrayList<>();
        Retry retry = retry(fixed(3).build());

        Throwable caught = catchThrowable(() -> retry.call(() -> {
            IOException e = new IOException("failure " + calls.incrementAndGet());
            thrown.add(e);
            throw e;
        }));

        assertThat(caught).isSameAs(thrown.get(2));
        assertThat(caught.getSuppressed()).containsExactly(thrown.get(0), thrown.get(1));
    }

    @Test
    void theSameExceptionThrownByEveryAttemptIsRethrownWithoutSuppressingItself() {
        IllegalStateException same = new IllegalStateException("cached");
        Retry retry = retry(fixed(3).build());

        Throwable caught = catchThrowable(() -> retry.call(() -> {
            calls.incrementAndGet();
            throw same;
        }));

        assertThat(caught).isSameAs(same);
        assertThat(caught.getSuppressed()).isEmpty();
        assertThat(calls).hasValue(3);
    }

    @Test
    void aSingleFailedAttemptIsRethrownWithNothingSuppressed() {
        IOException failure = new IOException("once");
        Retry retry = retry(fixed(1).build());

        Throwable caught = catchThrowable(() -> retry.call(() -> {
            throw failure;
        }));

        assertThat(caught).isSameAs(failure);
        assertThat(caught.getSuppressed()).isEmpty();
    }

    @Test
    void aStopDecisionIsNeverRetried() {
        Retry retry = retry(fixed(5).classifier((result, failure, context) -> Decision.stop()).build());

        assertThatThrownBy(() -> retry.call(() -> {
            calls.incrementAndGet();
            throw new IOException("permanent");
        })).isInstanceOf(IOException.class);
        assertThat(calls).hasValue(1);
        assertThat(clock.sleeps()).isEmpty();
    }

    @Test
    void errorsAreNeverRetriedByDefault() {
        Retry retry = retry(fixed(5).build());

        assertThatThrownBy(() -> retry.call(() -> {
            calls.incrementAndGet();
            throw new StackOverflowError();
        })).isInstanceOf(StackOverflowError.class);
        assertThat(calls).hasValue(1);
    }

    @Test
    void errorsAreNeverRetriedEvenWhenRetryOnNamesThem() {
        Retry retry = retry(fixed(5).retryOn(Throwable.class).build());

        assertThatThrownBy(() -> retry.call(() -> {
            calls.incrementAndGet();
            throw new AssertionError("broken invariant");
        })).isInstanceOf(AssertionError.class);
        assertThat(calls).hasValue(1);
    }

    @Test
    void errorsAreNeverRetriedEvenWhenACustomClassifierSaysRetry() {
        Retry retry = retry(fixed(5).classifier((result, failure, context) -> Decision.retry()).build());

        assertThatThrownBy(() -> retry.call(() -> {
            calls.incrementAndGet();
            throw new OutOfMemoryError("simulated");
        })).isInstanceOf(OutOfMemoryError.class);
        assertThat(calls).hasValue(1);
    }

    @Test
    void interruptedExceptionFromTheOperationStopsAtOnceAndIsRethrown() {
        RecordingListener events = new RecordingListener();
        InterruptedException interrupted = new InterruptedException("shutting down");
        Retry retry = retry(fixed(5).build()).withListener(events);

        Throwable caught = catchThrowable(() -> retry.call(() -> {
            calls.incrementAndGet();
            throw interrupted;
        }));

        assertThat(caught).isSameAs(interrupted);
        assertThat(calls).hasValue(1);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.INTERRUPTED);
    }

    @Test
    void interruptedExceptionIsNotRetriedEvenWhenACustomClassifierSaysRetry() {
        Retry retry = retry(fixed(5).classifier((result, failure, context) -> Decision.retry()).build());

        assertThatThrownBy(() -> retry.call(() -> {
            calls.incrementAndGet();
            throw new InterruptedException();
        })).isInstanceOf(InterruptedException.class);
        assertThat(calls).hasValue(1);
    }

    @Test
    void anInterruptDuringAWaitStopsRetryingAndKeepsTheInterruptStatus() {
        RecordingListener events = new RecordingListener();
        Retry retry = Retry.of("test", fixed(5).build()).withClock(new InterruptedWhileSleeping(clock)).withListener(events);
        IOException failure = new IOException("down");

        Throwable caught = catchThrowable(() -> retry.call(() -> {
            calls.incrementAndGet();
            throw failure;
        }));

        assertThat(Thread.currentThread().isInterrupted()).isTrue();
        assertThat(caught).isSameAs(failure);
        assertThat(calls).hasValue(1);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.INTERRUPTED);
    }

    @Test
    void aRealThreadInterruptedDuringARealWaitStopsPromptlyAndStaysInterrupted() throws Exception {
        Retry retry = Retry.of("real", RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofSeconds(30))).build());
        AtomicInteger attempts = new AtomicInteger();
        CountDownLatch failedOnce = new CountDownLatch(1);
        AtomicBoolean interruptedAfter = new AtomicBoolean();
        Thread worker = new Thread(() -> {
            try {
                retry.call(() -> {
                    attempts.incrementAndGet();
                    failedOnce.countDown();
                    throw new IOException("down");
                });
            } catch (Exception expected) {
                interruptedAfter.set(Thread.currentThread().isInterrupted());
            }
        });
        worker.start();
        failedOnce.await();
        worker.interrupt();
        worker.join(5_000);

        assertThat(worker.isAlive()).as("still waiting out a 30 s backoff").isFalse();
        assertThat(interruptedAfter).isTrue();
        assertThat(attempts).hasValue(1);
    }

    @Test
    void retryOnRetriesOnlyTheListedTypesAndTheirSubclasses() throws Exception {
        Retry retry = retry(fixed(5).retryOn(IOException.class).build());

        String result = retry.call(() -> {
            if (calls.incrementAndGet() == 1) {
                throw new SocketTimeoutException("subclass of IOException");
            }
            return "ok";
        });
        assertThat(result).isEqualTo("ok");

        calls.set(0);
        assertThatThrownBy(() -> retry.call(() -> {
            calls.incrementAndGet();
            throw new IllegalArgumentException("not listed");
        })).isInstanceOf(IllegalArgumentException.class);
        assertThat(calls).hasValue(1);
    }

    @Test
    void retryIfRetriesFailuresMatchingThePredicate() {
        Retry retry = retry(fixed(4).retryIf(t -> t.getMessage().contains("busy")).build());

        catchThrowable(() -> retry.call(() -> {
            calls.incrementAndGet();
            throw new IllegalStateException("server busy");
        }));
        assertThat(calls).hasValue(4);

        calls.set(0);
        catchThrowable(() -> retry.call(() -> {
            calls.incrementAndGet();
            throw new IllegalStateException("bad request");
        }));
        assertThat(calls).hasValue(1);
    }

    @Test
    void retryOnAndRetryIfBothAddRetryableFailures() {
        Retry retry = retry(fixed(3).retryOn(IOException.class).retryIf(t -> t instanceof TimeoutException).build());

        catchThrowable(() -> retry.call(() -> {
            throw calls.incrementAndGet() == 1 ? new IOException() : new TimeoutException();
        }));

        assertThat(calls).hasValue(3);
    }

    @Test
    void abortOnWinsOverRetryOn() {
        Retry retry = retry(fixed(5).retryOn(IOException.class).abortOn(FileNotFoundException.class).build());

        assertThatThrownBy(() -> retry.call(() -> {
            calls.incrementAndGet();
            throw new FileNotFoundException("gone for good");
        })).isInstanceOf(FileNotFoundException.class);
        assertThat(calls).hasValue(1);
    }

    @Test
    void retryOnResultRetriesMatchingResultsUntilOneDoesNotMatch() throws Exception {
        Retry retry = retry(fixed(5).retryOnResult(Integer.class, status -> status == 503).build());

        Integer status = retry.call(() -> calls.incrementAndGet() < 3 ? 503 : 200);

        assertThat(status).isEqualTo(200);
        assertThat(calls).hasValue(3);
    }

    @Test
    void retryOnResultReturnsTheLastResultWhenAttemptsRunOut() throws Exception {
        RecordingListener events = new RecordingListener();
        Retry retry = retry(fixed(3).retryOnResult(Integer.class, status -> status == 503).build()).withListener(events);

        Integer status = retry.call(() -> {
            calls.incrementAndGet();
            return 503;
        });

        assertThat(status).isEqualTo(503);
        assertThat(calls).hasValue(3);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.EXHAUSTED);
        assertThat(events.onlyFinish().result()).isEqualTo(503);
    }

    @Test
    void retryOnResultIgnoresResultsOfAnotherType() throws Exception {
        Retry retry = retry(fixed(5).retryOnResult(Integer.class, status -> status == 503).build());

        Object result = retry.call(() -> {
            calls.incrementAndGet();
            return "a string, not a status";
        });

        assertThat(result).isEqualTo("a string, not a status");
        assertThat(calls).hasValue(1);
    }

    @Test
    void aClassCastExceptionThrownInsideTheResultPredicateReachesTheCaller() {
        ClassCastException bug = new ClassCastException("the predicate's own cast");
        RecordingListener events = new RecordingListener();
        Retry retry = retry(fixed(5).retryOnResult(Integer.class, status -> {
            throw bug;
        }).build()).withListener(events);

        Throwable thrown = catchThrowable(() -> retry.call(() -> {
            calls.incrementAndGet();
            return 503;
        }));

        assertThat(thrown).isSameAs(bug);
        assertThat(calls).hasValue(1);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.NOT_RETRYABLE);
    }

    @Test
    void theDefaultClassifierRetriesEveryExceptionExceptInterruptedAndAcceptsEveryResult() {
        Classifier defaults = Classifier.defaults();

        assertThat(defaults.classify(null, new IOException(), null)).isEqualTo(Decision.retry());
        assertThat(defaults.classify(null, new IllegalStateException(), null)).isEqualTo(Decision.retry());
        assertThat(defaults.classify(null, new InterruptedException(), null)).isEqualTo(Decision.stop());
        assertThat(defaults.classify(null, new Error(), null)).isEqualTo(Decision.stop());
        assertThat(defaults.classify(503, null, null)).isEqualTo(Decision.accept());
    }

    @Test
    void maxRetriesNIsTheSameAsMaxAttemptsNPlusOne() {
        RetryPolicy retries = RetryPolicy.builder().maxRetries(3).backoff(Backoff.none()).build();
        RetryPolicy attempts = RetryPolicy.builder().maxAttempts(4).backoff(Backoff.none()).build();

        assertThat(retries.maxAttempts()).isEqualTo(attempts.maxAttempts()).isEqualTo(4);
        catchThrowable(() -> retry(retries).call(() -> {
            calls.incrementAndGet();
            throw new IOException();
        }));
        assertThat(calls).hasValue(4);
    }

    @Test
    void maxRetriesZeroMeansOneAttempt() {
        catchThrowable(() -> retry(RetryPolicy.builder().maxRetries(0).build()).call(() -> {
            calls.incrementAndGet();
            throw new IOException();
        }));

        assertThat(calls).hasValue(1);
    }

    @Test
    void aClassifierThatThrowsEndsTheCallWithTheFailureAndItsExceptionSuppressed() {
        RecordingListener events = new RecordingListener();
        IllegalStateException bug = new IllegalStateException("classifier bug");
        Retry retry = retry(fixed(5).classifier((r, f, c) -> {
            throw bug;
        }).build()).withListener(events);

        Throwable caught = catchThrowable(() -> retry.call(() -> {
            calls.incrementAndGet();
            throw new IOException("down");
        }));

        assertThat(caught).isInstanceOf(IOException.class);
        assertThat(caught.getSuppressed()).containsExactly(bug);
        assertThat(calls).hasValue(1);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.NOT_RETRYABLE);
    }

    @Test
    void listenerExceptionsDoNotChangeTheOutcome() throws Exception {
        RetryListener throwing = new RetryListener() {
            @Override
            public void onAttemptFinished(RetryEvent.AttemptFinished event) {
                throw new IllegalStateException("listener bug");
            }

            @Override
            public void onRetryScheduled(RetryEvent.RetryScheduled event) {
                throw new IllegalStateException("listener bug");
            }

            @Override
            public void onCallFinished(RetryEvent.CallFinished event) {
                throw new IllegalStateException("listener bug");
            }
        };
        RecordingListener after = new RecordingListener();
        Retry retry = retry(fixed(3).build()).withListener(throwing).withListener(after);

        String result = retry.call(() -> {
            if (calls.incrementAndGet() < 2) {
                throw new IOException();
            }
            return "ok";
        });

        assertThat(result).isEqualTo("ok");
        assertThat(after.attempts).hasSize(2);
        assertThat(after.onlyFinish().reason()).isEqualTo(EndReason.RECOVERED);
    }

    @Test
    void getAndRunRethrowUncheckedFailuresUnchanged() {
        UncheckedIOException failure = new UncheckedIOException(new IOException("down"));
        Retry retry = retry(fixed(2).build());

        assertThatThrownBy(() -> retry.get(() -> {
            throw failure;
        })).isSameAs(failure);
        assertThatThrownBy(() -> retry.run(() -> {
            calls.incrementAndGet();
            throw failure;
        })).isSameAs(failure);
        assertThat(calls).hasValue(2);
    }

    @Test
    void toBuilderKeepsTheRulesSoMoreCanBeAdded() {
        RetryPolicy base = fixed(5).retryOn(IOException.class).build();
        RetryPolicy wider = base.toBuilder().retryOn(TimeoutException.class).build();

        catchThrowable(() -> retry(wider).call(() -> {
            throw calls.incrementAndGet() % 2 == 0 ? new IOException() : new TimeoutException();
        }));
        assertThat(calls).hasValue(5);

        calls.set(0);
        catchThrowable(() -> retry(wider).call(() -> {
            calls.incrementAndGet();
            throw new IllegalArgumentException();
        }));
        assertThat(calls).hasValue(1);
    }

    @Test
    void aBuiltPolicyDoesNotChangeWhenItsBuilderDoes() {
        RetryPolicy.Builder builder = RetryPolicy.builder().maxAttempts(2);
        RetryPolicy policy = builder.build();

        builder.maxAttempts(9).deadline(Duration.ofSeconds(1));

        assertThat(policy.maxAttempts()).isEqualTo(2);
        assertThat(policy.deadline()).isEmpty();
    }

    /** Reads time from a virtual clock; every sleep is interrupted, as Thread.sleep would be. */
    private static final class InterruptedWhileSleeping implements Clock {
        private final VirtualClock time;

        InterruptedWhileSleeping(VirtualClock time) {
            this.time = time;
        }

        @Override
        public long nanoTime() {
            return time.nanoTime();
        }

        @Override
        public long currentTimeMillis() {
            return time.currentTimeMillis();
        }

        @Override
        public void sleep(long nanos) throws InterruptedException {
            throw new InterruptedException("interrupted while waiting");
        }

        @Override
        public Cancellable schedule(Runnable task, long delayNanos) {
            return time.schedule(task, delayNanos);
        }
    }
}
