package dev.stagger.jobs.internal;

import dev.stagger.jobs.Job;
import dev.stagger.jobs.JobError;
import dev.stagger.jobs.JobState;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;

/** Maps rows selected with {@link JobTables#JOB_COLUMNS} and error rows to records. */
public final class Rows {
    private Rows() {
    }

    public static Job job(ResultSet rs) throws SQLException {
        long finished = rs.getLong("finished_at");
        Instant finishedAt = rs.wasNull() ? null : Instant.ofEpochMilli(finished);
        return new Job(rs.getLong("id"), rs.getString("queue"), rs.getString("type"), rs.getBytes("payload"),
                rs.getString("job_key"), JobState.valueOf(rs.getString("state")), rs.getInt("priority"),
                rs.getInt("attempt"), rs.getInt("max_attempts"), Instant.ofEpochMilli(rs.getLong("run_at")),
                Instant.ofEpochMilli(rs.getLong("created_at")), finishedAt);
    }

    public static JobError error(ResultSet rs) throws SQLException {
        return new JobError(rs.getInt("attempt"), Instant.ofEpochMilli(rs.getLong("failed_at")),
                rs.getString("error_class"), rs.getString("message"), rs.getString("stack_trace"));
    }
}
