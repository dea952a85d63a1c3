package dev.stagger.spring.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * Stops several components at once, each on a thread of its own (each may wait its own shutdown
 * timeout), and runs a callback once all are done: what a {@code SmartLifecycle.stop(Runnable)}
 * of several worker pools or consumers needs, so the context's shutdown phase waits for the
 * longest of them rather than their sum.
 */
public final class ParallelStop {
    private ParallelStop() {
    }

    /** {@code SmartLifecycle.stop()}: {@code stop} given a callback, and waiting for it. */
    public static void await(Consumer<Runnable> stop) {
        CountDownLatch done = new CountDownLatch(1);
        stop.accept(done::countDown);
        try {
            done.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * @param what names the threads: {@code <what>-<name>-stop}
     * @param running true while the components run: set to false here; when it was false already,
     *     nothing is stopped and the callback runs at once
     * @param closers each component's close, by name
     * @param callback run once every close has returned
     */
    public static void run(String what, AtomicBoolean running, Map<String, Runnable> closers, Runnable callback) {
        if (!running.compareAndSet(true, false)) {
            callback.run();
            return;
        }
        List<Thread> stopping = new ArrayList<>();
        closers.forEach((name, close) -> {
            Thread t = new Thread(close, what + "-" + name + "-stop");
            t.start();
            stopping.add(t);
        });
        Thread waiter = new Thread(() -> {
            try {
                for (Thread t : stopping) {
                    t.join();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                callback.run();
            }
        }, what + "-stopped");
        waiter.setDaemon(true);
        waiter.start();
    }
}
