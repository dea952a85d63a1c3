package dev.stagger.benchmarks.jobs;

import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * What one system did in one run: how fast it drained a backlog, and how long single jobs
 * waited between enqueue and start when the workers were idle.
 */
final class Measurement {
    /** Collects the enqueue→start latencies of the latency phase, one slot per job. */
    static final class Latencies {
        private final long[] nanos;
        private final CountDownLatch done;

        Latencies(int n) {
            nanos = new long[n];
            done = new CountDownLatch(n);
        }

        /** Called by a handler as it starts: payload "index:enqueueNanoTime". */
        void started(String payload) {
            long now = System.nanoTime();
            int colon = payload.indexOf(':');
            int index = Integer.parseInt(payload.substring(0, colon));
            nanos[index] = now - Long.parseLong(payload.substring(colon + 1));
            done.countDown();
        }

        boolean await(long seconds) throws InterruptedException {
            return done.await(seconds, TimeUnit.SECONDS);
        }

        double percentileMillis(double p) {
            long[] sorted = nanos.clone();
            Arrays.sort(sorted);
            int rank = (int) Math.ceil(p * sorted.length) - 1;
            return sorted[Math.max(0, rank)] / 1e6;
        }
    }

    final String system;
    final String database;
    final int jobs;
    final int workers;
    double enqueueSeconds;
    double drainSeconds;
    double latencyP50Millis;
    double latencyP99Millis;

    Measurement(String system, String database, int jobs, int workers) {
        this.system = system;
        this.database = database;
        this.jobs = jobs;
        this.workers = workers;
    }

    double jobsPerSecond() {
        return jobs / drainSeconds;
    }

    String row() {
        return String.format(Locale.ROOT, "| %s | %s | %d | %d | %.1f | %,.0f | %.1f | %.1f |", system, database, jobs,
                workers, enqueueSeconds, jobsPerSecond(), latencyP50Millis, latencyP99Millis);
    }

    static String header() {
        return "| system | database | jobs | workers | enqueue s | drain jobs/s | enqueue→start p50 ms | p99 ms |\n"
                + "|---|---|---|---|---|---|---|---|";
    }
}
