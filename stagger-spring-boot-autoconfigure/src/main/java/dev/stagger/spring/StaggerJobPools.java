package dev.stagger.spring;

import dev.stagger.jobs.JobQueue;
import dev.stagger.jobs.WorkerPool;
import dev.stagger.spring.internal.ParallelStop;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.context.SmartLifecycle;

/**
 * The worker pools of {@code stagger.jobs}, one per queue that has handlers, started and stopped
 * with the application context.
 *
 * <p>The pools are built once every singleton is ready (handlers are found among all beans then;
 * a bad handler or pool setting fails startup), and started in lifecycle phase
 * {@code stagger.jobs.phase} (default {@link SmartLifecycle#DEFAULT_PHASE}: after the web server, so jobs start once the
 * service is up, and they stop first). Stop: gracefully, all pools at once: each claims nothing
 * more, waits up to its {@code shutdown-timeout} for running handlers, then interrupts the rest
 * (their jobs go back to the queue, the attempt not counted). Keep Spring's
 * {@code spring.lifecycle.timeout-per-shutdown-phase} (30 s) above the longest
 * {@code shutdown-timeout} (30 s by default), or the context moves on before the pools finish.
 *
 * <p>Thread-safe.
 */
public final class StaggerJobPools implements SmartLifecycle, SmartInitializingSingleton {
    private final JobQueue queue;
    private final Supplier<Map<String, WorkerPool>> builder;
    private final int phase;
    private final AtomicBoolean running = new AtomicBoolean();
    private volatile Map<String, WorkerPool> pools = Map.of();

    StaggerJobPools(JobQueue queue, Supplier<Map<String, WorkerPool>> builder, int phase) {
        this.queue = queue;
        this.builder = builder;
        this.phase = phase;
    }

    @Override
    public void afterSingletonsInstantiated() {
        pools = Collections.unmodifiableMap(builder.get());
    }

    /** The job queue the pools run (also a bean: enqueue through it). */
    public JobQueue queue() {
        return queue;
    }

    /** The pools by queue name (empty until every singleton of the context is ready). */
    public Map<String, WorkerPool> pools() {
        return pools;
    }

    @Override
    public void start() {
        if (running.compareAndSet(false, true)) {
            pools.values().forEach(WorkerPool::start);
        }
    }

    @Override
    public void stop() {
        ParallelStop.await(this::stop);
    }

    /** Shuts every pool down at once, each on a thread of its own, and reports when all are done. */
    @Override
    public void stop(Runnable callback) {
        Map<String, Runnable> closers = new LinkedHashMap<>();
        pools.forEach((name, pool) -> closers.put(name, pool::close)); // each waits its shutdown-timeout at most
        ParallelStop.run("stagger-jobs", running, closers, callback);
    }

    @Override
    public boolean isRunning() {
        return running.get();
    }

    @Override
    public int getPhase() {
        return phase;
    }

    @Override
    public String toString() {
        return "StaggerJobPools" + pools.keySet();
    }
}
