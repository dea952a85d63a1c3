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
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.sql.DataSource;

/**
 * Job queue throughput harness (not a unit test, not JMH: one long run per system and round).
 * For each system: enqueue a backlog of no-op jobs in bulk, start N workers, time the drain
 * (jobs/s); then, with the workers idle, enqueue single jobs at a steady rate and record
 * enqueue→start latency. stagger-jobs runs on PostgreSQL and SQLite; db-scheduler (lock-and-fetch)
 * and Quartz (JDBC job store) on the same PostgreSQL in the same run. Each round runs every system
 * once, in turn, so a change in the machine's load touches all of them; the summary gives, per
 * system, the median over rounds with the min..max, and the ratios of stagger-jobs on PostgreSQL
 * to each anchor (median of the per-round ratios, with their min..max). Tables get unique names
 * and are dropped afterwards.
 *
 * <p>Arguments (all optional): {@code --jobs 50000 --workers 8 --batch 8 (stagger-jobs claim batch)
 * --latency-jobs 500 --latency-rate 50 --rounds 3 --warmup-rounds 1 (run, printed, not counted)
 * --quartz-jobs 5000 (Quartz's backlog, at most --jobs)
 * --succeeded delete (stagger-jobs deletes each success, as db-scheduler and Quartz delete a finished
 * one-time job; keep: keeps them as SUCCEEDED, the store's default)
 * --systems stagger-pg,db-scheduler,quartz,stagger-sqlite
 * --pg-url jdbc:postgresql://127.0.0.1:5432/test --pg-user postgres --pg-password ""}.
 */
public final class JobsThroughput {
    static final String STAGGER_PG = "stagger-pg";
    static final String DB_SCHEDULER = "db-scheduler";
    static final String QUARTZ = "quartz";
    static final String STAGGER_SQLITE = "stagger-sqlite";
    private static final List<String> SYSTEMS = List.of(STAGGER_PG, DB_SCHEDULER, QUARTZ, STAGGER_SQLITE);

    private JobsThroughput() {
    }

