package dev.stagger.jobs.internal;

import dev.stagger.Clock;
import dev.stagger.RetryState;
import dev.stagger.jdbc.internal.Dialect;
import dev.stagger.jobs.Job;
import dev.stagger.jobs.JobError;
import dev.stagger.jobs.JobState;
import dev.stagger.jobs.LeaseLostException;
import dev.stagger.jobs.QueueStats;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The statements a worker pool runs on its queue, each given the connection to run on. Every
 * change a pool makes to a job is guarded by "this owner still holds this attempt", so a stale
 * worker's write changes nothing. Thread-safe (stateless between calls).
 */
public final class JobStore {
    /** Most expired jobs taken back per rescue pass; the next pass takes the rest. */
    static final int RESCUE_BATCH = 100;

    private final JobTables tables;
    private final Clock clock;
    private final String queue;
    private final List<String> types;
    private final String lockedBy;
    private final String claimSql;
    private final String completeAndClaimSql;
    private final String claimAfterSql;
    private final String completeAndClaimAfterSql;
    /** Successes delete their job and its error history instead of keeping it as SUCCEEDED. */
    private final boolean deleteSucceeded;

    /**
     * @param deleteSucceeded whether a success deletes its job (with its error history) instead of
     *     keeping it as SUCCEEDED: a pool whose SUCCEEDED retention is zero
     */
    public JobStore(JobTables tables, Clock clock, String queue, List<String> types, String lockedBy,
                    boolean deleteSucceeded) {
        this.tables = tables;
        this.clock = clock;
        this.queue = queue;
        this.types = List.copyOf(types);
        this.lockedBy = lockedBy;
        this.deleteSucceeded = deleteSucceeded;
        this.claimSql = tables.claim(types.size());
        this.completeAndClaimSql = tables.completeAndClaim(types.size(), deleteSucceeded, false);
        this.claimAfterSql = tables.claim(types.size(), true);
        this.completeAndClaimAfterSql = tables.completeAndClaim(types.size(), deleteSucceeded, true);
    }

    /**
     * Where a claim may start in the due index instead of at its head: after the job a previous
     * claim ranked last (its priority, run-at and id as stored), among the jobs of that priority.
     * Only on PostgreSQL ({@link #floors()}).
     */
    public record Floor(int priority, long runAtMillis, long id) {
        /** The floor after the last of {@code claimed} (sorted best first), null for none. */
        static @Nullable Floor after(List<Claimed> claimed) {
            if (claimed.isEmpty()) {
                return null;
            }
            Job last = claimed.get(claimed.size() - 1).job();
            return new Floor(last.priority(), last.runAt().toEpochMilli(), last.id());
        }
    }

    /**
     * True when a claim after a {@link Floor} saves work: on PostgreSQL, where a claimed or
     * finished job's entry in the due index stays, dead, until a vacuum, and a claim from the head
     * walks every one of them. (SQLite removes an index entry with its row.)
     */
    public boolean floors() {
        return tables.dialect() == Dialect.POSTGRESQL;
    }

    public String lockedBy() {
        return lockedBy;
    }

    public String queue() {
        return queue;
    }

    public JobTables tables() {
        return tables;
    }

    /** A claimed (or expired) job and the retry state its attempt is decided with, on this process's clock. */
    public record Claimed(Job job, RetryState retryState) {
    }

    /**
     * Claims up to {@code limit} due jobs, best first, under a lease of {@code leaseMillis}: one
     * statement, kept prepared in {@code statements}.
     */
    public List<Claimed> claim(Statements statements, Connection c, int limit, long leaseMillis) throws SQLException {
        return claim(statements, c, limit, leaseMillis, null);
    }

