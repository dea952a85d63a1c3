package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Clock;
import dev.stagger.RetryPolicy;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.jdbc.internal.SimpleDataSource;
import dev.stagger.testsupport.Await;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A pool configured with autoCommit=false hands out connections with a transaction open: every
 * change the queue and its workers make must still commit (SQLite, real threads).
 */
class ManualCommitDataSourceTest {
    @TempDir
    Path dir;
    JobQueue jobs;

    @BeforeEach
    void setUp() throws Exception {
        DataSource sqlite = SqliteDataSource.file(dir.resolve("jobs.db"));
        DataSource manualCommit = new SimpleDataSource() {
            @Override
            public Connection getConnection() throws SQLException {
                Connection c = sqlite.getConnection();
                c.setAutoCommit(false);
                return c;
            }
        };
        jobs = JobQueue.builder(manualCommit).clock(Clock.system()).build();
    }

    @Test
    void aRedriveTakesEffect() throws Exception {
        WorkerPool pool = WorkerPool.builder(jobs, "q").handler("t", ctx -> {
            throw new IllegalStateException("boom");
        }, RetryPolicy.builder().maxAttempts(1).build()).build();
        long id = jobs.enqueue("q", "t", "x");
        pool.runAvailable();
        assertThat(jobs.admin().find(id).orElseThrow().state()).isEqualTo(JobState.DEAD);

        assertThat(jobs.admin().redrive(id)).isTrue();

        assertThat(jobs.admin().find(id).orElseThrow().state()).isEqualTo(JobState.AVAILABLE);
    }

    @Test
    void aStartedPoolDrainsTheQueue() throws Exception {
        for (int i = 0; i < 20; i++) {
            jobs.enqueue("q", "t", "n" + i);
        }
        try (WorkerPool pool = WorkerPool.builder(jobs, "q").concurrency(2).pollInterval(Duration.ofMillis(20))
                .shutdownTimeout(Duration.ofSeconds(5)).handler("t", ctx -> { }).build().start()) {
            Await.until("20 jobs done", Duration.ofSeconds(20),
                    () -> jobs.admin().countByState("q").get(JobState.SUCCEEDED) == 20);
        }
    }
}
