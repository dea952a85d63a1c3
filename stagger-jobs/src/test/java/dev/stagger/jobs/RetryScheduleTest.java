package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Backoff;
import dev.stagger.Decision;
import dev.stagger.EndReason;
import dev.stagger.Jitter;
import dev.stagger.RandomSource;
import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Failure handling walked through on a virtual clock against a real SQLite file. */
class RetryScheduleTest {
    private static final RetryPolicy POLICY = RetryPolicy.builder()
            .maxAttempts(4)
            .backoff(Backoff.exponential(Duration.ofSeconds(1)).multiplier(2).maxDelay(Duration.ofSeconds(60))
                    .jitter(Jitter.full()))
            .abortOn(IllegalArgumentException.class)
            .build();

    @TempDir
    Path dir;
    VirtualClock clock;
    JobQueue jobs;
    final AtomicInteger runs = new AtomicInteger();

    @BeforeEach
    void setUp() throws Exception {
        clock = new VirtualClock();
        jobs = Stores.sqlite(dir, clock);
    }

    private WorkerPool pool(JobHandler handler) {
        // full jitter with the random number 0.5 waits exactly half of each exponential step
        return WorkerPool.builder(jobs, "mail").handler("send", handler).policy(POLICY)
                .random(RandomSource.sequence(0.5)).build();
    }

    private JobHandler failingWith(Exception e) {
        return ctx -> {
            runs.incrementAndGet();
            throw e;
        };
    }

    private Instant at(Duration sinceStart) {
        return Instant.ofEpochMilli(new VirtualClock().currentTimeMillis()).plus(sinceStart);
    }

    @Test
    void retryableFailuresRescheduleAtNowPlusTheJitteredBackoff() throws Exception {
        WorkerPool pool = pool(failingWith(new IOException("smtp down")));
        long id = jobs.enqueue("mail", "send", "hello");
        List<Duration> waits = new ArrayList<>();
        for (int attempt = 1; attempt <= 3; attempt++) {
            Instant before = Instant.ofEpochMilli(clock.currentTimeMillis());
            assertThat(pool.runAvailable()).isEqualTo(1);
            Job job = jobs.admin().find(id).orElseThrow();
            assertThat(job.state()).isEqualTo(JobState.AVAILABLE);
            assertThat(job.attempt()).isEqualTo(attempt);
            waits.add(Duration.between(before, job.runAt()));
            clock.advance(Duration.between(before, job.runAt()));
        }
        assertThat(waits).containsExactly(Duration.ofMillis(500), Duration.ofMillis(1000), Duration.ofMillis(2000));
    }

    @Test
    void aRescheduledJobDoesNotRunBeforeItsTime() throws Exception {
        WorkerPool pool = pool(failingWith(new IOException("smtp down")));
        jobs.enqueue("mail", "send", "hello");
        pool.runAvailable();
        clock.advance(Duration.ofMillis(499));
        assertThat(pool.runAvailable()).isZero();
        clock.advance(Duration.ofMillis(1));
        assertThat(pool.runAvailable()).isEqualTo(1);
    }

    @Test
    void exhaustedJobGoesDeadWithItsFullErrorHistory() throws Exception {
        WorkerPool pool = pool(failingWith(new IOException("smtp down")));
        long id = jobs.enqueue("mail", "send", "hello");
        for (int i = 0; i < 10; i++) {
            pool.runAvailable();
            clock.advance(Duration.ofMinutes(1));
        }
        Job job = jobs.admin().find(id).orElseThrow();
        assertThat(job.state()).isEqualTo(JobState.DEAD);
        assertThat(runs.get()).isEqualTo(4);
        List<JobError> history = jobs.admin().errors(id);
        assertThat(history).extracting(JobError::attempt).containsExactly(1, 2, 3, 4);
        assertThat(history).allSatisfy(e -> {
            assertThat(e.exceptionClass()).isEqualTo(IOException.class.getName());
            assertThat(e.message()).isEqualTo("smtp down");
            assertThat(e.stackTrace()).startsWith("java.io.IOException: smtp down").contains("\tat ");
        });
        assertThat(history.get(1).failedAt()).isEqualTo(at(Duration.ofMinutes(1)));
        assertThat(jobs.admin().dead("mail", 10)).extracting(Job::id).containsExactly(id);
    }

    @Test
    void permanentFailureGoesDeadAtOnce() throws Exception {
        WorkerPool pool = pool(failingWith(new IllegalArgumentException("bad address")));
        long id = jobs.enqueue("mail", "send", "hello");
        pool.runAvailable();
        assertThat(jobs.admin().find(id).orElseThrow().state()).isEqualTo(JobState.DEAD);
        assertThat(jobs.admin().errors(id)).singleElement().satisfies(e -> {
            assertThat(e.attempt()).isEqualTo(1);
            assertThat(e.exceptionClass()).isEqualTo(IllegalArgumentException.class.getName());
        });
    }