    public static void main(String[] args) throws Exception {
        HarnessArgs arguments = new HarnessArgs(args);
        int jobs = arguments.positive("--jobs", 50_000);
        int workers = arguments.positive("--workers", 8);
        int latencyJobs = arguments.positive("--latency-jobs", 500);
        int latencyRate = arguments.positive("--latency-rate", 50);
        int batch = arguments.positive("--batch", workers);
        int rounds = arguments.positive("--rounds", 3);
        // unmeasured rounds first, every system alike: the first drain of a JVM runs partly interpreted
        int warmupRounds = arguments.nonNegative("--warmup-rounds", 1);
        // Quartz drains two orders of magnitude slower: its own, smaller backlog keeps a round within minutes
        int quartzJobs = arguments.positive("--quartz-jobs", Math.min(jobs, 5_000));
        String succeeded = arguments.text("--succeeded", "delete");
        if (!succeeded.equals("delete") && !succeeded.equals("keep")) {
            throw new IllegalArgumentException("--succeeded must be delete or keep, got " + succeeded);
        }
        boolean keep = succeeded.equals("keep");
        List<String> systems = Arrays.asList(arguments.text("--systems", String.join(",", SYSTEMS)).split(","));
        for (String s : systems) {
            if (!SYSTEMS.contains(s)) {
                throw new IllegalArgumentException("--systems must be among " + SYSTEMS + ", got " + s);
            }
        }
        String pgUrl = arguments.text("--pg-url", "jdbc:postgresql://127.0.0.1:5432/test");
        String pgUser = arguments.text("--pg-user", "postgres");
        String pgPassword = arguments.text("--pg-password", "");

        Map<String, List<Measurement>> results = new LinkedHashMap<>();
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(pgUrl);
        config.setUsername(pgUser);
        config.setPassword(pgPassword);
        config.setMaximumPoolSize(workers + 8);
        config.setPoolName("jobs-throughput");
        config.addDataSourceProperty("ApplicationName", CpuMeter.APPLICATION_NAME);
        try (HikariDataSource pg = new HikariDataSource(config)) {
            for (int i = 0; i < warmupRounds + rounds; i++) {
                boolean counted = i >= warmupRounds;
                String suffix = Long.toString(System.currentTimeMillis(), 36) + "r" + (i + 1);
                for (String system : systems) {
                    if (counted) {
                        System.out.printf(Locale.ROOT, "round %d/%d: %s ...%n", i - warmupRounds + 1, rounds, system);
                    } else {
                        System.out.printf(Locale.ROOT, "warm-up round %d/%d (not counted): %s ...%n", i + 1,
                                warmupRounds, system);
                    }
                    Measurement m = runOne(system, pg, suffix, system.equals(QUARTZ) ? quartzJobs : jobs, workers,
                            latencyJobs, latencyRate, batch, keep);
                    System.out.println(m.row());
                    if (counted) {
                        results.computeIfAbsent(system, k -> new ArrayList<>()).add(m);
                    }
                }
            }
        }

        System.out.println();
        System.out.printf(Locale.ROOT, "Each row: the median of %d round(s) after %d warm-up round(s), [min..max] below it.%n",
                rounds, warmupRounds);
        System.out.println(Measurement.header());
        results.values().forEach(ms -> {
            System.out.println(Measurement.medianRow(ms));
            System.out.println(Measurement.spreadRow(ms));
        });
        List<Measurement> stagger = results.get(STAGGER_PG);
        if (stagger != null) {
            for (String anchor : List.of(DB_SCHEDULER, QUARTZ)) {
                List<Measurement> other = results.get(anchor);
                if (other != null) {
                    double[] ratios = new double[stagger.size()];
                    for (int i = 0; i < ratios.length; i++) {
                        ratios[i] = stagger.get(i).jobsPerSecond() / other.get(i).jobsPerSecond();
                    }
                    System.out.printf(Locale.ROOT, "stagger-jobs / %s drain throughput on PostgreSQL: %.2fx [%.2fx..%.2fx]"
                            + " (median of per-round ratios [min..max])%n", other.get(0).system, Measurement.median(ratios),
                            Arrays.stream(ratios).min().orElseThrow(), Arrays.stream(ratios).max().orElseThrow());
                }
            }
        }
        System.out.printf(Locale.ROOT, "jvm %s, %d cpus, load average at the end %.2f%n", System.getProperty("java.version"),
                Runtime.getRuntime().availableProcessors(),
                java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }

    private static Measurement runOne(String system, DataSource pg, String suffix, int jobs, int workers, int latencyJobs,
                                      int latencyRate, int batch, boolean keep) throws Exception {
        switch (system) {
            case STAGGER_PG -> {
                String prefix = "bench_jobs_" + suffix + "_";
                try {
                    return StaggerJobsRun.run("PostgreSQL", pg, prefix, jobs, workers, latencyJobs, latencyRate, batch, keep);
                } finally {
                    // the run's prefix covers every table the store made, its schema-version table included
                    drop(pg, prefix + "jobs", prefix + "job_errors", prefix + "schema_version");
                }
            }
            case DB_SCHEDULER -> {
                String table = "bench_dbs_" + suffix;
                try {
                    return DbSchedulerRun.run(pg, table, jobs, workers, latencyJobs, latencyRate);
                } finally {
                    drop(pg, table);
                }
            }
            case QUARTZ -> {
                String prefix = "bench_qrtz_" + suffix + "_";
                try {
                    return QuartzRun.run(pg, prefix, jobs, workers, latencyJobs, latencyRate);
                } finally {
                    QuartzRun.dropTables(pg, prefix);
                }
            }
            default -> {
                Path dir = Files.createTempDirectory("stagger-jobs-bench");
                try {
                    DataSource sqlite = SqliteDataSource.file(dir.resolve("jobs.db"));
                    return StaggerJobsRun.run("SQLite", sqlite, "bench_", jobs, workers, latencyJobs, latencyRate, batch, keep);
                } finally {
                    try (var files = Files.walk(dir)) {
                        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                    }
                }
            }
        }
    }

    static void drop(DataSource ds, String... tables) throws Exception {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            for (String t : tables) {
                s.execute("DROP TABLE IF EXISTS " + t);
            }
        }
    }
}
