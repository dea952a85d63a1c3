package dev.stagger;

import java.lang.management.ManagementFactory;

/** Bytes the test thread allocates per run of some code, for the tests of paths that must allocate nothing. */
final class Allocation {
    private static final int ROUNDS = 200_000;
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private Allocation() {
    }

    /** Whether this JVM measures allocation per thread (turned on as a side effect). */
    static boolean measurable() {
        if (!THREADS.isThreadAllocatedMemorySupported()) {
            return false;
        }
        THREADS.setThreadAllocatedMemoryEnabled(true);
        return true;
    }

    /** Bytes allocated by the current thread per run of {@code call}, after as many runs to warm up. */
    static long bytesPerCall(Runnable call) {
        for (int i = 0; i < ROUNDS; i++) {
            call.run(); // warm up, so the measurement sees compiled code
        }
        long tid = Thread.currentThread().getId();
        long before = THREADS.getThreadAllocatedBytes(tid);
        for (int i = 0; i < ROUNDS; i++) {
            call.run();
        }
        return (THREADS.getThreadAllocatedBytes(tid) - before) / ROUNDS;
    }
}