    @Test
    void theJobsOwnMaxAttemptsOverridesThePolicy() throws Exception {
        WorkerPool pool = pool(failingWith(new IOException("down")));
        long id = jobs.enqueue("mail", "send", "x", EnqueueOptions.defaults().maxAttempts(2));
        pool.runAvailable();
        clock.advance(Duration.ofMinutes(1));
        pool.runAvailable();
        assertThat(jobs.admin().find(id).orElseThrow().state()).isEqualTo(JobState.DEAD);
        assertThat(runs.get()).isEqualTo(2);
    }

    @Test
    void redriveRunsADeadJobAgainWithFreshAttemptsKeepingItsHistory() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        WorkerPool pool = pool(ctx -> {
            if (calls.incrementAndGet() == 1) {
                throw new IllegalArgumentException("bad template");
            }
        });
        long id = jobs.enqueue("mail", "send", "x");
        pool.runAvailable();
        assertThat(jobs.admin().find(id).orElseThrow().state()).isEqualTo(JobState.DEAD);

        assertThat(jobs.admin().redrive(id)).isTrue();
        assertThat(jobs.admin().find(id).orElseThrow().attempt()).isZero();
        pool.runAvailable();
        assertThat(jobs.admin().find(id).orElseThrow().state()).isEqualTo(JobState.SUCCEEDED);
        assertThat(jobs.admin().errors(id)).hasSize(1);
        assertThat(jobs.admin().redrive(id)).as("only dead jobs are re-driven").isFalse();
    }

    @Test
    void redriveAllMovesEveryDeadJobOfTheQueueBack() throws Exception {
        WorkerPool pool = pool(failingWith(new IllegalArgumentException("bad")));
        jobs.enqueue("mail", "send", "a");
        jobs.enqueue("mail", "send", "b");
        jobs.enqueue("other", "send", "c", EnqueueOptions.defaults().delay(Duration.ofDays(1)));
        pool.runAvailable();
        assertThat(jobs.admin().redriveAll("mail")).isEqualTo(2);
        assertThat(jobs.admin().countByState("mail")).containsEntry(JobState.AVAILABLE, 2L).containsEntry(JobState.DEAD, 0L);
    }

    @Test
    void snoozeReschedulesWithoutCountingAnAttempt() throws Exception {
        WorkerPool pool = pool(ctx -> {
            runs.incrementAndGet();
            if (runs.get() < 3) {
                ctx.snooze(Duration.ofMinutes(5));
            }
        });
        long id = jobs.enqueue("mail", "send", "x");
        pool.runAvailable();
        Job snoozed = jobs.admin().find(id).orElseThrow();
        assertThat(snoozed.state()).isEqualTo(JobState.AVAILABLE);
        assertThat(snoozed.attempt()).isZero();
        assertThat(snoozed.runAt()).isEqualTo(at(Duration.ofMinutes(5)));
        clock.advance(Duration.ofMinutes(5));
        pool.runAvailable();
        clock.advance(Duration.ofMinutes(5));
        pool.runAvailable();
        Job done = jobs.admin().find(id).orElseThrow();
        assertThat(done.state()).isEqualTo(JobState.SUCCEEDED);
        assertThat(done.attempt()).isEqualTo(1);
        assertThat(jobs.admin().errors(id)).isEmpty();
    }

    @Test
    void aServerHintIsTheMinimumWaitWithTheBackoffsJitteredDelayOnTop() throws Exception {
        // the same numbers as the core's DeadlineAndRetryAfterTest: 2 s + U(0, 100 ms) at 0.5
        RetryPolicy hinted = RetryPolicy.builder().maxAttempts(3)
                .backoff(Backoff.fixed(Duration.ofMillis(100)).jitter(Jitter.full()))
                .classifier((r, f, c) -> f != null ? Decision.retryAfter(Duration.ofSeconds(2)) : Decision.accept())
                .build();
        WorkerPool pool = WorkerPool.builder(jobs, "mail").handler("send", failingWith(new IOException("503")), hinted)
                .random(RandomSource.sequence(0.5)).build();
        long id = jobs.enqueue("mail", "send", "x");
        pool.runAvailable();
        assertThat(jobs.admin().find(id).orElseThrow().runAt()).isEqualTo(at(Duration.ofMillis(2050)));
    }

    @Test
    void aJobEndsWithTheReasonACoreCallWouldGive() throws Exception {
        List<String> reasons = new ArrayList<>();
        JobListener listener = new JobListener() {
            @Override
            public void dead(Job job, JobError error, EndReason reason) {
                reasons.add(job.payloadText() + " " + reason);
            }
        };
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofSeconds(40)))
                .deadline(Duration.ofSeconds(60)).abortOn(IllegalArgumentException.class).build();
        WorkerPool pool = WorkerPool.builder(jobs, "mail").jobListener(listener).random(RandomSource.sequence(0.5))
                .handler("bad", failingWith(new IllegalArgumentException("bad address")), policy)
                .handler("down", failingWith(new IOException("down")), policy)
                .handler("short", failingWith(new IOException("down")), policy.toBuilder().deadline(Duration.ofHours(1)).build())
                .build();
        jobs.enqueue("mail", "bad", "bad");
        jobs.enqueue("mail", "down", "down");
        jobs.enqueue("mail", "short", "short", EnqueueOptions.defaults().maxAttempts(2));
        for (int i = 0; i < 5; i++) {
            pool.runAvailable();
            clock.advance(Duration.ofSeconds(40));
        }
        // "down": attempt 2 starts at 40 s, and a second 40 s wait would end at 80 s, past the 60 s deadline
        assertThat(reasons).containsExactlyInAnyOrder("bad NOT_RETRYABLE", "down DEADLINE", "short EXHAUSTED");
    }

    @Test
    void theDeadlineCountsFromTheFirstAttemptNotFromTheEnqueue() throws Exception {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(5).backoff(Backoff.fixed(Duration.ofSeconds(10)))
                .deadline(Duration.ofSeconds(30)).build();
        WorkerPool pool = WorkerPool.builder(jobs, "mail").handler("send", failingWith(new IOException("down")), policy)
                .build();
        long id = jobs.enqueue("mail", "send", "x", EnqueueOptions.defaults().delay(Duration.ofHours(1)));
        clock.advance(Duration.ofHours(1));
        for (int i = 0; i < 5; i++) {
            pool.runAvailable();
            clock.advance(Duration.ofSeconds(10));
        }
        // attempts at 0, 10 and 20 s after the first; a third wait would end at 30 s: the deadline
        assertThat(runs).hasValue(3);
        assertThat(jobs.admin().find(id).orElseThrow().state()).isEqualTo(JobState.DEAD);
    }

    @Test
    void listenerHearsStartRetryAndDeath() throws Exception {
        List<String> events = new ArrayList<>();
        JobListener listener = new JobListener() {
            @Override
            public void started(Job job) {
                events.add("started " + job.attempt());
            }

            @Override
            public void retried(Job job, JobError error, Instant nextRunAt) {
                events.add("retried " + error.attempt());
            }

            @Override
            public void dead(Job job, JobError error, EndReason reason) {
                events.add("dead " + error.attempt() + " " + reason);
            }
        };
        WorkerPool pool = WorkerPool.builder(jobs, "mail").handler("send", failingWith(new IOException("x")))
                .policy(POLICY.toBuilder().maxAttempts(2).build()).jobListener(listener).build();
        jobs.enqueue("mail", "send", "x");
        pool.runAvailable();
        clock.advance(Duration.ofMinutes(1));
        pool.runAvailable();
        assertThat(events).containsExactly("started 1", "retried 1", "started 2", "dead 2 EXHAUSTED");
    }

    @Test
    void aDecorrelatedBackoffKeepsGrowingAcrossAJobsAttemptsAsInACoreCall() throws Exception {
        RetryPolicy decorrelated = POLICY.toBuilder().maxAttempts(5)
                .backoff(Backoff.decorrelated(Duration.ofSeconds(1), Duration.ofMinutes(10))).build();
        VirtualClock coreClock = new VirtualClock();
        Throwable ignored = org.assertj.core.api.Assertions.catchThrowable(() -> dev.stagger.Retry.of("core", decorrelated)
                .withClock(coreClock).withRandom(RandomSource.seeded(7)).call(() -> {
                    throw new IOException("down");
                }));
        List<Duration> coreWaits = coreClock.sleeps().stream().map(d -> Duration.ofMillis((d.toNanos() + 999_999) / 1_000_000))
                .toList();

        WorkerPool pool = WorkerPool.builder(jobs, "mail").handler("send", failingWith(new IOException("down")), decorrelated)
                .random(RandomSource.seeded(7)).build();
        long id = jobs.enqueue("mail", "send", "x");
        List<Duration> jobWaits = new ArrayList<>();
        for (int attempt = 1; attempt < 5; attempt++) {
            Instant before = Instant.ofEpochMilli(clock.currentTimeMillis());
            pool.runAvailable();
            Duration wait = Duration.between(before, jobs.admin().find(id).orElseThrow().runAt());
            jobWaits.add(wait);
            clock.advance(wait);
        }

        assertThat(coreWaits).hasSize(4);
        assertThat(jobWaits).isEqualTo(coreWaits);
    }

    @Test
    void aRedrivenJobStartsItsDeadlineAfresh() throws Exception {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(5).backoff(Backoff.fixed(Duration.ofSeconds(10)))
                .deadline(Duration.ofSeconds(15)).build();
        WorkerPool pool = WorkerPool.builder(jobs, "mail").handler("send", failingWith(new IOException("down")), policy)
                .build();
        long id = jobs.enqueue("mail", "send", "x");
        pool.runAvailable();
        clock.advance(Duration.ofSeconds(10));
        pool.runAvailable(); // attempt 2 at 10 s: a 10 s wait would end at 20 s, past the deadline
        assertThat(jobs.admin().find(id).orElseThrow().state()).isEqualTo(JobState.DEAD);

        clock.advance(Duration.ofHours(1));
        jobs.admin().redrive(id);
        pool.runAvailable();

        Job again = jobs.admin().find(id).orElseThrow();
        assertThat(again.state()).as("an hour later the deadline counts from the new first attempt")
                .isEqualTo(JobState.AVAILABLE);
        assertThat(again.attempt()).isEqualTo(1);
    }
}
