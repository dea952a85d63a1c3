package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.Backoff;
import dev.stagger.Clock;
import dev.stagger.EndReason;
import dev.stagger.Nesting;
import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A job handler calling a Stagger retry: a failure the retry inside already decided on is not
 * retried again by the job's own policy (the one-layer rule), unless the pool asks for it.
 */
class NestedRetryInJobTest {
    private static final RetryPolicy JOB_POLICY = RetryPolicy.builder().maxAttempts(5)
            .backoff(Backoff.fixed(Duration.ofSeconds(1))).build();

    @TempDir
    Path dir;

    private final AtomicInteger downstreamCalls = new AtomicInteger();
    private final List<EndReason> deadReasons = new CopyOnWriteArrayList<>();
    /** The inner retry waits on a virtual clock: no real sleeping. */
    private final Retry http = Retry.of("http", RetryPolicy.builder().maxAttempts(3)
            .backoff(Backoff.fixed(Duration.ofMillis(100))).build()).withClock(new VirtualClock()).withoutBudget();

    private String callDownstream() throws IOException {
        downstreamCalls.incrementAndGet();
        throw new IOException("503 from downstream");
    }

    private WorkerPool pool(JobQueue jobs, Nesting nesting, JobHandler handler) {
        WorkerPool.Builder b = WorkerPool.builder(jobs, "q").handler("call", handler, JOB_POLICY)
                .jobListener(new JobListener() {
                    @Override
                    public void dead(Job job, JobError error, EndReason reason) {
                        deadReasons.add(reason);
                    }
                });
        return (nesting == null ? b : b.nesting(nesting)).build();
    }

    @Test
    void aFailureTheInnerRetryGaveUpOnEndsTheJobInsteadOfRetryingIt() throws Exception {
        JobQueue jobs = Stores.sqlite(dir, Clock.system());
        long id = jobs.enqueue("q", "call", "{}");

        pool(jobs, null, ctx -> http.call(this::callDownstream)).runAvailable();

        Job job = jobs.admin().find(id).orElseThrow();
        assertThat(job.state()).isEqualTo(JobState.DEAD);
        assertThat(job.attempt()).isEqualTo(1);
        assertThat(downstreamCalls).as("the inner retry's 3 attempts, once").hasValue(3);
        assertThat(deadReasons).containsExactly(EndReason.NOT_RETRYABLE);
        assertThat(jobs.admin().errors(id)).singleElement().satisfies(e ->
                assertThat(e.message()).startsWith("deferred to retry 'http' (EXHAUSTED after 3 attempt(s)): 503 from downstream"));
    }

    @Test
    void aFailureOfTheHandlerItselfIsStillTheJobsToRetry() throws Exception {
        JobQueue jobs = Stores.sqlite(dir, Clock.system());
        long id = jobs.enqueue("q", "call", "{}");

        pool(jobs, null, ctx -> {
            http.call(() -> "ok");
            throw new IllegalStateException("deadlock");
        }).runAvailable();

        Job job = jobs.admin().find(id).orElseThrow();
        assertThat(job.state()).as("scheduled for its next attempt").isEqualTo(JobState.AVAILABLE);
        assertThat(jobs.admin().errors(id)).singleElement().satisfies(e -> assertThat(e.message()).isEqualTo("deadlock"));
        assertThat(deadReasons).isEmpty();
    }

    @Test
    void retryAgainLetsTheJobsPolicyRetryWhatTheInnerRetryGaveUpOn() throws Exception {
        JobQueue jobs = Stores.sqlite(dir, Clock.system());
        long id = jobs.enqueue("q", "call", "{}");

        pool(jobs, Nesting.RETRY_AGAIN, ctx -> http.call(this::callDownstream)).runAvailable();

        Job job = jobs.admin().find(id).orElseThrow();
        assertThat(job.state()).as("scheduled for its next attempt").isEqualTo(JobState.AVAILABLE);
        assertThat(jobs.admin().errors(id)).singleElement().satisfies(e -> assertThat(e.message()).isEqualTo("503 from downstream"));
        assertThat(deadReasons).isEmpty();
    }

    @Test
    void refuseIsNotAPoolSetting() throws Exception {
        JobQueue jobs = Stores.sqlite(dir, Clock.system());

        assertThatThrownBy(() -> WorkerPool.builder(jobs, "q").nesting(Nesting.REFUSE))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nesting").hasMessageContaining("REFUSE");
    }
}
