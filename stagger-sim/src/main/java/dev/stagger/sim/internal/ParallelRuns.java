package dev.stagger.sim.internal;

import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import java.util.function.ObjIntConsumer;

/**
 * Runs independent simulation runs on the machine's cores and hands their results back in run
 * order, on the calling thread. Runs share nothing (each has its own seed, event loop and retry
 * engine), and their results are combined in the same order as one thread would combine them, so
 * the outcome is the same to the last bit whatever the number of threads.
 *
 * <p>At most {@code 2 x threads} results wait to be combined at any time, so memory does not grow
 * with the number of runs.
 */
public final class ParallelRuns {
    private static final AtomicInteger POOLS = new AtomicInteger();

    private ParallelRuns() {
    }

    /**
     * Computes {@code run.apply(i)} for {@code i} in {@code [0, count)}, on up to one thread per
     * core, and passes each result to {@code combine} in order of {@code i}, on the calling thread.
     *
     * @throws CancellationException if the calling thread is interrupted while waiting (its
     *     interrupt status is kept)
     */
    public static <T> void inOrder(int count, IntFunction<T> run, ObjIntConsumer<T> combine) {
        int threads = Math.min(Runtime.getRuntime().availableProcessors(), count);
        if (threads <= 1) {
            for (int i = 0; i < count; i++) {
                combine.accept(run.apply(i), i);
            }
            return;
        }
        int pool = POOLS.incrementAndGet();
        AtomicInteger threadNumber = new AtomicInteger();
        ExecutorService executor = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "stagger-sim-" + pool + "-" + threadNumber.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        int window = 2 * threads;
        @SuppressWarnings("unchecked")
        Future<T>[] pending = (Future<T>[]) new Future<?>[window];
        try {
            int submitted = 0;
            for (; submitted < Math.min(window, count); submitted++) {
                int i = submitted;
                pending[i % window] = executor.submit(() -> run.apply(i));
            }
            for (int i = 0; i < count; i++) {
                T result = await(pending[i % window]);
                if (submitted < count) {
                    int next = submitted++;
                    pending[next % window] = executor.submit(() -> run.apply(next));
                }
                combine.accept(result, i);
            }
        } finally {
            executor.shutdownNow();
        }
    }

    private static <T> T await(Future<T> future) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CancellationException("interrupted while waiting for a simulation run");
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException) {
                throw (RuntimeException) cause;
            }
            if (cause instanceof Error) {
                throw (Error) cause;
            }
            throw new IllegalStateException(cause);
        }
    }
}