    /**
     * {@link #claim(Statements, Connection, int, long)}, after {@code floor} when not null (see
     * {@link Floor}; the caller passes one only where {@link #floors()} says it saves work).
     */
    public List<Claimed> claim(Statements statements, Connection c, int limit, long leaseMillis, @Nullable Floor floor)
            throws SQLException {
        List<Claimed> claimed = new ArrayList<>(limit);
        PreparedStatement ps = statements.on(c, floor == null ? claimSql : claimAfterSql);
        bindClaim(new Binder(ps, tables, clock), limit, leaseMillis, floor);
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                claimed.add(claimedRow(rs));
            }
        }
        sortBest(claimed);
        return claimed;
    }

    /** What {@link #completeAndClaim} did: the jobs it claimed, and which of the successes it stored. */
    public record CompletedAndClaimed(List<Claimed> claimed, boolean[] completed) {
    }

    /**
     * Stores {@code successes} (each only if this pool still holds that attempt) and claims up to
     * {@code limit} due jobs in one transaction, all or nothing: on PostgreSQL in one statement, so
     * one round trip and one commit carry both; on SQLite the batch of completions and the claim
     * in one write transaction, so the pool has one writer while it is busy instead of two taking
     * turns on the database's lock.
     */
    public CompletedAndClaimed completeAndClaim(Statements statements, Connection c, List<Outcome> successes, int limit,
                                                long leaseMillis) throws SQLException {
        return completeAndClaim(statements, c, successes, limit, leaseMillis, null);
    }

    /** {@link #completeAndClaim(Statements, Connection, List, int, long)}, claiming after {@code floor} when not null. */
    public CompletedAndClaimed completeAndClaim(Statements statements, Connection c, List<Outcome> successes, int limit,
                                                long leaseMillis, @Nullable Floor floor) throws SQLException {
        if (tables.dialect() != Dialect.POSTGRESQL) {
            return completeThenClaim(statements, c, successes, limit, leaseMillis);
        }
        PreparedStatement ps = statements.on(c, floor == null ? completeAndClaimSql : completeAndClaimAfterSql);
        Binder b = new Binder(ps, tables, clock);
        Map<Long, Integer> index = bindSuccesses(b, c, successes);
        bindClaim(b, limit, leaseMillis, floor);
        List<Claimed> claimed = new ArrayList<>(limit);
        boolean[] completed = new boolean[successes.size()];
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                long completedId = rs.getLong("completed_id");
                if (rs.wasNull()) {
                    claimed.add(claimedRow(rs));
                } else {
                    completed[position(index, completedId)] = true;
                }
            }
        }
        sortBest(claimed);
        return new CompletedAndClaimed(claimed, completed);
    }

    /** SQLite: {@link #completeAndClaim} as a transaction of the batched completions and the claim. */
    private CompletedAndClaimed completeThenClaim(Statements statements, Connection c, List<Outcome> successes, int limit,
                                                  long leaseMillis) throws SQLException {
        try (WriteTransaction tx = WriteTransaction.writeFirst(c)) {
            boolean[] completed = new boolean[successes.size()];
            List<Integer> all = new ArrayList<>(successes.size());
            for (int i = 0; i < successes.size(); i++) {
                all.add(i);
            }
            succeedBatch(statements, c, successes, all, completed);
            List<Claimed> claimed = claim(statements, c, limit, leaseMillis);
            tx.commit();
            return new CompletedAndClaimed(claimed, completed);
        }
    }

    /** Binds the parameters of {@link JobTables#claim(int, boolean)}. */
    private void bindClaim(Binder b, int limit, long leaseMillis, @Nullable Floor floor) throws SQLException {
        b.text(lockedBy).now().bigint(leaseMillis).now().now().text(queue).now();
        for (String type : types) {
            b.text(type);
        }
        if (floor != null) {
            b.integer(floor.priority()).bigint(floor.runAtMillis()).bigint(floor.id());
        }
        b.integer(limit);
    }

    private static void sortBest(List<Claimed> claimed) {
        claimed.sort(Comparator.comparing(Claimed::job, Comparator.comparingInt(Job::priority).reversed()
                .thenComparing(Job::runAt).thenComparingLong(Job::id)));
    }

    /**
     * The job and its retry state from a row with {@link JobTables#CLAIM_COLUMNS}. With the
     * database clock, the first attempt's start is moved to this process's clock by the difference
     * between the two clocks at the query, so the deadline counts the time that really passed.
     */
    private Claimed claimedRow(ResultSet rs) throws SQLException {
        Job job = Rows.job(rs);
        long first = rs.getLong("first_attempt_at");
        boolean unknown = rs.wasNull(); // a job claimed before schema version 2
        long local = clock.currentTimeMillis();
        long offset = tables.databaseClock() ? local - rs.getLong("db_now") : 0;
        Instant startedAt = Instant.ofEpochMilli(unknown ? local : first + offset);
        return new Claimed(job, new RetryState(Math.max(1, job.attempt()), startedAt, rs.getLong("backoff_state")));
    }

    /**
     * Stores outcomes in one transaction. Each change applies only if this pool still owns that
     * attempt; the result says, per outcome, whether it did. Successes, the bulk of any batch, are
     * stored together: on PostgreSQL one statement for all of them (the ids and attempts bound as
     * two arrays), on SQLite one JDBC batch (no round trips to save in-process). If any statement
     * fails, nothing of the batch is stored.
     */
    public boolean[] apply(Statements statements, Connection c, List<Outcome> outcomes) throws SQLException {
        boolean[] applied = new boolean[outcomes.size()];
        try (WriteTransaction tx = WriteTransaction.writeFirst(c)) {
            List<Integer> succeeded = new ArrayList<>();
            for (int i = 0; i < outcomes.size(); i++) {
                Outcome o = outcomes.get(i);
                Job job = o.job();
                switch (o.kind()) {
                    case SUCCEEDED -> succeeded.add(i);
                    case RETRY -> {
                        PreparedStatement retry = statements.on(c, tables.retry());
                        applied[i] = update(retry,
                                new Binder(retry, tables, clock).bigint(o.backoffState()).now().bigint(o.delayMillis()), job);
                    }
                    case SNOOZE, RELEASE -> {
                        PreparedStatement snooze = statements.on(c, tables.snooze());
                        applied[i] = update(snooze, new Binder(snooze, tables, clock).now().bigint(o.delayMillis()), job);
                    }
                    case DEAD -> {
                        PreparedStatement dead = statements.on(c, tables.dead());
                        applied[i] = update(dead, new Binder(dead, tables, clock).now(), job);
                    }
                }
                if (applied[i] && o.error() != null) {
                    insertError(statements.on(c, tables.insertError()), job.id(), o.error());
                }
            }
            if (!succeeded.isEmpty()) {
                if (tables.dialect() == Dialect.POSTGRESQL) {
                    succeedAll(statements, c, outcomes, succeeded, applied);
                } else {
                    succeedBatch(statements, c, outcomes, succeeded, applied);
                }
            }
            tx.commit();
            return applied;
        }
    }

    /** PostgreSQL: every success in one statement; the ids it returns are the ones this pool still owned. */
    private void succeedAll(Statements statements, Connection c, List<Outcome> outcomes, List<Integer> succeeded,
                            boolean[] applied) throws SQLException {
        List<Outcome> successes = succeeded.stream().map(outcomes::get).toList();
        PreparedStatement ps = statements.on(c, tables.succeedAll(deleteSucceeded));
        Map<Long, Integer> index = bindSuccesses(new Binder(ps, tables, clock), c, successes);
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                applied[succeeded.get(position(index, rs.getLong(1)))] = true;
            }
        }
    }

    /**
     * Binds the parameters of {@link JobTables#succeedAll(boolean)} for {@code successes}: now
     * (unless deleting), their ids and attempts as two arrays, this pool's id. Returns each job
     * id's position in the list.
     */
    private Map<Long, Integer> bindSuccesses(Binder b, Connection c, List<Outcome> successes) throws SQLException {
        Long[] ids = new Long[successes.size()];
        Integer[] attempts = new Integer[successes.size()];
        Map<Long, Integer> index = new HashMap<>(successes.size() * 2);
        for (int k = 0; k < ids.length; k++) {
            Job job = successes.get(k).job();
            ids[k] = job.id();
            attempts[k] = job.attempt();
            index.put(job.id(), k);
        }
        if (!deleteSucceeded) {
            b.now();
        }
        b.array(c.createArrayOf("bigint", ids)).array(c.createArrayOf("integer", attempts)).text(lockedBy);
        return index;
    }

    /** The position {@link #bindSuccesses} gave a job id the database answered with. */
    private static int position(Map<Long, Integer> index, long id) {
        Integer k = index.get(id);
        if (k == null) {
            throw new IllegalStateException("the database answered with job " + id + ", which was not in the batch");
        }
        return k;
    }

    /**
     * SQLite: one JDBC batch of guarded updates (deleting: of guarded deletes, after one of
     * guarded deletes of their error history), inside the caller's transaction.
     */
    private void succeedBatch(Statements statements, Connection c, List<Outcome> outcomes, List<Integer> succeeded,
                              boolean[] applied) throws SQLException {
        if (deleteSucceeded) {
            PreparedStatement clear = statements.on(c, tables.clearErrors());
            Binder b = new Binder(clear, tables, clock);
            for (int i : succeeded) {
                owned(b.reset(), outcomes.get(i).job(), lockedBy);
                clear.addBatch();
            }
            clear.executeBatch();
        }
        PreparedStatement succeed = statements.on(c, tables.succeed(deleteSucceeded));
        Binder b = new Binder(succeed, tables, clock);
        for (int i : succeeded) {
            owned(deleteSucceeded ? b.reset() : b.reset().now(), outcomes.get(i).job(), lockedBy);
            succeed.addBatch();
        }
        int[] counts = succeed.executeBatch();
        for (int k = 0; k < counts.length; k++) {
            // SUCCESS_NO_INFO (-2) means the driver ran it but did not count rows
            applied[succeeded.get(k)] = counts[k] == 1 || counts[k] == Statement.SUCCESS_NO_INFO;
        }
    }

    private boolean update(PreparedStatement ps, Binder b, Job job) throws SQLException {
        owned(b, job, lockedBy);
        return ps.executeUpdate() == 1;
    }

    /** Binds the guard that {@code owner} holds this attempt of the job. */
    private static Binder owned(Binder b, Job job, String owner) throws SQLException {
        return b.bigint(job.id()).text(owner).integer(job.attempt());
    }

    /**
     * Completes the job on the caller's connection, inside the caller's transaction (deleting it
     * and its error history when this pool deletes successes).
     */
    public void completeWithin(Connection c, Job job) throws SQLException {
        if (deleteSucceeded) {
            try (PreparedStatement ps = c.prepareStatement(tables.clearErrors())) {
                owned(new Binder(ps, tables, clock), job, lockedBy);
                ps.executeUpdate();
            }
        }
        try (PreparedStatement ps = c.prepareStatement(tables.succeed(deleteSucceeded))) {
            Binder b = new Binder(ps, tables, clock);
            owned(deleteSucceeded ? b : b.now(), job, lockedBy);
            if (ps.executeUpdate() != 1) {
                throw new LeaseLostException(job.id(), job.attempt());
            }
        }
    }

    /**
     * Extends the lease of each of {@code ids} this pool still holds running to now +
     * {@code leaseMillis}; returns how many. See {@link JobTables#heartbeat(int)}.
     */
    public int heartbeat(Connection c, long leaseMillis, Collection<Long> ids) throws SQLException {
        Long[] held = ids.toArray(new Long[0]);
        if (held.length == 0) {
            return 0;
        }
        boolean pg = tables.dialect() == Dialect.POSTGRESQL;
        try (PreparedStatement ps = c.prepareStatement(tables.heartbeat(held.length))) {
            Binder b = new Binder(ps, tables, clock).now().bigint(leaseMillis);
            if (pg) {
                b.array(c.createArrayOf("bigint", held));
            } else {
                for (Long id : held) {
                    b.bigint(id);
                }
            }
            b.text(lockedBy);
            return ps.executeUpdate();
        }
    }

    /** A job taken back from a worker whose lease expired, and what became of it. */
    public record Rescued(Outcome outcome, String owner) {
    }

    /**
     * Takes back jobs of this queue whose lease expired (their worker died or was cut off), each
     * decided by {@code decide} as a failed attempt: available again after the wait it returns,
     * or dead. Each records its error. Rows another transaction holds are skipped (PostgreSQL),
     * so this never waits behind another worker's lock; they are looked at again next time. On
     * SQLite the transaction holds the write lock from its read ({@link WriteTransaction}).
     *
     * @param decide the outcome of a lost attempt, given the job, its retry state and its owner
     */
    public List<Rescued> rescue(Connection c, Function<Lost, Outcome> decide) throws SQLException {
        try (WriteTransaction tx = WriteTransaction.readThenWrite(c, tables.dialect())) {
            List<Lost> expired = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(tables.expired(RESCUE_BATCH))) {
                new Binder(ps, tables, clock).text(queue).now();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        expired.add(new Lost(claimedRow(rs), rs.getString("locked_by")));
                    }
                }
            }
            List<Rescued> rescued = new ArrayList<>();
            if (expired.isEmpty()) {
                tx.commit();
                return rescued;
            }
            try (PreparedStatement retry = c.prepareStatement(tables.rescueRetry());
                 PreparedStatement dead = c.prepareStatement(tables.rescueDead());
                 PreparedStatement error = c.prepareStatement(tables.insertError())) {
                for (Lost lost : expired) {
                    Outcome o = decide.apply(lost);
                    Job job = o.job();
                    boolean done;
                    if (o.kind() == Outcome.Kind.RETRY) {
                        Binder b = new Binder(retry, tables, clock).bigint(o.backoffState()).now().bigint(o.delayMillis());
                        owned(b, job, lost.owner()).now();
                        done = retry.executeUpdate() == 1;
                    } else {
                        owned(new Binder(dead, tables, clock).now(), job, lost.owner()).now();
                        done = dead.executeUpdate() == 1;
                    }
                    if (done) {
                        insertError(error, job.id(), o.failure());
                        rescued.add(new Rescued(o, lost.owner()));
                    }
                }
            }
            tx.commit();
            return rescued;
        }
    }

    /** A job whose lease expired, as found by a rescue: its claim state and the owner that lost it. */
    public record Lost(Claimed claimed, String owner) {
    }

    /**
     * Deletes jobs of {@code state} in {@code queue} (null: every queue) that finished more than
     * {@code retentionMillis} ago, with their error history, in {@link WriteTransaction}s of at
     * most {@code batch} jobs. Returns how many were deleted.
     */
    public static int purge(Connection c, JobTables tables, Clock clock, JobState state, long retentionMillis,
                            @Nullable String queue, int batch) throws SQLException {
        int total = 0;
        while (true) {
            List<Long> ids = new ArrayList<>(batch);
            try (WriteTransaction tx = WriteTransaction.readThenWrite(c, tables.dialect())) {
                try (PreparedStatement ps = c.prepareStatement(tables.finishedBefore(queue != null, batch))) {
                    Binder b = new Binder(ps, tables, clock).text(state.name()).now().bigint(retentionMillis);
                    if (queue != null) {
                        b.text(queue);
                    }
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            ids.add(rs.getLong(1));
                        }
                    }
                }
                if (!ids.isEmpty()) {
                    String in = " IN (" + String.join(", ", ids.stream().map(String::valueOf).toList()) + ")";
                    try (Statement s = c.createStatement()) {
                        s.executeUpdate("DELETE FROM " + tables.errors + " WHERE job_id" + in);
                        total += s.executeUpdate("DELETE FROM " + tables.jobs + " WHERE id" + in);
                    }
                }
                tx.commit();
            }
            if (ids.size() < batch) {
                return total;
            }
        }
    }

    /** How {@code queue} stands: unfinished and dead jobs by state, and the lag of its oldest due job. */
    public static QueueStats stats(Connection c, JobTables tables, Clock clock, String queue) throws SQLException {
        long available = 0;
        long running = 0;
        long dead = 0;
        try (PreparedStatement ps = c.prepareStatement(tables.depth())) {
            ps.setString(1, queue);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    switch (JobState.valueOf(rs.getString(1))) {
                        case AVAILABLE -> available = rs.getLong(2);
                        case RUNNING -> running = rs.getLong(2);
                        case DEAD -> dead = rs.getLong(2);
                        case SUCCEEDED -> {
                            // not selected
                        }
                    }
                }
            }
        }
        long waitMillis;
        try (PreparedStatement ps = c.prepareStatement(tables.oldestDueWait())) {
            new Binder(ps, tables, clock).now().text(queue).now();
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                waitMillis = Math.max(0, rs.getLong(1));
            }
        }
        return new QueueStats(queue, available, running, dead, Duration.ofMillis(waitMillis));
    }

    private void insertError(PreparedStatement ps, long jobId, JobError e) throws SQLException {
        new Binder(ps, tables, clock).bigint(jobId).integer(e.attempt()).now().text(e.exceptionClass()).text(e.message())
                .text(e.stackTrace());
        ps.executeUpdate();
    }
}
