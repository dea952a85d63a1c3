package dev.stagger.jobs.internal;

import dev.stagger.jdbc.StoreOptions;
import dev.stagger.jdbc.internal.Dialect;
import dev.stagger.jdbc.internal.SchemaMigrations;
import java.util.List;
import java.util.function.Function;

/**
 * The two tables of a job store ({@code <prefix>jobs} and {@code <prefix>job_errors}), their
 * schema, and the SQL that works on them.
 *
 * <p>Times are epoch milliseconds. Where a statement needs "now" it uses {@link #now}: with the
 * database clock, an SQL expression for the server's time (every machine then compares leases and
 * run-at times against one clock); otherwise a parameter bound from the store's clock
 * ({@link Binder#now()}), so a virtual clock can drive schedules in tests. Parameters are listed in
 * binding order, {@code now} where {@link Binder#now()} goes.
 */
public final class JobTables {
    private final Dialect dialect;
    private final boolean databaseClock;
    public final String jobs;
    public final String errors;
    /** The PostgreSQL NOTIFY channel that wakes idle workers of this store. */
    public final String channel;
    /** "Now" in SQL: the database's clock, or a parameter. */
    public final String now;

    public JobTables(String prefix, Dialect dialect, boolean databaseClock) {
        this.dialect = dialect;
        this.databaseClock = databaseClock;
        this.jobs = prefix + "jobs";
        this.errors = prefix + "job_errors";
        this.channel = prefix + "jobs_ready";
        this.now = databaseClock ? dialect.epochMillisNow() : "?";
    }

    public Dialect dialect() {
        return dialect;
    }

    /** True when times are read from the database server's clock rather than the store's. */
    public boolean databaseClock() {
        return databaseClock;
    }

    /**
     * The schema of a store with {@code options}' table prefix: its numbered steps, recorded as
     * component {@code <prefix>jobs} in {@code <prefix>schema_version}.
     */
    public static SchemaMigrations schema(StoreOptions options) {
        String jobs = options.tablePrefix() + "jobs";
        String errors = options.tablePrefix() + "job_errors";
        List<Function<Dialect, List<String>>> steps = List.of(d -> version1(d, jobs, errors), d -> version2(jobs),
                d -> version3(jobs), d -> version4(jobs));
        return SchemaMigrations.builder(jobs).storeOptions(options).table(jobs).table(errors).steps(steps).build();
    }

