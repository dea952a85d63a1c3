package dev.stagger;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The caller's future. Stagger completes it through {@link #settle} and
 * {@link #settleExceptionally}; every public way to complete it (cancel, complete,
 * completeExceptionally, obtrude, completeAsync, and orTimeout and completeOnTimeout, which go
 * through complete and completeExceptionally) tells the execution the caller ended the call.
 * Futures made from it ({@code thenApply} and the like) are plain {@code CompletableFuture}s.
 */
final class Promise<T> extends CompletableFuture<T> {
    /** What a caller ending the call tells: the call's execution. */
    interface Owner {
        /** The caller cancelled or completed the future: the call must stop. */
        void onCallerEnded();
    }

    /** Dropped when the call ends, so a completed future kept by the caller holds no call state. */
    private @Nullable Owner execution;

    Promise(Owner execution) {
        this.execution = execution;
    }

    void settle(@Nullable T value) {
        execution = null;
        super.complete(value);
    }

    void settleExceptionally(Throwable failure) {
        execution = null;
        super.completeExceptionally(failure);
    }

    private boolean endedByCaller(boolean completedNow) {
        Owner e = execution;
        if (completedNow && e != null) {
            execution = null;
            e.onCallerEnded();
        }
        return completedNow;
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        return endedByCaller(super.cancel(mayInterruptIfRunning));
    }

    @Override
    public boolean complete(T value) {
        return endedByCaller(super.complete(value));
    }

    @Override
    public boolean completeExceptionally(Throwable ex) {
        return endedByCaller(super.completeExceptionally(ex));
    }

    @Override
    public void obtrudeValue(T value) {
        super.obtrudeValue(value);
        endedByCaller(true);
    }

    @Override
    public void obtrudeException(Throwable ex) {
        super.obtrudeException(ex);
        endedByCaller(true);
    }

    @Override
    public CompletableFuture<T> completeAsync(Supplier<? extends T> supplier, Executor executor) {
        if (supplier == null || executor == null) {
            throw new NullPointerException();
        }
        executor.execute(() -> {
            T value;
            try {
                value = supplier.get();
            } catch (Throwable t) {
                completeExceptionally(t);
                return;
            }
            complete(value);
        });
        return this;
    }

    @Override
    public CompletableFuture<T> completeAsync(Supplier<? extends T> supplier) {
        return completeAsync(supplier, defaultExecutor());
    }
}
