package dev.stagger.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.RetryPolicy;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.testsupport.jdbc.TestDatabases;
import dev.stagger.jobs.JobQueue;
import dev.stagger.jobs.JobState;
import dev.stagger.jobs.WorkerPool;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code stagger jobs} against a real SQLite job store. */
class JobsCommandTest {
    @TempDir
    Path dir;
    Path file;
    JobQueue jobs;
    long deadId;
    final StringWriter out = new StringWriter();
    final StringWriter err = new StringWriter();

    @BeforeEach
    void setUp() throws Exception {
        file = dir.resolve("jobs.db");
        jobs = JobQueue.builder(SqliteDataSource.file(file)).build();
        deadId = jobs.enqueue("mail", "send", "bad@");
        jobs.enqueue("mail", "send", "ok");
        WorkerPool.builder(jobs, "mail").handler("send", ctx -> {
            if (ctx.payloadText().endsWith("@")) {
                throw new IllegalArgumentException("no domain in address");
            }
        }, RetryPolicy.builder().maxAttempts(1).build()).build().runAvailable();
        jobs.enqueue("mail", "send", "later");
    }

    private int run(String... args) {
        CommandLine cli = Main.configure(new CommandLine(new JobsCommand()));
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        return cli.execute(args);
    }

    @Test
    void listCountsJobsByState() {
        assertThat(run("list", "--db", file.toString())).isZero();
        assertThat(out.toString()).containsPattern("AVAILABLE\\s+1").containsPattern("SUCCEEDED\\s+1")
                .containsPattern("DEAD\\s+1");
    }

    @Test
    void deadShowsAJobsErrorHistory() {
        assertThat(run("dead", "--db", "jdbc:sqlite:" + file, "--id", String.valueOf(deadId))).isZero();
        assertThat(out.toString()).contains("attempt 1 at").contains("java.lang.IllegalArgumentException: no domain in address");
    }

    @Test
    void redriveMovesADeadJobBack() throws Exception {
        assertThat(run("redrive", "--db", file.toString(), "--id", String.valueOf(deadId))).isZero();
        assertThat(jobs.admin().find(deadId).orElseThrow().state()).isEqualTo(JobState.AVAILABLE);
        assertThat(run("redrive", "--db", file.toString(), "--id", String.valueOf(deadId))).isEqualTo(1);
    }

    @Test
    void redriveAllMovesEveryDeadJobOfTheQueueBack() throws Exception {
        assertThat(run("redrive", "--db", file.toString(), "--all", "--queue", "mail")).isZero();
        assertThat(out.toString()).contains("re-drove 1 dead job(s)");
        assertThat(jobs.admin().countByState("mail").get(JobState.DEAD)).isZero();
    }

    @Test
    void purgeDeletesSucceededJobsOlderThanTheRetention() throws Exception {
        assertThat(run("purge", "--db", file.toString(), "--older-than", "1d")).isZero();
        assertThat(out.toString()).contains("purged 0");
        assertThat(run("purge", "--db", file.toString(), "--older-than", "0s")).isZero();
        assertThat(jobs.admin().countByState(null).get(JobState.SUCCEEDED)).isZero();
    }

    @Test
    void aMissingDatabaseFileIsABadArgument() {
        assertThat(run("list", "--db", dir.resolve("nope.db").toString())).isEqualTo(2);
        assertThat(err.toString()).contains("no SQLite database");
    }

    @Test
    void aBadRetentionIsABadArgument() {
        assertThat(run("purge", "--db", file.toString(), "--older-than", "soon")).isEqualTo(2);
        assertThat(err.toString()).contains("--older-than");
    }

    @Test
    void aRetentionTooLargeForADurationIsABadArgumentNotACrash() {
        assertThat(run("purge", "--db", file.toString(), "--older-than", "99999999999999999999d")).isEqualTo(2);
        assertThat(run("purge", "--db", file.toString(), "--older-than", "999999999999999d")).isEqualTo(2);
        assertThat(err.toString()).contains("--older-than").doesNotContain("Exception");
    }

    @Test
    void aRetentionBeyondTheOneDurationLimitIsABadArgument() throws Exception {
        assertThat(run("purge", "--db", file.toString(), "--older-than", "999999999999d")).isEqualTo(2);
        assertThat(err.toString()).contains("--older-than", "longer than");
        assertThat(jobs.admin().countByState(null).get(JobState.SUCCEEDED)).isEqualTo(1);
    }

    @Test
    void aRetentionLongerThanTheClockHasRunPurgesNothing() throws Exception {
        assertThat(run("purge", "--db", file.toString(), "--older-than", "36500d")).isZero(); // 100 years: before the epoch
        assertThat(out.toString()).contains("purged 0");
        assertThat(jobs.admin().countByState(null).get(JobState.SUCCEEDED)).isEqualTo(1);
    }

