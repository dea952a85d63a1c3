package dev.stagger.jobs.internal;

import dev.stagger.Clock;
import dev.stagger.Nesting;
import dev.stagger.RandomSource;
import dev.stagger.RetryListener;
import dev.stagger.RetryPolicy;
import dev.stagger.internal.Checks;
import dev.stagger.jdbc.internal.Dialect;
import dev.stagger.jobs.Job;
import dev.stagger.jobs.JobHandler;
import dev.stagger.jobs.JobListener;
import dev.stagger.jobs.JobState;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * What a {@code WorkerPool} runs: its threads (fetcher, handlers, completer, heartbeat,
 * maintenance, listener), {@code runAvailable} on the calling thread, and the graceful stop. The
 * public class validates settings and delegates here; nothing here calls back into it. Thread-safe.
 */
public final class PoolRuntime {
    /** A pool's validated settings, in the units the threads use. */
    public record Settings(String queue, String workerId, int concurrency, int batchSize,
                           Map<String, JobHandler> handlers, Map<String, RetryPolicy> policies,
                           RetryPolicy defaultPolicy, long leaseMillis, long heartbeatNanos, long rescueNanos,
                           long pollNanos, long purgeNanos, long statsNanos, Map<JobState, Long> retentionMillis,
                           boolean listen, JobListener listener, RandomSource random, Nesting nesting) {
    }

    /** Where enqueues through the pool's queue object wake the pools of this process. */
    public interface LocalPools {
        /** Registers {@code wake} for {@code queue}; returns a handle for {@link #remove}. */
        Object add(String queue, Runnable wake);

        /** Stops waking what {@code handle} registered. */
        void remove(Object handle);
    }

    /**
     * Finished jobs whose outcome may wait to be stored, beyond one per handler: room for the
     * fetcher to claim the next jobs while the completer stores the last ones. A pool killed at
     * that moment leaves at most this many (plus its running jobs) to be run again after their lease.
     */
    private static final int UNSTORED_ROOM = 256;

    private final JobTables tables;
    private final ReconnectingLoop.Connections connections;
    private final LocalPools localPools;
    private final Clock clock;
    private final String queue;
    private final int concurrency;
    private final int batchSize;
    private final Map<String, JobHandler> handlers;
    private final Map<String, RetryPolicy> policies;
    private final RetryPolicy defaultPolicy;
    private final long leaseMillis;
    private final long heartbeatNanos;
    private final long rescueNanos;
    private final long pollNanos;
    private final long purgeNanos;
    private final long statsNanos;
    private final Map<JobState, Long> retentionMillis;
    private final boolean listen;
    private final PoolEvents events;
    private final JobStore store;
    private final JobRunner runner;
    private final Rescuer rescuer;
    private final PoolSignals signals;

    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicBoolean forced = new AtomicBoolean();
    private final AtomicInteger activeHandlers = new AtomicInteger();
    private final Pacer stopping;
    private final List<Thread> threads = new ArrayList<>();
    // the four threads' parts are made by start(), and read only once started
    @SuppressWarnings("NullAway.Init")
    private ExecutorService workers;
    @SuppressWarnings("NullAway.Init")
    private Fetcher fetcher;
    @SuppressWarnings("NullAway.Init")
    private Completer completer;
    @SuppressWarnings("NullAway.Init")
    private Thread fetcherThread;
    /** Pool threads whose loop has ended: set before their last wake, where isAlive() may still say true. */
    private final Set<Thread> ended = ConcurrentHashMap.newKeySet();
    /** The jobs this pool handed to a handler and has not stored the outcome of: the heartbeat extends exactly these. */
    private final Set<Long> held = ConcurrentHashMap.newKeySet();
    private volatile @Nullable Object localHandle;

