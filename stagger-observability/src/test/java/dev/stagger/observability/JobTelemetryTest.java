package dev.stagger.observability;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.stagger.Backoff;
import dev.stagger.RetryPolicy;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.jobs.JobQueue;
import dev.stagger.jobs.JobState;
import dev.stagger.jobs.WorkerPool;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.Await;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/** JobTelemetry wired into real pools over a SQLite file, on a virtual clock. */
class JobTelemetryTest {
    @TempDir
    Path dir;
    private final Logger logger = (Logger) LoggerFactory.getLogger("test.stagger.jobs");
    private final ListAppender<ILoggingEvent> captured = new ListAppender<>();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final JobTelemetry telemetry = JobTelemetry.of(registry).withLogger(logger);
    private final VirtualClock clock = new VirtualClock();
    private DataSource ds;
    private JobQueue jobs;

    @BeforeEach
    void setUp() {
        captured.start();
        logger.addAppender(captured);
        logger.setAdditive(false);
        logger.setLevel(Level.INFO);
        ds = SqliteDataSource.file(dir.resolve("jobs.db"));
        jobs = JobQueue.builder(ds).clock(clock).build();
    }

    @AfterEach
    void detach() {
        logger.detachAppender(captured);
    }

    private WorkerPool.Builder pool() {
        return WorkerPool.builder(jobs, "mail").handler("send", ctx -> {
            if (ctx.payloadText().startsWith("bad")) {
                throw new IOException("smtp down");
            }
        }, RetryPolicy.builder().maxAttempts(2).backoff(Backoff.fixed(Duration.ofSeconds(1))).build())
                .jobListener(telemetry);
    }

    private double count(String outcome) {
        return registry.get(JobTelemetry.JOBS).tags("queue", "mail", "type", "send", "outcome", outcome).counter().count();
    }

    @Test
    void countsAttemptsByOutcomeAndWritesARetryLineAndADeadLine() {
        WorkerPool pool = pool().build();
        long bad = jobs.enqueue("mail", "send", "bad address");
        jobs.enqueue("mail", "send", "ok");
        pool.runAvailable();
        clock.advance(Duration.ofSeconds(1));
        pool.runAvailable();

        assertThat(count("succeeded")).isEqualTo(1);
        assertThat(count("retried")).isEqualTo(1);
        assertThat(count("dead")).isEqualTo(1);
        assertThat(count("rescued")).isZero();
        assertThat(registry.get(JobTelemetry.ATTEMPTS).tags("outcome", "dead").summary().totalAmount()).isEqualTo(2);
        assertThat(registry.get(JobTelemetry.ATTEMPTS).tags("outcome", "succeeded").summary().totalAmount()).isEqualTo(1);
        assertThat(registry.get(JobTelemetry.DEAD).tags("reason", "exhausted").counter().count()).isEqualTo(1);
        assertThat(registry.get(JobTelemetry.RUN_TIME).timer().count()).isEqualTo(1);

        assertThat(captured.list).hasSize(2);
        assertThat(keyValues(captured.list.get(0))).containsExactly(Map.entry("event", "job_retry"),
                Map.entry("queue", "mail"), Map.entry("type", "send"), Map.entry("job_id", bad), Map.entry("attempt", 1),
                Map.entry("delay_ms", 1000L), Map.entry("error", "IOException"), Map.entry("message", "smtp down"));
        assertThat(captured.list.get(1).getLevel()).isEqualTo(Level.WARN);
        assertThat(keyValues(captured.list.get(1))).containsEntry("event", "job_dead").containsEntry("job_id", bad)
                .containsEntry("attempts", 2).containsEntry("reason", "exhausted").containsEntry("error", "IOException");
        assertThat(captured.list).allSatisfy(e -> assertThat(e.getFormattedMessage()).doesNotContain("bad address"));
    }

    @Test
    void aRescuedAttemptIsCountedAndLogged() throws Exception {
        long id = jobs.enqueue("mail", "send", "ok");
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.executeUpdate("UPDATE stagger_jobs SET state = 'RUNNING', attempt = 1, locked_by = 'gone', lease_until = 0,"
                    + " first_attempt_at = " + clock.currentTimeMillis() + " WHERE id = " + id);
        }
        pool().build().runAvailable();

        assertThat(count("rescued")).isEqualTo(1);
        assertThat(keyValues(captured.list.get(0))).containsEntry("event", "job_rescued").containsEntry("job_id", id)
                .containsEntry("state", "available");
        assertThat(String.valueOf(keyValues(captured.list.get(0)).get("message"))).contains("gone");
    }

    @Test
    void aStartedPoolPublishesItsQueuesDepthLagAndDeadCount() throws Exception {
        jobs.enqueue("mail", "later", "not run by this pool");
        long dead = jobs.enqueue("mail", "send", "bad once", dev.stagger.jobs.EnqueueOptions.defaults().maxAttempts(1));
        try (WorkerPool pool = pool().statsInterval(Duration.ofSeconds(15)).build().start()) {
            Await.until("the bad job dead", () -> jobs.admin().find(dead).orElseThrow().state() == JobState.DEAD);
            // a measurement taken after an advance: the first one, at start, may already have seen the
            // dead job (it races the pool's first run), so a dead count alone cannot tell them apart; and
            // the pool may schedule its next measurement only after a first advance, so advance until one shows
            Await.until("a measurement showing the available job 15 s old", () -> {
                if (oldestAvailableAgeSeconds() >= 15) {
                    return true;
                }
                clock.advance(Duration.ofSeconds(15));
                return false;
            });

            assertThat(depth("dead")).isEqualTo(1);
            assertThat(depth("available")).isEqualTo(1);
            assertThat(depth("running")).isZero();
        }
    }

    /** The oldest-available-age gauge in seconds, or -1 before the first measurement registered it. */
    private double oldestAvailableAgeSeconds() {
        var gauge = registry.find(JobTelemetry.OLDEST_AVAILABLE_AGE).tags("queue", "mail").timeGauge();
        return gauge == null ? -1 : gauge.value(TimeUnit.SECONDS);
    }

    /** The gauge's value, or -1 before the first measurement registered it. */
    private double depth(String state) {
        var gauge = registry.find(JobTelemetry.DEPTH).tags("queue", "mail", "state", state).gauge();
        return gauge == null ? -1 : gauge.value();
    }


    private static Map<String, Object> keyValues(ILoggingEvent e) {
        Map<String, Object> kv = new LinkedHashMap<>();
        e.getKeyValuePairs().forEach(p -> kv.put(p.key, p.value));
        return kv;
    }
}
