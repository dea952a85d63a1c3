package dev.stagger.http.internal;

import java.io.InterruptedIOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * One attempt of a hedged call made by a blocking client (OkHttp, Apache HttpClient classic) whose
 * reads ignore thread interrupts: the hedged call cancels a losing attempt by interrupting the thread
 * that runs it, so the exchange itself runs on a helper thread while that thread waits for it,
 * interruptibly. An interrupt cancels the exchange through the client's own handle
 * ({@code Call.cancel}, a cancellable), which frees the connection at once, and a response that still
 * arrives is released. Used only for hedged calls: other calls run on the caller's thread.
 */
public final class CancellableAttempts {
    private static final Executor HELPERS = helpers();

    private CancellableAttempts() {
    }

    /** A blocking exchange. */
    @FunctionalInterface
    public interface Exchange<R> {
        /** Sends the attempt and returns its response. */
        R send() throws Exception;
    }

    /**
     * Runs {@code exchange} on a helper thread and waits for it. If this thread is interrupted while
     * it waits, {@code cancel} is run, {@code release} is given the response should one still arrive,
     * and an {@link InterruptedIOException} is thrown with the interrupt status set again.
     */
    public static <R> R run(Exchange<R> exchange, Runnable cancel, Consumer<? super R> release) throws Exception {
        CompletableFuture<R> response = new CompletableFuture<>();
        HELPERS.execute(() -> {
            try {
                response.complete(exchange.send());
            } catch (Exception | Error e) {
                response.completeExceptionally(e);
            }
        });
        try {
            return response.get();
        } catch (InterruptedException e) {
            cancel.run();
            response.thenAccept(release);
            Thread.currentThread().interrupt();
            InterruptedIOException interrupted = new InterruptedIOException("attempt cancelled");
            interrupted.initCause(e);
            throw interrupted;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Exception failure) {
                throw failure;
            }
            throw (Error) cause;
        }
    }

    private static Executor helpers() {
        AtomicInteger serial = new AtomicInteger();
        return new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS, new SynchronousQueue<>(), task -> {
            Thread t = new Thread(task, "stagger-http-attempt-" + serial.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }
}
