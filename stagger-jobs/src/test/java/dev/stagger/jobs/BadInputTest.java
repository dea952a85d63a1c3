package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.jdbc.StoreException;
import dev.stagger.jdbc.UrlDataSource;
import dev.stagger.testing.VirtualClock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad values are refused where they are given, with a short message naming the field, on every database. */
class BadInputTest {
    @TempDir
    Path dir;

    @Test
    void runAtBeyondStoredTimesIsRefusedAtTheSetter() {
        for (Instant bad : new Instant[] {Instant.MAX, Instant.MIN}) {
            assertThatThrownBy(() -> EnqueueOptions.defaults().runAt(bad))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("runAt ");
        }
    }

    @Test
    void aDelayBeyondStoredTimesIsRefusedAtTheSetter() {
        assertThatThrownBy(() -> EnqueueOptions.defaults().delay(Duration.ofSeconds(Long.MAX_VALUE)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("delay ");
    }

    @Test
    void aLongBadValueIsEchoedAsItsFirst64CharactersAndItsLength() {
        String key = "k".repeat(10_000);
        assertThatThrownBy(() -> EnqueueOptions.defaults().key(key))
                .isInstanceOf(IllegalArgumentException.class)
                .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(200).contains("k".repeat(64))
                        .doesNotContain("k".repeat(65)).contains("10000"));
        String type = "t".repeat(10_000);
        assertThatThrownBy(() -> JobRequest.of("q", type, "x"))
                .isInstanceOf(IllegalArgumentException.class)
                .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(200).contains("10000"));
    }

    @Test
    void aNulCharacterInATypeQueueOrKeyIsRefusedBeforeAnythingIsStoredOnSqlite() throws Exception {
        assertNulRefused(Stores.sqlite(dir, new VirtualClock()));
    }

    @Test
    void aNulCharacterInATypeQueueOrKeyIsRefusedBeforeAnythingIsStoredOnPostgresql() throws Exception {
        UrlDataSource ds = Stores.postgres();
        String prefix = Stores.uniquePrefix();
        try {
            assertNulRefused(JobQueue.builder(ds).tablePrefix(prefix).build());
        } finally {
            Stores.dropPostgres(ds, prefix);
        }
    }

    @Test
    void anUnpairedSurrogateIsRefusedWhileAPairedOneIsKept() throws Exception {
        JobQueue jobs = Stores.sqlite(dir, new VirtualClock());
        assertThatThrownBy(() -> EnqueueOptions.defaults().key("k\uD800"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key").hasMessageContaining("surrogate");
        long id = jobs.enqueue("q", "type", "x", EnqueueOptions.defaults().key("k\uD83D\uDE00"));
        assertThat(jobs.admin().find(id).orElseThrow().jobKey()).contains("k\uD83D\uDE00");
    }

    @Test
    void aFailedPostgresqlBatchInsertNamesNoPayloadInAnyMessage() throws Exception {
        UrlDataSource ds = Stores.postgres();
        String prefix = Stores.uniquePrefix();
        try {
            JobQueue jobs = JobQueue.builder(ds).tablePrefix(prefix).build();
            Stores.exec(ds, "ALTER TABLE " + prefix + "jobs ADD CONSTRAINT no_refunds CHECK (type <> 'refund')");
            String secret = "card-4111111111111111";
            List<JobRequest> batch = List.of(JobRequest.of("q", "charge", secret), JobRequest.of("q", "refund", secret));

            Throwable thrown = catchThrowable(() -> jobs.enqueueAll(batch));

            assertThat(thrown).isInstanceOf(StoreException.class).hasMessageContaining(prefix + "jobs");
            assertThat(((StoreException) thrown).sqlState()).contains("23514"); // check_violation
            String hex = HexFormat.of().formatHex(secret.getBytes(StandardCharsets.UTF_8));
            for (Throwable t = thrown; t != null; t = t.getCause()) {
                assertThat(String.valueOf(t)).as("message of %s", t.getClass().getName())
                        .doesNotContain(secret).doesNotContainIgnoringCase(hex);
            }
            java.io.StringWriter trace = new java.io.StringWriter();
            thrown.printStackTrace(new java.io.PrintWriter(trace));
            assertThat(trace.toString()).doesNotContain(secret).doesNotContainIgnoringCase(hex);
            assertThat(jobs.admin().countByState("q").values()).as("all or none").allMatch(n -> n == 0);
        } finally {
            Stores.dropPostgres(ds, prefix);
        }
    }

    @Test
    void poolSizesOutsideTheirRangeAreRefusedNamingTheFieldAndValue() throws Exception {
        WorkerPool.Builder b = WorkerPool.builder(Stores.sqlite(dir, new VirtualClock()), "q");
        assertThatThrownBy(() -> b.concurrency(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("concurrency must be in [1, 1000], got 0");
        assertThatThrownBy(() -> b.batchSize(1001)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("batchSize must be in [1, 1000], got 1001");
    }

    private static void assertNulRefused(JobQueue jobs) {
        assertThatThrownBy(() -> jobs.enqueue("q", "ty\u0000pe", "x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("type");
        assertThatThrownBy(() -> jobs.enqueue("q\u0000", "type", "x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("queue");
        assertThatThrownBy(() -> EnqueueOptions.defaults().key("k\u0000"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key");
        assertThat(jobs.admin().countByState(null).values()).allMatch(n -> n == 0);
    }
}
