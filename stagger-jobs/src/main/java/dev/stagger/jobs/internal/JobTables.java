package dev.stagger.jobs.internal;

import dev.stagger.jdbc.Dialect;
import dev.stagger.jdbc.SchemaMigrations;
import java.sql.SQLException;
import java.util.List;
import java.util.function.Function;
import javax.sql.DataSource;

/**
 * The two tables of a job store ({@code <prefix>jobs} and {@code <prefix>job_errors}) and the SQL
 * that works on them. Times are epoch milliseconds from the store's clock, not the database's, so a
 * virtual clock can drive schedules in tests.
 */
public final class JobTables {
    public static final String STATE_AVAILABLE = "AVAILABLE";

    private final String prefix;
    private final Dialect dialect;
    public final String jobs;
    public final String errors;
    /** The PostgreSQL NOTIFY channel that wakes idle workers of this store. */
    public final String channel;

    public JobTables(String prefix, Dialect dialect) {
        this.prefix = prefix;
        this.dialect = dialect;
        this.jobs = prefix + "jobs";
        this.errors = prefix + "job_errors";
        this.channel = prefix + "jobs_ready";
    }

    public Dialect dialect() {
        return dialect;
    }

    public void migrate(DataSource dataSource) throws SQLException {
        List<Function<Dialect, List<String>>> steps = List.of(this::version1, this::version2);
        SchemaMigrations.builder(prefix + "jobs").tablePrefix(prefix).table(jobs).table(errors).steps(steps).build()
                .apply(dataSource);
    }

    private List<String> version1(Dialect d) {
        boolean pg = d == Dialect.POSTGRESQL;
        String id = pg ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY AUTOINCREMENT";
        String bytes = pg ? "BYTEA" : "BLOB";
        return List.of(
                "CREATE TABLE " + jobs + " ("
                        + "id " + id + ", "
                        + "queue VARCHAR(200) NOT NULL, "
                        + "type VARCHAR(200) NOT NULL, "
                        + "payload " + bytes + ", "
                        + "job_key VARCHAR(300), "
                        + "state VARCHAR(16) NOT NULL, "
                        + "priority INTEGER NOT NULL, "
                        + "attempt INTEGER NOT NULL, "
                        + "max_attempts INTEGER NOT NULL, "
                        + "run_at BIGINT NOT NULL, "
                        + "created_at BIGINT NOT NULL, "
                        + "started_at BIGINT, "
                        + "finished_at BIGINT, "
                        + "lease_until BIGINT, "
                        + "locked_by VARCHAR(100))",
                "CREATE UNIQUE INDEX " + jobs + "_key ON " + jobs + " (job_key)",
                "CREATE INDEX " + jobs + "_due ON " + jobs + " (queue, priority DESC, run_at, id) WHERE state = 'AVAILABLE'",
                "CREATE INDEX " + jobs + "_lease ON " + jobs + " (queue, lease_until) WHERE state = 'RUNNING'",
                // no general index on state: the planner would prefer it to the due index and sort
                // every available job on each claim
                "CREATE INDEX " + jobs + "_purge ON " + jobs + " (queue, finished_at) WHERE state = 'SUCCEEDED'",
                "CREATE TABLE " + errors + " ("
                        + "job_id BIGINT NOT NULL, "
                        + "attempt INTEGER NOT NULL, "
                        + "failed_at BIGINT NOT NULL, "
                        + "error_class VARCHAR(300) NOT NULL, "
                        + "message TEXT, "
                        + "stack_trace TEXT)",
                "CREATE INDEX " + errors + "_job ON " + errors + " (job_id, attempt)");
    }

    /**
     * What the retry decision carries from one attempt to the next: when the first attempt began
     * (the policy's deadline counts from it) and the backoff schedule's state
     * ({@code Backoff.Schedule#state()}, decorrelated jitter's previous delay, say).
     */
    private List<String> version2(Dialect d) {
        return List.of(
                "ALTER TABLE " + jobs + " ADD COLUMN first_attempt_at BIGINT",
                "ALTER TABLE " + jobs + " ADD COLUMN backoff_state BIGINT NOT NULL DEFAULT 0");
    }

    public static final String JOB_COLUMNS =
            "id, queue, type, payload, job_key, state, priority, attempt, max_attempts, run_at, created_at, finished_at";

    public String insert(boolean withKey) {
        String sql = insertForBatch();
        return withKey ? sql + " ON CONFLICT (job_key) DO NOTHING RETURNING id" : sql + " RETURNING id";
    }

