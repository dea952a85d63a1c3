package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.testing.VirtualClock;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Enqueueing and the operator operations, on a real SQLite file. */
class JobQueueTest {
    @TempDir
    Path dir;
    VirtualClock clock;
    JobQueue jobs;
    DataSource ds;

    @BeforeEach
    void setUp() throws Exception {
        clock = new VirtualClock();
        ds = dev.stagger.jdbc.SqliteDataSource.file(dir.resolve("jobs.db"));
        jobs = JobQueue.builder(ds).clock(clock).build();
    }

    @Test
    void anEnqueuedJobIsAvailableWithItsPayloadAndOptions() throws Exception {
        long id = jobs.enqueue("mail", "send", "héllo", EnqueueOptions.defaults().priority(5)
                .delay(Duration.ofMinutes(2)).maxAttempts(3));
        Job job = jobs.admin().find(id).orElseThrow();
        assertThat(job.state()).isEqualTo(JobState.AVAILABLE);
        assertThat(job.payloadText()).isEqualTo("héllo");
        assertThat(job.priority()).isEqualTo(5);
        assertThat(job.maxAttempts()).isEqualTo(3);
        assertThat(job.attempt()).isZero();
        assertThat(job.runAt()).isEqualTo(job.createdAt().plus(Duration.ofMinutes(2)));
    }

    @Test
    void aDuplicateKeyAddsNothingAndReturnsTheExistingId() throws Exception {
        long first = jobs.enqueue("mail", "send", "a", EnqueueOptions.defaults().key("evt-1"));
        long second = jobs.enqueue("mail", "send", "b", EnqueueOptions.defaults().key("evt-1"));
        assertThat(second).isEqualTo(first);
        assertThat(jobs.admin().find(first).orElseThrow().payloadText()).isEqualTo("a");
        assertThat(jobs.admin().countByState(null).get(JobState.AVAILABLE)).isEqualTo(1);
    }

    @Test
    void concurrentEnqueuesOfOneKeyMakeOneJob() throws Exception {
        assertOneJobUnderConcurrentEnqueue(jobs);
    }

