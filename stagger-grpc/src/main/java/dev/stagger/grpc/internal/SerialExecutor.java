package dev.stagger.grpc.internal;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs tasks one at a time, in the order given, on another executor: how a call's listener events
 * reach the application on the executor of its {@link io.grpc.CallOptions} (a blocking stub's
 * waits there for them), whatever thread the retry ended on.
 */
final class SerialExecutor implements Executor {
    private final Executor delegate;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean draining = new AtomicBoolean();

    SerialExecutor(Executor delegate) {
        this.delegate = delegate;
    }

    @Override
    public void execute(Runnable task) {
        tasks.add(task);
        schedule();
    }

    private void schedule() {
        if (draining.compareAndSet(false, true)) {
            try {
                delegate.execute(this::drain);
            } catch (RuntimeException rejected) {
                draining.set(false);
                throw rejected;
            }
        }
    }

    private void drain() {
        try {
            Runnable task;
            while ((task = tasks.poll()) != null) {
                task.run();
            }
        } finally {
            draining.set(false);
            if (!tasks.isEmpty()) {
                schedule();
            }
        }
    }
}