    /**
     * @param connections the queue's connections, in auto-commit
     * @param localPools where the queue's enqueues wake pools of the same process
     */
    public PoolRuntime(Settings s, JobTables tables, Clock clock, ReconnectingLoop.Connections connections,
                       LocalPools localPools) {
        this.tables = tables;
        this.connections = connections;
        this.localPools = localPools;
        this.clock = clock;
        this.queue = s.queue();
        this.concurrency = s.concurrency();
        this.batchSize = s.batchSize();
        this.handlers = Map.copyOf(s.handlers());
        this.policies = Map.copyOf(s.policies());
        this.defaultPolicy = s.defaultPolicy();
        this.leaseMillis = s.leaseMillis();
        this.heartbeatNanos = s.heartbeatNanos();
        this.rescueNanos = s.rescueNanos();
        this.pollNanos = s.pollNanos();
        this.purgeNanos = s.purgeNanos();
        this.statsNanos = s.statsNanos();
        this.retentionMillis = Map.copyOf(s.retentionMillis());
        this.listen = s.listen() && tables.dialect() == Dialect.POSTGRESQL;
        this.events = new PoolEvents(s.listener(), clock);
        // a fresh suffix per pool: a restarted pool must not extend the leases its crashed predecessor held
        String id = s.workerId() + "-" + UUID.randomUUID().toString().substring(0, 8);
        this.store = new JobStore(tables, clock, queue, new ArrayList<>(handlers.keySet()), id,
                retentionMillis.getOrDefault(JobState.SUCCEEDED, -1L) == 0);
        this.signals = new PoolSignals(s.random(), (e, d) -> events.databaseError(reported(e), d));
        this.runner = new JobRunner(store, clock, s.random(), () -> !signals.claiming(), forced::get, s.nesting());
        this.rescuer = new Rescuer(store, runner, this::policyFor, events, signals::claiming);
        this.stopping = new Pacer(clock);
    }

    /** This pool's lease owner id, stored on the jobs it holds. */
    public String workerId() {
        return store.lockedBy();
    }

