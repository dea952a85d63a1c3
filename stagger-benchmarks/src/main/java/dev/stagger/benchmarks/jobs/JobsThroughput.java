package dev.stagger.benchmarks.jobs;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.stagger.benchmarks.HarnessArgs;
import dev.stagger.jdbc.SqliteDataSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.sql.DataSource;

/**
 * Job queue throughput harness (not a unit test, not JMH: one long run per system). For each
 * system: enqueue a backlog of no-op jobs, start N workers, time the drain (jobs/s); then, with
 * the workers idle, enqueue single jobs at a steady rate and record enqueue→start latency.
 * stagger-jobs runs on PostgreSQL and SQLite; db-scheduler (lock-and-fetch) on the same
 * PostgreSQL in the same run. Tables get unique names and are dropped afterwards.
 *
 * <p>Arguments (all optional): {@code --jobs 50000 --workers 8 --batch 8 (stagger-jobs claim batch)
 * --latency-jobs 500 --latency-rate 50
 * --pg-url jdbc:postgresql://127.0.0.1:5432/test --pg-user postgres --pg-password ""}.
 */
public final class JobsThroughput {
    private JobsThroughput() {
    }

    public static void main(String[] args) throws Exception {
        HarnessArgs arguments = new HarnessArgs(args);
        int jobs = arguments.positive("--jobs", 50_000);
        int workers = arguments.positive("--workers", 8);
        int latencyJobs = arguments.positive("--latency-jobs", 500);
        int latencyRate = arguments.positive("--latency-rate", 50);
        int batch = arguments.positive("--batch", workers);
        String pgUrl = arguments.text("--pg-url", "jdbc:postgresql://127.0.0.1:5432/test");
        String pgUser = arguments.text("--pg-user", "postgres");
        String pgPassword = arguments.text("--pg-password", "");
        String suffix = Long.toString(System.currentTimeMillis(), 36);

        List<Measurement> results = new ArrayList<>();
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(pgUrl);
        config.setUsername(pgUser);
        config.setPassword(pgPassword);
        config.setMaximumPoolSize(workers + 6);
        config.setPoolName("jobs-throughput");
        try (HikariDataSource pg = new HikariDataSource(config)) {
            String prefix = "bench_jobs_" + suffix + "_";
            String dbsTable = "bench_dbs_" + suffix;
            try {
                System.out.println("stagger-jobs on PostgreSQL ...");
                results.add(StaggerJobsRun.run("PostgreSQL", pg, prefix, jobs, workers, latencyJobs, latencyRate, batch));
                System.out.println("db-scheduler on PostgreSQL ...");
                results.add(DbSchedulerRun.run(pg, dbsTable, jobs, workers, latencyJobs, latencyRate));
            } finally {
                // the run's prefix covers every table the store made, its schema-version table included
                drop(pg, prefix + "jobs", prefix + "job_errors", prefix + "schema_version", dbsTable);
            }
        }
        Path dir = Files.createTempDirectory("stagger-jobs-bench");
        try {
            System.out.println("stagger-jobs on SQLite ...");
            DataSource sqlite = SqliteDataSource.file(dir.resolve("jobs.db"));
            results.add(StaggerJobsRun.run("SQLite", sqlite, "bench_", jobs, workers, latencyJobs, latencyRate, batch));
        } finally {
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }

        System.out.println();
        System.out.println(Measurement.header());
        results.forEach(r -> System.out.println(r.row()));
        double ratio = results.get(0).jobsPerSecond() / results.get(1).jobsPerSecond();
        System.out.printf(Locale.ROOT, "%nstagger-jobs / db-scheduler drain throughput on PostgreSQL: %.2fx%n", ratio);
        System.out.printf(Locale.ROOT, "jvm %s, %d cpus%n", System.getProperty("java.version"),
                Runtime.getRuntime().availableProcessors());
    }

    private static void drop(DataSource ds, String... tables) throws Exception {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            for (String t : tables) {
                s.execute("DROP TABLE IF EXISTS " + t);
            }
        }
    }
}
