package dev.stagger.benchmarks.jobs;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

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

        /** Enqueues one latency job, with the payload {@code payload}. */
        @FunctionalInterface
        interface Enqueue {
            void enqueue(int index, String payload) throws Exception;
        }

        /**
         * The latency phase: after the workers have gone idle, enqueues one job at a time at
         * {@code rate} per second (payload "index:enqueueNanoTime"), waits for them all and records
         * p50 and p99 in {@code m}.
         */
        void measure(Measurement m, int rate, Enqueue enqueue) throws Exception {
            Thread.sleep(1500); // let the workers go idle
            long gapNanos = 1_000_000_000L / rate;
            long next = System.nanoTime();
            for (int i = 0; i < nanos.length; i++) {
                enqueue.enqueue(i, i + ":" + System.nanoTime());
                next += gapNanos;
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);
                }
            }
            if (!await(120)) {
                throw new IllegalStateException(m.system + " did not run the latency jobs in 2 minutes");
            }
            m.latencyP50Millis = percentileMillis(0.50);
            m.latencyP99Millis = percentileMillis(0.99);
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
    /** CPU time of the drain per job in this JVM, and in the database's backends (0 for SQLite, in this JVM); NaN when unknown. */
    double jvmMicrosPerJob = Double.NaN;
    double dbMicrosPerJob = Double.NaN;

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
        return String.format(Locale.ROOT, "| %s | %s | %d | %d | %.1f | %,.0f | %.1f | %.1f | %s | %s |", system, database,
                jobs, workers, enqueueSeconds, jobsPerSecond(), latencyP50Millis, latencyP99Millis, micros(jvmMicrosPerJob),
                micros(dbMicrosPerJob));
    }

    /** One row of medians over rounds. */
    static String medianRow(List<Measurement> ms) {
        Measurement first = ms.get(0);
        return String.format(Locale.ROOT, "| %s | %s | %d | %d | %.1f | %,.0f | %.1f | %.1f | %s | %s |", first.system,
                first.database, first.jobs, first.workers, median(ms, m -> m.enqueueSeconds),
                median(ms, Measurement::jobsPerSecond), median(ms, m -> m.latencyP50Millis),
                median(ms, m -> m.latencyP99Millis), micros(median(ms, m -> m.jvmMicrosPerJob)),
                micros(median(ms, m -> m.dbMicrosPerJob)));
    }

    /** The min..max over rounds of each figure of {@link #medianRow}. */
    static String spreadRow(List<Measurement> ms) {
        return String.format(Locale.ROOT, "|   | spread over %d | | | %s | %s | %s | %s | %s | %s |", ms.size(),
                spread(ms, m -> m.enqueueSeconds, "%.1f"), spread(ms, Measurement::jobsPerSecond, "%,.0f"),
                spread(ms, m -> m.latencyP50Millis, "%.1f"), spread(ms, m -> m.latencyP99Millis, "%.1f"),
                spread(ms, m -> m.jvmMicrosPerJob, "%.0f"), spread(ms, m -> m.dbMicrosPerJob, "%.0f"));
    }

    private static double median(List<Measurement> ms, ToDoubleFunction<Measurement> f) {
        return median(ms.stream().mapToDouble(f).toArray());
    }

    /** A CPU figure, or a dash where none was measured (the database's, for SQLite). */
    private static String micros(double value) {
        return Double.isNaN(value) ? "—" : String.format(Locale.ROOT, "%.0f", value);
    }

    private static String spread(List<Measurement> ms, ToDoubleFunction<Measurement> f, String format) {
        double[] xs = ms.stream().mapToDouble(f).toArray();
        if (Arrays.stream(xs).anyMatch(Double::isNaN)) {
            return "";
        }
        return String.format(Locale.ROOT, format + ".." + format, Arrays.stream(xs).min().orElseThrow(),
                Arrays.stream(xs).max().orElseThrow());
    }

    /** The median (the mean of the two middle values for an even count). */
    static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    static String header() {
        return "| system | database | jobs | workers | enqueue s | drain jobs/s | enqueue→start p50 ms | p99 ms"
                + " | drain CPU µs/job: JVM | database |\n|---|---|---|---|---|---|---|---|---|---|";
    }
}