    private static List<String> version1(Dialect d, String jobs, String errors) {
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
    private static List<String> version2(String jobs) {
        return List.of(
                "ALTER TABLE " + jobs + " ADD COLUMN first_attempt_at BIGINT",
                "ALTER TABLE " + jobs + " ADD COLUMN backoff_state BIGINT NOT NULL DEFAULT 0");
    }

    /** Dead jobs by queue and age: the DEAD count a pool reports, listing dead jobs, and their purge by retention. */
    private static List<String> version3(String jobs) {
        return List.of("CREATE INDEX " + jobs + "_dead ON " + jobs + " (queue, finished_at) WHERE state = 'DEAD'");
    }

    /**
     * The lease index holds every job with a lease (exactly the RUNNING ones: every statement that
     * leaves RUNNING clears the lease) under a predicate a completion does not imply. Before, its
     * predicate was {@code state = 'RUNNING'}, which every completion states; PostgreSQL then
     * reached a batch's jobs through it, walking the dead entry each finished job leaves there
     * until a vacuum, so a completion's cost grew with the jobs the queue had run. A completion
     * now reads its jobs by primary key (a heartbeat too, by the ids it holds); a rescue, which
     * looks for the expired leases of a queue, still uses this index.
     */
    private static List<String> version4(String jobs) {
        return List.of(
                "DROP INDEX " + jobs + "_lease",
                "CREATE INDEX " + jobs + "_lease ON " + jobs + " (queue, lease_until) WHERE lease_until IS NOT NULL");
    }

    public static final String JOB_COLUMNS =
            "id, queue, type, payload, job_key, state, priority, attempt, max_attempts, run_at, created_at, finished_at";

    /**
     * Adds a job. Parameters: queue, type, payload, job_key, priority, max_attempts, the absolute
     * run-at (null for a delay), now, the delay, now. With a key: nothing when the key is taken.
     * Returns the id (no row for a taken key).
     */
    public String insert(boolean withKey) {
        String sql = "INSERT INTO " + jobs + " (queue, type, payload, job_key, state, priority, attempt, max_attempts, "
                + "run_at, created_at) VALUES (?, ?, ?, ?, 'AVAILABLE', ?, 0, ?, COALESCE(?, " + now + " + ?), " + now + ")";
        if (withKey) {
            sql += " ON CONFLICT (job_key) DO NOTHING";
        }
        return sql + " RETURNING id";
    }

    /**
     * PostgreSQL: adds many jobs without a key in one statement, one array per column, in array
     * order; returns their ids. Parameters: now, now (both in the select list, so they come first),
     * then the arrays queue, type, payload, priority, max_attempts, the absolute run-at (null for a
     * delay), the delay.
     */
    public String insertRows() {
        return "INSERT INTO " + jobs + " (queue, type, payload, job_key, state, priority, attempt, max_attempts, "
                + "run_at, created_at) SELECT r.queue, r.type, r.payload, NULL, 'AVAILABLE', r.priority, 0, r.max_attempts, "
                + "COALESCE(r.run_at, " + now + " + r.delay), " + now
                + " FROM unnest(?::varchar[], ?::varchar[], ?::bytea[], ?::integer[], ?::integer[], ?::bigint[], ?::bigint[])"
                + " WITH ORDINALITY AS r(queue, type, payload, priority, max_attempts, run_at, delay, n) ORDER BY r.n"
                + " RETURNING id";
    }

    public String idByKey() {
        return "SELECT id FROM " + jobs + " WHERE job_key = ?";
    }

    /** The columns a claim returns: the job, and the retry state its attempt is decided with. */
    public static final String CLAIM_COLUMNS = JOB_COLUMNS + ", first_attempt_at, backoff_state";

    /** What a statement returns as {@code db_now} with the database clock, so the reader can map stored times to its own clock. */
    private String dbNowColumn() {
        return databaseClock ? ", " + now + " AS db_now" : "";
    }

    /**
     * Claims up to n due jobs of a queue in one statement. PostgreSQL skips rows other workers
     * hold; SQLite serialises writers, so the UPDATE is atomic on its own. A job's first attempt
     * (attempt 0 before the claim: new, re-driven, or snoozed before it ever failed) records when
     * it began and starts its backoff schedule afresh.
     * Parameters: locked_by, now, lease, now, now, queue, now, [types...], limit.
     */
    public String claim(int typeCount) {
        return claim(typeCount, false);
    }

    /**
     * {@link #claim(int)}; with {@code afterFloor} (PostgreSQL), only among the jobs of one priority
     * that rank after a given one (its run-at and id), so the index scan starts there instead of at
     * the head of the due index, where every job claimed since the last vacuum left a dead entry.
     * Parameters: those of {@link #claim(int)}, with priority, run_at and id before the limit.
     */
    public String claim(int typeCount, boolean afterFloor) {
        StringBuilder types = new StringBuilder();
        if (typeCount > 0) {
            types.append(" AND type IN (");
            for (int i = 0; i < typeCount; i++) {
                types.append(i == 0 ? "?" : ", ?");
            }
            types.append(')');
        }
        return "UPDATE " + jobs + " SET state = 'RUNNING', attempt = attempt + 1, locked_by = ?, lease_until = " + now
                + " + ?, started_at = " + now + ", "
                + "first_attempt_at = CASE WHEN attempt = 0 OR first_attempt_at IS NULL THEN " + now
                + " ELSE first_attempt_at END, "
                + "backoff_state = CASE WHEN attempt = 0 THEN 0 ELSE backoff_state END"
                + " WHERE id IN (SELECT id FROM " + jobs
                + " WHERE queue = ? AND state = 'AVAILABLE' AND run_at <= " + now + types
                + (afterFloor ? " AND priority = ? AND (run_at, id) > (?, ?)" : "")
                + " ORDER BY priority DESC, run_at, id LIMIT ?" + skipLocked() + ") RETURNING " + CLAIM_COLUMNS
                + dbNowColumn();
    }

    /**
     * PostgreSQL: {@link #succeedAll(boolean)} and {@link #claim(int)} in one statement (data-modifying
     * CTEs on disjoint rows: the completed ones are RUNNING, the claimed ones AVAILABLE), so one
     * round trip and one commit carry both. Returns one row per claimed job ({@code completed_id}
     * null, then {@link #CLAIM_COLUMNS} and {@code db_now} with the database clock) and one per
     * completed job ({@code completed_id} set, the rest null). Parameters: those of
     * {@link #succeedAll(boolean)}, then those of {@link #claim(int, boolean)}.
     */
    public String completeAndClaim(int typeCount, boolean delete, boolean afterFloor) {
        String claimColumns = CLAIM_COLUMNS + (databaseClock ? ", db_now" : "");
        String nulls = String.join(", ", java.util.Collections.nCopies(claimColumns.split(",").length, "NULL"));
        return "WITH " + completed(delete) + ", claimed AS (" + claim(typeCount, afterFloor) + ")"
                + " SELECT NULL::bigint AS completed_id, " + claimColumns + " FROM claimed"
                + " UNION ALL SELECT id, " + nulls + " FROM completed";
    }

    private String skipLocked() {
        return dialect == Dialect.POSTGRESQL ? " FOR UPDATE SKIP LOCKED" : "";
    }

    /** The WHERE clause that proves a worker still owns attempt {@code attempt} of the job. */
    private static final String OWNED = " WHERE id = ? AND state = 'RUNNING' AND locked_by = ? AND attempt = ?";

    /**
     * Parameters: now (not with {@code delete}), id, locked_by, attempt. With {@code delete} the job
     * is deleted instead of kept as SUCCEEDED: run {@link #clearErrors()} first, in the same
     * transaction.
     */
    public String succeed(boolean delete) {
        if (delete) {
            return "DELETE FROM " + jobs + OWNED;
        }
        return "UPDATE " + jobs + " SET state = 'SUCCEEDED', finished_at = " + now + ", locked_by = NULL, "
                + "lease_until = NULL" + OWNED;
    }

    /** Deletes the error history of a job while this owner still holds this attempt. Parameters: id, locked_by, attempt. */
    public String clearErrors() {
        return "DELETE FROM " + errors + " WHERE job_id IN (SELECT id FROM " + jobs + OWNED + ")";
    }

    /**
     * PostgreSQL: completes many jobs in one statement, each still guarded by "this owner holds
     * this attempt"; returns the ids it completed. With {@code delete} the jobs and their error
     * history are deleted instead of kept as SUCCEEDED. Parameters: now (not with
     * {@code delete}), ids (bigint[]), attempts (integer[], in the same order), locked_by.
     */
    public String succeedAll(boolean delete) {
        return "WITH " + completed(delete) + " SELECT id FROM completed";
    }

    /**
     * The CTE {@code completed} of {@link #succeedAll(boolean)}, returning the ids it completed;
     * with {@code delete}, a second CTE deletes their errors (it sees what {@code completed}
     * returns, so only the jobs this owner still held).
     */
    private String completed(boolean delete) {
        String owned = " WHERE j.id = d.id AND j.attempt = d.attempt AND j.state = 'RUNNING' AND j.locked_by = ? RETURNING j.id";
        String ids = "unnest(?::bigint[], ?::integer[]) AS d(id, attempt)";
        if (delete) {
            return "completed AS (DELETE FROM " + jobs + " AS j USING " + ids + owned + "), cleared AS (DELETE FROM "
                    + errors + " WHERE job_id = ANY(ARRAY(SELECT id FROM completed)))";
        }
        return "completed AS (UPDATE " + jobs + " AS j SET state = 'SUCCEEDED', finished_at = " + now
                + ", locked_by = NULL, lease_until = NULL FROM " + ids + owned + ")";
    }

    /** Parameters: backoff_state, now, delay, id, locked_by, attempt. */
    public String retry() {
        return "UPDATE " + jobs + " SET backoff_state = ?, state = 'AVAILABLE', run_at = " + now + " + ?, "
                + "locked_by = NULL, lease_until = NULL" + OWNED;
    }

    /** Parameters: now, delay, id, locked_by, attempt. The attempt is given back. */
    public String snooze() {
        return "UPDATE " + jobs + " SET state = 'AVAILABLE', run_at = " + now + " + ?, attempt = attempt - 1, "
                + "locked_by = NULL, lease_until = NULL" + OWNED;
    }

    /** Parameters: now, id, locked_by, attempt. */
    public String dead() {
        return "UPDATE " + jobs + " SET state = 'DEAD', finished_at = " + now + ", locked_by = NULL, "
                + "lease_until = NULL" + OWNED;
    }

    /** Parameters: job_id, attempt, now, error_class, message, stack_trace. */
    public String insertError() {
        return "INSERT INTO " + errors + " (job_id, attempt, failed_at, error_class, message, stack_trace) "
                + "VALUES (?, ?, " + now + ", ?, ?, ?)";
    }

    /**
     * Extends the leases of the given jobs, each only while this pool still holds it running. The
     * pool names the jobs it is running or has yet to store the outcome of, never "every job
     * locked by me": a job whose claim committed but whose answer the pool never received (the
     * connection broke after the commit) is locked by this pool and run by nobody, and extending
     * its lease would keep it from being rescued for as long as the pool lives. On PostgreSQL it
     * skips rows another transaction has locked, so a heartbeat never waits: the row is being
     * completed or rescued, and its lease is no longer this pool's concern.
     * Parameters: now, lease, then the ids (PostgreSQL: one bigint[]; SQLite: {@code count} of
     * them), then locked_by.
     */
    public String heartbeat(int count) {
        String held = " AND state = 'RUNNING' AND locked_by = ?";
        if (dialect == Dialect.POSTGRESQL) {
            return "UPDATE " + jobs + " SET lease_until = " + now + " + ? WHERE id IN (SELECT id FROM " + jobs
                    + " WHERE id = ANY(?::bigint[])" + held + skipLocked() + ")";
        }
        StringBuilder ids = new StringBuilder();
        for (int i = 0; i < count; i++) {
            ids.append(i == 0 ? "?" : ", ?");
        }
        return "UPDATE " + jobs + " SET lease_until = " + now + " + ? WHERE id IN (" + ids + ")" + held;
    }

    /**
     * The jobs of a queue whose lease expired, with their retry state and owner, oldest first; on
     * PostgreSQL locked for the rest of the transaction, skipping rows another transaction holds
     * (a frozen worker's commit in progress), so a rescue never waits on another worker's lock.
     * Parameters: queue, now.
     */
    public String expired(int limit) {
        return "SELECT " + CLAIM_COLUMNS + ", locked_by" + dbNowColumn() + " FROM " + jobs
                + " WHERE queue = ? AND state = 'RUNNING' AND lease_until IS NOT NULL AND lease_until < " + now
                + " ORDER BY lease_until LIMIT "
                + limit + skipLocked();
    }

    /** {@link #retry()} for a rescued attempt, still expired. Parameters: as retry, then now. */
    public String rescueRetry() {
        return retry() + " AND lease_until < " + now;
    }

    /** {@link #dead()} for a rescued attempt, still expired. Parameters: as dead, then now. */
    public String rescueDead() {
        return dead() + " AND lease_until < " + now;
    }

    /**
     * Up to {@code limit} jobs in a state that finished before {@code now - retention}, oldest first.
     * Parameters: state, now, retention, [queue].
     */
    public String finishedBefore(boolean oneQueue, int limit) {
        return "SELECT id FROM " + jobs + " WHERE state = ? AND finished_at < " + now + " - ?"
                + (oneQueue ? " AND queue = ?" : "") + " ORDER BY finished_at LIMIT " + limit + skipLocked();
    }

    /** Counts of the unfinished and dead jobs of a queue. Parameters: queue. */
    public String depth() {
        return "SELECT state, COUNT(*) FROM " + jobs + " WHERE queue = ? AND state IN ('AVAILABLE', 'RUNNING', 'DEAD')"
                + " GROUP BY state";
    }

    /** How long the due job of a queue that waited longest has waited, 0 when none is due. Parameters: now, queue, now. */
    public String oldestDueWait() {
        return "SELECT COALESCE(" + now + " - MIN(run_at), 0) FROM " + jobs + " WHERE queue = ? AND state = 'AVAILABLE'"
                + " AND run_at <= " + now;
    }

    public String notifySql() {
        return "SELECT pg_notify(?, ?)";
    }
}
