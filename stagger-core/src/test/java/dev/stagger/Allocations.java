package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;

/** Bytes a piece of code allocates, read from the JVM's per-thread allocation counter. */
final class Allocations {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static final int ROUNDS = 200_000;

    private Allocations() {
    }

    /** Fails the test unless this JVM counts allocation per thread, and turns the counting on. */
    static void requireMeasurable() {
        assertThat(THREADS.isThreadAllocatedMemorySupported()).as("this JVM measures allocation per thread").isTrue();
        THREADS.setThreadAllocatedMemoryEnabled(true);
    }

    /**
     * As {@link #bytesPerCall}, while calls keep no frames ({@link Ambient}): the mode of a process
     * in which no call has needed them (no deadline, no refused nesting, no scope), which an earlier
     * test class in the same JVM may have left behind. The mode is restored afterwards.
     */
    static long bytesPerCallWithoutFrames(Runnable call) {
        boolean framed = Ambient.framed();
        Ambient.framed(false);
        try {
            return bytesPerCall(call);
        } finally {
            Ambient.framed(framed);
        }
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
