package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.Backoff;
import dev.stagger.Decision;
import dev.stagger.EndReason;
import dev.stagger.Jitter;
import dev.stagger.RandomSource;
import dev.stagger.Retry;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One decision engine: a sync call, an async call and a job (a real SQLite job store driven on a
 * virtual clock) given the same policy, seed and failures make the same number of attempts, wait
 * the same (a job's stored run time is in whole milliseconds, so its waits are the core's rounded
 * up to the millisecond) and end for the same reason.
 */
class SameDecisionEverywhereTest {
    private static final long SEED = 2026;

    @TempDir
    Path dir;

    /** A server asking the client to come back later. */
    static final class Throttled extends IOException {
        private static final long serialVersionUID = 1L;

        Throttled() {
            super("429: retry after 2 s");
        }
    }

    /** What the n-th attempt does: throw the exception, or succeed when it is null. */
    record Script(List<Exception> failures) {
        static Script failTimes(int n) {
            List<Exception> failures = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                failures.add(new IOException("down " + (i + 1)));
            }
            return new Script(failures);
        }

        static Script of(Exception... failures) {
            return new Script(List.of(failures));
        }

        void attempt(int attempt) throws Exception {
            if (attempt <= failures.size()) {
                throw failures.get(attempt - 1);
            }
        }

