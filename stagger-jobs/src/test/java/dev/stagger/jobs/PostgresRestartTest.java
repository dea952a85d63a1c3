package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testsupport.Await;
import dev.stagger.testsupport.jdbc.PostgresCluster;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A real PostgreSQL server of the test's own is stopped and started again while two pools drain
 * a queue whose handlers complete their jobs in their own transactions: no job is lost, none has
 * its effect committed twice, and the test prints how long the pools took to resume after the
 * server came back.
 */
class PostgresRestartTest {
    static final int JOBS = 400;

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"clean stop", "crash"})
    void aQueueDrainsAcrossARestartOfTheServerWithEveryEffectCommittedExactlyOnce(String how) throws Exception {
        try (PostgresCluster pg = PostgresCluster.start(Path.of("target/pg-clusters"))) {
            DataSource ds = pg.dataSource("connectTimeout=2", "socketTimeout=30");
            JobQueue jobs = JobQueue.builder(ds).build();
            Stores.exec(ds, "CREATE TABLE effects (job_id BIGINT NOT NULL, worker VARCHAR(100) NOT NULL)");
            List<JobRequest> batch = new ArrayList<>();
            for (int i = 0; i < JOBS; i++) {
                batch.add(JobRequest.of("q", "charge", "order-" + i));
            }
            List<Long> ids = jobs.enqueueAll(batch);
            AtomicLong lastSuccessNanos = new AtomicLong();
            JobListener progress = new JobListener() {
                @Override
                public void succeeded(Job job, Duration runTime) {
                    lastSuccessNanos.set(System.nanoTime());
                }
            };
            List<WorkerPool> pools = new ArrayList<>();
            for (String name : List.of("a", "b")) {
                pools.add(WorkerPool.builder(jobs, "q").workerId(name).concurrency(4).pollInterval(Duration.ofMillis(100))
                        .jobListener(progress)
                        .handler("charge", ctx -> {
                            try (Connection c = ds.getConnection()) {
                                c.setAutoCommit(false);
                                try (PreparedStatement ps = c.prepareStatement("INSERT INTO effects VALUES (?, ?)")) {
                                    ps.setLong(1, ctx.job().id());
                                    ps.setString(2, name);
                                    ps.executeUpdate();
                                }
                                Thread.sleep(5); // the business work, inside the transaction
                                ctx.completeWithin(c);
                                c.commit();
                            }
                        }).build().start());
            }
            try {
                Await.until("a third of the jobs done", Duration.ofSeconds(60), () -> effects(ds) >= JOBS / 3);
                long doneBeforeStop = effects(ds);
                long stopped = System.nanoTime();
                pg.stop(how.equals("crash")); // a crash is pg_ctl's immediate mode: no clean shutdown, recovery at start
                Thread.sleep(3_000); // the outage
                pg.start();
                long back = System.nanoTime();
                Await.until("the first job done after the restart", Duration.ofSeconds(60),
                        () -> lastSuccessNanos.get() > back);
                long resumedMillis = (lastSuccessNanos.get() - back) / 1_000_000;
                try {
                    Await.until("every job done", Duration.ofSeconds(120),
                            () -> jobs.admin().countByState("q").get(JobState.SUCCEEDED) == JOBS);
                } catch (AssertionError stalled) {
                    throw new AssertionError(stalled.getMessage() + "; jobs by state " + jobs.admin().countByState("q")
                            + ", leases " + leases(ds), stalled);
                }
                System.out.printf(Locale.ROOT, "PostgreSQL restart (%s): about %d of %d jobs done before the stop; down %d ms; "
                                + "jobs completing again %d ms after the server accepted connections%n",
                        how, doneBeforeStop, JOBS, (back - stopped) / 1_000_000, resumedMillis);

                Map<Long, Integer> effects = effectsPerJob(ds);
                assertThat(effects.keySet()).as("no job lost").containsExactlyInAnyOrderElementsOf(ids);
                assertThat(effects.values()).as("no effect committed twice").allMatch(n -> n == 1);
                assertThat(jobs.admin().countByState("q")).containsEntry(JobState.SUCCEEDED, (long) JOBS)
                        .containsEntry(JobState.DEAD, 0L);
            } finally {
                for (WorkerPool p : pools) {
                    p.shutdown(Duration.ofSeconds(10));
                }
            }
        }
    }

    /** For a stalled run: who holds the unfinished jobs, and until when (database clock, epoch ms). */
    private static String leases(DataSource ds) throws Exception {
        StringBuilder out = new StringBuilder("[now ").append(System.currentTimeMillis());
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT state, locked_by, attempt, lease_until, run_at, COUNT(*) FROM stagger_jobs"
                     + " WHERE state NOT IN ('SUCCEEDED') GROUP BY 1, 2, 3, 4, 5 ORDER BY 6 DESC LIMIT 10")) {
            while (rs.next()) {
                out.append("; ").append(rs.getString(1)).append(" by ").append(rs.getString(2)).append(" attempt ")
                        .append(rs.getInt(3)).append(" lease ").append(rs.getObject(4)).append(" run_at ")
                        .append(rs.getLong(5)).append(" x").append(rs.getLong(6));
            }
        }
        return out.append(']').toString();
    }

    private static long effects(DataSource ds) throws Exception {
        return Stores.count(ds, "SELECT COUNT(*) FROM effects");
    }

    private static Map<Long, Integer> effectsPerJob(DataSource ds) throws Exception {
        Map<Long, Integer> out = new TreeMap<>();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT job_id, COUNT(*) FROM effects GROUP BY job_id")) {
            while (rs.next()) {
                out.put(rs.getLong(1), rs.getInt(2));
            }
        }
        return out;
    }
}
