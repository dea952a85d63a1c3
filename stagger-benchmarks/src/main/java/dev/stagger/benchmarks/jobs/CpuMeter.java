package dev.stagger.benchmarks.jobs;

import dev.stagger.benchmarks.harness.CpuProbe;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * CPU time spent during a phase by this JVM and by the PostgreSQL backends serving it (found by
 * the harness's {@code ApplicationName}, read from {@code /proc}, so only for a database on this
 * host). On a machine shared with other work, wall-clock throughput moves with the load while CPU
 * time per job mostly does not: it is the figure to compare two versions of the code with.
 */
final class CpuMeter {
    static final String APPLICATION_NAME = "stagger-jobs-throughput";
    private static final long TICKS_PER_SECOND = 100; // USER_HZ on Linux

    private final DataSource pg;
    private final long jvmStart;
    private final long dbStart;

    private CpuMeter(DataSource pg) {
        this.pg = pg;
        this.jvmStart = CpuProbe.processNanos();
        this.dbStart = dbNanos(pg);
    }

    /** Starts measuring; {@code pg} null for a run with no PostgreSQL (SQLite runs in this JVM). */
    static CpuMeter start(DataSource pg) {
        return new CpuMeter(pg);
    }

    /** Records in {@code m} the CPU microseconds per job since the start: this JVM's and the database backends'. */
    void stop(Measurement m, int jobs) {
        long jvm = CpuProbe.processNanos() - jvmStart;
        long db = pg == null ? 0 : dbNanos(pg) - dbStart;
        if (jvmStart >= 0 && jvm >= 0 && dbStart >= 0 && db >= 0) {
            m.jvmMicrosPerJob = jvm / 1e3 / jobs;
            if (pg != null) { // SQLite works inside this JVM: its CPU is in the JVM's figure
                m.dbMicrosPerJob = db / 1e3 / jobs;
            }
        }
    }

    private static long dbNanos(DataSource pg) {
        if (pg == null) {
            return 0;
        }
        List<Integer> pids = new ArrayList<>();
        try (Connection c = pg.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT pid FROM pg_stat_activity WHERE application_name = '"
                     + APPLICATION_NAME + "'")) {
            while (rs.next()) {
                pids.add(rs.getInt(1));
            }
        } catch (SQLException e) {
            return -1;
        }
        long ticks = 0;
        for (int pid : pids) {
            try {
                String stat = Files.readString(Path.of("/proc", Integer.toString(pid), "stat"));
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime (fields 14, 15)
            } catch (Exception e) {
                return -1; // not on this host, or gone
            }
        }
        return ticks * (1_000_000_000L / TICKS_PER_SECOND);
    }
}