    @Test
    void readOnlyCommandsRefuseADatabaseWithoutAJobStoreAndCreateNothingInIt() throws Exception {
        Path unrelated = dir.resolve("unrelated.db");
        try (var c = SqliteDataSource.file(unrelated).getConnection(); var s = c.createStatement()) {
            s.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY)");
        }
        for (String command : new String[] {"list", "dead"}) {
            assertThat(run(command, "--db", unrelated.toString())).as(command).isEqualTo(2);
        }
        assertThat(run("purge", "--db", unrelated.toString(), "--older-than", "7d")).isEqualTo(2);
        assertThat(run("list", "--db", file.toString(), "--table-prefix", "typo_")).isEqualTo(2);

        assertThat(err.toString()).contains("unrelated.db").contains("stagger_jobs").contains("typo_jobs")
                .contains("table prefix 'typo_'").doesNotContain("Exception");
        try (var c = SqliteDataSource.file(unrelated).getConnection(); var s = c.createStatement();
             var rs = s.executeQuery("SELECT group_concat(name) FROM sqlite_master WHERE type = 'table'")) {
            rs.next();
            assertThat(rs.getString(1)).as("tables after the commands").isEqualTo("customers");
        }
        try (var c = SqliteDataSource.file(file).getConnection(); var s = c.createStatement();
             var rs = s.executeQuery("SELECT count(*) FROM sqlite_master WHERE name LIKE 'typo%'")) {
            rs.next();
            assertThat(rs.getInt(1)).as("tables made for a mistyped prefix").isZero();
        }
    }

    @Test
    void onPostgresqlAMistypedTablePrefixIsRefusedAndCreatesNothing() throws Exception {
        DataSource pg = TestDatabases.postgres();
        String typo = "typo" + Long.toHexString(System.nanoTime()) + "_";
        String url = System.getenv().getOrDefault("STAGGER_PG_URL", "jdbc:postgresql://127.0.0.1:5432/test");
        String user = System.getenv().getOrDefault("STAGGER_PG_USER", "postgres");

        for (String command : new String[] {"list", "dead"}) {
            assertThat(run(command, "--db", url, "--user", user, "--table-prefix", typo)).as(command).isEqualTo(2);
        }
        assertThat(run("purge", "--db", url, "--user", user, "--table-prefix", typo, "--older-than", "7d")).isEqualTo(2);

        assertThat(err.toString()).contains(typo + "jobs").contains("table prefix '" + typo + "'")
                .doesNotContain("Exception");
        try (var c = pg.getConnection(); var s = c.createStatement();
             var rs = s.executeQuery("SELECT count(*) FROM pg_tables WHERE tablename LIKE '" + typo + "%'")) {
            rs.next();
            assertThat(rs.getInt(1)).as("tables made for a mistyped prefix").isZero();
        }
    }

    @Test
    void aBareNumberRetentionIsRefusedNamingTheFlagAndSuggestingAUnit() throws Exception {
        assertThat(run("purge", "--db", file.toString(), "--older-than", "5")).isEqualTo(2);
        assertThat(err.toString()).contains("--older-than", "5s", "5d");
        assertThat(jobs.admin().countByState(null).get(JobState.SUCCEEDED)).isEqualTo(1);
    }

    @Test
    void aPostgresHostThatDoesNotResolveIsNamedWithTheCause() {
        assertThat(run("list", "--db", "jdbc:postgresql://nosuch.invalid:5432/test")).isEqualTo(3);
        assertThat(err.toString()).contains("nosuch.invalid:5432").contains("unknown host")
                .doesNotContain("\tat ");
        assertThat(err.toString().strip().lines()).hasSize(1);
    }

    @Test
    void aPostgresPortWhereNothingListensIsNamedWithTheCause() throws Exception {
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        assertThat(run("list", "--db", "jdbc:postgresql://127.0.0.1:" + port + "/test")).isEqualTo(3);
        assertThat(err.toString()).contains("cannot connect to PostgreSQL at 127.0.0.1:" + port, "refused");
    }

    @Test
    void redriveNeedsIdOrAll() {
        assertThat(run("redrive", "--db", file.toString())).isEqualTo(2);
    }

    @Test
    void retentionsAcceptShortAndIsoForms() throws Exception {
        assertThat(run("purge", "--db", file.toString(), "--older-than", "PT12H")).isZero();
        assertThat(run("purge", "--db", file.toString(), "--older-than", "1.5d")).isZero();
        assertThat(out.toString()).contains("purged 0 succeeded job(s)");
    }
}