    /** Starts the pool's threads. */
    public void start() {
        if (!started.compareAndSet(false, true)) {
            throw new IllegalStateException("worker pool " + workerId() + " was already started");
        }
        AtomicInteger n = new AtomicInteger();
        workers = Executors.newFixedThreadPool(concurrency, r -> {
            Thread t = new Thread(r, "stagger-jobs-" + queue + "-worker-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        Pacer fetcherPacer = signals.pacer(clock);
        fetcher = new Fetcher(store, signals, fetcherPacer, concurrency, concurrency + Math.max(batchSize, UNSTORED_ROOM),
                batchSize, leaseMillis,
                pollNanos, this::dispatch);
        Fetcher f = fetcher;
        completer = new Completer(store, events, f::stored, () -> f.carrying() && signals.claiming(), held);
        fetcher.completer(completer);
        signals.onStop(completer::finish);

        Pacer completerPacer = signals.pacer(clock);
        Thread completerThread = thread("completer", completerPacer,
                () -> !completer.finished() && signals.alive(), completer);
        fetcherThread = thread("fetcher", fetcherPacer, signals::claiming, fetcher);
        Pacer heartbeatPacer = signals.pacer(clock);
        threads.add(thread("heartbeat", heartbeatPacer, signals::alive,
                new Heartbeat(store, signals, heartbeatPacer, leaseMillis, heartbeatNanos, held)));
        Pacer maintenancePacer = signals.pacer(clock);
        threads.add(thread("maintenance", maintenancePacer, signals::claiming,
                new Maintenance(store, rescuer, events, signals, maintenancePacer, rescueNanos, retentionMillis,
                        purgeNanos, statsNanos)));
        if (listen) {
            threads.add(thread("listener", signals.pacer(clock), signals::claiming,
                    new PgWakeups(tables.channel, queue, fetcher::wake,
                            (int) Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(pollNanos), 1000)))));
        }
        completerThread.start();
        fetcherThread.start();
        threads.forEach(Thread::start);
        threads.add(0, completerThread);
        localHandle = localPools.add(queue, fetcher::wake);
    }

    /**
     * Claims and runs due jobs on the calling thread until none is due, after rescuing expired
     * leases. Returns how many attempts ran. For tests on a virtual clock and cron-style runs.
     *
     * @throws dev.stagger.jdbc.StoreException if the database fails
     */
    public int runAvailable() {
        int ran = 0;
        Statements statements = new Statements();
        try (Connection c = connections.open()) {
            rescuer.rescueAll(c);
            while (true) {
                List<JobStore.Claimed> claimed = store.claim(statements, c, batchSize, leaseMillis);
                if (claimed.isEmpty()) {
                    return ran;
                }
                for (JobStore.Claimed next : claimed) {
                    Outcome outcome = runOne(next);
                    events.stored(outcome, store.apply(statements, c, List.of(outcome))[0]);
                    ran++;
                }
            }
        } catch (SQLException e) {
            throw StoreFailures.wrap("runAvailable", tables.jobs, e, false);
        }
    }

    /**
     * Stops gracefully: claims nothing more, waits up to {@code timeout} (on the queue's clock) for
     * running handlers, then interrupts the rest (their jobs go back to the queue, the attempt not
     * counted) and stores every outcome it can.
     *
     * @return true if every running job finished within the timeout
     */
    public boolean shutdown(Duration timeout) {
        // the timeout counts from before anyone can see the pool stopping
        long deadline = clock.nanoTime() + Math.min(Checks.nanos(timeout), Long.MAX_VALUE / 4);
        signals.stopClaiming();
        if (localHandle != null) {
            localPools.remove(localHandle);
        }
        if (!started.get()) {
            signals.stopAll();
            return true;
        }
        boolean clean = true;
        Completer waiting = completer;
        if (waiting != null) {
            waiting.recheck(); // the fetcher carries no more successes: the completer stores them
        }
        try {
            stopping.awaitUntil(deadline, () -> ended.contains(fetcherThread));
            workers.shutdown();
            stopping.awaitUntil(deadline, () -> activeHandlers.get() == 0);
            if (activeHandlers.get() > 0) {
                clean = false;
                forced.set(true);
                // claimed jobs still queued for a handler never started: give them back uncounted (claiming has
                // stopped, so running the task only records a RELEASE) instead of leaving them to lease expiry
                for (Runnable unstarted : workers.shutdownNow()) {
                    unstarted.run();
                }
                workers.awaitTermination(1, TimeUnit.SECONDS); // interrupted handlers end at once; a bound all the same
            }
            completer.finish();
            // the completer stores what is left; leases of anything it cannot store will expire
            long storing = Math.max(deadline, clock.nanoTime() + TimeUnit.SECONDS.toNanos(1));
            stopping.awaitUntil(storing, completer::finished);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            clean = false;
        } finally {
            signals.stopAll();
        }
        for (Thread t : threads) {
            try {
                t.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return clean;
    }

    // ---- threads ----------------------------------------------------------------------------

    private Thread thread(String role, Pacer pacer, BooleanSupplier running, ReconnectingLoop.Step step) {
        ReconnectingLoop loop = new ReconnectingLoop(connections, signals, pacer, running, step);
        Thread t = new Thread(() -> {
            try {
                loop.run();
            } finally {
                // recorded before the wake: a thread is still alive while it runs this, so a stopping pool
                // that asked isAlive() here would wait out its whole timeout
                ended.add(Thread.currentThread());
                stopping.wake();
            }
        }, "stagger-jobs-" + queue + "-" + role);
        t.setDaemon(true);
        return t;
    }

    /** Runs a claimed job on a handler thread (the fetcher claimed it for a free one). */
    private void dispatch(JobStore.Claimed claimed) {
        held.add(claimed.job().id());
        activeHandlers.incrementAndGet();
        Runnable task = () -> {
            try {
                completer.add(runOne(claimed));
            } finally {
                activeHandlers.decrementAndGet();
                fetcher.handlerFree();
                stopping.wake();
            }
        };
        try {
            workers.execute(task);
        } catch (RejectedExecutionException stopped) {
            task.run(); // a shutdown overtook this claim: claiming has stopped, so this puts the job back
        }
    }

    private Outcome runOne(JobStore.Claimed claimed) {
        Job job = claimed.job();
        if (!signals.claiming()) {
            return Outcome.release(job);
        }
        events.started(job);
        RetryListener.Scope scope = events.running(job);
        try {
            return runner.run(claimed, handler(job.type()), policyFor(job.type()));
        } finally {
            PoolEvents.close(scope);
        }
    }

    /** The handler of {@code type}: the pool claims only the types it has handlers for. */
    private JobHandler handler(String type) {
        JobHandler handler = handlers.get(type);
        if (handler == null) {
            throw new IllegalStateException("worker pool " + workerId() + " claimed a job of type " + type
                    + ", which it has no handler for");
        }
        return handler;
    }

    private RetryPolicy policyFor(String type) {
        return policies.getOrDefault(type, defaultPolicy);
    }

    /** A database failure as the listener sees it: unchecked, and naming no bound value. */
    private Exception reported(Exception e) {
        return e instanceof SQLException s ? StoreFailures.wrap("worker pool " + workerId(), tables.jobs, s, false) : e;
    }


}
