package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testsupport.Await;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What PostgreSQL does with the pool's hot statements once a queue has worked through a backlog.
 * Every claimed or finished job leaves a dead entry in the partial index it left, and those stay
 * until a vacuum: a statement that reaches its rows through such an index walks every one of
 * them, so its cost grows with the number of jobs the queue has run. The plans are read as the
 * pool runs them: prepared, with the generic plan PostgreSQL settles on for a prepared statement,
 * on tables that were never analysed (no autovacuum on a fresh table yet).
 */
class PostgresPlansTest {
    DataSource ds;
    String prefix;
    JobQueue jobs;
    WorkerPool pool;

    @BeforeEach
    void setUp() throws Exception {
        Stores.Opened opened = Stores.postgresQueue(); // skips (fails under CI=true) without PostgreSQL
        ds = opened.dataSource();
        prefix = opened.prefix();
        jobs = opened.jobs();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (pool != null) {
            pool.shutdown(Duration.ofSeconds(5));
        }
        Stores.dropPostgres(ds, prefix);
    }

    @Test
    void aBatchCompletionFindsItsJobsByIdNotThroughTheIndexOfRunningJobs() throws Exception {
        history(30_000);
        runBacklog(2000);
        String plan = genericPlan(jobs.tables().completeAndClaim(1, false, false),
                "'{1,2,3}'::bigint[], '{1,1,1}'::integer[], 'w', 'w', 30000, 'q', 'work', 8");
        // the completion reads each job by its key: a few pages, however many jobs ran before
        assertThat(completedPart(plan)).as("plan of the completion part:%n%s", plan)
                .contains("\"Index Name\": \"" + prefix + "jobs_pkey\"")
                .doesNotContain("\"Index Name\": \"" + prefix + "jobs_lease\"");
    }

    @Test
    void aCompletionThatDeletesFindsItsJobsAndTheirErrorHistoryByIndex() throws Exception {
        history(30_000);
        Stores.exec(ds, "INSERT INTO " + prefix + "job_errors (job_id, attempt, failed_at, error_class) SELECT id, 1, 0,"
                + " 'java.io.IOException' FROM " + prefix + "jobs");
        runBacklog(500);
        String plan = genericPlan(jobs.tables().completeAndClaim(1, true, false),
                "'{1,2,3}'::bigint[], '{1,1,1}'::integer[], 'w', 'w', 30000, 'q', 'work', 8");
        assertThat(completedPart(plan)).as("plan of the completion part:%n%s", plan)
                .contains("\"Index Name\": \"" + prefix + "jobs_pkey\"")
                .contains("\"Index Name\": \"" + prefix + "job_errors_job\"")
                .doesNotContain("\"Node Type\": \"Seq Scan\"");
        assertThat(Stores.count(ds, "SELECT COUNT(*) FROM " + prefix + "job_errors")).as("rolled back").isEqualTo(30_000);
    }

    @Test
    void aRescueStillReachesRunningJobsThroughTheLeaseIndexAndAHeartbeatReadsItsJobsByKey() throws Exception {
        history(30_000);
        runBacklog(500);
        String heartbeat = genericPlan(jobs.tables().heartbeat(1), "30000, '{1,2,3}'::bigint[], 'w'");
        assertThat(heartbeat).contains("\"Index Name\": \"" + prefix + "jobs_pkey\"");
        String rescue = genericPlan(jobs.tables().expired(100), "'q'");
        assertThat(rescue).contains("\"Index Name\": \"" + prefix + "jobs_lease\"");
    }

