package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Backoff;
import dev.stagger.RetryPolicy;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.jdbc.UrlDataSource;
import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The two sources of stored times, each on the database that does not default to it. */
class StoreClockTest {
    @TempDir
    Path dir;

    private static WorkerPool failingOnce(JobQueue jobs) {
        boolean[] failed = {false};
        return WorkerPool.builder(jobs, "q").handler("t", ctx -> {
            if (!failed[0]) {
                failed[0] = true;
                throw new IOException("first attempt fails");
            }
        }, RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMinutes(5))).build()).build();
    }

    @Test
    void onPostgresqlTheStoresOwnClockCanDriveTheSchedule() throws Exception {
        UrlDataSource ds = Stores.postgres();
        String prefix = Stores.uniquePrefix();
        try {
            VirtualClock clock = new VirtualClock();
            JobQueue jobs = JobQueue.builder(ds).tablePrefix(prefix).clock(clock).databaseClock(false).build();
            assertThat(jobs.usesDatabaseClock()).isFalse();
            long later = jobs.enqueue("q", "t", "later", EnqueueOptions.defaults().delay(Duration.ofMinutes(1)));
            long id = jobs.enqueue("q", "t", "now");
            WorkerPool pool = failingOnce(jobs);

            assertThat(pool.runAvailable()).isEqualTo(1);
            assertThat(jobs.admin().find(id).orElseThrow().runAt())
                    .isEqualTo(Instant.ofEpochMilli(clock.currentTimeMillis()).plus(Duration.ofMinutes(5)));
            assertThat(jobs.admin().find(later).orElseThrow().runAt())
                    .isEqualTo(Instant.ofEpochMilli(clock.currentTimeMillis()).plus(Duration.ofMinutes(1)));
            clock.advance(Duration.ofMinutes(5));
            assertThat(pool.runAvailable()).as("both due on the virtual clock").isEqualTo(2);
            assertThat(jobs.admin().countByState("q").get(JobState.SUCCEEDED)).isEqualTo(2);
        } finally {
            Stores.dropPostgres(ds, prefix);
        }
    }

    @Test
    void onSqliteTheDatabasesClockCanBeUsedInstead() {
        VirtualClock clock = new VirtualClock(); // 2026-01-01: ignored for stored times
        JobQueue jobs = JobQueue.builder(SqliteDataSource.file(dir.resolve("jobs.db"))).clock(clock).databaseClock(true)
                .build();
        assertThat(jobs.usesDatabaseClock()).isTrue();
        long later = jobs.enqueue("q", "t", "later", EnqueueOptions.defaults().delay(Duration.ofHours(1)));
        long id = jobs.enqueue("q", "t", "now");
        WorkerPool pool = failingOnce(jobs);
        Instant before = Instant.now();

        assertThat(pool.runAvailable()).as("only the job due by SQLite's clock").isEqualTo(1);
        Instant retryAt = jobs.admin().find(id).orElseThrow().runAt();
        assertThat(retryAt).isBetween(before.plus(Duration.ofMinutes(5)).minusSeconds(1),
                Instant.now().plus(Duration.ofMinutes(5)).plusSeconds(1));
        assertThat(jobs.admin().find(later).orElseThrow().state()).isEqualTo(JobState.AVAILABLE);
        clock.advance(Duration.ofDays(1));
        assertThat(pool.runAvailable()).as("moving the store's clock moves nothing").isZero();
    }
}
