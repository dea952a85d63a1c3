package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.Backoff;
import dev.stagger.RetryPolicy;
import dev.stagger.jobs.internal.JobStore;
import dev.stagger.jobs.internal.Outcome;
import dev.stagger.jobs.internal.Statements;
import dev.stagger.testing.VirtualClock;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The batched paths of a pool, on SQLite and PostgreSQL: one statement claims many jobs, one
 * transaction (on PostgreSQL one statement) completes many, and a claim carries the successes
 * waiting to be stored (on PostgreSQL in the same statement). Claims and completions run through
 * {@link JobStore} exactly as the pool's fetcher and completer run them, each "worker" its own
 * owner id and connection, on a virtual clock (the store's clock, also on PostgreSQL) so leases
 * expire when the test says.
 */
class BatchedClaimsAndCompletionsTest {
    private static final long LEASE_MILLIS = 30_000;

    @TempDir
    Path dir;
    final VirtualClock clock = new VirtualClock();
    DataSource ds;
    String prefix;
    JobQueue jobs;

    private void open(String database) throws SQLException {
        Stores.Opened opened = Stores.open(database, dir, clock);
        ds = opened.dataSource();
        prefix = opened.prefix();
        jobs = opened.jobs();
    }

    @AfterEach
    void tearDown() throws SQLException {
        if (jobs != null && jobs.tables().dialect() == dev.stagger.jdbc.internal.Dialect.POSTGRESQL) {
            Stores.exec(ds, "DROP TRIGGER IF EXISTS " + prefix + "fail ON " + prefix + "jobs");
            Stores.exec(ds, "DROP FUNCTION IF EXISTS " + prefix + "fail()");
            Stores.dropPostgres(ds, prefix);
        }
    }

    private JobStore store(String owner) {
        return new JobStore(jobs.tables(), clock, "q", List.of("work"), owner, false);
    }

    private List<Long> enqueue(int n) {
        List<JobRequest> batch = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            batch.add(JobRequest.of("q", "work", "job-" + i));
        }
        return jobs.enqueueAll(batch);
    }

    private List<JobStore.Claimed> claim(JobStore store, int limit) throws SQLException {
        try (Connection c = jobs.connection()) {
            return store.claim(new Statements(), c, limit, LEASE_MILLIS);
        }
    }

    private boolean[] apply(JobStore store, List<Outcome> outcomes) throws SQLException {
        try (Connection c = jobs.connection()) {
            return store.apply(new Statements(), c, outcomes);
        }
    }

    private static Outcome succeeded(JobStore.Claimed claimed) {
        return new Outcome(Outcome.Kind.SUCCEEDED, claimed.job(), 0, null, 0, false, 0, null);
    }

    private Outcome retried(JobStore.Claimed claimed) {
        Job job = claimed.job();
        JobError error = new JobError(job.attempt(), Instant.ofEpochMilli(clock.currentTimeMillis()), "java.io.IOException",
                "refused", "");
        return new Outcome(Outcome.Kind.RETRY, job, 1000, error, 0, false, 0, null);
    }

    private Job find(long id) {
        return jobs.admin().find(id).orElseThrow();
    }

    private long ownedBy(String owner) throws SQLException {
        return Stores.count(ds, "SELECT COUNT(*) FROM " + prefix + "jobs WHERE state = 'RUNNING' AND locked_by = '" + owner
                + "'");
    }

    @ParameterizedTest
    @ValueSource(strings = {"sqlite", "postgresql"})
    void concurrentBatchClaimsNeverTakeOneJobTwice(String database) throws Exception {
        open(database);
        List<Long> ids = enqueue(1200);
        ExecutorService workers = Executors.newFixedThreadPool(4);
        try {
            List<Future<List<Long>>> claimedByWorker = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                JobStore store = store("worker-" + w);
                Callable<List<Long>> drain = () -> {
                    List<Long> mine = new ArrayList<>();
                    Statements statements = new Statements();
                    try (Connection c = jobs.connection()) {
                        List<JobStore.Claimed> batch;
                        do {
                            batch = store.claim(statements, c, 16, LEASE_MILLIS);
                            batch.forEach(claimed -> mine.add(claimed.job().id()));
                        } while (!batch.isEmpty());
                    }
                    return mine;
                };
                claimedByWorker.add(workers.submit(drain));
            }
            List<Long> all = new ArrayList<>();
            for (Future<List<Long>> f : claimedByWorker) {
                all.addAll(f.get(60, TimeUnit.SECONDS));
            }
            assertThat(all).as("every job claimed once").hasSize(ids.size()).containsExactlyInAnyOrderElementsOf(ids);
            for (int w = 0; w < 4; w++) {
                assertThat(ownedBy("worker-" + w)).isEqualTo(claimedByWorker.get(w).get().size());
            }
        } finally {
            workers.shutdownNow();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"sqlite", "postgresql"})
    void aCompletionBatchStoresOnlyTheAttemptsItsPoolStillOwns(String database) throws Exception {
        open(database);
        enqueue(5);
        JobStore store = store("worker-a");
        List<JobStore.Claimed> claimed = claim(store, 5);
        long taken = claimed.get(2).job().id();
        // the job's lease expired and another worker holds its next attempt
        Stores.exec(ds, "UPDATE " + prefix + "jobs SET locked_by = 'worker-b', attempt = attempt + 1 WHERE id = " + taken);

        boolean[] applied = apply(store, claimed.stream().map(BatchedClaimsAndCompletionsTest::succeeded).toList());

        assertThat(applied).containsExactly(true, true, false, true, true);
        assertThat(find(taken).state()).isEqualTo(JobState.RUNNING);
        assertThat(jobs.admin().countByState("q").get(JobState.SUCCEEDED)).isEqualTo(4);
    }

    @ParameterizedTest
    @ValueSource(strings = {"sqlite", "postgresql"})
    void aCompletionBatchFailingMidwayStoresNoneOfItsOutcomes(String database) throws Exception {
        open(database);
        enqueue(4);
        JobStore store = store("worker-a");
        List<JobStore.Claimed> claimed = claim(store, 4);
        List<Outcome> batch = batchWhoseThirdCompletionFails(claimed);

        assertThatThrownBy(() -> apply(store, batch)).isInstanceOf(SQLException.class);

        assertThat(ownedBy("worker-a")).as("every job still held, as claimed").isEqualTo(4);
        for (JobStore.Claimed c : claimed) {
            assertThat(find(c.job().id()).attempt()).isEqualTo(1);
            assertThat(jobs.admin().errors(c.job().id())).as("no error history from the failed batch").isEmpty();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"sqlite", "postgresql"})
    void aCompletionBatchStoredAgainAfterAFailureAppliesEachOutcomeOnce(String database) throws Exception {
        open(database);
        enqueue(4);
        JobStore store = store("worker-a");
        List<JobStore.Claimed> claimed = claim(store, 4);
        List<Outcome> batch = batchWhoseThirdCompletionFails(claimed);
        assertThatThrownBy(() -> apply(store, batch)).isInstanceOf(SQLException.class);
        dropFailure();

        assertThat(apply(store, batch)).containsExactly(true, true, true, true);

        assertThat(find(claimed.get(0).job().id()).state()).isEqualTo(JobState.AVAILABLE);
        assertThat(jobs.admin().errors(claimed.get(0).job().id())).hasSize(1);
        assertThat(jobs.admin().countByState("q").get(JobState.SUCCEEDED)).isEqualTo(3);
        assertThat(apply(store, batch)).as("stored twice: the second changes nothing").containsExactly(false, false,
                false, false);
    }

    @ParameterizedTest
    @ValueSource(strings = {"sqlite", "postgresql"})
    void aBatchOfAWorkerKilledBeforeStoringItRunsElsewhereAndTheDeadWorkersOutcomesChangeNothing(String database)
            throws Exception {
        open(database);
        List<Long> ids = enqueue(8);
        JobStore doomed = store("doomed");
        List<JobStore.Claimed> claimed = claim(doomed, 8);
        assertThat(claimed).hasSize(8);
        // the doomed worker ran its batch, then died before its completer stored it: no heartbeat, no completion
        Set<Long> ranBySurvivor = new HashSet<>();
        WorkerPool survivor = WorkerPool.builder(jobs, "q").workerId("survivor").concurrency(4)
                .handler("work", ctx -> ranBySurvivor.add(ctx.job().id()),
                        RetryPolicy.builder().maxAttempts(5).backoff(Backoff.fixed(Duration.ofSeconds(1))).build())
                .build();
        clock.advance(Duration.ofMillis(LEASE_MILLIS + 1));
        assertThat(survivor.runAvailable()).as("rescued, waiting out the backoff").isZero();
        clock.advance(Duration.ofSeconds(1));

        assertThat(survivor.runAvailable()).isEqualTo(8);

        assertThat(ranBySurvivor).containsExactlyInAnyOrderElementsOf(ids);
        for (long id : ids) {
            assertThat(find(id).state()).isEqualTo(JobState.SUCCEEDED);
            assertThat(find(id).attempt()).as("the lost attempt is counted").isEqualTo(2);
            assertThat(jobs.admin().errors(id)).singleElement()
                    .satisfies(e -> assertThat(e.exceptionClass()).isEqualTo(JobError.LEASE_EXPIRED));
        }
        // the dead worker's batch, were it stored late (a frozen process resuming), changes nothing
        assertThat(apply(doomed, claimed.stream().map(BatchedClaimsAndCompletionsTest::succeeded).toList()))
                .containsOnly(false);
    }

    @ParameterizedTest
    @ValueSource(strings = {"sqlite", "postgresql"})
    void aClaimCarriesTheWaitingSuccessesAndStoresOnlyTheAttemptsItsPoolStillOwns(String database) throws Exception {
        open(database);
        List<Long> ids = enqueue(8);
        JobStore store = store("worker-a");
        List<JobStore.Claimed> first = claim(store, 3);
        long taken = first.get(1).job().id();
        Stores.exec(ds, "UPDATE " + prefix + "jobs SET locked_by = 'worker-b', attempt = attempt + 1 WHERE id = " + taken);

        JobStore.CompletedAndClaimed result;
        try (Connection c = jobs.connection()) {
            result = store.completeAndClaim(new Statements(), c,
                    first.stream().map(BatchedClaimsAndCompletionsTest::succeeded).toList(), 4, LEASE_MILLIS);
        }

        assertThat(result.completed()).containsExactly(true, false, true);
        assertThat(result.claimed()).extracting(cl -> cl.job().id()).containsExactlyElementsOf(ids.subList(3, 7));
        assertThat(result.claimed()).allSatisfy(cl -> assertThat(cl.job().attempt()).isEqualTo(1));
        assertThat(jobs.admin().countByState("q")).containsEntry(JobState.SUCCEEDED, 2L).containsEntry(JobState.RUNNING, 5L)
                .containsEntry(JobState.AVAILABLE, 1L);
    }

    @ParameterizedTest
    @ValueSource(strings = {"sqlite", "postgresql"})
    void aClaimWhoseCarriedCompletionFailsNeitherCompletesNorClaims(String database) throws Exception {
        open(database);
        enqueue(6);
        JobStore store = store("worker-a");
        List<JobStore.Claimed> first = claim(store, 3);
        failCompletionOf(first.get(2).job().id());

        assertThatThrownBy(() -> {
            try (Connection c = jobs.connection()) {
                store.completeAndClaim(new Statements(), c,
                        first.stream().map(BatchedClaimsAndCompletionsTest::succeeded).toList(), 3, LEASE_MILLIS);
            }
        }).isInstanceOf(SQLException.class);

        assertThat(ownedBy("worker-a")).as("the first three still held, none of the rest claimed").isEqualTo(3);
        assertThat(jobs.admin().countByState("q")).containsEntry(JobState.AVAILABLE, 3L).containsEntry(JobState.SUCCEEDED, 0L);
    }

    @ParameterizedTest
    @ValueSource(strings = {"sqlite", "postgresql"})
    void aStoreThatDeletesSuccessesDeletesEachJobAndItsHistoryOnlyWhileItHoldsThatAttempt(String database)
            throws Exception {
        open(database);
        List<Long> ids = enqueue(6);
        JobStore store = new JobStore(jobs.tables(), clock, "q", List.of("work"), "worker-a", true);
        List<JobStore.Claimed> first = claim(store, 6);
        // two jobs fail once (an error each) and come back; one job is taken over by another worker
        assertThat(apply(store, List.of(retried(first.get(0)), retried(first.get(1))))).containsOnly(true);
        long taken = first.get(5).job().id();
        Stores.exec(ds, "UPDATE " + prefix + "jobs SET locked_by = 'worker-b', attempt = attempt + 1 WHERE id = " + taken);
        Stores.exec(ds, "INSERT INTO " + prefix + "job_errors (job_id, attempt, failed_at, error_class) VALUES ("
                + taken + ", 1, 0, 'java.io.IOException')");
        clock.advance(Duration.ofSeconds(1));

        // by apply (the completer): one job that failed before, one that did not, the taken one
        assertThat(apply(store, List.of(succeeded(first.get(2)), succeeded(first.get(5))))).containsExactly(true, false);
        List<JobStore.Claimed> again = claim(store, 2);
        assertThat(again).extracting(cl -> cl.job().id()).containsExactlyInAnyOrder(ids.get(0), ids.get(1));
        assertThat(apply(store, List.of(succeeded(again.get(0))))).containsExactly(true);
        // carried by a claim (the fetcher), which on PostgreSQL deletes in the claim's statement
        JobStore.CompletedAndClaimed result;
        try (Connection c = jobs.connection()) {
            result = store.completeAndClaim(new Statements(), c, List.of(succeeded(again.get(1)), succeeded(first.get(3)),
                    succeeded(first.get(5))), 4, LEASE_MILLIS);
        }
        assertThat(result.completed()).containsExactly(true, true, false);

        for (long id : List.of(ids.get(0), ids.get(1), ids.get(2), ids.get(3))) {
            assertThat(jobs.admin().find(id)).as("job %d", id).isEmpty();
            assertThat(jobs.admin().errors(id)).as("history of job %d", id).isEmpty();
        }
        assertThat(find(ids.get(4)).state()).as("claimed, not completed").isEqualTo(JobState.RUNNING);
        assertThat(find(taken).state()).as("another worker's attempt").isEqualTo(JobState.RUNNING);
        assertThat(jobs.admin().errors(taken)).as("its history stays").hasSize(1);
        assertThat(Stores.count(ds, "SELECT COUNT(*) FROM " + prefix + "job_errors")).isEqualTo(1);
        assertThat(jobs.admin().countByState("q")).containsEntry(JobState.SUCCEEDED, 0L);
    }

    /** A retry and three successes of {@code claimed}, the third success made to fail in the database. */
    private List<Outcome> batchWhoseThirdCompletionFails(List<JobStore.Claimed> claimed)
            throws SQLException {
        failCompletionOf(claimed.get(2).job().id());
        return List.of(retried(claimed.get(0)), succeeded(claimed.get(1)), succeeded(claimed.get(2)),
                succeeded(claimed.get(3)));
    }

    /** Makes storing job {@code id} as SUCCEEDED fail inside the database, as a lost connection or a full disk would. */
    private void failCompletionOf(long id) throws SQLException {
        String jobsTable = prefix + "jobs";
        if (jobs.tables().dialect() == dev.stagger.jdbc.internal.Dialect.POSTGRESQL) {
            Stores.exec(ds, "CREATE FUNCTION " + prefix + "fail() RETURNS trigger AS $$ BEGIN "
                    + "IF NEW.state = 'SUCCEEDED' AND NEW.id = " + id + " THEN RAISE EXCEPTION 'injected failure'; END IF; "
                    + "RETURN NEW; END $$ LANGUAGE plpgsql");
            Stores.exec(ds, "CREATE TRIGGER " + prefix + "fail BEFORE UPDATE ON " + jobsTable
                    + " FOR EACH ROW EXECUTE FUNCTION " + prefix + "fail()");
        } else {
            Stores.exec(ds, "CREATE TRIGGER " + prefix + "fail BEFORE UPDATE ON " + jobsTable
                    + " WHEN NEW.state = 'SUCCEEDED' AND NEW.id = " + id + " BEGIN SELECT RAISE(ABORT, 'injected failure'); END");
        }
    }

    private void dropFailure() throws SQLException {
        if (jobs.tables().dialect() == dev.stagger.jdbc.internal.Dialect.POSTGRESQL) {
            Stores.exec(ds, "DROP TRIGGER " + prefix + "fail ON " + prefix + "jobs");
        } else {
            Stores.exec(ds, "DROP TRIGGER " + prefix + "fail");
        }
    }
}