    @Test
    void aClaimAfterTheFloorStartsPastTheDeadEntriesThatJobsClaimedBeforeLeftInTheDueIndex() throws Exception {
        List<JobRequest> batch = new ArrayList<>();
        for (int i = 0; i < 20_000; i++) {
            batch.add(JobRequest.of("q", "work", "job-" + i));
        }
        List<Long> ids = jobs.enqueueAll(batch);
        long lastClaimed = ids.get(18_999);
        // as 19,000 claims since the last vacuum leave it: each claimed job's entry dead at the head of the due index
        Stores.exec(ds, "UPDATE " + prefix + "jobs SET state = 'RUNNING', lease_until = 1 WHERE id <= " + lastClaimed);
        long runAt = Stores.count(ds, "SELECT run_at FROM " + prefix + "jobs WHERE id = " + lastClaimed);

        String claim = "'w', 30000, 'q', 'work', ";
        long fromHead = dueIndexBlocks(genericPlan(jobs.tables().claim(1, false), claim + "32"));
        long afterFloor = dueIndexBlocks(genericPlan(jobs.tables().claim(1, true),
                claim + "0, " + runAt + ", " + lastClaimed + ", 32"));
        assertThat(fromHead).as("index pages a claim from the head reads").isGreaterThan(50);
        assertThat(afterFloor).as("index pages a claim after the floor reads").isLessThan(10);
    }

    /** The buffers the plan's scan of the due index read. */
    private long dueIndexBlocks(String plan) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"Index Name\": \"" + prefix
                + "jobs_due\"[^\\]]*?\"Shared Hit Blocks\": (\\d+)", java.util.regex.Pattern.DOTALL).matcher(plan);
        assertThat(m.find()).as("a scan of the due index in:%n%s", plan).isTrue();
        return Long.parseLong(m.group(1));
    }

    /** {@code n} jobs of another queue that finished long ago, as a table that keeps finished jobs for a while holds. */
    private void history(int n) throws SQLException {
        Stores.exec(ds, "INSERT INTO " + prefix + "jobs (queue, type, state, priority, attempt, max_attempts, run_at,"
                + " created_at, finished_at) SELECT 'old', 'work', 'SUCCEEDED', 0, 1, 3, 0, 0, 0 FROM generate_series(1, " + n + ")");
    }

    /** Enqueues {@code n} jobs and runs them all through a pool, as a queue draining a backlog does. */
    private void runBacklog(int n) throws Exception {
        List<JobRequest> batch = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            batch.add(JobRequest.of("q", "work", "job-" + i));
        }
        jobs.enqueueAll(batch);
        AtomicInteger ran = new AtomicInteger();
        pool = WorkerPool.builder(jobs, "q").workerId("w").concurrency(8).handler("work", ctx -> ran.incrementAndGet())
                .pollInterval(Duration.ofMillis(200)).build().start();
        Await.until(n + " jobs done", Duration.ofSeconds(60),
                () -> jobs.admin().countByState("q").get(JobState.SUCCEEDED) == n);
        pool.shutdown(Duration.ofSeconds(5));
        pool = null;
        assertThat(ran.get()).isEqualTo(n);
    }

    /**
     * The generic plan of {@code sql} (JDBC placeholders) for the given arguments, executed and
     * rolled back, as JSON.
     */
    private static String genericPlan(String sql, String arguments, DataSource ds) throws SQLException {
        StringBuilder numbered = new StringBuilder();
        int n = 0;
        for (int i = 0; i < sql.length(); i++) {
            char ch = sql.charAt(i);
            if (ch == '?') {
                numbered.append('$').append(++n);
            } else {
                numbered.append(ch);
            }
        }
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            try {
                s.execute("SET LOCAL plan_cache_mode = force_generic_plan");
                s.execute("PREPARE plan_under_test AS " + numbered);
                try (ResultSet rs = s.executeQuery("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE plan_under_test("
                        + arguments + ")")) {
                    rs.next();
                    return rs.getString(1);
                }
            } finally {
                c.rollback();
            }
        }
    }

    private String genericPlan(String sql, String arguments) throws SQLException {
        return genericPlan(sql, arguments, ds);
    }

    /** The part of a completeAndClaim plan under its first CTE ("completed"), up to the second. */
    private static String completedPart(String plan) {
        int start = plan.indexOf("\"Subplan Name\": \"CTE completed\"");
        int end = plan.indexOf("\"Subplan Name\": \"CTE claimed\"");
        assertThat(start).as("the plan has the completed CTE").isGreaterThanOrEqualTo(0);
        assertThat(end).as("the plan has the claimed CTE").isGreaterThan(start);
        return plan.substring(start, end);
    }
}
