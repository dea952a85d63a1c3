package dev.stagger.benchmarks.jobs;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.quartz.Job;
import org.quartz.JobBuilder;
import org.quartz.JobDetail;
import org.quartz.JobExecutionContext;
import org.quartz.Scheduler;
import org.quartz.Trigger;
import org.quartz.TriggerBuilder;
import org.quartz.impl.StdSchedulerFactory;
import org.quartz.utils.ConnectionProvider;

/**
 * The same workload on Quartz 2.5 with its JDBC job store ({@code JobStoreTX}, PostgreSQL
 * delegate, clustered, so a dead node's jobs are recovered as the other systems' are): one
 * non-durable job and one fire-once trigger per job, the same number of threads, trigger
 * acquisition batched up to the thread count. Its tables come from the DDL Quartz ships, under a
 * prefix of our own.
 */
final class QuartzRun {
    /** The harness's pool, handed to Quartz through {@link Provider} (Quartz instantiates providers itself). */
    private static volatile DataSource shared;
    /** Where the running jobs report; one run at a time. */
    private static volatile Sink sink;

    private QuartzRun() {
    }

    private record Sink(CountDownLatch drained, Measurement.Latencies latencies) {
    }

    /** Runs one job: counts a backlog job, or records a latency job's enqueue→start. */
    public static final class NoopJob implements Job {
        @Override
        public void execute(JobExecutionContext context) {
            String payload = context.getMergedJobDataMap().getString("p");
            if (payload.equals("t")) {
                sink.drained().countDown();
            } else {
                sink.latencies().started(payload);
            }
        }
    }

    /** Quartz's connections: the harness's shared pool. */
    public static final class Provider implements ConnectionProvider {
        @Override
        public Connection getConnection() throws SQLException {
            return shared.getConnection();
        }

        @Override
        public void shutdown() {
            // the harness closes the pool
        }

        @Override
        public void initialize() {
            // nothing to set up
        }
    }

    /** Quartz's PostgreSQL tables from the DDL it ships, {@code QRTZ_} replaced by {@code prefix}. */
    static void createTables(DataSource ds, String prefix) throws SQLException, IOException {
        String ddl;
        try (InputStream in = Job.class.getResourceAsStream("/org/quartz/impl/jdbcjobstore/tables_postgres.sql")) {
            if (in == null) {
                throw new IllegalStateException("tables_postgres.sql is not in the Quartz jar");
            }
            ddl = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        StringBuilder sql = new StringBuilder();
        for (String line : ddl.split("\n")) {
            if (!line.trim().startsWith("--")) {
                sql.append(line).append('\n');
            }
        }
        String prefixed = Pattern.compile("qrtz_", Pattern.CASE_INSENSITIVE).matcher(sql).replaceAll(prefix);
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            for (String statement : prefixed.split(";")) {
                String trimmed = statement.trim();
                if (!trimmed.isEmpty() && !trimmed.equalsIgnoreCase("commit")) {
                    s.execute(trimmed);
                }
            }
        }
    }

    static void dropTables(DataSource ds, String prefix) throws Exception {
        JobsThroughput.drop(ds, prefix + "fired_triggers", prefix + "paused_trigger_grps", prefix + "scheduler_state",
                prefix + "locks", prefix + "simple_triggers", prefix + "cron_triggers", prefix + "simprop_triggers",
                prefix + "blob_triggers", prefix + "triggers", prefix + "job_details", prefix + "calendars");
    }

    static Measurement run(DataSource ds, String prefix, int jobs, int workers, int latencyJobs, int latencyRate)
            throws Exception {
        Measurement m = new Measurement("Quartz 2.5.2 (JDBC)", "PostgreSQL", jobs, workers);
        createTables(ds, prefix);
        shared = ds;
        CountDownLatch drained = new CountDownLatch(jobs);
        Measurement.Latencies latencies = new Measurement.Latencies(latencyJobs);
        sink = new Sink(drained, latencies);
        Scheduler scheduler = new StdSchedulerFactory(properties(prefix, workers)).getScheduler();
        try {
            long t0 = System.nanoTime();
            Map<JobDetail, Set<? extends Trigger>> batch = new LinkedHashMap<>();
            Date now = new Date();
            for (int i = 0; i < jobs; i++) {
                batch.put(job("t" + i, "t"), Set.of(trigger("t" + i, now)));
                if (batch.size() == 1000 || i == jobs - 1) {
                    scheduler.scheduleJobs(batch, false);
                    batch.clear();
                }
            }
            m.enqueueSeconds = (System.nanoTime() - t0) / 1e9;

            long start = System.nanoTime();
            CpuMeter cpu = CpuMeter.start(ds);
            scheduler.start();
            if (!drained.await(15, TimeUnit.MINUTES)) {
                throw new IllegalStateException("Quartz did not drain " + jobs + " jobs in 15 minutes");
            }
            m.drainSeconds = (System.nanoTime() - start) / 1e9;
            cpu.stop(m, jobs);
            // through the running scheduler, which wakes its scheduling thread at once
            latencies.measure(m, latencyRate, (i, payload) -> scheduler.scheduleJob(job("l" + i, payload),
                    trigger("l" + i, new Date())));
        } finally {
            scheduler.shutdown(true);
        }
        return m;
    }

    private static JobDetail job(String name, String payload) {
        return JobBuilder.newJob(NoopJob.class).withIdentity(name).usingJobData("p", payload).build();
    }

    private static Trigger trigger(String name, Date at) {
        return TriggerBuilder.newTrigger().withIdentity(name).startAt(at).build();
    }

    private static Properties properties(String prefix, int workers) {
        Properties p = new Properties();
        p.setProperty("org.quartz.scheduler.instanceName", prefix + "scheduler");
        p.setProperty("org.quartz.scheduler.instanceId", "AUTO");
        p.setProperty("org.quartz.scheduler.skipUpdateCheck", "true");
        p.setProperty("org.quartz.scheduler.batchTriggerAcquisitionMaxCount", Integer.toString(workers));
        p.setProperty("org.quartz.threadPool.threadCount", Integer.toString(workers));
        p.setProperty("org.quartz.jobStore.class", "org.quartz.impl.jdbcjobstore.JobStoreTX");
        p.setProperty("org.quartz.jobStore.driverDelegateClass", "org.quartz.impl.jdbcjobstore.PostgreSQLDelegate");
        p.setProperty("org.quartz.jobStore.tablePrefix", prefix);
        p.setProperty("org.quartz.jobStore.isClustered", "true");
        p.setProperty("org.quartz.jobStore.acquireTriggersWithinLock", "true");
        // a backlog older than the default 60 s would take Quartz's misfire path instead of the normal one
        p.setProperty("org.quartz.jobStore.misfireThreshold", Long.toString(TimeUnit.HOURS.toMillis(1)));
        p.setProperty("org.quartz.jobStore.dataSource", "bench");
        p.setProperty("org.quartz.dataSource.bench.connectionProvider.class", Provider.class.getName());
        return p;
    }
}
