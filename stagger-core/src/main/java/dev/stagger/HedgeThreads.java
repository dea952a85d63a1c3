package dev.stagger;

import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The executor sync hedged attempts run on when the {@link HedgePolicy} names none: daemon platform
 * threads made as needed, named {@code stagger-hedge-N}, dropped after 30 s idle. Java 17 has no
 * virtual threads to make without reflection; a caller on 21 or later passes
 * {@code Executors.newVirtualThreadPerTaskExecutor()} to {@link HedgePolicy.Builder#executor}.
 * Unbounded on purpose: every attempt it is given was already admitted by the budget, the breaker
 * and the throttle, and queueing one behind another would defeat the hedge.
 */
final class HedgeThreads {
    static final Executor DEFAULT = make();

    private HedgeThreads() {
    }

    private static Executor make() {
        AtomicInteger serial = new AtomicInteger();
        return new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS, new SynchronousQueue<>(), task -> {
            Thread t = new Thread(task, "stagger-hedge-" + serial.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }
}
