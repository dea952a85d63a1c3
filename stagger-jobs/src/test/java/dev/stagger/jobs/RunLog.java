package dev.stagger.jobs;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * A table where test handlers record each run (job, worker, start, end), so runs from several
 * pools and processes can be checked for duplicates and overlaps.
 */
final class RunLog {
    record Run(long jobId, String worker, long startNanos, long endNanos) {
    }

    private final DataSource ds;
    private final String table;

    RunLog(DataSource ds, String prefix) {
        this.ds = ds;
        this.table = prefix + "runs";
    }

    void create() throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS " + table
                    + " (job_id BIGINT NOT NULL, worker VARCHAR(100) NOT NULL, started BIGINT NOT NULL, ended BIGINT NOT NULL)");
        }
    }

    /** A handler that sleeps {@code millis} and records its run; wall-clock micros so processes compare. */
    JobHandler recording(String worker, long millis) {
        return ctx -> {
            long start = wallMicros();
            if (millis > 0) {
                Thread.sleep(millis);
            }
            long end = wallMicros();
            try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO " + table + " (job_id, worker, started, ended) VALUES (?, ?, ?, ?)")) {
                ps.setLong(1, ctx.job().id());
                ps.setString(2, worker);
                ps.setLong(3, start);
                ps.setLong(4, end);
                ps.executeUpdate();
            }
        };
    }

    List<Run> runs() throws SQLException {
        List<Run> out = new ArrayList<>();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT job_id, worker, started, ended FROM " + table + " ORDER BY job_id, started")) {
            while (rs.next()) {
                out.add(new Run(rs.getLong(1), rs.getString(2), rs.getLong(3), rs.getLong(4)));
            }
        }
        return out;
    }

    private static long wallMicros() {
        java.time.Instant now = java.time.Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }
}
