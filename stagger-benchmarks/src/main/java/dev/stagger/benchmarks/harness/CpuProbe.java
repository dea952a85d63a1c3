package dev.stagger.benchmarks.harness;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.Map;

/**
 * CPU readings for the harnesses: the whole process's (every thread: the measured code's, the
 * library's own, GC and JIT), less disturbed than wall time by other work on a busy machine, and
 * each Java thread's.
 */
public final class CpuProbe {
    private CpuProbe() {
    }

    /** The CPU time all this JVM's threads have used so far, or -1 where the JVM does not report it. */
    public static long processNanos() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }

    /** The CPU time each live Java thread has used so far, by thread id (threads the JVM cannot time left out). */
    public static Map<Long, Long> threadNanos() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Map<Long, Long> cpu = new HashMap<>();
        for (long id : threads.getAllThreadIds()) {
            long t = threads.getThreadCpuTime(id);
            if (t >= 0) {
                cpu.put(id, t);
            }
        }
        return cpu;
    }
}