    /** The plain insert, ids returned through the driver's generated keys (for JDBC batches). */
    public String insertForBatch() {
        return "INSERT INTO " + jobs + " (queue, type, payload, job_key, state, priority, attempt, max_attempts, "
                + "run_at, created_at) VALUES (?, ?, ?, ?, 'AVAILABLE', ?, 0, ?, ?, ?)";
    }

    public String idByKey() {
        return "SELECT id FROM " + jobs + " WHERE job_key = ?";
    }

    /** The columns a claim returns: the job, and the retry state its attempt is decided with. */
    public static final String CLAIM_COLUMNS = JOB_COLUMNS + ", first_attempt_at, backoff_state";

    /**
     * Claims up to n due jobs of a queue in one statement. PostgreSQL skips rows other workers
     * hold; SQLite serialises writers, so the UPDATE is atomic on its own. A job's first attempt
     * (attempt 0 before the claim: new, re-driven, or snoozed before it ever failed) records when
     * it began and starts its backoff schedule afresh.
     * Parameters: locked_by, lease_until, started_at, first_attempt_at, queue, now, [types...], limit.
     */
    public String claim(int typeCount) {
        StringBuilder types = new StringBuilder();
        if (typeCount > 0) {
            types.append(" AND type IN (");
            for (int i = 0; i < typeCount; i++) {
                types.append(i == 0 ? "?" : ", ?");
            }
            types.append(')');
        }
        return "UPDATE " + jobs + " SET state = 'RUNNING', attempt = attempt + 1, locked_by = ?, lease_until = ?, "
                + "started_at = ?, "
                + "first_attempt_at = CASE WHEN attempt = 0 OR first_attempt_at IS NULL THEN ? ELSE first_attempt_at END, "
                + "backoff_state = CASE WHEN attempt = 0 THEN 0 ELSE backoff_state END"
                + " WHERE id IN (SELECT id FROM " + jobs
                + " WHERE queue = ? AND state = 'AVAILABLE' AND run_at <= ?" + types
                + " ORDER BY priority DESC, run_at, id LIMIT ?"
                + (dialect == Dialect.POSTGRESQL ? " FOR UPDATE SKIP LOCKED" : "") + ") RETURNING " + CLAIM_COLUMNS;
    }

    /** The WHERE clause that proves this worker still owns attempt {@code attempt} of the job. */
    private static final String OWNED = " WHERE id = ? AND state = 'RUNNING' AND locked_by = ? AND attempt = ?";

    /** Parameters: finished_at, id, locked_by, attempt. */
    public String succeed() {
        return "UPDATE " + jobs + " SET state = 'SUCCEEDED', finished_at = ?, locked_by = NULL, lease_until = NULL" + OWNED;
    }

    /** Parameters: backoff_state, run_at, id, locked_by, attempt. */
    public String retry() {
        return "UPDATE " + jobs + " SET backoff_state = ?, state = 'AVAILABLE', run_at = ?, locked_by = NULL, "
                + "lease_until = NULL" + OWNED;
    }

    /** Parameters: run_at, id, locked_by, attempt. The attempt is given back. */
    public String snooze() {
        return "UPDATE " + jobs + " SET state = 'AVAILABLE', run_at = ?, attempt = attempt - 1, locked_by = NULL, "
                + "lease_until = NULL" + OWNED;
    }

    /** Parameters: finished_at, id, locked_by, attempt. */
    public String dead() {
        return "UPDATE " + jobs + " SET state = 'DEAD', finished_at = ?, locked_by = NULL, lease_until = NULL" + OWNED;
    }

    /** Parameters: job_id, attempt, failed_at, error_class, message, stack_trace. */
    public String insertError() {
        return "INSERT INTO " + errors + " (job_id, attempt, failed_at, error_class, message, stack_trace) "
                + "VALUES (?, ?, ?, ?, ?, ?)";
    }

    /** Parameters: lease_until, locked_by. */
    public String heartbeat() {
        return "UPDATE " + jobs + " SET lease_until = ? WHERE state = 'RUNNING' AND locked_by = ?";
    }

    /** Parameters: queue, now. */
    public String expired() {
        return "SELECT id, type, attempt, max_attempts, locked_by FROM " + jobs
                + " WHERE queue = ? AND state = 'RUNNING' AND lease_until < ? ORDER BY lease_until LIMIT 100";
    }

    /** Parameters: new state, run_at, finished_at, id, now, attempt. */
    public String rescue() {
        return "UPDATE " + jobs + " SET state = ?, run_at = ?, finished_at = ?, locked_by = NULL, lease_until = NULL "
                + "WHERE id = ? AND state = 'RUNNING' AND lease_until < ? AND attempt = ?";
    }

    public String notifySql() {
        return "SELECT pg_notify(?, ?)";
    }
}