        @Override
        public String toString() {
            return failures.size() + " failures";
        }
    }

    /** What a run did. */
    record Run(int attempts, List<Duration> waits, EndReason reason) {
        Run inWholeMillis() {
            return new Run(attempts, waits.stream()
                    .map(w -> Duration.ofMillis(w.toNanos() / 1_000_000 + (w.toNanos() % 1_000_000 == 0 ? 0 : 1)))
                    .toList(), reason);
        }
    }

    static Stream<Arguments> cases() {
        RetryPolicy exponential = RetryPolicy.builder().maxAttempts(5)
                .backoff(Backoff.exponential(Duration.ofMillis(200)).maxDelay(Duration.ofSeconds(5)).jitter(Jitter.full()))
                .build();
        RetryPolicy decorrelated = RetryPolicy.builder().maxAttempts(6)
                .backoff(Backoff.decorrelated(Duration.ofMillis(500), Duration.ofMinutes(2))).build();
        RetryPolicy polly = RetryPolicy.builder().maxAttempts(8)
                .backoff(Backoff.pollyDecorrelatedJitterV2(Duration.ofSeconds(1), Duration.ofMinutes(1)))
                .deadline(Duration.ofSeconds(20)).build();
        RetryPolicy hinted = RetryPolicy.builder().maxAttempts(5)
                .backoff(Backoff.fixed(Duration.ofMillis(100)).jitter(Jitter.full()))
                .classifier((result, failure, context) -> failure == null ? Decision.accept()
                        : failure instanceof Throttled ? Decision.retryAfter(Duration.ofSeconds(2))
                        : failure instanceof IOException ? Decision.retry() : Decision.stop())
                .build();
        RetryPolicy aborting = exponential.toBuilder().abortOn(IllegalArgumentException.class).build();
        return Stream.of(
                Arguments.of("exponential, full jitter: exhausted", exponential, Script.failTimes(9)),
                Arguments.of("exponential, full jitter: recovered", exponential, Script.failTimes(3)),
                Arguments.of("decorrelated (stateful): exhausted", decorrelated, Script.failTimes(9)),
                Arguments.of("decorrelated (stateful): recovered", decorrelated, Script.failTimes(4)),
                Arguments.of("Polly v2 (stateful) with a deadline", polly, Script.failTimes(9)),
                Arguments.of("Retry-After hint", hinted, Script.of(new Throttled(), new IOException("down"), new Throttled())),
                Arguments.of("not retryable on attempt 3", aborting,
                        Script.of(new IOException("down"), new IOException("down"), new IllegalArgumentException("bad"))),
                Arguments.of("first attempt succeeds", exponential, Script.failTimes(0)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void aSyncCallAnAsyncCallAndAJobDecideAlike(String name, RetryPolicy policy, Script script) throws Exception {
        Run sync = sync(policy, script);
        Run async = async(policy, script);
        Run job = job(policy, script);

        assertThat(async).as("async").isEqualTo(sync);
        assertThat(job).as("job").isEqualTo(sync.inWholeMillis());
        assertThat(sync.attempts()).as("the case exercises retries").isGreaterThanOrEqualTo(script.failures().isEmpty() ? 1 : 2);
    }

    /** Records attempts, waits and the end from the core events. */
    private static final class Recorder implements RetryListener {
        final List<Duration> waits = new ArrayList<>();
        int attempts;
        EndReason reason;

        @Override
        public void onRetryScheduled(RetryEvent.RetryScheduled event) {
            waits.add(event.delay());
        }

        @Override
        public void onCallFinished(RetryEvent.CallFinished event) {
            attempts = event.attempts();
            reason = event.reason();
        }

        Run run() {
            return new Run(attempts, List.copyOf(waits), reason);
        }
    }

    private Run sync(RetryPolicy policy, Script script) {
        VirtualClock clock = new VirtualClock();
        Recorder recorder = new Recorder();
        AtomicInteger attempt = new AtomicInteger();
        catchThrowable(() -> Retry.of("same", policy).withClock(clock).withRandom(RandomSource.seeded(SEED))
                .withListener(recorder).call(() -> {
                    script.attempt(attempt.incrementAndGet());
                    return "ok";
                }));
        assertThat(clock.sleeps()).as("the sync call slept the scheduled waits").isEqualTo(recorder.waits);
        return recorder.run();
    }

    private Run async(RetryPolicy policy, Script script) {
        VirtualClock clock = new VirtualClock();
        Recorder recorder = new Recorder();
        AtomicInteger attempt = new AtomicInteger();
        CompletableFuture<String> future = Retry.of("same", policy).withClock(clock).withRandom(RandomSource.seeded(SEED))
                .withListener(recorder).callAsync(() -> {
                    try {
                        script.attempt(attempt.incrementAndGet());
                        return CompletableFuture.completedFuture("ok");
                    } catch (Exception e) {
                        return CompletableFuture.failedFuture(e);
                    }
                });
        clock.runUntilIdle();
        assertThat(future).isDone();
        return recorder.run();
    }

    private Run job(RetryPolicy policy, Script script) throws Exception {
        VirtualClock clock = new VirtualClock();
        JobQueue jobs = Stores.sqlite(dir, clock);
        List<Duration> waits = new ArrayList<>();
        AtomicInteger started = new AtomicInteger();
        EndReason[] end = new EndReason[1];
        JobListener listener = new JobListener() {
            @Override
            public void started(Job job) {
                started.incrementAndGet();
            }

            @Override
            public void retried(Job job, JobError error, Instant nextRunAt) {
                waits.add(Duration.between(error.failedAt(), nextRunAt));
            }

            @Override
            public void succeeded(Job job, Duration runTime) {
                end[0] = job.attempt() == 1 ? EndReason.SUCCESS : EndReason.RECOVERED;
            }

            @Override
            public void dead(Job job, JobError error, EndReason reason) {
                end[0] = reason;
            }
        };
        WorkerPool pool = WorkerPool.builder(jobs, "same").jobListener(listener).random(RandomSource.seeded(SEED))
                .handler("work", ctx -> script.attempt(ctx.job().attempt()), policy).build();
        long id = jobs.enqueue("same", "work", "x");
        for (int guard = 0; guard < 50 && end[0] == null; guard++) {
            pool.runAvailable();
            Job job = jobs.admin().find(id).orElseThrow();
            if (job.state() == JobState.AVAILABLE) {
                clock.advance(Duration.between(Instant.ofEpochMilli(clock.currentTimeMillis()), job.runAt()));
            }
        }
        return new Run(started.get(), waits, end[0]);
    }
}
