package dev.stagger.spring.internal;

import dev.stagger.AttemptTimeoutException;
import dev.stagger.Clock;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * One blocking attempt bounded by its timeout, for clients whose requests take no timeout of their
 * own (a {@code RestClient} or {@code RestTemplate} call goes through whatever request factory the
 * application chose, and Spring has no per-request read timeout). The attempt runs on a thread of
 * its own while the caller waits on a future that the clock's timer fails with an
 * {@link AttemptTimeoutException} once the timeout is over: the caller's attempt then ends, the
 * attempt's thread is interrupted (the JDK client's exchange is cancelled and its connection
 * closed), and a response that still arrives is closed, so no connection stays leased to an
 * attempt nobody waits for. A client whose blocking read ignores interrupts (HttpURLConnection,
 * Apache's classic client) keeps its thread until its own read timeout; the caller does not wait
 * for it.
 *
 * <p>Attempt threads are virtual where the JDK has them (21+), else daemon threads of a cached
 * pool. What a thread carries (a transaction, the security context) is not on the attempt's
 * thread; trace context travels in the request's headers, set before the attempt starts.
 */
final class TimedAttempt {
    private static final ExecutorService THREADS = threads();

    private TimedAttempt() {
    }

    /**
     * Runs {@code attempt}, waiting up to {@code timeout} on {@code clock}.
     *
     * @param number the attempt's number, for the timeout's message
     * @param discard releases a result that arrives after the caller stopped waiting
     * @throws AttemptTimeoutException when the attempt ran past {@code timeout}
     */
    static <R> R run(Callable<R> attempt, Duration timeout, int number, Clock clock, Consumer<R> discard)
            throws Exception {
        CompletableFuture<R> answer = new CompletableFuture<>();
        Future<?> running = THREADS.submit(() -> {
            try {
                R result = attempt.call();
                if (!answer.complete(result) && result != null) {
                    discard.accept(result); // too late: nobody reads it
                }
            } catch (Throwable t) {
                answer.completeExceptionally(t);
            }
        });
        Clock.Cancellable timer = clock.schedule(
                () -> answer.completeExceptionally(new AttemptTimeoutException(number, timeout)), timeout.toNanos());
        try {
            return answer.get();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Exception) {
                throw (Exception) cause;
            }
            throw (Error) cause;
        } catch (InterruptedException e) {
            answer.cancel(false);
            throw e;
        } finally {
            timer.cancel();
            if (!answer.isDone() || answer.isCompletedExceptionally()) {
                running.cancel(true); // abandoned: abort what can be aborted
            }
        }
    }

    private static ExecutorService threads() {
        try { // Executors.newVirtualThreadPerTaskExecutor() on JDK 21+, found at run time (compiled for 17)
            return (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        } catch (ReflectiveOperationException | RuntimeException e) {
            AtomicInteger count = new AtomicInteger();
            return Executors.newCachedThreadPool(task -> {
                Thread t = new Thread(task, "stagger-http-attempt-" + count.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
        }
    }
}