    static void assertOneJobUnderConcurrentEnqueue(JobQueue jobs) throws Exception {
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Long>> ids = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                String payload = "copy-" + i;
                Callable<Long> enqueue = () -> {
                    go.await();
                    return jobs.enqueue("events", "handle", payload, EnqueueOptions.defaults().key("event-42"));
                };
                ids.add(pool.submit(enqueue));
            }
            go.countDown();
            var distinct = new HashSet<Long>();
            for (Future<Long> f : ids) {
                distinct.add(f.get());
            }
            assertThat(distinct).hasSize(1);
            assertThat(jobs.admin().countByState("events").get(JobState.AVAILABLE)).isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aJobEnqueuedInARolledBackTransactionDoesNotExist() throws Exception {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            jobs.enqueue(c, "mail", "send", "x", EnqueueOptions.defaults());
            c.rollback();
        }
        assertThat(jobs.admin().countByState(null).values()).allMatch(n -> n == 0);
    }

    @Test
    void aJobEnqueuedInACommittedTransactionExists() throws Exception {
        long id;
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            id = jobs.enqueue(c, "mail", "send", "x", EnqueueOptions.defaults());
            c.commit();
        }
        assertThat(jobs.admin().find(id)).isPresent();
    }

    @Test
    void bulkEnqueueReturnsIdsInOrderAndHonoursKeys() throws Exception {
        List<Long> ids = jobs.enqueueAll(List.of(
                JobRequest.of("mail", "send", "a"),
                JobRequest.of("mail", "send", "b").with(EnqueueOptions.defaults().key("k")),
                JobRequest.of("mail", "send", "c").with(EnqueueOptions.defaults().key("k"))));
        assertThat(ids).hasSize(3);
        assertThat(ids.get(2)).isEqualTo(ids.get(1));
        assertThat(jobs.admin().find(ids.get(0)).orElseThrow().payloadText()).isEqualTo("a");
        assertThat(jobs.admin().countByState("mail").get(JobState.AVAILABLE)).isEqualTo(2);
    }

    @Test
    void purgeDeletesOnlySucceededJobsOlderThanTheRetention() throws Exception {
        WorkerPool pool = WorkerPool.builder(jobs, "mail").handler("send", ctx -> {
            if (ctx.payloadText().equals("bad")) {
                throw new IllegalStateException("no");
            }
        }, dev.stagger.RetryPolicy.builder().maxAttempts(1).build()).build();
        long old = jobs.enqueue("mail", "send", "old");
        long dead = jobs.enqueue("mail", "send", "bad");
        pool.runAvailable();
        clock.advance(Duration.ofDays(2));
        long recent = jobs.enqueue("mail", "send", "recent");
        pool.runAvailable();

        assertThat(jobs.admin().purge(JobState.SUCCEEDED, Duration.ofDays(1), null)).isEqualTo(1);
        assertThat(jobs.admin().find(old)).isEmpty();
        assertThat(jobs.admin().find(recent)).isPresent();
        assertThat(jobs.admin().find(dead).orElseThrow().state()).isEqualTo(JobState.DEAD);
    }

    @Test
    void theLongestRetentionPurgesNothingAndALongerOneIsRefusedNamingTheField() throws Exception {
        WorkerPool pool = WorkerPool.builder(jobs, "mail").handler("send", ctx -> { }).build();
        jobs.enqueue("mail", "send", "x");
        pool.runAvailable();
        clock.advance(Duration.ofDays(2));

        assertThat(jobs.admin().purge(JobState.SUCCEEDED, Duration.ofDays(365_250), null)).isZero();
        assertThat(jobs.admin().countByState("mail").get(JobState.SUCCEEDED)).isEqualTo(1);
        assertThatThrownBy(() -> jobs.admin().purge(JobState.SUCCEEDED, Duration.ofDays(1_000_000_000_000L), null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("retention must be at most");
    }

    @Test
    void deadJobsArePurgedOnlyWhenAskedForByState() throws Exception {
        WorkerPool pool = WorkerPool.builder(jobs, "mail").handler("send", ctx -> {
            throw new IllegalStateException("no");
        }, dev.stagger.RetryPolicy.builder().maxAttempts(1).build()).build();
        long dead = jobs.enqueue("mail", "send", "bad");
        pool.runAvailable();
        clock.advance(Duration.ofDays(2));

        assertThat(jobs.admin().purge(JobState.SUCCEEDED, Duration.ofDays(1), null)).isZero();
        assertThat(jobs.admin().purge(JobState.DEAD, Duration.ofDays(1), "mail")).isEqualTo(1);
        assertThat(jobs.admin().find(dead)).isEmpty();
        assertThat(jobs.admin().errors(dead)).as("its history goes with it").isEmpty();
        assertThatThrownBy(() -> jobs.admin().purge(JobState.RUNNING, Duration.ofDays(1), null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("RUNNING");
    }

    @Test
    void aPoolWithZeroSuccessRetentionDeletesEachSuccessAsItIsStoredAndStillReportsIt() throws Exception {
        List<Long> heard = new ArrayList<>();
        int[] calls = {0};
        WorkerPool pool = WorkerPool.builder(jobs, "mail").retention(JobState.SUCCEEDED, Duration.ZERO)
                .handler("send", ctx -> {
                    if (ctx.payloadText().equals("flaky") && calls[0]++ == 0) {
                        throw new java.io.IOException("connection reset");
                    }
                }, dev.stagger.RetryPolicy.builder().maxAttempts(3).build())
                .handler("fail", ctx -> {
                    throw new IllegalStateException("no");
                }, dev.stagger.RetryPolicy.builder().maxAttempts(1).build())
                .jobListener(new JobListener() {
                    @Override
                    public void succeeded(Job job, Duration runTime) {
                        heard.add(job.id());
                    }
                }).build();
        long plain = jobs.enqueue("mail", "send", "ok", EnqueueOptions.defaults().key("once"));
        long flaky = jobs.enqueue("mail", "send", "flaky");
        long dead = jobs.enqueue("mail", "fail", "bad");
        pool.runAvailable();
        clock.advance(Duration.ofMinutes(10));
        pool.runAvailable();

        assertThat(heard).containsExactlyInAnyOrder(plain, flaky);
        assertThat(jobs.admin().find(plain)).isEmpty();
        assertThat(jobs.admin().find(flaky)).isEmpty();
        assertThat(jobs.admin().errors(flaky)).as("its history goes with it").isEmpty();
        assertThat(jobs.admin().find(dead).orElseThrow().state()).as("dead jobs are kept").isEqualTo(JobState.DEAD);
        assertThat(jobs.admin().errors(dead)).hasSize(1);
        assertThat(jobs.enqueue("mail", "send", "ok", EnqueueOptions.defaults().key("once"))).isNotEqualTo(plain);
    }

    @Test
    void aPoolWithAnyOtherSuccessRetentionKeepsSuccessesUntilItsPurge() throws Exception {
        WorkerPool pool = WorkerPool.builder(jobs, "mail").retention(JobState.SUCCEEDED, Duration.ofMillis(1))
                .handler("send", ctx -> { }).build();
        long id = jobs.enqueue("mail", "send", "ok");
        pool.runAvailable();
        assertThat(jobs.admin().find(id).orElseThrow().state()).isEqualTo(JobState.SUCCEEDED);
    }

    @Test
    void aPurgedJobsKeyCanBeUsedAgain() throws Exception {
        WorkerPool pool = WorkerPool.builder(jobs, "mail").handler("send", ctx -> { }).build();
        long first = jobs.enqueue("mail", "send", "x", EnqueueOptions.defaults().key("once"));
        pool.runAvailable();
        clock.advance(Duration.ofHours(1));
        jobs.admin().purge(JobState.SUCCEEDED, Duration.ZERO, "mail");
        long second = jobs.enqueue("mail", "send", "x", EnqueueOptions.defaults().key("once"));
        assertThat(second).isNotEqualTo(first);
    }

    @Test
    void badConfigurationIsRejectedNamingTheField() {
        assertThatThrownBy(() -> JobQueue.builder(ds).tablePrefix("Bad-Prefix"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tablePrefix");
        assertThatThrownBy(() -> EnqueueOptions.defaults().maxAttempts(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxAttempts must be at least 1, got 0");
        assertThatThrownBy(() -> WorkerPool.builder(jobs, "q").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("handlers");
        assertThatThrownBy(() -> WorkerPool.builder(jobs, "q").handler("t", c -> { })
                .lease(Duration.ofSeconds(1)).heartbeatInterval(Duration.ofSeconds(2)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("heartbeatInterval");
    }
}
