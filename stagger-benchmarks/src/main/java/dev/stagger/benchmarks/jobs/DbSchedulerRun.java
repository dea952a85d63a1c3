package dev.stagger.benchmarks.jobs;

import com.github.kagkarlsson.scheduler.Scheduler;
import com.github.kagkarlsson.scheduler.SchedulerClient;
import com.github.kagkarlsson.scheduler.task.TaskInstance;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * The same workload on db-scheduler, one-time tasks, lock-and-fetch polling
 * ({@code UPDATE ... FOR UPDATE SKIP LOCKED RETURNING} on PostgreSQL), same number of threads.
 */
final class DbSchedulerRun {
    private DbSchedulerRun() {
    }

    /** db-scheduler's PostgreSQL table (from its documentation), under a name of our own. */
    static void createTable(DataSource ds, String table) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + table + " (task_name TEXT NOT NULL, task_instance TEXT NOT NULL, task_data BYTEA, "
                    + "execution_time TIMESTAMP WITH TIME ZONE, picked BOOLEAN NOT NULL, picked_by TEXT, "
                    + "last_success TIMESTAMP WITH TIME ZONE, last_failure TIMESTAMP WITH TIME ZONE, consecutive_failures INT, "
                    + "last_heartbeat TIMESTAMP WITH TIME ZONE, version BIGINT NOT NULL, priority SMALLINT, state TEXT, "
                    + "PRIMARY KEY (task_name, task_instance))");
            s.execute("CREATE INDEX " + table + "_execution_time_idx ON " + table + " (execution_time)");
            s.execute("CREATE INDEX " + table + "_last_heartbeat_idx ON " + table + " (last_heartbeat)");
            s.execute("CREATE INDEX " + table + "_priority_execution_time_idx ON " + table
                    + " (priority DESC, execution_time ASC)");
        }
    }

    static Measurement run(DataSource ds, String table, int jobs, int workers, int latencyJobs, int latencyRate)
            throws Exception {
        Measurement m = new Measurement("db-scheduler 16.7.1", "PostgreSQL", jobs, workers);
        createTable(ds, table);
        CountDownLatch drained = new CountDownLatch(jobs);
        Measurement.Latencies latencies = new Measurement.Latencies(latencyJobs);
        OneTimeTask<String> task = Tasks.oneTime("noop", String.class).execute((instance, context) -> {
            String payload = instance.getData();
            if (payload.equals("t")) {
                drained.countDown();
            } else {
                latencies.started(payload);
            }
        });

        SchedulerClient client = SchedulerClient.Builder.create(ds, task).tableName(table).build();
        long t0 = System.nanoTime();
        List<TaskInstance<?>> batch = new ArrayList<>(1000);
        Instant now = Instant.now();
        for (int i = 0; i < jobs; i++) {
            batch.add(task.instance("t" + i, "t"));
            if (batch.size() == 1000 || i == jobs - 1) {
                client.scheduleBatch(batch, now);
                batch.clear();
            }
        }
        m.enqueueSeconds = (System.nanoTime() - t0) / 1e9;

        Scheduler scheduler = Scheduler.create(ds, task).tableName(table).threads(workers)
                .pollUsingLockAndFetch(0.5, 1.0).pollingInterval(Duration.ofSeconds(1))
                .enableImmediateExecution().build();
        long start = System.nanoTime();
        CpuMeter cpu = CpuMeter.start(ds);
        scheduler.start();
        try {
            if (!drained.await(15, TimeUnit.MINUTES)) {
                throw new IllegalStateException("db-scheduler did not drain " + jobs + " jobs in 15 minutes");
            }
            m.drainSeconds = (System.nanoTime() - start) / 1e9;
            cpu.stop(m, jobs);
            // scheduled through the running scheduler, so its immediate-execution shortcut applies
            latencies.measure(m, latencyRate, (i, payload) -> scheduler.schedule(task.instance("l" + i, payload),
                    Instant.now()));
        } finally {
            scheduler.stop();
        }
        return m;
    }
}
