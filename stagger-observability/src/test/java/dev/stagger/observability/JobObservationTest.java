package dev.stagger.observability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Backoff;
import dev.stagger.RetryPolicy;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.jobs.Job;
import dev.stagger.jobs.JobListener;
import dev.stagger.jobs.JobQueue;
import dev.stagger.jobs.JobState;
import dev.stagger.jobs.WorkerPool;
import dev.stagger.testing.VirtualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link JobObservation} on real pools over a SQLite file, on a virtual clock, with a real tracer
 * (Micrometer Tracing's OpenTelemetry bridge, spans exported to memory).
 */
class JobObservationTest {
    @TempDir
    Path dir;
    private final InMemoryTracing tracing = new InMemoryTracing();
    private final ObservationRegistry registry = tracing.registry;
    private final VirtualClock clock = new VirtualClock();

    @AfterEach
    void close() {
        tracing.close();
    }

    private static String attr(SpanData span, String key) {
        return InMemoryTracing.attr(span, key);
    }

    private List<SpanData> named(String prefix) {
        return tracing.named(prefix);
    }

    private WorkerPool pool(JobQueue jobs, JobListener listener, int failures, List<String> currentInside) {
        AtomicInteger runs = new AtomicInteger();
        return WorkerPool.builder(jobs, "mail").handler("send", ctx -> {
            // what a client the handler calls would take as its parent
            Observation current = registry.getCurrentObservation();
            currentInside.add(current == null ? "none" : current.getContext().getContextualName());
            if (runs.incrementAndGet() <= failures) {
                throw new IOException("smtp down");
            }
        }, RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofSeconds(1))).build())
                .jobListener(listener)
                .build();
    }

    @Test
    void aJobRetriedTwiceIsThreeRunsEachACallWithItsAttemptCurrentWhileTheHandlerRuns() {
        JobQueue jobs = JobQueue.builder(SqliteDataSource.file(dir.resolve("jobs.db"))).clock(clock).build();
        List<String> inside = new CopyOnWriteArrayList<>();
        WorkerPool pool = pool(jobs, JobObservation.of(registry), 2, inside);
        long id = jobs.enqueue("mail", "send", "receipt");
        for (int run = 0; run < 3; run++) {
            pool.runAvailable();
            clock.advance(Duration.ofSeconds(1));
        }

        assertThat(inside).containsExactly("mail/send attempt 1", "mail/send attempt 2", "mail/send attempt 3");
        List<SpanData> calls = named("job mail/send");
        List<SpanData> attempts = named("mail/send attempt");
        assertThat(calls).hasSize(3);
        assertThat(attempts).hasSize(3);
        for (int i = 0; i < 3; i++) {
            SpanData call = calls.get(i);
            SpanData attempt = attempts.get(i);
            assertThat(attempt.getParentSpanId()).as("attempt %d is its run's child", i + 1).isEqualTo(call.getSpanId());
            assertThat(attr(call, RetryObservation.NAME)).isEqualTo("mail/send");
            assertThat(attr(call, JobObservation.JOB_ID)).isEqualTo(Long.toString(id));
            assertThat(attr(attempt, RetryObservation.ATTEMPT_NUMBER)).isEqualTo(Integer.toString(i + 1));
            assertThat(attr(attempt, RetryObservation.PREVIOUS_ATTEMPTS)).isEqualTo(Integer.toString(i));
        }
        assertThat(attempts).extracting(s -> attr(s, RetryObservation.DECISION)).containsExactly("retry", "retry", "recovered");
        assertThat(attempts).extracting(s -> attr(s, RetryObservation.CLASSIFIED)).containsExactly("retry", "retry", "accept");
        assertThat(attempts).extracting(s -> attr(s, DurableRun.ERROR_TYPE))
                .containsExactly(IOException.class.getName(), IOException.class.getName(), null);
        assertThat(calls).extracting(s -> attr(s, RetryObservation.REASON))
                .containsExactly("rescheduled", "rescheduled", "recovered");
        assertThat(calls.get(0).getEvents()).extracting(EventData::getName).containsExactly("wait PT1S before attempt 2");
        assertThat(calls.get(2).getEvents()).isEmpty();
    }

    @Test
    void aJobOutOfAttemptsEndsItsLastRunExhaustedAndTheOtherListenerStillHearsEverything() {
        JobQueue jobs = JobQueue.builder(SqliteDataSource.file(dir.resolve("jobs.db"))).clock(clock).build();
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        List<String> inside = new CopyOnWriteArrayList<>();
        WorkerPool pool = pool(jobs, JobObservation.of(registry).andThen(JobTelemetry.of(meters)), 5, inside);
        jobs.enqueue("mail", "send", "receipt");
        for (int run = 0; run < 3; run++) {
            pool.runAvailable();
            clock.advance(Duration.ofSeconds(1));
        }

        List<SpanData> attempts = named("mail/send attempt");
        assertThat(attempts).extracting(s -> attr(s, RetryObservation.DECISION)).containsExactly("retry", "retry", "exhausted");
        assertThat(named("job mail/send")).extracting(s -> attr(s, RetryObservation.REASON))
                .containsExactly("rescheduled", "rescheduled", "exhausted");
        assertThat(meters.get(JobTelemetry.DEAD).tags("reason", "exhausted").counter().count()).isEqualTo(1);
        assertThat(meters.get(JobTelemetry.JOBS).tags("outcome", "retried").counter().count()).isEqualTo(2);
    }

    @Test
    void aNoopRegistryOpensNothingAroundTheHandler() {
        JobQueue jobs = JobQueue.builder(SqliteDataSource.file(dir.resolve("jobs.db"))).clock(clock).build();
        JobObservation observation = JobObservation.of(ObservationRegistry.NOOP);
        Job job = new Job(1, "mail", "send", new byte[0], null, JobState.RUNNING, 0, 1, 0,
                Instant.EPOCH, Instant.EPOCH, null);
        assertThat(observation.running(job)).isNull();

        List<String> inside = new CopyOnWriteArrayList<>();
        WorkerPool pool = pool(jobs, observation, 1, inside);
        jobs.enqueue("mail", "send", "receipt");
        pool.runAvailable();
        clock.advance(Duration.ofSeconds(1));
        pool.runAvailable();
        assertThat(inside).containsExactly("none", "none");
        assertThat(tracing.exporter.getFinishedSpanItems()).isEmpty();
    }
}
