package dev.stagger.jobs;

import dev.stagger.Clock;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.jdbc.UrlDataSource;
import dev.stagger.testsupport.jdbc.TestDataSource;
import dev.stagger.testsupport.jdbc.TestDatabases;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;

/** Real databases for the tests: a SQLite file, or PostgreSQL with tables unique to one test. */
final class Stores {
    private Stores() {
    }

    static JobQueue sqlite(Path dir, Clock clock) throws SQLException {
        return JobQueue.builder(SqliteDataSource.file(dir.resolve("jobs.db"))).clock(clock).build();
    }

    /** A store opened for a test parameterized by database, and what to clean up. */
    record Opened(DataSource dataSource, String prefix, JobQueue jobs) {
    }

    /**
     * A store on {@code database} ("sqlite": a file in {@code dir}; "postgresql": tables with a
     * prefix unique to the test) with times from {@code clock}, also on PostgreSQL, so a virtual
     * clock drives leases and run-at times.
     */
    static Opened open(String database, Path dir, Clock clock) throws SQLException {
        DataSource ds = database.equals("postgresql") ? postgres() : SqliteDataSource.file(dir.resolve("jobs.db"));
        String prefix = database.equals("postgresql") ? uniquePrefix() : "stagger_";
        return new Opened(ds, prefix, JobQueue.builder(ds).tablePrefix(prefix).clock(clock).databaseClock(false).build());
    }

    /** A store on the test PostgreSQL with its defaults (the database's clock) and tables unique to the test. */
    static Opened postgresQueue() {
        UrlDataSource ds = postgres();
        String prefix = uniquePrefix();
        return new Opened(ds, prefix, JobQueue.builder(ds).tablePrefix(prefix).build());
    }

    /** A prefix no other test (or concurrent run) uses. */
    static String uniquePrefix() {
        return "sjobs_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10) + "_";
    }

    static UrlDataSource postgres() {
        TestDataSource pg = TestDatabases.postgres();
        return UrlDataSource.of(pg.url(), pg.user(), pg.password());
    }

    /** The test PostgreSQL with the given ApplicationName, so a test can find its own backends. */
    static UrlDataSource postgres(String applicationName) {
        UrlDataSource base = postgres();
        String url = base.url() + (base.url().contains("?") ? "&" : "?") + "ApplicationName=" + applicationName;
        return UrlDataSource.of(url, pgUser(), pgPassword());
    }

    static String pgUser() {
        String v = System.getenv("STAGGER_PG_USER");
        return v == null || v.isBlank() ? "postgres" : v;
    }

    static String pgPassword() {
        String v = System.getenv("STAGGER_PG_PASSWORD");
        return v == null ? "" : v;
    }

    static void dropPostgres(DataSource ds, String prefix) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + prefix + "jobs");
            s.execute("DROP TABLE IF EXISTS " + prefix + "job_errors");
            s.execute("DROP TABLE IF EXISTS " + prefix + "runs");
            s.execute("DROP TABLE IF EXISTS " + prefix + "schema_version"); // the prefix covers the version table
        }
    }

    static long count(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * What a worker that claimed attempt {@code attempt} of job {@code id} at {@code nowMillis}
     * leaves when it dies: the job RUNNING under {@code owner}, its lease ending {@code leaseLeft}
     * after that (already ended when negative). Table {@code stagger_jobs}.
     */
    static void abandon(DataSource ds, long id, int attempt, String owner, long nowMillis, Duration leaseLeft)
            throws SQLException {
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(
                "UPDATE stagger_jobs SET state = 'RUNNING', attempt = ?, locked_by = ?, lease_until = ?, "
                        + "first_attempt_at = ? WHERE id = ?")) {
            ps.setInt(1, attempt);
            ps.setString(2, owner);
            ps.setLong(3, nowMillis + leaseLeft.toMillis());
            ps.setLong(4, nowMillis);
            ps.setLong(5, id);
            ps.executeUpdate();
        }
    }

    static void exec(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
