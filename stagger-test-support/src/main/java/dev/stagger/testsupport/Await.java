package dev.stagger.testsupport;

import java.time.Duration;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Waiting, in a test, for what another thread (a server, a consumer, a pool) does: a condition is
 * polled until it holds, within a real-time limit ({@link #LIMIT}, 10 s, unless given). The limit
 * catches a hang; it is not a timing check, so a test never asserts how long the wait took.
 *
 * <p>The condition is checked at once, then after 1 ms, and the pause doubles up to 16 ms: a
 * condition that is nearly true costs a millisecond, and one that needs a broker round trip is not
 * asked a thousand times a second. A failure names what was awaited (or, without a description,
 * the line that waited) and the limit. Interruption ends the wait with a failure and keeps the flag.
 */
public final class Await {
    /** How long a wait lasts at most unless the caller says otherwise. */
    public static final Duration LIMIT = Duration.ofSeconds(10);

    private static final long FIRST_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long LONGEST_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(16);

    private Await() {
    }

    /** A condition that may throw (a broker query); an exception fails the wait. */
    @FunctionalInterface
    public interface Condition {
        boolean holds() throws Exception;
    }

    /** Waits until {@code condition} holds, at most {@link #LIMIT}; fails naming {@code what}. */
    public static void until(String what, Condition condition) {
        until(what, LIMIT, condition);
    }

    /** Waits until {@code condition} holds, at most {@code limit}; fails naming {@code what}. */
    public static void until(String what, Duration limit, Condition condition) {
        if (!within(limit, condition)) {
            throw new AssertionError("still waiting for " + what + " after " + limit.toMillis() + " ms");
        }
    }

    /** {@link #until(String, Duration, Condition)}, the pause growing to {@code longestPause} (see {@link #within(Duration, Duration, Condition)}). */
    public static void until(String what, Duration limit, Duration longestPause, Condition condition) {
        if (!within(limit, longestPause, condition)) {
            throw new AssertionError("still waiting for " + what + " after " + limit.toMillis() + " ms");
        }
    }

    /** Waits until {@code condition} holds, at most {@link #LIMIT}; a failure names the calling line. */
    public static void until(Condition condition) {
        if (!within(LIMIT, condition)) {
            throw new AssertionError("condition not met within " + LIMIT.toMillis() + " ms: " + caller());
        }
    }

    /**
     * Waits until {@code condition} holds or {@code limit} passes, and says which: for a test that
     * asserts on the outcome itself (the condition is checked once more at the end).
     */
    public static boolean within(Duration limit, Condition condition) {
        return within(limit, Duration.ofNanos(LONGEST_PAUSE_NANOS), condition);
    }

    /**
     * {@link #within(Duration, Condition)}, the pause growing to {@code longestPause} instead of 16 ms:
     * for a condition that is costly to check and slow to come (a server evaluating on its own schedule).
     */
    public static boolean within(Duration limit, Duration longestPause, Condition condition) {
        long deadline = System.nanoTime() + limit.toNanos();
        long pause = FIRST_PAUSE_NANOS;
        while (!check(condition)) {
            if (System.nanoTime() - deadline > 0) {
                return check(condition);
            }
            pause(pause);
            pause = Math.min(pause * 2, Math.max(FIRST_PAUSE_NANOS, longestPause.toNanos()));
        }
        return true;
    }

    /**
     * Runs the work a virtual clock holds as it appears until {@code future} is done, at most
     * {@link #LIMIT} of real time: an asynchronous call whose I/O is real and whose waits are
     * virtual. {@code pending} says whether the clock holds due work, {@code runPending} runs it
     * ({@code clock.pendingTasks() > 0}, {@code clock::runUntilIdle}).
     */
    public static void runUntilDone(Future<?> future, BooleanSupplier pending, Runnable runPending) {
        runUntilDone(future, LIMIT, pending, runPending);
    }

    /** {@link #runUntilDone(Future, BooleanSupplier, Runnable)} for at most {@code limit} of real time. */
    public static void runUntilDone(Future<?> future, Duration limit, BooleanSupplier pending, Runnable runPending) {
        long deadline = System.nanoTime() + limit.toNanos();
        long pause = FIRST_PAUSE_NANOS;
        while (!future.isDone()) {
            if (pending.getAsBoolean()) {
                runPending.run();
                pause = FIRST_PAUSE_NANOS;
            } else if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("the asynchronous call did not finish within " + limit.toMillis() + " ms: "
                        + future);
            } else {
                pause(pause);
                pause = Math.min(pause * 2, LONGEST_PAUSE_NANOS);
            }
        }
    }

    private static boolean check(Condition condition) {
        try {
            return condition.holds();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Exception e) {
            throw new AssertionError("the awaited condition failed: " + e, e);
        }
    }

    private static void pause(long nanos) {
        LockSupport.parkNanos(nanos);
        if (Thread.currentThread().isInterrupted()) {
            throw new AssertionError("interrupted while waiting");
        }
    }

    private static String caller() {
        return StackWalker.getInstance().walk(frames -> frames
                .filter(f -> !f.getClassName().equals(Await.class.getName()))
                .findFirst().map(f -> f.getClassName() + "." + f.getMethodName() + "(" + f.getFileName() + ":"
                        + f.getLineNumber() + ")").orElse("unknown"));
    }
}
