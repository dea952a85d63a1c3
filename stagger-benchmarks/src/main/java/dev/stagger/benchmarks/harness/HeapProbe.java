package dev.stagger.benchmarks.harness;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.management.JMException;
import javax.management.ObjectName;

/**
 * Heap readings for the harnesses: live bytes after a settled full GC, and the class histogram
 * the JVM prints for {@code jcmd PID GC.class_histogram}, read in-process through the
 * {@code DiagnosticCommand} MBean.
 *
 * <p>"Settled": {@code System.gc()} (a full, stop-the-world collection with G1 unless
 * {@code -XX:+ExplicitGCInvokesConcurrent} is set) is repeated until two readings of
 * {@link MemoryMXBean#getHeapMemoryUsage()}{@code .getUsed()} agree within 16 KiB, at most 10
 * times, so finalizable or reference-queued garbage that one collection leaves is gone too.
 */
public final class HeapProbe {
    private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();
    private static final long AGREEMENT_BYTES = 16 * 1024;

    private HeapProbe() {
    }

    /** Heap bytes in use once repeated full collections stop changing the reading. */
    public static long settledUsedBytes() {
        long previous = Long.MAX_VALUE;
        for (int i = 0; i < 10; i++) {
            System.gc();
            sleepMillis(20);
            long used = MEMORY.getHeapMemoryUsage().getUsed();
            if (Math.abs(previous - used) <= AGREEMENT_BYTES) {
                return Math.min(previous, used);
            }
            previous = used;
        }
        return previous;
    }

    /** Live objects per class, as {@code jcmd GC.class_histogram} reports them (it runs a full GC). */
    public static Histogram histogram() {
        try {
            String text = (String) ManagementFactory.getPlatformMBeanServer().invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
                    new Object[] {new String[0]}, new String[] {String[].class.getName()});
            return Histogram.parse(text);
        } catch (JMException e) {
            throw new IllegalStateException("the DiagnosticCommand MBean refused GC.class_histogram", e);
        }
    }

    private static void sleepMillis(long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Instances and bytes per class name. */
    public static final class Histogram {
        private final Map<String, long[]> byClass;

        private Histogram(Map<String, long[]> byClass) {
            this.byClass = byClass;
        }

        static Histogram parse(String text) {
            Map<String, long[]> byClass = new HashMap<>();
            for (String line : text.split("\n")) {
                String[] f = line.trim().split("\\s+");
                // " 12:   3456   789012  java.util.concurrent.CompletableFuture (java.base@17.0.15)"
                if (f.length >= 4 && f[0].endsWith(":") && Character.isDigit(f[0].charAt(0))) {
                    byClass.put(f[3], new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])});
                }
            }
            return new Histogram(byClass);
        }

        /** What this histogram holds beyond {@code earlier}, class by class. */
        public Histogram minus(Histogram earlier) {
            Map<String, long[]> diff = new HashMap<>();
            byClass.forEach((name, now) -> {
                long[] then = earlier.byClass.getOrDefault(name, new long[2]);
                diff.put(name, new long[] {now[0] - then[0], now[1] - then[1]});
            });
            return new Histogram(diff);
        }

        /**
         * The {@code limit} classes holding the most bytes, as a JSON array of
         * {@code {"class", "instancesPerCall", "bytesPerCall"}} divided by {@code calls}.
         */
        public String topPerCall(long calls, int limit) {
            List<Map.Entry<String, long[]>> entries = new ArrayList<>(byClass.entrySet());
            entries.sort((a, b) -> Long.compare(b.getValue()[1], a.getValue()[1]));
            StringBuilder json = new StringBuilder("[");
            for (int i = 0; i < Math.min(limit, entries.size()); i++) {
                Map.Entry<String, long[]> e = entries.get(i);
                if (i > 0) {
                    json.append(',');
                }
                json.append(String.format(Locale.ROOT, "{\"class\":\"%s\",\"instancesPerCall\":%.2f,\"bytesPerCall\":%.1f}",
                        e.getKey().replace("\\", "\\\\").replace("\"", "\\\""), (double) e.getValue()[0] / calls,
                        (double) e.getValue()[1] / calls));
            }
            return json.append(']').toString();
        }
    }
}
